"""Model and Data: Python objects over numba structrefs, sharing every array (zero-copy).

Compiled kernels take the structrefs (`m.struct`, `d.struct`); users, the renderer and the
tests read and write the same numpy arrays by MuJoCo's names (`d.qpos[:] = ...`).
"""
import warnings

import numpy as np

from numjoco.engine import _jit, _sig, _structs
from numjoco.engine._borrow import release_allocation
from numjoco.engine import preview
from numjoco.engine import types as t
from numjoco.engine.visual import Statistic, Visual

_OPT_NAMES = {name[4:] for name, _, _ in t.MODEL_TABLE if name.startswith("opt_")}
_DATA_SCALARS = {"time": float, "ncon": int, "ne": int, "nf": int, "nl": int, "nefc": int,
                 "nisland": int, "nidof": int, "ntree_awake": int, "nbody_awake": int,
                 "nparent_awake": int, "nv_awake": int}


def _build(new, size_setter, setters, sizes, arrays):
  s = release_allocation(new())   # the handle's reference only (engine/_borrow.py)
  if size_setter is not None:
    size_setter(s, *[int(sizes[k]) for k in t.MODEL_SIZES])
  for fn, names in setters:
    fn(s, *[arrays[n] for n in names])
  return s


class Option:
  """`m.opt`: simulation options, read and written by MuJoCo's names (`m.opt.timestep`)."""

  def __init__(self, arrays):
    object.__setattr__(self, "_arrays", arrays)
    object.__setattr__(self, "_version", 0)   # counts writes: Model.struct's cheap check

  def __getattr__(self, name):
    if name not in _OPT_NAMES:
      raise AttributeError(f"Option has no field {name!r}")
    a = self._arrays["opt_" + name]
    return a.item() if a.shape == (1,) else a

  def __setattr__(self, name, value):
    if name not in _OPT_NAMES:
      raise AttributeError(f"Option has no field {name!r}")
    self._arrays["opt_" + name][...] = value
    object.__setattr__(self, "_version", self._version + 1)

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
    d["_struct"] = None   # built on first use (engine/build.py compiles its setters apart)
    d["_linked"] = None
    d["_linked_version"] = None   # m.opt's write count when the options were last checked

  @classmethod
  def from_compiled(cls, compiled):
    """The Model of a compiled model (engine/preview.Compiled: the MJCF compiler's arrays,
    shared, not copied) before mj_setConst's constants: what api.build_model completes."""
    arrays = dict(compiled.arrays, _visual=compiled.visual, _statistic=compiled.statistic)
    m = cls(dict(compiled.sizes), arrays, compiled.names, source=compiled.path)
    m.__dict__["lropt"] = compiled.lropt   # compiler <lengthrange> options (engine/lengthrange)
    return m

  @property
  def struct(self):
    """The compiled-side Model. Its use links the engine units this model needs with its
    current options (engine/_jit.py: a model without flexes never compiles the flex units, one
    on the Euler integrator not RK4's), again after an option they depend on changed."""
    version = self.opt._version     # the options change only through m.opt's setter
    if self._linked_version != version:
      key = _sig.OPTION_KEY(self)
      if self._linked != key:
        # every unit is defined once the pipeline's modules are imported (step reaches all
        # stages and integrators, inverse the inverse pass): a unit defined after linking
        # would stay a trap
        from numjoco.engine import inverse, step  # noqa: F401
        _jit.link_for(self)
        self.__dict__["_linked"] = key
      self.__dict__["_linked_version"] = version
    return self.unlinked_struct()

  def unlinked_struct(self):
    """The compiled-side Model without linking any unit (built on first use: compiling its
    setters is a share of the first run that engine/build.py runs beside the units)."""
    if self._struct is None:
      self.__dict__["_struct"] = _build(_structs.new_model, _structs.MODEL_SIZE_SETTER,
                                        _structs.MODEL_SETTERS, self.sizes(), self._arrays)
    return self._struct

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
    d["_arenas"] = _arena(arrays, RESET_KEEPS)
    d.update({k: v for k, v in arrays.items() if k not in _DATA_SCALARS})
    d["_arrays"] = arrays
    d["struct"] = _build(_structs.new_data, None, _structs.DATA_SETTERS, sizes, arrays)

  def __getattr__(self, name):
    if name in _DATA_SCALARS:
      return _DATA_SCALARS[name](self._arrays[name][0])
    raise AttributeError(f"Data has no field {name!r}")

  def array(self, name):
    """The array of field `name` itself, a scalar's (time, ncon, ...) as a 1-element array
    (writing it writes Data)."""
    return self._arrays[name]

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


_ALIGN = 64   # bytes: each array of an arena starts on a cache line, as malloc'd ones roughly do


def _arena(arrays, keep):
  """Re-home the arrays (but those named in `keep`) as views of one zeroed buffer per dtype,
  each view starting on an `_ALIGN`-byte boundary; returns the buffers. A reset then zeroes a
  few buffers instead of hundreds of arrays (mj_resetData's one memset of its arena)."""
  by_dtype = {}
  for name, a in arrays.items():
    if name not in keep:
      by_dtype.setdefault(a.dtype, []).append(name)
  arenas = []
  for dtype, names in by_dtype.items():
    per = max(1, _ALIGN // dtype.itemsize)      # elements per alignment step
    offsets, n = [], 0
    for name in names:
      offsets.append(n)
      n += -(-arrays[name].size // per) * per
    buf = np.zeros(n + per, dtype)
    shift = (-buf.ctypes.data % _ALIGN) // dtype.itemsize if _ALIGN % dtype.itemsize == 0 else 0
    for name, o in zip(names, offsets):
      a = arrays[name]
      arrays[name] = buf[shift + o:shift + o + a.size].reshape(a.shape)
    arenas.append(buf)
  return arenas


# Collision work buffers a reset leaves as they are: GJK/EPA scratch, which every narrowphase
# call writes before it reads, and the mesh cache in them, whose entries check themselves
# against the mesh (collision/convex.py's set_mesh). They are sized for the model's largest
# hulls (tens of MB on a mesh-heavy robot): zeroing them would cost milliseconds per reset and
# keep every Data resident at its full size. mj_resetData likewise leaves its arena alone.
RESET_KEEPS = frozenset(("col_fbuf", "col_ibuf"))


def reset_data(m, d, key=None):
  """Zero Data (all but RESET_KEEPS) and set the state to qpos0 (or to keyframe `key`: index
  or name); history buffers start with MuJoCo's timestamps before t = 0, also for a keyframe's
  time. The stage timers are cleared but stay on if they were (MuJoCo's mjcb_time outlives a
  reset)."""
  timing = bool(d.timer_on[0])
  for buf in d._arenas:      # every array but RESET_KEEPS (Data's arenas)
    buf[...] = 0
  d.timer_on[0] = timing
  d.qpos[:] = m.qpos0
  d.eq_active[:] = m.eq_active0
  d.plastic[:] = initial_plastic(m)
  reset_ctrl(m, d)
  from numjoco.engine import history   # lazy: it defines kernels (see engine/__init__.py)
  history.reset_history(m, d)
  mocap_bodies = np.nonzero(m.body_mocapid >= 0)[0]
  for b in mocap_bodies:
    d.mocap_pos[m.body_mocapid[b]] = m.body_pos[b]
    d.mocap_quat[m.body_mocapid[b]] = m.body_quat[b]
  _reset_sleep(m, d)
  if key is None:
    return
  k = name2id(m, t.mjtObj.KEY, key) if isinstance(key, str) else int(key)
  if not 0 <= k < m.nkey:
    raise ValueError(f"keyframe {key!r} does not exist (model has {m.nkey})")
  d.time = m.key_time[k]
  preview.set_key(m, d, k)
  d.plastic[:] = m.key_plastic[k]


def arena_copy(d):
  """A copy of Data's arenas (every array but RESET_KEEPS): taken right after reset_data,
  `restore_arenas(d, copy)` puts Data back in the reset state with a few memsets (numpy releases
  the GIL for them) where reset_data is Python work that holds it (rollout resets a Data for
  every world)."""
  out = []
  for buf in d._arenas:
    nz = np.flatnonzero(buf)    # a reset Data is mostly zeros: kept as its non-zero entries
    out.append((nz, buf[nz]))
  return out


def restore_arenas(d, copy):
  """Data's arenas from `arena_copy(d)`: zeroed (a memset without the GIL), then the non-zero
  entries put back."""
  for buf, (nz, values) in zip(d._arenas, copy):
    buf[...] = 0
    buf[nz] = values


def _reset_sleep(m, d):
  """Every tree awake; with the sleep flag, trees whose root body has sleep="init" are put to
  sleep (mj_resetData). When one cannot sleep (it moves at qpos0, or its island holds a tree
  that may not sleep), every tree stays awake and a warning names the first, as MuJoCo does."""
  from numjoco.engine import sleep   # lazy: it defines kernels (see engine/__init__.py)
  sleep.reset_state(m.struct, d.struct)
  init = np.nonzero(m.tree_sleep_policy == sleep.POLICY_INIT)[0]
  if not (m.opt.enableflags & int(t.mjtEnableBit.SLEEP)) or not len(init):
    return
  from numjoco.engine.step import sleep_init
  n = sleep_init(m.struct, d.struct)
  if n != len(init):
    bad = next(i for i in init if d.tree_asleep[i] < 0)
    root = int(m.tree_bodyadr[bad])
    name = m.names.get(t.mjtObj.BODY, [""] * m.nbody)[root] if m.names else ""
    warnings.warn(f"{len(init)} trees were marked as sleep='init' but only {n} could be "
                  f"slept. Body '{name}' (id={root}) is the root of the first tree that could "
                  "not be slept.", stacklevel=3)
    d.tree_asleep[init] = sleep.AWAKE_VALUE   # (as in MuJoCo, the other trees keep theirs)
    d.tree_asleep[d.tree_asleep >= 0] = sleep.AWAKE_VALUE
    sleep.update(m.struct, d.struct)


def initial_plastic(m):
  """The plastic spring references mj_resetData starts from, read from the model's current
  qpos_spring and tendon_lengthspring."""
  return t.initial_plastic(m._arrays, m.nplastic)


def reset_ctrl(m, d):
  """Neutral controls (mj_resetCtrl): zero, but the identity for quaternion-commanded SO3
  servos."""
  d.ctrl[:] = 0
  quat = (m.actuator_gaintype == int(t.mjtGain.SO3)) & (m.actuator_ctrlspec == int(t.mjtChart.QUAT))
  d.ctrl[m.actuator_ctrladr[quat]] = 1.0


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
