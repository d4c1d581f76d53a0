"""Parameter sweeps: `numjoco sweep MODEL --grid PARAM=V1,V2 ... -o table.csv`.

Each variant of a model (a grid over, or a random sample of, model parameters and options,
times a number of seeds) runs headless from the model's initial state (or a keyframe) and gives
one row of metrics: the deepest penetration, contact jitter, energy drift, settle time, and any
function of the user's. The rows land in one table (CSV, or Parquet with pyarrow), optionally
with plots (matplotlib) and a short video of each variant (render/ through EGL); the best
variant is printed as an MJCF diff (app/export.py) and can be written out as an edited copy of
the model file. Variants run in worker processes on this machine's cores, or as Ray tasks on a
cluster (`--ray ADDRESS`; `pip install numjoco[ray]`; the model file must be readable at the same
path on the cluster's machines, e.g. a shared filesystem). A worker that dies (killed, out of
memory) loses no variant: its variants run again, up to `retries` times.

A parameter names a Model field as the Physics panel edits it, or an option:

    geom_solref[floor][0]    column 0 (timeconst) of geom "floor"'s solref
    geom_friction[*][0]      sliding friction of every geom; `geom_friction[0]` is geom 0's row
    dof_damping[hinge]       the damping of joint "hinge"'s dofs (dof fields take joint names)
    body_mass[box]           a body's mass (mj_setConst runs after the edit, as in the viewer)
    opt.timestep, opt.integrator (Euler, RK4, implicit, implicitfast), opt.solver (PGS, CG,
    Newton), opt.cone, opt.impratio, opt.o_solref ...

Grid values are comma-separated, a row's numbers space-separated (`geom_solref[floor]=0.02 1,
0.01 1`); random values are `uniform:LOW:HIGH`, `loguniform:LOW:HIGH` or a comma list to draw from.

The metrics, over the states after each step (d.contact and d.energy as that step computed them,
as mj_step leaves them):
- max_penetration (m): the deepest contact, max over steps of -min(d.contact_dist), 0 without
  contact;
- jitter: the RMS over the run's second half of |qvel| (the 2-norm over all dofs): what still
  moves once a resting model should rest;
- energy_drift (J): total energy at the end minus at the start (ENERGY enabled for the run; it
  does not change the motion): dissipation by contacts and damping, or a gain where the
  integration is unstable;
- settle_time (s): the time from which every |qvel| stays below `settle_tol` to the end (NaN if
  it never does);
a run that diverges (MuJoCo's checks) has `diverged` set and NaN for the metrics over the run.
"""
import argparse
import csv
import dataclasses
import itertools
import math
import os
import re
import sys
import time

import numpy as np

from numjoco.app.workers import run_jobs

METRICS = ("max_penetration", "jitter", "energy_drift", "settle_time")
_UNITS = {"max_penetration": "m", "jitter": "RMS |qvel|, 2nd half", "energy_drift": "J",
          "settle_time": "s"}
_ENUM_OPTS = {"integrator": "mjtIntegrator", "solver": "mjtSolver", "cone": "mjtCone"}
_NAME = re.compile(r"^(opt\.)?([A-Za-z_][A-Za-z_0-9]*)(?:\[([^\]]+)\])?(?:\[(\d+)\])?$")


class SweepError(ValueError):
  """Bad sweep input (a parameter, a value, an option): the message says which and why."""


@dataclasses.dataclass
class Param:
  """One swept parameter: a Model field (`field`, the elements `rows` or None for all, the
  `column` or None for the whole row) or an option (`option`), and its grid `values` or random
  distribution `dist` ('uniform'|'loguniform'|'choice', args)."""
  name: str
  field: str = ""
  option: str = ""
  element: str = ""            # as written: a name, an index or '*'
  column: int = None
  values: list = None
  dist: tuple = None


def parse_param(text, random=False):
  """A Param from 'NAME=VALUES' (grid) or 'NAME=DIST' (random, `random` True)."""
  if "=" not in text:
    raise SweepError(f"parameter {text!r}: expected NAME=VALUES, e.g. geom_solref[floor][0]=0.01,0.02")
  name, spec = (s.strip() for s in text.split("=", 1))
  mt = _NAME.match(name)
  if not mt:
    raise SweepError(f"parameter {name!r}: expected FIELD, FIELD[ELEMENT], FIELD[ELEMENT][COLUMN] "
                     "or opt.NAME")
  p = Param(name=name)
  if mt.group(1):
    if mt.group(3) or mt.group(4):
      raise SweepError(f"parameter {name!r}: an option has no element or column")
    p.option = mt.group(2)
  else:
    p.field, p.element = mt.group(2), (mt.group(3) or "*").strip()
    p.column = int(mt.group(4)) if mt.group(4) is not None else None
  if not spec:
    raise SweepError(f"parameter {name!r}: no values")
  kind = spec.split(":", 1)[0]
  if random and kind in ("uniform", "loguniform"):
    try:
      lo, hi = (float(v) for v in spec.split(":")[1:])
    except ValueError:
      raise SweepError(f"parameter {name!r}: expected {kind}:LOW:HIGH, got {spec!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi) or \
        (kind == "loguniform" and lo <= 0):
      raise SweepError(f"parameter {name!r}: bad range {spec!r} (LOW <= HIGH{', > 0' if kind == 'loguniform' else ''})")
    p.dist = (kind, lo, hi)
  else:
    vals = [v.strip() for v in spec.split(",") if v.strip()]
    if not vals:
      raise SweepError(f"parameter {name!r}: no values in {spec!r}")
    p.values = [_value(p, v) for v in vals]
    if random:
      p.dist = ("choice", p.values)
  return p


def _value(p, text):
  """A value of parameter `p` from its text: an enum member's name for integrator, solver and
  cone options, else numbers."""
  if p.option in _ENUM_OPTS:
    from numjoco.engine import types
    enum = getattr(types, _ENUM_OPTS[p.option])
    for e in enum:
      if e.name.lower() == text.lower() or str(int(e)) == text:
        return e.name
    raise SweepError(f"parameter {p.name!r}: {text!r} is not one of "
                     f"{', '.join(e.name for e in enum)}")
  try:
    v = [float(x) for x in text.split()]
  except ValueError:
    raise SweepError(f"parameter {p.name!r}: {text!r} is not a number (a row: numbers separated "
                     "by spaces)") from None
  if not all(math.isfinite(x) for x in v):
    raise SweepError(f"parameter {p.name!r}: {text!r} is not finite")
  return v[0] if len(v) == 1 else tuple(v)


def variants(params, samples=0, seed=0):
  """The variants: a list of {param name: value}; the grid's product of `params` values, or
  `samples` random draws (numpy's default_rng(`seed`)) when they have distributions."""
  if not params:
    return [{}]
  if any(p.dist is not None for p in params):
    if samples < 1:
      raise SweepError("random parameters need --samples N (N >= 1)")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(samples):
      v = {}
      for p in params:
        if p.dist is None:
          raise SweepError(f"parameter {p.name!r}: give every parameter a distribution in a "
                           "random sweep (a comma list draws from its values)")
        kind = p.dist[0]
        if kind == "uniform":
          v[p.name] = float(rng.uniform(p.dist[1], p.dist[2]))
        elif kind == "loguniform":
          v[p.name] = float(math.exp(rng.uniform(math.log(p.dist[1]), math.log(p.dist[2]))))
        else:
          v[p.name] = p.dist[1][int(rng.integers(len(p.dist[1])))]
      out.append(v)
    return out
  return [dict(zip([p.name for p in params], combo))
          for combo in itertools.product(*[p.values for p in params])]


# ------------------------------------------------------------------ applying a variant

def _rows(m, p):
  """The element rows of Model field `p.field` that `p` names."""
  from numjoco.app.export import ATTR
  from numjoco.app.sim import EDITABLE
  import numjoco
  if p.field not in EDITABLE:
    raise SweepError(f"parameter {p.name!r}: {p.field!r} is not a sweepable Model field (one of "
                     f"{', '.join(sorted(EDITABLE))}, or opt.NAME)")
  n = len(getattr(m, p.field))
  if p.element == "*":
    return list(range(n))
  if p.element.lstrip("-").isdigit():
    i = int(p.element)
    if not 0 <= i < n:
      raise SweepError(f"parameter {p.name!r}: {p.field} has {n} entries")
    return [i]
  kind = ATTR[p.field][0]
  i = numjoco.name2id(m, kind, p.element)
  if i < 0:
    raise SweepError(f"parameter {p.name!r}: the model has no {kind} named {p.element!r}")
  if p.field.startswith("dof_"):    # a joint's dofs
    a = int(m.jnt_dofadr[i])
    return list(range(a, a + int(np.sum(m.dof_jntid == i))))
  return [i]


def check_params(m, params):
  """Refuse parameters the model does not have (before any variant runs)."""
  for p in params:
    if p.option:
      if not hasattr(m.opt, p.option) or p.option in ("enableflags", "disableflags"):
        raise SweepError(f"parameter {p.name!r}: no option {p.option!r}")
      continue
    rows = _rows(m, p)
    width = np.size(getattr(m, p.field)[rows[0]]) if rows else 1
    if p.column is not None and p.column >= width:
      raise SweepError(f"parameter {p.name!r}: {p.field} has {width} column(s)")
    for v in (p.values or []):
      k = np.size(v)
      if p.column is not None and k != 1:
        raise SweepError(f"parameter {p.name!r}: one number per value for a column, got {v!r}")
      if p.column is None and k not in (1, width):
        raise SweepError(f"parameter {p.name!r}: {p.field} rows have {width} numbers, got {v!r}")


def apply(m, params, variant):
  """Set `variant`'s values on Model `m`; returns (edits, opt_edits) as the viewer keeps them
  (app/export.py's input) and what undoes them."""
  from numjoco.app.sim import EDITABLE
  from numjoco.engine import types
  edits, opt_edits, undo = {}, {}, []
  setconst = False
  for p in params:
    v = variant[p.name]
    if p.option:
      old = np.copy(getattr(m.opt, p.option))
      if p.option in _ENUM_OPTS:
        v = int(getattr(types, _ENUM_OPTS[p.option])[v])
      setattr(m.opt, p.option, v)
      opt_edits[p.option] = np.copy(getattr(m.opt, p.option))
      undo.append(("opt", p.option, old))
      continue
    arr = getattr(m, p.field)
    for i in _rows(m, p):
      undo.append(("field", (p.field, i), np.copy(arr[i])))
      if p.column is None:
        arr[i] = v
      else:
        arr[i, p.column] = v
      edits[(p.field, i)] = np.copy(arr[i])
    setconst |= EDITABLE[p.field]
  if setconst:
    from numjoco.engine import setconst as sc
    sc.set_const(m)
  return edits, opt_edits, (undo, setconst)


def restore(m, undo):
  """Undo `apply`."""
  items, setconst = undo
  for kind, key, old in reversed(items):
    if kind == "opt":
      setattr(m.opt, key, old)
    else:
      getattr(m, key[0])[key[1]] = old
  if setconst:
    from numjoco.engine import setconst as sc
    sc.set_const(m)


# ------------------------------------------------------------------ running one variant

@dataclasses.dataclass
class Job:
  """One run: the model file, the parameters and one variant of them, its seed and the run's
  settings (picklable: sent to worker processes and Ray tasks)."""
  index: int
  model: str
  params: list
  variant: dict
  seed: int
  seconds: float
  key: object = None
  ctrl: object = None
  noise: float = 0.0
  settle_tol: float = 1e-3
  controller: object = None       # callable(m, d, rng) before each step
  metrics: dict = None            # name -> callable(m, d, trace) -> float
  video: str = ""                 # a folder: variant videos are written there
  video_seconds: float = 0.0
  size: tuple = (640, 360)
  fail_once: str = ""             # tests: a marker file; the first attempt's process dies


_MODELS = {}


def _model(path):
  """The worker's Model of `path` (loaded once per process, restored after each variant)."""
  import numjoco
  from numjoco.engine import build
  m = _MODELS.get(path)
  if m is None:
    if not os.path.isfile(path):
      raise SweepError(f"no model file {path!r} on this worker")
    m = _MODELS[path] = numjoco.load_model(path, prepare=build.compile_missing)
  return m


def run_job(job):
  """Run one variant; returns its table row (a dict)."""
  if job.fail_once and not os.path.exists(job.fail_once):
    open(job.fail_once, "w").close()
    os._exit(9)              # the worker process dies mid-run, as when killed
  from numjoco.engine import build
  from numjoco.engine.types import mjtEnableBit
  m = _model(job.model)
  undo = apply(m, job.params, job.variant)[2]
  flags = int(m.opt.enableflags)
  try:
    m.opt.enableflags = flags | int(mjtEnableBit.ENERGY)   # for energy drift; no effect on motion
    build.compile_missing(m)
    row = _simulate(m, job)
    if job.video:
      m.opt.enableflags = flags
      row["video"] = _video(m, job)
  finally:
    m.opt.enableflags = flags
    restore(m, undo)
  return row


def _start(m, job):
  """Data at the job's initial state: the keyframe, controls and seeded velocity noise."""
  import numjoco
  from numjoco.app.record import parse_ctrl
  d = numjoco.make_data(m)
  numjoco.reset_data(m, d, job.key)
  if job.ctrl is not None:
    d.ctrl[:] = parse_ctrl(job.ctrl, m)
  rng = np.random.default_rng(job.seed)
  if job.noise > 0:
    d.qvel[:] += job.noise * rng.standard_normal(m.nv)
  return d, rng


def _simulate(m, job):
  """Step `job.seconds` and compute the metrics (module docstring)."""
  from numjoco.engine import api
  d, rng = _start(m, job)
  nstep = max(1, int(round(job.seconds / float(m.opt.timestep))))
  t = np.full(nstep, np.nan)
  pen = np.zeros(nstep)
  energy = np.full(nstep, np.nan)
  vmax = np.full(nstep, np.nan)
  vnorm = np.full(nstep, np.nan)
  diverged, done = "", 0
  for s in range(nstep):
    if job.controller is not None:
      job.controller(m, d, rng)
    _, div = api.step_checked(m, d, 1)
    if div is not None:
      diverged = str(div)
      break
    done = s + 1
    n = int(d.ncon)
    pen[s] = max(0.0, -float(np.min(d.contact_dist[:n]))) if n else 0.0
    energy[s] = float(d.energy[0] + d.energy[1])
    vmax[s] = float(np.max(np.abs(d.qvel))) if m.nv else 0.0
    vnorm[s] = float(np.linalg.norm(d.qvel))
    t[s] = d.time
  row = {"variant": job.index, "seed": job.seed}
  for p in job.params:
    row[p.name] = _cell(job.variant[p.name])
  half = done // 2
  ok = done == nstep
  row["max_penetration"] = float(np.max(pen[:done])) if done else math.nan
  row["jitter"] = float(np.sqrt(np.mean(vnorm[half:done] ** 2))) if ok else math.nan
  row["energy_drift"] = float(energy[done - 1] - energy[0]) if ok else math.nan
  row["settle_time"] = _settle_time(t[:done], vmax[:done], job.settle_tol) if ok else math.nan
  trace = {"time": t[:done], "penetration": pen[:done], "energy": energy[:done],
           "qvel_max": vmax[:done], "qvel_norm": vnorm[:done]}
  for name, fn in (job.metrics or {}).items():
    row[name] = float(fn(m, d, trace)) if ok else math.nan
  row["steps"] = done
  row["diverged"] = diverged
  return row


def _settle_time(t, vmax, tol):
  """The time from which every dof's speed stays below `tol` to the end (NaN: not settled)."""
  moving = np.nonzero(vmax >= tol)[0]
  if len(moving) == 0:
    return float(t[0]) if len(t) else math.nan
  k = moving[-1] + 1
  return float(t[k]) if k < len(t) else math.nan


def _cell(v):
  """A table cell of a parameter value: a number, or a row as space-separated text."""
  if isinstance(v, tuple):
    return " ".join(f"{x:g}" for x in v)
  return v


def _video(m, job):
  """Record the variant's first `video_seconds` (from the same initial state) to the job's
  folder; returns the file name."""
  from numjoco.app.record import record
  os.makedirs(job.video, exist_ok=True)
  path = os.path.join(job.video, f"variant{job.index:04d}_seed{job.seed}.mp4")
  d, rng = _start(m, job)
  ctl = None if job.controller is None else (lambda m_, d_: job.controller(m_, d_, rng))
  record(m, path, job.video_seconds or min(job.seconds, 2.0), 30, job.size, d=d,
         controller=ctl)
  return os.path.basename(path)


# ------------------------------------------------------------------ running them all

# ------------------------------------------------------------------ the Python API

@dataclasses.dataclass
class SweepResult:
  """The rows (one per variant and seed, in that order), the columns, and what the best
  variant's edits are (`best`)."""
  rows: list
  columns: list
  params: list
  model: str
  wall: float = 0.0

  def best(self, metric="max_penetration", maximize=False):
    """The row with the least (or greatest) mean of `metric` over its seeds; diverged runs lose."""
    by = {}
    for r in self.rows:
      by.setdefault(r["variant"], []).append(r)
    def score(rs):
      vals = [r[metric] for r in rs]
      if any(isinstance(v, float) and math.isnan(v) for v in vals):
        return math.inf
      mean = float(np.mean(vals))
      return -mean if maximize else mean
    k = min(by, key=lambda v: score(by[v]))
    return by[k][0]

  def edits(self, row):
    """(edits, opt_edits) of a row's variant on the model as loaded (app/export.py's input)."""
    import numjoco
    m = numjoco.load_model(self.model)
    variant = {p.name: _uncell(row[p.name]) for p in self.params}
    e, o, _ = apply(m, self.params, variant)
    return m, e, o

  def mjcf_diff(self, row):
    """The row's variant as MJCF lines (app/export.mjcf_diff)."""
    from numjoco.app.export import mjcf_diff
    m, e, o = self.edits(row)
    return mjcf_diff(m, e, o)

  def save_model(self, row, path):
    """Write the model file with the row's variant applied (app/export.save_copy); returns the
    notes of what could not be written."""
    from numjoco.app.export import save_copy
    m, e, o = self.edits(row)
    return save_copy(m, e, o, path)

  def write(self, path):
    """The table as CSV, or Parquet for a .parquet path (needs pyarrow)."""
    if str(path).lower().endswith(".parquet"):
      try:
        import pyarrow as pa
        import pyarrow.parquet as pq
      except ImportError:
        raise SweepError("Parquet output needs pyarrow: pip install numjoco[sweep]") from None
      pq.write_table(pa.table({c: [r.get(c) for r in self.rows] for c in self.columns}), path)
      return
    with open(path, "w", newline="") as f:
      w = csv.DictWriter(f, fieldnames=self.columns)
      w.writeheader()
      for r in self.rows:
        w.writerow({c: _text(r.get(c)) for c in self.columns})

  def plot(self, path, metrics=METRICS):
    """One panel per metric against the first parameter (each seed a dot, their mean a line; a
    line per value of the second parameter), saved as an image (needs matplotlib)."""
    try:
      import matplotlib
      matplotlib.use("Agg")
      import matplotlib.pyplot as plt
    except ImportError:
      raise SweepError("plots need matplotlib: pip install numjoco[sweep]") from None
    metrics = [k for k in metrics if k in self.columns]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.4), squeeze=False)
    x = self.params[0].name if self.params else "variant"
    group = self.params[1].name if len(self.params) > 1 else None
    for ax, k in zip(axes[0], metrics):
      series = {}
      for r in self.rows:
        series.setdefault(r[group] if group else "", []).append(r)
      for g, rs in series.items():
        xs = [_num(r[x]) for r in rs]
        ys = [r[k] for r in rs]
        label = f"{group}={g}" if group else None
        pts = ax.plot(xs, ys, "o", alpha=0.5, label=label)
        ux = sorted(set(xs))
        ax.plot(ux, [_mean([y for xx, y in zip(xs, ys) if xx == u]) for u in ux], "-",
                color=pts[0].get_color())
      ax.set_xlabel(x)
      ax.set_title(f"{k} ({_UNITS[k]})" if k in _UNITS else k)
      xs = sorted({_num(r[x]) for r in self.rows}, key=str)
      if all(isinstance(v, float) for v in xs) and len(xs) > 2 and min(xs) > 0:
        ax.set_xscale("log")    # solref, friction, masses: spans of orders of magnitude
        ax.minorticks_off()
        if len(xs) <= 8:       # the grid's values themselves as the ticks
          ax.set_xticks(sorted(xs), [f"{v:g}" for v in sorted(xs)])
    if group:
      axes[0][0].legend(fontsize="small")
    fig.suptitle(os.path.basename(self.model))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _mean(vals):
  """The mean of the numbers that are not NaN (NaN when none is)."""
  vals = [v for v in vals if not (isinstance(v, float) and math.isnan(v))]
  return float(np.mean(vals)) if vals else math.nan


def _num(v):
  """A parameter cell as a number for plotting (a row: its first number; a name: itself)."""
  if isinstance(v, str):
    try:
      return float(v.split()[0])
    except ValueError:
      return v
  return v


def _uncell(v):
  if isinstance(v, str) and " " in v:
    return tuple(float(x) for x in v.split())
  return v


def _text(v):
  if isinstance(v, float):
    return repr(v)
  return "" if v is None else v


def sweep(model, grid=None, random=None, samples=0, seeds=1, seconds=2.0, *, key=None,
          ctrl=None, noise=0.0, settle_tol=1e-3, controller=None, metrics=None, workers=None,
          ray_address=None, retries=3, video=None, video_seconds=0.0, size=(640, 360),
          sample_seed=0, progress=None, _fail_once=""):
  """Run a parameter sweep of the MJCF file `model` (module docstring) and return a
  SweepResult.

    grid: {param: [values]} or ['PARAM=V1,V2', ...] (the product of all values);
    random: {param: 'uniform:LO:HI' | 'loguniform:LO:HI' | [values]} or 'PARAM=DIST' strings,
      drawn `samples` times (numpy seed `sample_seed`);
    seeds: runs per variant (seeds 0 .. seeds-1, or the given list): the seed draws the initial
      velocity noise (`noise`, the standard deviation added to qvel) and is handed to
      `controller(m, d, rng)`, called before each step;
    metrics: {name: fn(m, d, trace) -> float} at the end of each run (trace: per-step arrays
      time, penetration, energy, qvel_max, qvel_norm); module-level functions for worker
      processes (Ray also takes closures);
    workers: processes (default: the cores; 1 runs in this process); ray_address: 'local' or a
      Ray cluster's address; video: a folder for a video of each run's first `video_seconds`.
  """
  import numjoco
  model = os.path.abspath(str(model))
  params = _params(grid, False) + _params(random, True)
  names = [p.name for p in params]
  if len(set(names)) != len(names):
    raise SweepError("a parameter is given twice")
  m = numjoco.load_model(model)
  check_params(m, params)
  if key is not None:
    numjoco.reset_data(m, numjoco.make_data(m), key)    # a bad keyframe fails here, once
  seed_list = list(range(int(seeds))) if isinstance(seeds, (int, np.integer)) else list(seeds)
  if not seed_list:
    raise SweepError("seeds: at least one")
  vs = variants(params, samples, sample_seed)
  in_process = (workers or os.cpu_count() or 1) == 1 and not ray_address
  if not in_process and not ray_address:
    import pickle
    try:
      pickle.dumps((controller, metrics))
    except Exception as e:  # noqa: BLE001 - a lambda or closure: say what to do instead
      raise SweepError(f"the controller and metric functions go to worker processes, so they "
                       f"must be module-level functions ({e}); or run with workers=1, or on "
                       "Ray, which takes closures") from None
  jobs = [Job(index=k, model=model, params=params, variant=v, seed=s, seconds=float(seconds),
              key=key, ctrl=ctrl, noise=float(noise), settle_tol=float(settle_tol),
              controller=controller, metrics=metrics, video=os.path.abspath(video) if video else "",
              video_seconds=float(video_seconds), size=tuple(size),
              fail_once="" if in_process else _fail_once)
          for k, v in enumerate(vs) for s in seed_list]
  t0 = time.perf_counter()
  rows = run_jobs(run_job, jobs, workers, ray_address, retries, progress)
  columns = ["variant", "seed"] + names + list(METRICS) + list(metrics or {}) + \
      ["steps", "diverged"] + (["video"] if video else [])
  return SweepResult(rows, columns, params, model, time.perf_counter() - t0)


def _params(spec, random):
  if not spec:
    return []
  if isinstance(spec, dict):
    out = []
    for k, v in spec.items():
      if isinstance(v, str):
        out.append(parse_param(f"{k}={v}", random))
      else:
        out.append(parse_param(f"{k}={','.join(_spec_text(x) for x in v)}", random))
    return out
  return [parse_param(s, random) for s in spec]


def _spec_text(v):
  if isinstance(v, str):
    return v
  return " ".join(repr(float(x)) for x in np.ravel(v))


# ------------------------------------------------------------------ the command line

def _print_table(res, stream):
  cols = [c for c in res.columns if c != "video"]
  cells = [[_short(r.get(c)) for c in cols] for r in res.rows]
  width = [max(len(c), *(len(row[k]) for row in cells)) for k, c in enumerate(cols)]
  print("  ".join(c.rjust(w) for c, w in zip(cols, width)).rstrip(), file=stream)
  for row in cells:
    print("  ".join(c.rjust(w) for c, w in zip(row, width)).rstrip(), file=stream)


def _short(v):
  if isinstance(v, float):
    return "nan" if math.isnan(v) else f"{v:.4g}"
  return "" if v is None else str(v)


def main(argv=None):
  """`numjoco sweep`; returns the exit status (2: bad input, 1: a run failed)."""
  p = argparse.ArgumentParser(
      prog="numjoco sweep", description=__doc__.splitlines()[0],
      formatter_class=argparse.RawDescriptionHelpFormatter,
      epilog="example:\n  numjoco sweep box.xml --grid 'geom_solref[floor][0]=0.005,0.01,0.02' "
             "--grid 'geom_solref[floor][1]=0.5,1,2' --seconds 2 -o sweep.csv --plot sweep.png")
  p.add_argument("model", help="MJCF file")
  p.add_argument("--grid", action="append", default=[], metavar="PARAM=V1,V2,...")
  p.add_argument("--random", action="append", default=[], metavar="PARAM=DIST",
                 help="uniform:LO:HI, loguniform:LO:HI or V1,V2,... (with --samples)")
  p.add_argument("--samples", type=int, default=0, help="random variants to draw")
  p.add_argument("--sample-seed", type=int, default=0)
  p.add_argument("--seeds", type=int, default=1, help="runs per variant (seeds 0..N-1)")
  p.add_argument("--noise", type=float, default=0.0,
                 help="standard deviation of the seeded noise added to the initial qvel")
  p.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per run")
  p.add_argument("--key", default=None, help="keyframe to start from (index or name)")
  p.add_argument("--ctrl", default=None, help="constant controls, comma-separated")
  p.add_argument("--settle-tol", type=float, default=1e-3,
                 help="settled: every |qvel| below this to the end")
  p.add_argument("-o", "--output", default=None, help="table: .csv or .parquet")
  p.add_argument("--plot", default=None, help="plots of the metrics (.png, .svg, .pdf)")
  p.add_argument("--best", default="max_penetration", help="metric the best variant minimises")
  p.add_argument("--maximize", action="store_true", help="the best variant maximises --best")
  p.add_argument("--export-best", default=None, metavar="FILE.xml",
                 help="write the model file with the best variant's values")
  p.add_argument("--open-best", action="store_true", help="open the best variant in the viewer")
  p.add_argument("--video", default=None, metavar="DIR", help="a video of each run in DIR")
  p.add_argument("--video-seconds", type=float, default=0.0,
                 help="video length (default: the run's, at most 2 s)")
  p.add_argument("--jobs", type=int, default=None, help="worker processes (default: the cores)")
  p.add_argument("--ray", default=None, metavar="ADDRESS",
                 help="run on a Ray cluster ('local': start one here); pip install numjoco[ray]")
  p.add_argument("--retries", type=int, default=3, help="reruns of a variant whose worker died")
  args = p.parse_args(argv)
  from numjoco import MjcfError
  if not os.path.isfile(args.model):
    print(f"numjoco sweep: no model file {args.model!r}", file=sys.stderr)
    return 2
  key = None if args.key is None else int(args.key) if args.key.isdigit() else args.key

  def progress(done, total):
    if sys.stderr.isatty():
      print(f"\r{done}/{total} runs", end="" if done < total else "\n", file=sys.stderr,
            flush=True)
  try:
    res = sweep(args.model, args.grid, args.random, args.samples, args.seeds, args.seconds,
                key=key, ctrl=args.ctrl, noise=args.noise, settle_tol=args.settle_tol,
                workers=args.jobs, ray_address=args.ray, retries=args.retries, video=args.video,
                video_seconds=args.video_seconds, sample_seed=args.sample_seed,
                progress=progress)
  except (SweepError, MjcfError, ValueError) as e:
    print(f"numjoco sweep: {e}", file=sys.stderr)
    return 2
  except RuntimeError as e:
    print(f"numjoco sweep: {e}", file=sys.stderr)
    return 1
  _print_table(res, sys.stdout)
  print(f"{len(res.rows)} runs in {res.wall:.1f} s", file=sys.stderr)
  try:
    if args.output:
      res.write(args.output)
      print(f"table: {args.output}", file=sys.stderr)
    if args.plot:
      res.plot(args.plot)
      print(f"plot: {args.plot}", file=sys.stderr)
    if args.best not in res.columns:
      raise SweepError(f"--best {args.best!r}: not a column ({', '.join(res.columns)})")
    best = res.best(args.best, args.maximize)
    print(f"best by {args.best}: variant {best['variant']}", file=sys.stdout)
    if res.params:
      print(res.mjcf_diff(best))
    if args.export_best:
      for note in res.save_model(best, args.export_best):
        print(f"note: {note}", file=sys.stderr)
      print(f"best variant: {args.export_best}", file=sys.stderr)
  except (SweepError, ValueError, OSError) as e:
    print(f"numjoco sweep: {e}", file=sys.stderr)
    return 2
  if args.open_best:   # the viewer on the best variant's file (a copy next to the model's,
    import subprocess  # where its relative assets resolve, while the viewer runs)
    import tempfile
    path = args.export_best
    if not path:
      fd, path = tempfile.mkstemp(suffix=".xml", prefix=".sweep-best-",
                                  dir=os.path.dirname(os.path.abspath(args.model)))
      os.close(fd)
      res.save_model(best, path)
    try:
      return subprocess.call([sys.executable, "-m", "numjoco", path])
    finally:
      if not args.export_best:
        os.remove(path)
  return 0


if __name__ == "__main__":
  sys.exit(main())
