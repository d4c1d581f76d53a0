"""Many worlds at once (mujoco.rollout's role): N copies of one state, each stepped `nstep`
times with its own initial qpos/qvel, controls and optionally its own Model, the state after
every step returned as arrays.

Each world runs in one compiled nogil call (`_run`: set the step's controls, `step`, copy
qpos, qvel and sensordata), the worlds spread over `numba.get_num_threads()` Python threads, as
mujoco.rollout spreads them over its threads. A thread pool and not a `parallel=True` kernel:
any thread may call it (numba's parallel layers abort the process when two threads launch
kernels at once, and the viewer's worker is one), and no kernel is compiled per model shape.
A world computes exactly what serial `step` calls compute: the same compiled code on its own
Data, so the results are equal bit for bit whatever the thread count.
"""
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from numjoco.engine import api, io, state as _state
from numjoco.engine import step as _step
from numjoco.engine._jit import jit


@jit
def _run(m, d, start, nstep, ctrl, qpos, qvel, sensordata):
  """Steps start..nstep-1 of one world: ctrl row s (when ctrl has rows) into d.ctrl before step
  s, the state after it into row s of qpos, qvel and sensordata. Returns the first step not
  done: nstep, or a step stopped by a failed check (autoreset: the caller finishes it)."""
  for s in range(start, nstep):
    if ctrl.shape[0] > 0:
      for i in range(ctrl.shape[1]):
        d.ctrl[i] = ctrl[s, i]
    if _step.step(m, d, 1) < 1:
      return s
    for i in range(qpos.shape[1]):
      qpos[s, i] = d.qpos[i]
    for i in range(qvel.shape[1]):
      qvel[s, i] = d.qvel[i]
    for i in range(sensordata.shape[1]):
      sensordata[s, i] = d.sensordata[i]
  return nstep


def _world(m, ms, d, ctrl, qpos, qvel, sensordata, world):
  """Roll one world out (`ms`: m.struct, linked by the caller once for all worlds: the property
  checks the options each time); a step that diverged is finished as `step` finishes it (reset,
  warned)."""
  nstep = qpos.shape[0]
  s = 0
  while s < nstep:
    before = d.warning_number.copy()
    s = _run(ms, d.struct, s, nstep, ctrl, qpos, qvel, sensordata)
    div = api.after_steps(m, d, before, s < nstep)
    if div is not None:   # step s stopped at a failed check: reset and finished, as `step` does
      warnings.warn(f"world {world}: {div}", RuntimeWarning, stacklevel=2)
      qpos[s], qvel[s], sensordata[s] = d.qpos, d.qvel, d.sensordata
      s += 1


def _leading(name, a, n, trailing):
  """`a` as a float64 array (n?, *trailing) and its leading dimension, checked."""
  a = np.ascontiguousarray(a, dtype=float)
  if a.ndim != 1 + len(trailing) or tuple(a.shape[1:]) != tuple(trailing):
    raise ValueError(f"rollout: {name} must have shape (N, {', '.join(map(str, trailing))}), "
                     f"got {a.shape}")
  if n is not None and a.shape[0] != n:
    raise ValueError(f"rollout: {name} has {a.shape[0]} worlds, another argument {n}")
  return a, a.shape[0]


def rollout(m, d, nstep, *, initial_qpos=None, initial_qvel=None, control=None, models=None):
  """Step N worlds `nstep` times from `d`'s state (its INTEGRATION state: time, qpos, qvel, act,
  controls, applied forces, mocap, warmstart...), world i with initial_qpos[i] (N, nq),
  initial_qvel[i] (N, nv), the controls control[i, s] (N, nstep, nu) before its step s, and
  Model models[i] when given (N Models of the same sizes, differing in parameters; else `m`).
  N is the leading dimension these share (1 when none is given). `d` is not changed.

  Returns {"qpos": (N, nstep, nq), "qvel": (N, nstep, nv), "sensordata": (N, nstep,
  nsensordata)}: the state after each step. The worlds run on numba.get_num_threads() threads
  (numba.set_num_threads, NUMBA_NUM_THREADS); the results equal N serial `step` runs bit for
  bit. A world whose step diverges warns and goes on from the reset state, as `step` does."""
  nstep = int(nstep)
  if nstep < 0:
    raise ValueError(f"rollout: nstep must be >= 0, got {nstep}")
  n = None
  if models is not None:
    models = list(models)
    n = len(models)
    for k, mk in enumerate(models):
      for size in ("nq", "nv", "nu", "nsensordata"):
        if getattr(mk, size) != getattr(m, size):
          raise ValueError(f"rollout: models[{k}] has {size}={getattr(mk, size)}, the model "
                           f"{getattr(m, size)}")
      if _state.state_size(mk) != _state.state_size(m):
        raise ValueError(f"rollout: models[{k}]'s state has another size than the model's")
  if initial_qpos is not None:
    initial_qpos, n = _leading("initial_qpos", initial_qpos, n, (m.nq,))
  if initial_qvel is not None:
    initial_qvel, n = _leading("initial_qvel", initial_qvel, n, (m.nv,))
  if control is not None:
    control, n = _leading("control", control, n, (nstep, m.nu))
  n = 1 if n is None else n
  x0 = _state.get_state(m, d)
  out = {"qpos": np.empty((n, nstep, m.nq)), "qvel": np.empty((n, nstep, m.nv)),
         "sensordata": np.empty((n, nstep, m.nsensordata))}
  if nstep == 0:
    return out
  no_ctrl = np.empty((0, m.nu))
  structs = {id(mi): mi.struct for mi in (models or [m])}
  resets = {}     # model id -> this call's reset state (the Model may have been edited since
                  # the last call), restored into every thread's Data of that model

  def data(mi):
    """This thread's Data of Model `mi` (made on first use, kept while `mi` lives)."""
    datas = _LOCAL.__dict__.setdefault("datas", weakref.WeakKeyDictionary())
    di = datas.get(mi)
    if di is None:
      di = datas[mi] = io.make_data(mi)
    return di

  def reset_image(mi, di):
    image = resets.get(id(mi))
    if image is None:   # (two threads may both make it: the same result)
      io.reset_data(mi, di)
      image = resets[id(mi)] = io.arena_copy(di)
    return image

  if models is None:    # before the threads start, once (it holds the GIL: 0.3 ms on hopper)
    reset_image(m, data(m))

  def run(i):
    """World i, on its thread's Data for its model, reset (a reset Data steps as a new one)."""
    mi = models[i] if models is not None else m
    di = data(mi)
    io.restore_arenas(di, reset_image(mi, di))   # memsets without the GIL
    ms = structs[id(mi)]
    _state.read_state(ms, di.struct, x0)
    if initial_qpos is not None:
      di.qpos[:] = initial_qpos[i]
    if initial_qvel is not None:
      di.qvel[:] = initial_qvel[i]
    _world(mi, ms, di, control[i] if control is not None else no_ctrl, out["qpos"][i],
           out["qvel"][i], out["sensordata"][i], i)
  threads = max(1, min(numba.get_num_threads(), n))
  if threads == 1:
    for i in range(n):
      run(i)
  else:
    for f in [_pool(threads).submit(run, i) for i in range(n)]:
      f.result()
  return out


# The worker threads and their Data outlive a call, as mujoco.rollout's persistent pool and the
# MjData it is given: a loop of rollouts (MPC, RL) does not start threads and allocate Data
# (0.7 ms of Python holding the GIL per Data) each time. One Data per thread and Model, dropped
# with the Model.
_LOCAL = threading.local()
_POOLS = {}
_POOLS_LOCK = threading.Lock()


def _pool(threads):
  """The persistent pool of `threads` worker threads."""
  with _POOLS_LOCK:
    pool = _POOLS.get(threads)
    if pool is None:
      pool = _POOLS[threads] = ThreadPoolExecutor(threads,
                                                  thread_name_prefix="numjoco-rollout")
    return pool
