"""Optional bridge to the `mujoco` package (tests, benchmarks, users comparing engines).

Imports `mujoco` lazily: nothing else in `engine/` depends on it.
"""
import numpy as np

from engine import io
from engine import types as t

_OBJ_COUNT = {
    t.mjtObj.BODY: "nbody", t.mjtObj.JOINT: "njnt", t.mjtObj.GEOM: "ngeom",
    t.mjtObj.SITE: "nsite", t.mjtObj.CAMERA: "ncam", t.mjtObj.LIGHT: "nlight",
    t.mjtObj.MATERIAL: "nmat", t.mjtObj.EQUALITY: "neq", t.mjtObj.TENDON: "ntendon",
    t.mjtObj.ACTUATOR: "nu", t.mjtObj.KEY: "nkey", t.mjtObj.PAIR: "npair",
    t.mjtObj.EXCLUDE: "nexclude",
}


def model_from_mujoco(mjm):
  """Build our Model from a compiled `mujoco.MjModel`, field by field (same names)."""
  import mujoco
  sizes = {k: getattr(mjm, k) for k in t.MODEL_SIZES if k != "nu"}
  sizes["nu"] = mjm.nu
  sizes["nconmax"], sizes["njmax"] = t.contact_capacity(sizes, mjm.nconmax, mjm.njmax)
  arrays = {}
  for name, dtype, shape in t.MODEL_TABLE:
    if name.startswith("opt_"):
      v = getattr(mjm.opt, name[4:])
    else:
      v = getattr(mjm, name, None)
      if v is None:
        continue
    arrays[name] = np.array(v, dtype=dtype).reshape(t.resolve_shape(shape, sizes))
  names = {}
  for obj, count in _OBJ_COUNT.items():
    names[obj] = [mujoco.mj_id2name(mjm, int(obj), i) or "" for i in range(sizes[count])]
  return io.Model(sizes, arrays, names)


def data_to_mujoco(d, mjd):
  """Copy our state (qpos, qvel, act, ctrl, applied forces, mocap, time) into a MjData."""
  for f in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "mocap_pos",
            "mocap_quat", "qacc_warmstart"):
    getattr(mjd, f)[...] = getattr(d, f)
  mjd.time = d.time


def data_from_mujoco(mjd, d):
  """Copy a MjData's state into our Data (the inverse of `data_to_mujoco`)."""
  for f in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "mocap_pos",
            "mocap_quat", "qacc_warmstart"):
    getattr(d, f)[...] = getattr(mjd, f)
  d.time = mjd.time
