"""Benchmark for issue #35: µs per step, ours vs MuJoCo in the same run, on the model set the
issue names, from the reset state and from a settled one; median and worst ratio; MuJoCo's own
stage timers (mjData.timer) next to ours.

    python -m tests.bench.speed [--set core|corpus|all] [--models a,b] [--nstep 2000]
                                [--repeats 3] [--min-ms 5] [--stages] [--csv FILE]

core: the dm_control suite models with contacts, pile64, 22 humanoids, a mesh pile (MuJoCo's
bunnies) and three of MuJoCo's flex models; corpus: the real-model corpus (`python -m
tests.corpus.fetch`; the models `tests.corpus.check` found to agree with MuJoCo, else every
model MuJoCo loads).

Each model runs `--nstep` steps (more, up to 20x, when MuJoCo takes less than `--min-ms` for
them) from mj_resetData's state ("reset": the falls and impacts a user sees first) and again
from the state MuJoCo reaches after `--settle` steps ("settled"), both engines from the same
state, `--repeats` rounds interleaved, best round each. Stage timers on both sides, per step:
MuJoCo's mjData.timer through mjcb_time set to a Numba cfunc that returns the CPU's cycle
counter (no Python in the timed path), ours from engine/timer.py (the same stages, the same
counter). `--stages` also times ours stage by stage in compiled loops at the settled state
(tests/bench/contact.py). Ratios are ours / MuJoCo from the same run: on a shared machine only
they are comparable, not the absolute times. A model that diverges within the timed steps
(ours stops at the divergence and resets) is listed as not timed and left out of the ratios:
its time would be that of resets.
"""
import argparse
import csv
import os
import time
import warnings

import numpy as np

SUITE = ["ball_in_cup", "cheetah", "dog", "finger", "hopper", "humanoid", "humanoid_CMU",
         "manipulator", "quadruped", "stacker", "walker"]
_HERE = os.path.dirname(os.path.abspath(__file__))
_MJ = os.path.join(_HERE, "..", "assets", "mujoco_models", "model")
FILES = {"pile64": os.path.join(_HERE, "..", "..", "assets", "pile64.xml"),
         "humanoids22": os.path.join(_MJ, "humanoid", "22_humanoids.xml"),
         "bunnies": os.path.join(_MJ, "replicate", "bunnies.xml"),
         "flex_trampoline": os.path.join(_MJ, "flex", "trampoline.xml"),
         "flex_floppy": os.path.join(_MJ, "flex", "floppy.xml"),
         "flex_pancake": os.path.join(_MJ, "flex", "pancake.xml")}
CORE = SUITE + list(FILES)
# MuJoCo's timers (mjtTimer without the prefix, lower case) and the ones printed
TIMERS = ["step", "forward", "position", "velocity", "actuation", "constraint", "advance",
          "pos_kinematics", "pos_inertia", "pos_collision", "pos_make", "pos_project",
          "col_broad", "col_narrow"]
SHOWN = ["position", "pos_kinematics", "pos_inertia", "pos_collision", "pos_make", "velocity",
         "actuation", "constraint", "advance"]


_CLOCK = None


def cycle_clock():
  """(cfunc returning the CPU cycle counter as a double, cycles per second): MuJoCo's mjcb_time
  on engine/timer.py's counter, without Python in the timed path."""
  global _CLOCK
  if _CLOCK is None:
    import numba

    from numjoco.engine import timer

    @numba.cfunc("float64()")
    def cycles():
      return float(timer._cycles())

    _CLOCK = (cycles, timer.cycles_per_second())
  return _CLOCK


def corpus_models():
  """(name, path) of the corpus models to time: those tests.corpus.check found to agree with
  MuJoCo (results.csv), else every indexed model MuJoCo loads."""
  from tests.corpus.fetch import CACHE, INDEX
  if not os.path.exists(INDEX):
    raise SystemExit("no corpus: run `python -m tests.corpus.fetch` first")
  ok = None
  results = os.path.join(CACHE, "results.csv")
  if os.path.exists(results):
    with open(results) as f:
      ok = {r["path"] for r in csv.DictReader(f) if r.get("status", "").startswith("ok")}
  out = []
  with open(INDEX) as f:
    for line in f:
      pkg, rel = line.rstrip("\n").split("\t")
      if ok is None or rel in ok or os.path.join(CACHE, rel) in ok:
        out.append((f"{pkg}:{os.path.basename(rel)}", os.path.join(CACHE, rel)))
  return out


def load(name, path=None):
  """(ours, MuJoCo's) models of a named model or a file."""
  import mujoco

  import numjoco
  from tests.models import suite_source
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    if path is None and name in FILES:
      path = FILES[name]
    if path is not None:
      return numjoco.load_model(path), mujoco.MjModel.from_xml_path(path)
    src, assets = suite_source(name)
    if assets:
      return numjoco.load_model(src, assets=assets), mujoco.MjModel.from_xml_string(src, assets)
    return numjoco.load_model(src), mujoco.MjModel.from_xml_path(src)


def _mj_timers(mjd, hz, nstep):
  """µs per step of each of MuJoCo's timers over the last run (then cleared)."""
  import mujoco
  out = {}
  for name in TIMERS:
    i = int(getattr(mujoco.mjtTimer, "mjTIMER_" + name.upper()))
    out[name] = mjd.timer[i].duration / hz / nstep * 1e6
    mjd.timer[i].duration = 0.0
    mjd.timer[i].number = 0
  return out


class Diverged(Exception):
  """The model diverges within the timed steps: the time would be that of resets (numjoco.step
  stops at a divergence, mj_step resets and goes on), not of steps."""


def _mj_diverges(mjm, start, nstep):
  """Whether MuJoCo meets a bad qpos, qvel or qacc within nstep steps from `start`."""
  import mujoco
  mjd = mujoco.MjData(mjm)
  mujoco.mj_copyData(mjd, mjm, start)
  mujoco.mj_step(mjm, mjd, nstep)
  return any(mjd.warning[int(w)].number > 0 for w in (
      mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
      mujoco.mjtWarning.mjWARN_BADQACC))


def time_model(m, mjm, nstep, repeats, settle, min_ms=0.0):
  """{"reset": (ours µs, MuJoCo µs, MuJoCo's timers), "settled": (...)} per step, best round
  each; the rounds alternate between the engines."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  from numjoco.engine import timer
  _, hz = cycle_clock()
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  timer.enable(d)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    numjoco.step(m, d, 2)            # links the units (compiles what the cache lacks)
  if min_ms > 0:   # a round of a fast model lasts at least min_ms (clock and cache noise)
    probe = mujoco.MjData(mjm)
    t = time.perf_counter()
    mujoco.mj_step(mjm, probe, nstep)
    per_step = (time.perf_counter() - t) / nstep
    nstep = max(nstep, min(20 * nstep, int(min_ms * 1e-3 / max(per_step, 1e-9)) + 1))
  starts = {"reset": mujoco.MjData(mjm)}
  settled = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, settled, settle)
  starts["settled"] = settled
  out = {}
  for label, start in starts.items():
    best_ours, best_ref, timers, ours_timers = np.inf, np.inf, None, None
    for _ in range(repeats):
      interop.data_from_mujoco(start, d)
      timer.enable(d)
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        taken = numjoco.step(m, d, nstep)
        elapsed = time.perf_counter() - t
      if taken < nstep:
        raise Diverged(f"diverges at step {taken} from the {label} state (MuJoCo: "
                       f"{'too' if _mj_diverges(mjm, start, nstep) else 'not'})")
      if elapsed < best_ours:
        best_ours, ours_timers = elapsed, timer.stage_us(d, per=nstep)
      mujoco.mj_copyData(mjd, mjm, start)
      _mj_timers(mjd, hz, 1)
      t = time.perf_counter()
      mujoco.mj_step(mjm, mjd, nstep)
      elapsed = time.perf_counter() - t
      tm = _mj_timers(mjd, hz, nstep)
      if elapsed < best_ref:
        best_ref, timers = elapsed, tm
    out[label] = (best_ours / nstep * 1e6, best_ref / nstep * 1e6, timers, ours_timers)
  return out


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--set", choices=("core", "corpus", "all"), default="core")
  p.add_argument("--models", help="comma-separated names (core names or corpus files)")
  p.add_argument("--nstep", type=int, default=2000)
  p.add_argument("--repeats", type=int, default=3)
  p.add_argument("--settle", type=int, default=2000)
  p.add_argument("--min-ms", type=float, default=5.0,
                 help="more steps (up to 20x --nstep) for models whose --nstep steps take less")
  p.add_argument("--stages", action="store_true", help="also time ours stage by stage")
  p.add_argument("--csv", help="write one row per model and start")
  a = p.parse_args(argv)
  import mujoco
  cycles, hz = cycle_clock()
  mujoco.set_mjcb_time(cycles.ctypes)
  todo = []
  if a.models:
    names = a.models.split(",")
    named = dict(corpus_models()) if any(":" in n for n in names) else {}
    todo = [(n, n if os.path.isfile(n) else named.get(n)) for n in names]
  else:
    if a.set in ("core", "all"):
      todo += [(n, None) for n in CORE]
    if a.set in ("corpus", "all"):
      todo += corpus_models()
  rows, ratios, diverged = [], {"reset": [], "settled": []}, []
  stage_ratios = {k: [] for k in SHOWN}
  print(f"{'model':34s} {'start':8s} {'ours µs':>9s} {'MuJoCo µs':>10s} {'ratio':>6s}   "
        "stage timers, ours/MuJoCo µs per step: " + " ".join(SHOWN))
  for name, path in todo:
    try:
      m, mjm = load(name, path)
      res = time_model(m, mjm, a.nstep, a.repeats, a.settle, a.min_ms)
    except Diverged as e:
      diverged.append(name)
      print(f"{name[:34]:34s} not timed: {e}")
      continue
    except Exception as e:  # noqa: BLE001 - a model we cannot time is reported, the run goes on
      print(f"{name[:34]:34s} skipped: {type(e).__name__}: {str(e)[:100]}")
      continue
    for label, (ours, ref, tm, otm) in res.items():
      ratios[label].append(ours / ref)
      for k in SHOWN:
        if tm[k] > 0:
          stage_ratios[k].append(otm[k] / tm[k])
      rows.append(dict(model=name, start=label, ours_us=ours, mujoco_us=ref, ratio=ours / ref,
                       **{f"mj_{k}": v for k, v in tm.items()},
                       **{f"ours_{k}": v for k, v in otm.items()}))
      print(f"{name[:34]:34s} {label:8s} {ours:9.1f} {ref:10.1f} {ours / ref:6.2f}   "
            + " ".join(f"{otm[k]:.1f}/{tm[k]:.1f}" for k in SHOWN), flush=True)
    if a.stages:
      from tests.bench.contact import stages_of
      parts = [f"{label.strip()} {us:.1f}" for label, us in stages_of(m, mjm, a.settle, 200, 3)]
      print(f"{'':34s} ours at settled, µs per call: " + ", ".join(parts))
  for label, r in ratios.items():
    if r:
      print(f"{label}: {len(r)} models, median ratio {np.median(r):.2f}, worst {max(r):.2f}")
  if diverged:
    print(f"not timed, diverging: {len(diverged)} models ({', '.join(diverged)})")
  print("stages, ours/MuJoCo over all runs (median, worst): " + ", ".join(
      f"{k} {np.median(v):.2f} {max(v):.2f}" for k, v in stage_ratios.items() if v))
  if a.csv and rows:
    with open(a.csv, "w", newline="") as f:
      w = csv.DictWriter(f, fieldnames=list(rows[0]))
      w.writeheader()
      w.writerows(rows)
  mujoco.set_mjcb_time(None)


if __name__ == "__main__":
  main()
