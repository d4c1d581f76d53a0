"""Optional bridge to the `mujoco` package (tests, benchmarks, users comparing engines).

Imports `mujoco` lazily: nothing else in `engine/` depends on it.
"""
import numpy as np

from numjoco.engine import io
from numjoco.engine import types as t
from numjoco.engine.mjcf._assemble import DRAW_FIELDS, DRAW_SIZES
from numjoco.engine.visual import STATISTIC_DEFAULTS, VISUAL_DEFAULTS

_OBJ_COUNT = {
    t.mjtObj.BODY: "nbody", t.mjtObj.JOINT: "njnt", t.mjtObj.GEOM: "ngeom",
    t.mjtObj.SITE: "nsite", t.mjtObj.CAMERA: "ncam", t.mjtObj.LIGHT: "nlight",
    t.mjtObj.MATERIAL: "nmat", t.mjtObj.EQUALITY: "neq", t.mjtObj.TENDON: "ntendon",
    t.mjtObj.ACTUATOR: "nactuator", t.mjtObj.KEY: "nkey", t.mjtObj.PAIR: "npair",
    t.mjtObj.EXCLUDE: "nexclude", t.mjtObj.SENSOR: "nsensor", t.mjtObj.MESH: "nmesh",
    t.mjtObj.HFIELD: "nhfield",
}


def model_from_mujoco(mjm):
  """Build our Model from a compiled `mujoco.MjModel`, field by field (same names)."""
  import mujoco
  sizes = {k: getattr(mjm, k, -1) for k in t.MODEL_SIZES}
  sizes.update(t.contact_capacity(sizes, mjm.nconmax, mjm.njmax, mjm.opt.ccd_iterations,
                                  t.efc_row_nnz_of(mjm)))
  arrays = {}
  for name, dtype, shape in t.MODEL_TABLE:
    if name.startswith("opt_"):
      v = getattr(mjm.opt, name[4:])
    elif name.startswith("vis_map_"):
      v = [getattr(mjm.vis.map, name[8:])]
    else:
      v = getattr(mjm, name, None)
      if v is None:
        continue
    arrays[name] = np.array(v, dtype=dtype).reshape(t.resolve_shape(shape, sizes))
  names = {}
  for obj, count in _OBJ_COUNT.items():
    names[obj] = [mujoco.mj_id2name(mjm, int(obj), i) or "" for i in range(sizes[count])]
  # textures: drawing data kept beside the compiled struct (see engine/mjcf/_assemble.py)
  names[t.mjtObj.TEXTURE] = [mujoco.mj_id2name(mjm, int(t.mjtObj.TEXTURE), i) or ""
                             for i in range(mjm.ntex)]
  if mjm.nskin:   # as the compiler: skin names only in models with skins
    names[t.mjtObj.SKIN] = [mujoco.mj_id2name(mjm, int(t.mjtObj.SKIN), i) or ""
                            for i in range(mjm.nskin)]
  for name in DRAW_SIZES:
    arrays[name] = int(getattr(mjm, name))
  for name in DRAW_FIELDS:
    arrays[name] = np.array(getattr(mjm, name))
  vis = {}
  for g, attrs in VISUAL_DEFAULTS.items():
    group = getattr(mjm.vis, "global_" if g == "global" else g)
    vals = {k: np.asarray(getattr(group, k)).tolist() for k in attrs}
    vis[g] = {k: v for k, v in vals.items() if v != []}  # some rgba entries are not bound
  stat = {k: np.asarray(getattr(mjm.stat, k)).tolist() for k in STATISTIC_DEFAULTS}
  if sizes.get("nplugin", 0) > 0:   # engine-only: which plugin, its parameters, PID gains
    from numjoco.engine.mjcf._plugin import PID, pid_prm, plugin_arrays
    kinds, params = plugin_arrays(mjm.plugin, mjm.plugin_attr, mjm.plugin_attradr)
    arrays["plugin_kind"], arrays["plugin_param"] = kinds, params
    prm = np.zeros((mjm.nactuator, 5))
    for i, p in enumerate(mjm.actuator_plugin):
      if p >= 0 and kinds[p] == PID:
        prm[i] = pid_prm(params[p, :5])
    arrays["actuator_pluginprm"] = prm
  m = io.Model(sizes, dict(arrays, _visual=vis), names)
  m.stat.user = stat
  m.stat.apply_user()
  return m


def data_to_mujoco(d, mjd):
  """Copy our state (qpos, qvel, act, ctrl, applied forces, mocap, plastic, control and
  sensor history, time) into a MjData."""
  for f in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "mocap_pos",
            "mocap_quat", "qacc_warmstart", "eq_active", "plastic", "history"):
    getattr(mjd, f)[...] = getattr(d, f)
  mjd.time = d.time


def data_from_mujoco(mjd, d):
  """Copy a MjData's state into our Data (the inverse of `data_to_mujoco`)."""
  for f in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "mocap_pos",
            "mocap_quat", "qacc_warmstart", "eq_active", "plastic", "history"):
    getattr(d, f)[...] = getattr(mjd, f)
  d.time = mjd.time


_CONTACT_FIELDS = ("dist", "pos", "frame", "includemargin", "friction", "solref",
                   "solreffriction", "solimp", "mu", "H", "dim", "geom1", "geom2", "exclude",
                   "efc_address", "adhesion", "surfacevel")
_EFC_FIELDS = ("type", "id", "pos", "margin", "frictionloss", "diagA", "KBIP", "D", "R", "vel",
               "aref", "b", "force", "state")


def efc_J_dense(mjm, mjd):
  """MuJoCo's efc_J as a dense (nefc, nv) array, whether MuJoCo stored it sparse or not."""
  import mujoco
  nefc, nv = mjd.nefc, mjm.nv
  if not mujoco.mj_isSparse(mjm):
    return np.array(mjd.efc_J[:nefc * nv]).reshape(nefc, nv)
  J = np.zeros((nefc, nv))
  for i in range(nefc):
    a, n = mjd.efc_J_rowadr[i], mjd.efc_J_rownnz[i]
    J[i, mjd.efc_J_colind[a:a + n]] = mjd.efc_J[a:a + n]
  return J


def efc_J_to_dense(d):
  """Our sparse efc_J rows (efc_J_rownnz / rowadr / colind) as a dense (nefc, nv) array."""
  nefc, nv = int(d.nefc), d.qvel.shape[0]
  J = np.zeros((nefc, nv))
  for i in range(nefc):
    a, n = d.efc_J_rowadr[i], d.efc_J_rownnz[i]
    J[i, d.efc_J_colind[a:a + n]] = d.efc_J[a:a + n]
  return J


def efc_J_from_dense(d, J):
  """Store the dense rows J (nefc, nv) into our sparse efc_J rows (nonzeros only)."""
  adr = 0
  for i in range(J.shape[0]):
    cols = np.flatnonzero(J[i])
    n = cols.size
    d.efc_J_rowadr[i] = adr
    d.efc_J_rownnz[i] = n
    d.efc_J_colind[adr:adr + n] = cols
    d.efc_J[adr:adr + n] = J[i, cols]
    adr += n


def contacts_from_mujoco(mjd, d):
  """Copy MuJoCo's contact list into our contact_* arrays (tests feed later stages with it)."""
  n = mjd.ncon
  if n > d.contact_dist.shape[0]:
    raise ValueError(f"{n} contacts do not fit nconmax={d.contact_dist.shape[0]}")
  d.ncon = n
  c = mjd.contact
  for f in _CONTACT_FIELDS:
    dst = getattr(d, "contact_" + f)
    dst[:n] = np.asarray(getattr(c, f)).reshape((n,) + dst.shape[1:])


def efc_from_mujoco(mjm, mjd, d):
  """Copy MuJoCo's constraint rows (efc_*, ne/nf/nl/nefc, J into our sparse rows) and
  contacts into ours."""
  contacts_from_mujoco(mjd, d)
  n = mjd.nefc
  if n > d.efc_pos.shape[0]:
    raise ValueError(f"{n} constraint rows do not fit njmax={d.efc_pos.shape[0]}")
  if mjd.nJ > d.efc_J.shape[0]:
    raise ValueError(f"{mjd.nJ} constraint Jacobian nonzeros do not fit nJmax={d.efc_J.shape[0]}")
  for k in ("ne", "nf", "nl", "nefc"):
    setattr(d, k, getattr(mjd, k))
  for f in _EFC_FIELDS:
    dst = getattr(d, "efc_" + f)
    dst[:n] = np.asarray(getattr(mjd, "efc_" + f)).reshape((n,) + dst.shape[1:])
  efc_J_from_dense(d, efc_J_dense(mjm, mjd))
