"""Data's state as one vector, as MuJoCo's mj_stateSize / mj_getState / mj_setState /
mj_copyState: the components picked by an mjtState bit mask, in mjtState's order (time, qpos,
qvel, act, history, qacc_warmstart, ctrl, qfrc_applied, xfrc_applied, eq_active, mocap_pos,
mocap_quat, userdata, plugin state, plastic). This engine has no userdata and no plugin state:
those components are empty, as in MuJoCo for a model without them.

`INTEGRATION` is everything mj_step reads besides the Model: setting a saved INTEGRATION state
and stepping gives the same trajectory bit for bit (the viewer's history relies on it)."""
import enum

import numpy as np

from numjoco.engine._jit import jit


class mjtState(enum.IntFlag):
  """MuJoCo's state components (mjtState) and their unions."""
  TIME = 1 << 0
  QPOS = 1 << 1
  QVEL = 1 << 2
  ACT = 1 << 3
  HISTORY = 1 << 4
  WARMSTART = 1 << 5
  CTRL = 1 << 6
  QFRC_APPLIED = 1 << 7
  XFRC_APPLIED = 1 << 8
  EQ_ACTIVE = 1 << 9
  MOCAP_POS = 1 << 10
  MOCAP_QUAT = 1 << 11
  USERDATA = 1 << 12
  PLUGIN = 1 << 13
  PLASTIC = 1 << 14
  PHYSICS = QPOS | QVEL | ACT | HISTORY | PLASTIC
  FULLPHYSICS = TIME | PHYSICS | PLUGIN
  USER = CTRL | QFRC_APPLIED | XFRC_APPLIED | EQ_ACTIVE | MOCAP_POS | MOCAP_QUAT | USERDATA
  INTEGRATION = FULLPHYSICS | USER | WARMSTART


# each single component and the Data field it is (None: not in this engine, always empty)
_FIELDS = ((mjtState.TIME, "time"), (mjtState.QPOS, "qpos"), (mjtState.QVEL, "qvel"),
           (mjtState.ACT, "act"), (mjtState.HISTORY, "history"),
           (mjtState.WARMSTART, "qacc_warmstart"), (mjtState.CTRL, "ctrl"),
           (mjtState.QFRC_APPLIED, "qfrc_applied"), (mjtState.XFRC_APPLIED, "xfrc_applied"),
           (mjtState.EQ_ACTIVE, "eq_active"), (mjtState.MOCAP_POS, "mocap_pos"),
           (mjtState.MOCAP_QUAT, "mocap_quat"), (mjtState.USERDATA, None),
           (mjtState.PLUGIN, None), (mjtState.PLASTIC, "plastic"))
INTEGRATION = mjtState.INTEGRATION


def _check(spec):
  spec = int(spec)
  if spec < 0 or spec >= 1 << len(_FIELDS):
    raise ValueError(f"invalid state spec {spec}: a mask of mjtState bits below {1 << len(_FIELDS)}")
  return spec


def _arrays(d, spec):
  """The Data arrays of the components in `spec`, in order (time as a 1-element array)."""
  out = []
  for bit, name in _FIELDS:
    if spec & bit and name is not None:
      out.append(d.array(name) if name == "time" else getattr(d, name))
  return out


def state_size(m, spec=INTEGRATION):
  """Length of the state vector of components `spec` (mj_stateSize)."""
  spec = _check(spec)
  sizes = {"time": 1, "qpos": m.nq, "qvel": m.nv, "act": m.na, "history": m.nhistory,
           "qacc_warmstart": m.nv, "ctrl": m.nu, "qfrc_applied": m.nv,
           "xfrc_applied": 6 * m.nbody, "eq_active": m.neq, "mocap_pos": 3 * m.nmocap,
           "mocap_quat": 4 * m.nmocap, "plastic": m.nplastic}
  return sum(sizes[name] for bit, name in _FIELDS if spec & bit and name is not None)


def get_state(m, d, spec=INTEGRATION, out=None):
  """The components `spec` of Data as one float64 vector (mj_getState); into `out` if given."""
  spec = _check(spec)
  n = state_size(m, spec)
  if out is None:
    out = np.empty(n)
  elif out.shape != (n,):
    raise ValueError(f"state vector of {out.shape} for a state of size {n}")
  k = 0
  for a in _arrays(d, spec):
    out[k:k + a.size] = a.ravel()
    k += a.size
  return out


def set_state(m, d, state, spec=INTEGRATION):
  """Write the components `spec` of Data from a vector made by get_state (mj_setState)."""
  spec = _check(spec)
  state = np.asarray(state, float)
  n = state_size(m, spec)
  if state.shape != (n,):
    raise ValueError(f"state vector of {state.shape} for a state of size {n}")
  k = 0
  for a in _arrays(d, spec):
    a.ravel()[:] = state[k:k + a.size]    # Data's arrays are contiguous: ravel is a view
    k += a.size


def copy_state(m, src, dst, spec=INTEGRATION):
  """Copy the components `spec` from Data `src` to Data `dst` (mj_copyState)."""
  spec = _check(spec)
  for a, b in zip(_arrays(src, spec), _arrays(dst, spec)):
    b[...] = a


@jit
def write_state(m, d, row):
  """The INTEGRATION state into `row` (get_state's layout, compiled: the step loop that keeps
  the viewer's history calls it after every step)."""
  row[0] = d.time[0]
  k = 1
  for a in (d.qpos, d.qvel, d.act, d.history, d.qacc_warmstart, d.ctrl, d.qfrc_applied):
    for i in range(a.shape[0]):
      row[k + i] = a[i]
    k += a.shape[0]
  for b in range(d.xfrc_applied.shape[0]):
    for j in range(6):
      row[k + 6 * b + j] = d.xfrc_applied[b, j]
  k += 6 * d.xfrc_applied.shape[0]
  for i in range(d.eq_active.shape[0]):
    row[k + i] = 1.0 if d.eq_active[i] else 0.0
  k += d.eq_active.shape[0]
  for i in range(d.mocap_pos.shape[0]):
    for j in range(3):
      row[k + 3 * i + j] = d.mocap_pos[i, j]
  k += 3 * d.mocap_pos.shape[0]
  for i in range(d.mocap_quat.shape[0]):
    for j in range(4):
      row[k + 4 * i + j] = d.mocap_quat[i, j]
  k += 4 * d.mocap_quat.shape[0]
  for i in range(d.plastic.shape[0]):
    row[k + i] = d.plastic[i]


@jit
def read_state(m, d, row):
  """The INTEGRATION state from `row` (get_state's layout) into Data: set_state compiled, for
  rollout's worlds, which each start from a state without holding the GIL."""
  d.time[0] = row[0]
  k = 1
  for a in (d.qpos, d.qvel, d.act, d.history, d.qacc_warmstart, d.ctrl, d.qfrc_applied):
    for i in range(a.shape[0]):
      a[i] = row[k + i]
    k += a.shape[0]
  for b in range(d.xfrc_applied.shape[0]):
    for j in range(6):
      d.xfrc_applied[b, j] = row[k + 6 * b + j]
  k += 6 * d.xfrc_applied.shape[0]
  for i in range(d.eq_active.shape[0]):
    d.eq_active[i] = row[k + i] != 0.0
  k += d.eq_active.shape[0]
  for i in range(d.mocap_pos.shape[0]):
    for j in range(3):
      d.mocap_pos[i, j] = row[k + 3 * i + j]
  k += 3 * d.mocap_pos.shape[0]
  for i in range(d.mocap_quat.shape[0]):
    for j in range(4):
      d.mocap_quat[i, j] = row[k + 4 * i + j]
  k += 4 * d.mocap_quat.shape[0]
  for i in range(d.plastic.shape[0]):
    d.plastic[i] = row[k + i]
