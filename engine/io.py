"""Model and Data: Python objects over numba structrefs, sharing every array (zero-copy).

Compiled kernels take the structrefs (`m.struct`, `d.struct`); users, the renderer and the
tests read and write the same numpy arrays by MuJoCo's names (`d.qpos[:] = ...`).
"""
import numpy as np

from engine import _structs
from engine import types as t
from engine.visual import Statistic, Visual

_OPT_NAMES = {name[4:] for name, _, _ in t.MODEL_TABLE if name.startswith("opt_")}
_DATA_SCALARS = {"time": float, "ncon": int, "ne": int, "nf": int, "nl": int, "nefc": int,
                 "nisland": int, "nidof": int}


def _build(new, size_setter, setters, sizes, arrays):
  s = new()
  if size_setter is not None:
    size_setter(s, *[int(sizes[k]) for k in t.MODEL_SIZES])
  for fn, names in setters:
    fn(s, *[arrays[n] for n in names])
  return s


class Option:
  """`m.opt`: simulation options, read and written by MuJoCo's names (`m.opt.timestep`)."""

  def __init__(self, arrays):
    object.__setattr__(self, "_arrays", arrays)

  def __getattr__(self, name):
    if name not in _OPT_NAMES:
      raise AttributeError(f"Option has no field {name!r}")
    a = self._arrays["opt_" + name]
    return a.item() if a.shape == (1,) else a

  def __setattr__(self, name, value):
    if name not in _OPT_NAMES:
      raise AttributeError(f"Option has no field {name!r}")
    self._arrays["opt_" + name][...] = value

  def __dir__(self):
    return sorted(_OPT_NAMES)


class Model:
  """A compiled model: sizes, `opt`, and every mjModel field this engine uses, by MuJoCo's name."""

  def __init__(self, sizes, arrays, names=None, source=None):
    arrays = dict(arrays)
    visual, statistic = arrays.pop("_visual", {}), arrays.pop("_statistic", {})
    arrays = t.check_arrays(t.MODEL_TABLE, sizes, arrays, "Model")
    d = self.__dict__
    d.update({k: int(sizes[k]) for k in t.MODEL_SIZES})
    d.update({k: v for k, v in arrays.items() if not k.startswith("opt_")})
    d["_arrays"] = arrays
    d["opt"] = Option(arrays)
    d["vis"] = Visual(visual, arrays)
    d["stat"] = Statistic(statistic)
    d["names"] = names or {}  # mjtObj -> list of names ('' when unnamed)
    d["source"] = source
    d["struct"] = _build(_structs.new_model, _structs.MODEL_SIZE_SETTER, _structs.MODEL_SETTERS,
                         sizes, arrays)

  def __setattr__(self, name, value):
    arr = self._arrays.get(name)
    if arr is None:
      raise AttributeError(f"Model field {name!r} cannot be set (sizes are fixed at compile time)")
    arr[...] = value  # write in place: the compiled side shares this buffer

  def sizes(self):
    return {k: getattr(self, k) for k in t.MODEL_SIZES}


class Data:
  """Simulation state and everything computed from it, by MuJoCo's mjData names."""

  def __init__(self, m):
    sizes = m.sizes()
    arrays = t.check_arrays(t.DATA_TABLE, sizes, {}, "Data")
    d = self.__dict__
    d.update({k: v for k, v in arrays.items() if k not in _DATA_SCALARS})
    d["_arrays"] = arrays
    d["struct"] = _build(_structs.new_data, None, _structs.DATA_SETTERS, sizes, arrays)

  def __getattr__(self, name):
    if name in _DATA_SCALARS:
      return _DATA_SCALARS[name](self._arrays[name][0])
    raise AttributeError(f"Data has no field {name!r}")

  def __setattr__(self, name, value):
    arr = self._arrays.get(name)
    if arr is None:
      raise AttributeError(f"Data has no field {name!r}")
    arr[...] = value


def make_data(m):
  """Allocate Data for `m`, in the state `reset_data` gives."""
  d = Data(m)
  reset_data(m, d)
  return d


def reset_data(m, d, key=None):
  """Zero Data and set the state to qpos0 (or to keyframe `key`: index or name); history
  buffers start with MuJoCo's timestamps before t = 0, also for a keyframe's time."""
  for name, a in d._arrays.items():
    a[...] = 0
  d.qpos[:] = m.qpos0
  d.eq_active[:] = m.eq_active0
  d.plastic[:] = initial_plastic(m)
  reset_ctrl(m, d)
  from engine import history   # lazy: it defines kernels (see engine/__init__.py)
  history.reset_history(m, d)
  mocap_bodies = np.nonzero(m.body_mocapid >= 0)[0]
  for b in mocap_bodies:
    d.mocap_pos[m.body_mocapid[b]] = m.body_pos[b]
    d.mocap_quat[m.body_mocapid[b]] = m.body_quat[b]
  if key is None:
    return
  k = name2id(m, t.mjtObj.KEY, key) if isinstance(key, str) else int(key)
  if not 0 <= k < m.nkey:
    raise ValueError(f"keyframe {key!r} does not exist (model has {m.nkey})")
  d.time = m.key_time[k]
  d.qpos[:] = m.key_qpos[k]
  d.qvel[:] = m.key_qvel[k]
  d.act[:] = m.key_act[k]
  d.ctrl[:] = m.key_ctrl[k]
  d.plastic[:] = m.key_plastic[k]
  if m.nmocap:
    d.mocap_pos[:] = m.key_mpos[k].reshape(-1, 3)
    d.mocap_quat[:] = m.key_mquat[k].reshape(-1, 4)


def initial_plastic(m):
  """The plastic spring references mj_resetData starts from, read from the model's current
  qpos_spring and tendon_lengthspring."""
  from engine.mjcf._assemble import initial_plastic as from_arrays
  return from_arrays(m._arrays, m.nplastic)


def reset_ctrl(m, d):
  """Neutral controls (mj_resetCtrl): zero, but the identity for quaternion-commanded SO3
  servos."""
  d.ctrl[:] = 0
  for i in range(m.nactuator):
    if (m.actuator_gaintype[i] == t.mjtGain.SO3
        and m.actuator_ctrlspec[i] == t.mjtChart.QUAT):
      d.ctrl[m.actuator_ctrladr[i]] = 1.0


def _objtype(objtype):
  if isinstance(objtype, str):
    try:
      return t.mjtObj[objtype.upper()]
    except KeyError:
      raise ValueError(f"unknown object type {objtype!r}") from None
  return t.mjtObj(int(objtype))


def name2id(m, objtype, name):
  """Id of the object of `objtype` (mjtObj or 'body', 'joint', ...) called `name`, or -1."""
  names = m.names.get(_objtype(objtype), [])
  try:
    return names.index(name) if name else -1
  except ValueError:
    return -1


def id2name(m, objtype, i):
  """Name of object `i` of `objtype`, or None when it has none."""
  names = m.names.get(_objtype(objtype), [])
  return names[i] or None if 0 <= i < len(names) else None
