"""The simulation worker: a thread that owns Model and Data, paced to wall time.

The UI never touches Model or Data. It sends commands (`Simulation.send`), which the worker
applies between chunks of `numjoco.step(m, d, n)` (one nogil compiled call per chunk, never one
step per Python iteration, which would hold the GIL the window needs), and it reads snapshots that the
worker publishes after every chunk (`with sim.snapshot() as snap:`). Divergence is detected,
reported and recovered from; an exception on the worker pauses it with the traceback kept in
`status.error` for the UI to show.

With `preview` (the viewer's start), the first model is on screen before the engine is loaded:
the worker compiles it with numpy and publishes its preview (engine/preview.py), then builds the
engine's Model from the same arrays once the window has shown it.

A mouse drag writes its reference into Data's d.pert_* fields between chunks; the engine
applies the spring every substep (d.xfrc_perturb). While recording, chunks end exactly at the
sample times k / fps of simulated time and each sample's snapshot is queued for the UI
(`recorded()`), so a video plays at true speed whatever the display rate or slow motion.
"""
import dataclasses
import math
import queue
import threading
import time
import traceback
import warnings

import numpy as np

import numjoco
from numjoco import engine
from numjoco.app.panels.common import SPEEDS  # noqa: F401  (re-exported; defined where the UI needs it)
from numjoco.engine.mjcf._flex import option_error
from numjoco.engine.types import NSOLVER, mjtWarning

CHUNK_WALL = 0.008   # seconds of compute per chunk, at most (one frame's worth or less); paced
                     # chunks are shorter: the steps that catch up with wall time x speed
MAX_LAG = 0.1        # wall seconds behind real time before pacing resyncs instead of catching up
PUBLISH_MIN = 0.01   # wall seconds between snapshots when running as fast as possible
SHOWN_WAIT = 2.0     # seconds the worker waits for the UI's first frame (wait_shown)
RECORD_QUEUE = 8     # recorded snapshots waiting for the UI before the worker waits for it
HISTORY_STEPS = 2000       # states the history keeps at most (as MuJoCo's simulate) ...
HISTORY_BYTES = 100 << 20  # ... and bytes (simulate: 1e8)

# Model fields the Physics panel may edit, and whether an edit needs mj_setConst again.
EDITABLE = {
    "geom_solref": False, "geom_solimp": False, "geom_friction": False, "geom_margin": False,
    "geom_gap": False, "geom_solmix": False, "geom_rgba": False, "geom_adhesion": False,
    "geom_surfacevel": False,
    "jnt_solref": False, "jnt_solimp": False, "jnt_stiffness": False, "jnt_range": False,
    "jnt_springyield": False, "jnt_stiffnesspoly": False,
    "eq_solref": False, "eq_solimp": False, "pair_solref": False, "pair_solimp": False,
    "dof_solref": False, "dof_solimp": False,
    "tendon_solref_lim": False, "tendon_solimp_lim": False,
    "tendon_solref_fri": False, "tendon_solimp_fri": False,
    "dof_damping": False, "dof_dampingpoly": False, "dof_frictionloss": False,
    "dof_armature": True,
    "body_mass": True, "body_gravcomp": False,
    "actuator_gear": False, "actuator_ctrlrange": False,
    # an actuator's damping reaches its joint or tendon through jnt_actuatorid/tendon_actuatorid,
    # which mj_setConst sets (for actuators with damping or armature only)
    "actuator_damping": True, "actuator_dampingpoly": True,
    "tendon_stiffness": False, "tendon_stiffnesspoly": False, "tendon_damping": False,
    "tendon_dampingpoly": False, "tendon_frictionloss": False, "tendon_springyield": False,
}
# MuJoCo's checks of the state (reported as divergences, not as warnings), and what the other
# warnings' info is
_CHECKED = (int(mjtWarning.BADQPOS), int(mjtWarning.BADQVEL), int(mjtWarning.BADQACC))
_WARNING_INFO = {int(mjtWarning.INERTIA): "dof", int(mjtWarning.BADCTRL): "ctrl"}
# yield thresholds: editable only where the model has a plastic state for them (MuJoCo
# allocates d.plastic at compile time for springyield > 0 only)
_PLASTIC = {"jnt_springyield": ("jnt_plasticadr", "joint"),
            "tendon_springyield": ("tendon_plasticadr", "tendon")}


@dataclasses.dataclass
class Status:
  """What the UI shows about the worker (a copy is returned by `Simulation.status`)."""
  path: str = ""
  paused: bool = False
  speed: float = 1.0
  rtf: float = 0.0            # achieved simulated seconds per wall second
  steps_per_s: float = 0.0
  compiling: bool = False     # engine units this model or an option edit needs are compiling
  compile_note: str = ""      # the compile's last progress line
  loading: bool = False
  error: str = ""             # traceback of the last worker exception ('' when none)
  load_error: str = ""        # why the last load/reload failed ('' when it did not)
  divergences: int = 0
  last_divergence: str = ""
  warnings: tuple = ()        # e.g. contact buffer overflows, newest last
  model_version: int = 0      # bumped whenever a new Model replaces the old one
  physics: bool = True        # False while the model on screen is its preview (engine/preview.py)
                              # and the worker still loads the engine
  history: int = 0            # states kept in the history (the newest is the live one)
  history_back: int = 0       # how many steps back from the newest the Data is (0: live)


class BasicSnapshot:
  """The render state when render.snapshot is unavailable: poses and a few scalars."""

  def __init__(self, m):
    self.time = 0.0
    self.qpos = np.zeros(m.nq)
    self.qvel = np.zeros(m.nv)
    self.xpos = np.zeros((m.nbody, 3))
    self.xquat = np.zeros((m.nbody, 4))
    self.geom_xpos = np.zeros((m.ngeom, 3))
    self.geom_xmat = np.zeros((m.ngeom, 9))
    self.energy = np.zeros(2)
    self.ncon = 0
    self.extra = {}

  def capture(self, m, d):
    """Copy what the renderer needs from Data."""
    self.time = d.time
    self.qpos[:] = d.qpos
    self.qvel[:] = d.qvel
    self.xpos[:] = d.xpos
    self.xquat[:] = d.xquat
    self.geom_xpos[:] = d.geom_xpos
    self.geom_xmat[:] = d.geom_xmat
    self.energy[:] = d.energy
    self.ncon = d.ncon


def snapshot_class():
  """The renderer's Snapshot class when render/ provides one, else BasicSnapshot."""
  try:
    from numjoco.render.snapshot import Snapshot
    return Snapshot
  except ImportError:
    return BasicSnapshot


def _snapshot_maker(cls, m, d):
  """A factory of new snapshots for the worker's buffers: `cls(m, d)` when the class takes the
  worker's Data (render.snapshot.Snapshot: filled from it; without it, it makes and forwards a
  Data of its own, 0.3 s on the way to the first frame), else `cls(m)`."""
  import inspect
  try:
    takes_data = len(inspect.signature(cls).parameters) >= 2
  except (TypeError, ValueError):
    takes_data = False
  return (lambda: cls(m, d)) if takes_data else (lambda: cls(m))


def solver_error(d):
  """Final solver residual of island 0 as MuJoCo's simulate shows it (min of improvement and
  gradient at the last iteration), 0 when the solver did not run."""
  n = int(d.solver_niter[0])
  if n <= 0:
    return 0.0
  i = min(n, NSOLVER) - 1
  imp, grad = float(d.solver_improvement[i]), float(d.solver_gradient[i])
  err = min(imp, grad)
  return max(imp, grad) if err == 0 else err


def key_snippet(m, d, name="saved"):
  """The current state as an MJCF `<key>` element (what MuJoCo's viewer copies to clipboard)."""
  def fmt(a):
    return " ".join(f"{x:.6g}" for x in np.ravel(a))
  parts = [f'<key name="{name}" time="{d.time:.6g}"', f'qpos="{fmt(d.qpos)}"']
  if m.nv:
    parts.append(f'qvel="{fmt(d.qvel)}"')
  if m.na:
    parts.append(f'act="{fmt(d.act)}"')
  if m.nu:
    parts.append(f'ctrl="{fmt(d.ctrl)}"')
  if m.nmocap:
    parts.append(f'mpos="{fmt(d.mocap_pos)}" mquat="{fmt(d.mocap_quat)}"')
  if m.nplastic:   # MuJoCo 4's plastic spring references (<key plastic=...>)
    parts.append(f'plastic="{fmt(d.plastic)}"')
  return " ".join(parts) + "/>"


# fields MuJoCo reads only when the model had some nonzero value when it was compiled
# (mjModel.flg_adhesion / flg_surfacevel): a run-time edit of a model without any is ignored there
_FLAGGED = {"geom_adhesion": ("adhesion", ("geom_adhesion", "pair_adhesion")),
            "geom_surfacevel": ("surfacevel", ("geom_surfacevel",))}


def _check_flagged(m, edits, field):
  """Refuse an adhesion/surfacevel edit on a model loaded without any: MuJoCo would ignore it.
  Before the first accepted edit of the field the arrays still hold the loaded values."""
  what, arrays = _FLAGGED[field]
  if any(f == field for f, _ in edits):
    return
  if not any(np.any(getattr(m, a) != 0) for a in arrays):
    raise ValueError(f"{field}: the model was loaded without any {what}, and MuJoCo ignores a "
                     f"{what} edit then: give some geom a nonzero {what} in the XML and reload")


def _check_yield(m, field, index, value):
  """A springyield edit must be a non-negative number for an element that has a plastic state
  (MuJoCo's runtime semantics: a new threshold applies from the next step on; an elastic element
  stays elastic whatever its springyield)."""
  adr, kind = _PLASTIC[field]
  v = np.ravel(np.asarray(value, float))
  if v.size != 1 or not np.isfinite(v[0]) or v[0] < 0:
    raise ValueError(f"{field}: springyield must be a number >= 0, got {value!r}")
  if getattr(m, adr)[int(index)] < 0:
    raise ValueError(f"{field}[{int(index)}]: {kind} {int(index)} is elastic (springyield 0 when "
                     "loaded, no plastic state): set springyield > 0 in the XML and reload")


def _check_entry(m, field, index, value):
  """An edit names an existing element and gives one number, or one per column, all finite."""
  arr = getattr(m, field)
  i = int(np.ravel([index])[0])
  if not 0 <= i < len(arr):
    raise ValueError(f"{field}[{i}]: the model has {len(arr)} entries")
  v = np.asarray(value, float)
  if v.size not in (1, np.size(arr[i])) or not np.all(np.isfinite(v)):
    raise ValueError(f"{field}[{i}]: expected {np.size(arr[i])} finite numbers, got {value!r}")


def _check_option(field, value):
  """An option edit gives finite numbers (a NaN or infinite option, e.g. the timestep, would make
  every step diverge: MuJoCo's checks would reset Data at each one) and a positive timestep."""
  v = np.asarray(value)
  if v.dtype.kind not in "biuf" or not np.all(np.isfinite(v)):
    raise ValueError(f"opt.{field}: expected finite numbers, got {value!r}; the option is left "
                     "as it was")
  if field == "timestep" and not np.all(v > 0):
    raise ValueError(f"opt.timestep: must be positive, got {value!r}; the option is left as it was")


class _Buffers:
  """Snapshots handed from the worker to readers: the newest is published under a lock; one
  being read is never written (a reader holds it until it releases it)."""

  def __init__(self, factory):
    self._lock = threading.Lock()
    self._factory = factory
    self._front = None
    self._held = {}      # id(snapshot) -> reader count
    self._free = []

  def back(self):
    """A snapshot the worker may write (never the published one, never a held one)."""
    with self._lock:
      if self._free:
        return self._free.pop()
    return self._factory()

  def publish(self, snap):
    """Make `snap` the newest; the previous one is recycled unless a reader holds it."""
    with self._lock:
      old, self._front = self._front, snap
      if old is not None and old is not snap and id(old) not in self._held:
        self._free.append(old)

  def acquire(self):
    """The newest snapshot, marked as held until `release`."""
    with self._lock:
      s = self._front
      if s is not None:
        self._held[id(s)] = self._held.get(id(s), 0) + 1
      return s

  def release(self, s):
    """A reader is done with `s`."""
    with self._lock:
      n = self._held.get(id(s), 0) - 1
      if n > 0:
        self._held[id(s)] = n
        return
      self._held.pop(id(s), None)
      if s is not self._front and len(self._free) < 3:
        self._free.append(s)


class _Held:
  """Context manager returned by Simulation.snapshot()."""

  def __init__(self, bufs):
    self._bufs = bufs
    self.snap = None

  def __enter__(self):
    self.snap = self._bufs.acquire() if self._bufs is not None else None
    return self.snap

  def __exit__(self, *exc):
    if self.snap is not None:
      self._bufs.release(self.snap)
    return False


class History:
  """The last states of the simulation, one per step (simulate's history: mjSTATE_INTEGRATION
  states, at most HISTORY_STEPS of them and HISTORY_BYTES in all), in a ring of rows the step
  loop writes itself (numjoco.engine.api.step_record)."""

  def __init__(self, m):
    from numjoco.engine.state import state_size
    n = state_size(m)
    self.rows = np.zeros((max(2, min(HISTORY_STEPS, HISTORY_BYTES // (8 * max(n, 1)))), n))
    self.head = 0       # the row the next step writes
    self.count = 0      # rows that hold states
    self.back = 0       # steps back from the newest the Data was set to (0: live)

  def clear(self, m, d):
    """Forget every state; the current one is the first."""
    self.head = self.count = self.back = 0
    self.push(m, d)

  def push(self, m, d):
    """Add the current state as the newest."""
    from numjoco.engine.state import get_state
    get_state(m, d, out=self.rows[self.head])
    self.stepped(1)

  def stepped(self, n):
    """`n` steps were written from `head` on."""
    self.head = (self.head + n) % len(self.rows)
    self.count = min(self.count + n, len(self.rows))

  def row(self, back):
    """The state `back` steps before the newest."""
    return self.rows[(self.head - 1 - back) % len(self.rows)]

  def truncate(self):
    """Continue from the state on display: the states after it are dropped."""
    self.head = (self.head - self.back) % len(self.rows)
    self.count -= self.back
    self.back = 0


class Simulation:
  """Worker thread stepping a model in real time x `speed`; all access goes through commands.

  Commands (`send(name, *args)`), applied in order between chunks:
    pause(flag) | step(n) | reset(key=None) | speed(factor) | ctrl(i, value) | zero_ctrl()
    history(back)  (paused: show the state `back` steps before the newest; stepping or
                    running from there drops the states after it)
    qpos(i, value) | opt(name, value) | model(field, index, value) | eq_active(i, flag)
    load(path) | reload() | clear_error() | call(fn)  (fn(m, d) runs on the worker)
    perturb_start(body, localpos, active) | perturb_ref(refselpos, refquat) | perturb_stop()
    record_start(fps) | record_stop()
    inspect(flag)  (publish the constraint inspector's table, app/inspector.py, with each
                    snapshot as extra["constraints"] while the flag is set)
  """

  record_forward = True    # a recording sample brings the kinematics up to date first
  keep_history = True      # keep the last states (History); a script's viewer does not

  def __init__(self, model=None, *, path=None, speed=1.0, paused=False, key=None,
               snapshot_factory=None, wait_shown=False, preview=False):
    """With `wait_shown`, the worker publishes the first model's snapshot, then waits (at most
    SHOWN_WAIT s) until the UI sets `first_shown` before it loads the step kernel and steps: the
    window's first frame does not share the CPU and the GIL with that kernel load.

    With `preview`, the first model loaded from `path` is published first as its preview
    (engine/preview.py: compiled and posed with numpy, no numba), with `status.physics` False and
    `model` the PreviewModel; then (after `first_shown`, with `wait_shown`) the engine's Model is
    built from the same arrays and replaces it under the same model_version."""
    self.first_shown = threading.Event()
    self._wait_shown = wait_shown
    self._preview = preview
    self._compiled = None           # engine.preview.Compiled between the preview and the Model
    self._cmds = queue.Queue()
    self._wake = threading.Event()
    self._stop = False
    self._snap_cls = snapshot_factory
    self._lock = threading.Lock()   # guards _status and _model_ref
    self._status = Status(path=str(path or ""), paused=paused, speed=speed)
    self._bufs = None
    self.edits = {}                 # (field, index) -> value, in the order made (for export)
    self.opt_edits = {}            # option name -> value
    self.m = self.d = None          # owned by the worker once started
    self._model_ref = None          # the current Model, for readers that need constants
    self._path = path
    self._thread = None
    self._pending_model = model
    self._rec = None                # recording state (worker side) while recording
    self._rec_frames = queue.Queue(RECORD_QUEUE)   # (k, snapshot) samples for the UI; None: end
    self._rec_free = queue.Queue()  # recorded snapshots the UI has drawn, for reuse
    self.record_span = None         # (t_start, t_stop, frames) of the last finished recording
    self.record_stopped_by = ""     # why the worker ended the last recording ("": asked to)
    self._key = key                 # keyframe to start from (first model only)
    self._compile_proc = None       # `python -m numjoco.engine.build` while units compile (worker)
    self.history = None             # History of the current model (worker)
    self.inspect = False            # publish the constraint inspector's table (command inspect)

  # ---------------------------------------------------------------- UI side
  def start(self):
    """Start the worker (loads `path` on it when no Model was given)."""
    self._thread = threading.Thread(target=self._run, name="numjoco-sim", daemon=True)
    self._thread.start()
    return self

  def stop(self, timeout=5.0):
    """Stop the worker and wait for it."""
    self._stop = True
    self._wake.set()
    proc = self._compile_proc
    if proc is not None:
      proc.terminate()              # what it finished stays cached
    if self._thread is not None:
      self._thread.join(timeout)

  def send(self, name, *args):
    """Queue a command for the worker (see the class docstring)."""
    self._cmds.put((name, args))
    self._wake.set()

  def status(self):
    """A copy of the worker's Status."""
    with self._lock:
      return dataclasses.replace(self._status)

  @property
  def model(self):
    """The current Model, for reading constants (sizes, names, ranges); never write it."""
    with self._lock:
      return self._model_ref

  def snapshot(self):
    """`with sim.snapshot() as snap:` the newest published snapshot (None before the first)."""
    with self._lock:
      bufs = self._bufs
    return _Held(bufs)

  def recorded(self, limit=None):
    """Recorded samples waiting for the UI (at most `limit`), oldest first, without blocking: a
    list of (k, snapshot) for frame k, with None after the last frame of a recording. Give each
    snapshot back with `recycle` once drawn."""
    out = []
    while limit is None or len(out) < limit:
      try:
        out.append(self._rec_frames.get_nowait())
      except queue.Empty:
        break
    return out

  def recycle(self, snap):
    """A recorded snapshot the UI is done with (reused for later samples of the same model)."""
    if snap.extra.get("model_version") == self.status().model_version:
      self._rec_free.put(snap)

  def wait_until(self, pred, timeout=30.0):
    """Wait (polling) until pred(status) holds; returns the last status. For tests and tools."""
    t_end = time.perf_counter() + timeout
    while True:
      st = self.status()
      if pred(st) or time.perf_counter() > t_end:
        return st
      time.sleep(0.005)

  def sync(self, timeout=30.0):
    """Block until every command sent so far has been applied and a snapshot published."""
    done = threading.Event()
    self.send("call", lambda m, d: done.set())
    if not done.wait(timeout):
      raise TimeoutError("simulation worker did not answer")

  # ---------------------------------------------------------------- worker side
  def _set(self, **kw):
    with self._lock:
      for k, v in kw.items():
        setattr(self._status, k, v)

  def _install(self, m, path, first=False, previewed=False):
    self._record_stop()   # a recording does not survive a model change
    d = numjoco.make_data(m)
    numjoco.forward(m, d)   # loads a smaller kernel than step: the model is on screen sooner
    with self._lock:
      self.m, self.d = m, d
      self._model_ref = m
      self._bufs = self._new_buffers(m, d)
      if not previewed:   # else its preview is on screen under this version already
        self._status.model_version += 1
      self._status.physics = True
      self._status.path = str(path or "")
      self._status.load_error = ""
      self._status.divergences = 0
      self._status.last_divergence = ""
      self._status.warnings = ()
    self._path = path
    self._rec_free = queue.Queue()
    self.edits = {}
    self.opt_edits = {}
    self.opt0 = {k: np.copy(getattr(m.opt, k))
                 for k in ("disableflags", "enableflags", "disableactuator")}
    self._warn0 = d.warning_number.copy()
    if self._key is not None:
      key, self._key = self._key, None
      numjoco.reset_data(m, d, key)
      numjoco.forward(m, d)
    self.history = History(m) if self.keep_history else None
    self._history_restart()
    self._publish()

  def _new_buffers(self, m, d):
    """The triple buffer of snapshots of (m, d) the UI reads."""
    return _Buffers(_snapshot_maker(self._snap_cls or snapshot_class(), m, d))

  def _compile_missing(self, m):
    """Compile the engine units `m` needs with its current options that are not in the cache
    (a new model's flex or mesh stages, the RK4 integrator after an edit...) in other processes
    (`python -m numjoco.engine.build`), while this thread waits: compiled on this thread they would
    hold the GIL for seconds at a time and stall the window. Progress goes to the status."""
    import os
    import subprocess
    import sys
    from numjoco.engine import build
    todo = build.missing_units(m)
    if not todo:
      return
    self._set(compiling=True, compile_note=f"compiling engine units [0/{len(todo)}]")
    log = []
    try:
      self._compile_proc = proc = subprocess.Popen(
          [sys.executable, "-m", "numjoco.engine.build", *todo], stdout=subprocess.PIPE,
          stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"),
          cwd=os.path.dirname(os.path.dirname(os.path.abspath(build.__file__))))
      for line in proc.stdout:
        log.append(line.rstrip())
        if log[-1].startswith("["):   # `[i/N] unit seconds`
          self._set(compile_note="compiling engine units " + log[-1])
      if proc.wait() != 0 and not self._stop:
        raise RuntimeError("compiling engine units failed:\n" + "\n".join(log[-20:]))
    finally:
      self._compile_proc = None
      self._set(compiling=False, compile_note="")

  def _load(self, path, first=False):
    self._set(loading=True)
    previewed = False
    try:
      with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if first and self._preview:
          previewed = self._load_preview(path)
          if self._wait_shown:
            self.first_shown.wait(SHOWN_WAIT)
          from numjoco.engine.api import build_model
          m = build_model(self._compiled, prepare=self._compile_missing)
          self._compiled = None
        else:
          m = numjoco.load_model(str(path), prepare=self._compile_missing)
    except Exception as e:  # noqa: BLE001 - any load failure is reported, the old model stays
      self._set(loading=False, load_error=f"cannot load {path}: {e}")
      return False
    self._install(m, path, first, previewed)
    if caught:   # ignored parts of the model (e.g. a replicate prefix): shown as runtime warnings
      with self._lock:
        self._status.warnings = tuple(str(w.message) for w in caught)[-5:]
    self._set(loading=False)
    return True

  def _load_preview(self, path):
    """Compile `path` with numpy and publish its preview (the start key's pose, if any) under a
    new model_version; returns True."""
    from numjoco.engine.preview import Compiled
    from numjoco.render.snapshot import Snapshot
    self._compiled = c = Compiled(str(path))
    try:
      pm, pd = c.preview(self._key)
    except ValueError:   # a bad keyframe: the engine's reset reports it
      pm, pd = c.preview()
    snap = Snapshot(pm, pd)
    snap.extra = dict(time=pd.time, ncon=0, nefc=0, nisland=0, niter=0, residual=0.0,
                      energy=(0.0, 0.0), qpos=pd.qpos.copy(), qvel=pd.qvel.copy(), perturb=None,
                      recording=False, preview=True)
    with self._lock:
      self._model_ref = pm
      self._bufs = _Buffers(lambda: Snapshot(pm, pd))
      self._status.model_version += 1
      self._status.path = str(path or "")
      self._status.physics = False
      snap.extra["model_version"] = self._status.model_version
    self._bufs.publish(snap)
    return True

  def _publish(self):
    snap = self._bufs.back()
    snap.capture(self.m, self.d)
    m, d = self.m, self.d
    ex = getattr(snap, "extra", None)
    if ex is None:
      ex = snap.extra = {}
    ex.pop("constraints", None)   # snapshots are reused: only this publish's table
    if self.inspect:
      from numjoco.app import inspector
      ex["constraints"] = inspector.build(m, d)
    ex.update(time=d.time, ncon=d.ncon, nefc=d.nefc, nisland=d.nisland,
              awake=(int(d.ntree_awake), m.ntree),
              niter=int(d.solver_niter[0]), residual=solver_error(d),
              energy=(float(d.energy[0]), float(d.energy[1])),
              ctrl=d.ctrl.copy(), actuator_force=d.actuator_force.copy(),
              qpos=d.qpos.copy(), qvel=d.qvel.copy(), sensordata=d.sensordata.copy(),
              perturb=None,
              recording=self._rec is not None, model_version=self._status.model_version)
    sel = int(d.pert_select[0])
    if int(d.pert_active[0]) & 1 and 0 < sel < m.nbody:
      ex["perturb"] = (sel, d.xmat[sel].reshape(3, 3) @ d.pert_localpos + d.xpos[sel],
                       d.pert_refselpos.copy(), d.xfrc_perturb[sel, :3].copy())
    self._bufs.publish(snap)

  def _apply(self, name, args):
    m, d = self.m, self.d
    if name == "pause":
      if not args[0]:
        self._history_continue()
      self._set(paused=bool(args[0]))
    elif name == "step":
      self._history_continue()
      self._chunk(int(args[0]) if args else 1)
    elif name == "reset":
      numjoco.reset_data(m, d, args[0] if args and args[0] is not None else None)
      numjoco.forward(m, d)
      self._record_reanchor()
      self._history_restart()
    elif name == "history":
      self._history_seek(int(args[0]))
    elif name == "speed":
      self._set(speed=float(args[0]))
    elif name == "ctrl":
      d.ctrl[int(args[0])] = float(args[1])
    elif name == "zero_ctrl":
      engine.io.reset_ctrl(m, d)   # zero, identity quaternions for SO3 servos (mj_resetCtrl)
    elif name == "qpos":
      d.qpos[int(args[0])] = float(args[1])
      numjoco.forward(m, d)
    elif name == "opt":
      _check_option(args[0], args[1])
      old = np.copy(getattr(m.opt, args[0]))
      setattr(m.opt, args[0], args[1])
      refused = option_error(m)
      if refused:   # the load-time refusals of flex features we do not simulate
        setattr(m.opt, args[0], old)
        raise ValueError(f"opt.{args[0]}: {refused}; the option is left as it was")
      self.opt_edits[args[0]] = np.copy(getattr(m.opt, args[0]))
      self._compile_missing(m)   # e.g. the RK4 integrator's stage, before the next step
    elif name == "model":
      field, index, value = args
      if field not in EDITABLE:
        raise ValueError(f"model field {field!r} is not editable here")
      _check_entry(m, field, index, value)
      if field in _PLASTIC:
        _check_yield(m, field, index, value)
      if field in _FLAGGED:
        _check_flagged(m, self.edits, field)
      if field == "geom_surfacevel" and m.geom_type[int(index)] == int(numjoco.mjtGeom.MESH):
        # the compiler re-expresses it in the mesh's inertial frame: an edit in the file's frame
        # would need that rotation both ways (and the MJCF export)
        raise ValueError(f"geom_surfacevel[{int(index)}]: geom {int(index)} is a mesh; edit "
                         "surfacevel in the XML and reload")
      getattr(m, field)[index] = value
      self.edits[(field, index)] = np.copy(getattr(m, field)[index])
      if EDITABLE[field]:
        from numjoco.engine import setconst
        setconst.set_const(m)
    elif name == "perturb_start":   # (body, localpos, active bits): mjv_initPerturb
      body = int(args[0])
      if not 0 < body < m.nbody:
        raise ValueError(f"perturb_start: body {body} is not a movable body of this model")
      d.pert_select[0] = body
      d.pert_localpos[:] = np.asarray(args[1], float)
      d.pert_active[0] = int(args[2])
      numjoco.init_perturb(m, d)
      self._pert0 = (d.pert_refpos.copy(), d.pert_refselpos.copy(), d.pert_refquat.copy())
    elif name == "perturb_ref":     # (shift, turn): the mouse's move since perturb_start
      if not d.pert_active[0]:
        return
      from numjoco.engine.rotation import quat_mul
      shift, turn = np.asarray(args[0], float), np.asarray(args[1], float)
      pos0, selpos0, quat0 = self._pert0   # mjv_movePerturb: both points shift, quat turns
      d.pert_refpos[:] = pos0 + shift
      d.pert_refselpos[:] = selpos0 + shift
      q = quat_mul(turn, quat0)
      d.pert_refquat[:] = q / np.linalg.norm(q)
      sel = int(d.pert_select[0])
      if self.status().paused:   # mjv_applyPerturbPose while paused: free bodies follow
        numjoco.apply_perturb_pose(m, d, True)
        numjoco.forward(m, d)
      elif m.body_mocapid[sel] >= 0:
        numjoco.apply_perturb_pose(m, d, False)
        numjoco.forward(m, d)
    elif name == "perturb_stop":
      d.pert_active[0] = 0
      d.pert_select[0] = -1
      d.xfrc_perturb[:] = 0
    elif name == "record_start":    # (fps): frame 0 is the current state
      fps = float(args[0])
      if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"record_start: fps must be a positive number, got {args[0]!r}")
      from numjoco.app.record import FrameClock
      self._record_stop()
      self.record_stopped_by = ""
      self._rec = dict(clock=FrameClock(fps, d.time), t0=d.time)
      self._record_sample()
    elif name == "record_stop":
      self._record_stop()
    elif name == "inspect":
      self.inspect = bool(args[0])
    elif name == "eq_active":
      d.eq_active[int(args[0])] = bool(args[1])
    elif name == "load":
      self._load(args[0])
      return
    elif name == "reload":
      if self._path:
        self._load(self._path)
      return
    elif name == "clear_error":
      self._set(error="")
    elif name == "call":
      args[0](m, d)
    else:
      raise ValueError(f"unknown simulation command {name!r}")
    self._publish()

  def _record_reanchor(self):
    """After a reset (time went back), the next frame is due 1/fps of simulated time later."""
    clock = self._rec["clock"] if self._rec is not None else None
    if clock is not None and self.d.time < clock.next_time - 1 / clock.fps:
      clock.t0 = self.d.time - (clock.k - 1) / clock.fps

  def _record_sample(self):
    """Queue a snapshot of the current state as the recording's next frame (kinematics brought
    up to date first, as `numjoco record` does); waits while the UI is RECORD_QUEUE behind."""
    m, d = self.m, self.d
    if self.record_forward:
      numjoco.forward(m, d)   # after a step, Data's kinematics lag qpos by one step
    try:
      snap = self._rec_free.get_nowait()
    except queue.Empty:
      snap = self._bufs.back()
    snap.capture(m, d)
    snap.extra = dict(time=d.time, model_version=self._status.model_version)
    clock = self._rec["clock"]
    self._rec_put((clock.k, snap))
    clock.advance()

  def _rec_put(self, item):
    while not self._stop:
      try:
        self._rec_frames.put(item, timeout=0.05)
        return
      except queue.Full:
        continue
    self._rec = None

  def _record_stop(self, why="", t_stop=None):
    """End the recording (if any) at `t_stop` (default: now): the UI gets an end marker after
    the last frame; `why` (record_stopped_by) says why the worker ended it."""
    rec, self._rec = self._rec, None
    if rec is not None:
      self.record_stopped_by = why
      self.record_span = (rec["t0"], self.d.time if t_stop is None else t_stop,
                          rec["clock"].k)
      self._rec_put(None)

  def _diverged(self, div):
    """Report a divergence (numjoco.engine.api.Divergence: MuJoCo's warning name, the bad index,
    the time) in the status; after an autoreset the history starts again from the new state.
    A recording ends at the last good frame, as `numjoco record` stops there."""
    with self._lock:
      self._status.divergences += 1
      self._status.last_divergence = str(div)
    self._record_stop(f"the simulation diverged: {div}", div.time)
    if div.reset:
      self._history_restart()
      self._warn0 = self.d.warning_number.copy()   # the reset cleared the counters

  def _chunk(self, n):
    """Step n steps in one compiled call (split at the sample times while recording); a step
    that meets a bad qpos, qvel or qacc (MuJoCo's checks) resets Data and ends the chunk."""
    m, d = self.m, self.d
    t = d.time
    rec = self._rec
    if rec is None:
      done, div = self._step(n)
    else:
      clock = rec["clock"]
      done, div = 0, None
      while done < n:
        want = max(1, min(n - done, clock.steps_to_next(d.time, m.opt.timestep)))
        k, div = self._step(want)
        done += k
        if div is not None and div.reset:
          break
        if clock.steps_to_next(d.time, m.opt.timestep) == 0:
          self._record_sample()
          if self._stop:
            return done
    from numjoco.engine.api import state_is_bad   # lazy: it loads the kernels
    if div is None and self._autoreset() and state_is_bad(d):
      # the last step left a bad qpos or qvel (e.g. its integration): the next step's check,
      # taken now, so that no snapshot shows it
      k, div = self._step(1)
      done += k
    if div is not None:
      self._diverged(div)
    w = d.warning_number
    if (w != self._warn0).any():
      new = []
      for i in np.nonzero(w != self._warn0)[0]:
        if int(i) in _CHECKED:   # reported as a divergence
          continue
        new.append(f"mjWARN_{mjtWarning(int(i)).name} x{int(w[i] - self._warn0[i])} "
                   f"(last at {_WARNING_INFO.get(int(i), 'info')} {int(d.warning_lastinfo[i])}) "
                   f"at t={d.time:.3g}")
      self._warn0 = w.copy()
      if new:
        with self._lock:
          self._status.warnings = (self._status.warnings + tuple(new))[-5:]
    if (div is not None and div.reset) or d.time < t:
      self._record_reanchor()
    return done

  def _autoreset(self):
    return not (self.m.opt.disableflags & numjoco.mjtDisableBit.AUTORESET)

  def _step(self, n):
    """`n` steps (numjoco.engine.api.step_checked), each step's state into the history when
    there is one; returns (steps taken, Divergence or None)."""
    from numjoco.engine.api import step_checked   # lazy: it loads the kernels
    hist = self.history
    if hist is None:
      return step_checked(self.m, self.d, n)
    done, div = step_checked(self.m, self.d, n, hist.rows, hist.head)
    if div is None or not div.reset:
      hist.stepped(done)
      self._set(history=hist.count)
    return done, div

  def _history_restart(self):
    """The history starts again from the current state (a load, reset or keyframe)."""
    if self.history is not None:
      self.history.clear(self.m, self.d)
      self._set(history=self.history.count, history_back=0)

  def _history_seek(self, back):
    """Set Data to the state `back` steps before the newest (paused only)."""
    hist = self.history
    if hist is None or not self.status().paused:
      raise ValueError("history: pause first (and the script's viewer keeps none)")
    if not 0 <= back < hist.count:
      raise ValueError(f"history: {back} steps back, {hist.count - 1} kept")
    from numjoco.engine.state import set_state
    set_state(self.m, self.d, hist.row(back))
    numjoco.forward(self.m, self.d)
    hist.back = back
    self._set(history_back=back)
    self._record_reanchor()

  def _history_continue(self):
    """Stepping or running from a past state drops the states after it."""
    if self.history is not None and self.history.back:
      self.history.truncate()
      self._set(history=self.history.count, history_back=0)

  def _run(self):
    try:
      if self._pending_model is not None:
        self._install(self._pending_model, self._path, first=True)
        self._pending_model = None
      elif self._path:
        if not self._load(self._path, first=True):
          self._set(paused=True)
    except Exception:  # noqa: BLE001
      self._set(error=traceback.format_exc(), paused=True)
    if self._wait_shown and not self._preview:
      self.first_shown.wait(SHOWN_WAIT)
    try:
      if self.m is not None:    # load the step kernel now, not at the first unpause
        numjoco.step(self.m, self.d, 0)
    except Exception:  # noqa: BLE001
      self._set(error=traceback.format_exc(), paused=True)
    cost = 1e-4            # wall seconds per step, running estimate
    sim0 = wall0 = None    # pacing anchor: sim time sim0 matches wall time wall0
    rtf_t, rtf_sim, rtf_steps = time.perf_counter(), 0.0, 0
    last_pub = 0.0
    while not self._stop:
      try:
        applied = False
        while True:
          try:
            name, args = self._cmds.get_nowait()
          except queue.Empty:
            break
          if self.m is None and name not in ("load", "call", "clear_error", "pause", "speed"):
            continue
          applied = True
          self._apply(name, args)
        st = self.status()
        if applied:
          sim0 = None  # any edit (reset, pause, speed) re-anchors the pacing
        if self.m is None or st.paused or st.error:
          sim0 = None
          self._set(rtf=0.0, steps_per_s=0.0)
          self._wake.wait(0.02)
          self._wake.clear()
          continue
        m, d = self.m, self.d
        h = m.opt.timestep
        now = time.perf_counter()
        if sim0 is None:
          sim0, wall0 = d.time, now
        max_n = max(1, int(CHUNK_WALL / cost))
        if math.isinf(st.speed):
          n = max_n
        else:
          target = sim0 + (now - wall0) * st.speed
          if target - d.time > MAX_LAG * st.speed:  # too slow to keep up: don't chase the past
            sim0, wall0 = d.time, now
            target = d.time + h
          n = min(max_n, int(math.ceil((target - d.time) / h - 1e-9)))
          if n <= 0:
            self._wake.wait(min(0.01, (d.time - target) / st.speed + 0.0005))
            self._wake.clear()
            continue
        t0 = time.perf_counter()
        c0 = time.thread_time()   # CPU time: being preempted on a busy machine is not cost
        t_before = d.time
        done = self._chunk(n)
        dt = time.thread_time() - c0
        cost = 0.8 * cost + 0.2 * max(dt / max(n, 1), 1e-7)
        if done < n or d.time < t_before:
          sim0 = None
        else:
          rtf_sim += d.time - t_before
        rtf_steps += n
        if not math.isinf(st.speed) or t0 - last_pub >= PUBLISH_MIN:   # fast mode: ~100 Hz
          self._publish()
          last_pub = t0
        if now - rtf_t > 0.5:
          self._set(rtf=rtf_sim / (now - rtf_t), steps_per_s=rtf_steps / (now - rtf_t))
          rtf_t, rtf_sim, rtf_steps = now, 0.0, 0
      except Exception:  # noqa: BLE001 - shown in the UI, worker stays alive and paused
        self._set(error=traceback.format_exc(), paused=True)
        sim0 = None
