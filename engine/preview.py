"""A model's first picture before its physics loads (the model on screen within about a second).

`Compiled(path)` parses and compiles an MJCF file with numpy only: no numba, whose import and
first cache load take longer than everything else on the way to the first frame. Its
`preview(key)` gives a Model-like object (MuJoCo's field names, m.vis, m.stat) and a Data-like
object posed by a numpy forward kinematics at qpos0 or a keyframe: body, inertial, geom, site,
joint, camera and light frames and flex vertices (mj_kinematics, the subtree_com of mj_comPos,
mj_camlight, mj_flex's vertex positions) and m.stat as mj_setConst computes it. That is enough
to draw the scene exactly as the first physics frame will show it. `api.build_model(compiled)`
then builds the engine's Model from the same arrays (it imports numba; the viewer does it on
its worker thread after the first frame); `numjoco.load_model(path)` is the two in a row.

Not in the preview: contacts, paths of tendons that wrap around geoms (drawn once the physics
runs), energy.
"""
import math

import numpy as np

from numjoco.engine import rotation
from numjoco.engine import types as t
from numjoco.engine.visual import Statistic, Visual

_FREE, _BALL, _SLIDE = int(t.mjtJoint.FREE), int(t.mjtJoint.BALL), int(t.mjtJoint.SLIDE)
_PLANE = int(t.mjtGeom.PLANE)
_WRAP_JOINT, _WRAP_PULLEY = int(t.mjtWrap.JOINT), int(t.mjtWrap.PULLEY)
_WRAP_GEOMS = (int(t.mjtWrap.SPHERE), int(t.mjtWrap.CYLINDER))
_SF_BODY, _SF_INERTIA, _SF_BODYROT, _SF_INERTIAROT = 1, 2, 3, 4     # mjtSameFrame
_TRACK, _TRACKCOM, _TARGETBODY, _TARGETBODYCOM = 1, 2, 3, 4          # mjtCamLight
_DATA_SCALARS = ("time", "ncon", "ne", "nf", "nl", "nefc", "nisland", "nidof")


class PreviewModel:
  """Model fields by MuJoCo's names (the compiled arrays, shared with the Model that
  api.build_model builds), sizes, names, `vis` and `stat`; no compiled structure, no `opt`."""

  def __init__(self, sizes, arrays, names, source, visual, statistic):
    d = self.__dict__
    d.update({k: int(v) for k, v in sizes.items()})
    d.update({k: v for k, v in arrays.items() if not k.startswith("opt_")})
    d["_arrays"] = arrays
    d["vis"] = Visual(visual, arrays)
    d["stat"] = Statistic(statistic)
    d["names"] = names
    d["source"] = source
    d["preview"] = True


class PreviewData:
  """Data fields by MuJoCo's names with the engine's shapes (zeros), the posed ones filled by
  `kinematics`."""

  def __init__(self, sizes):
    self._arrays = {name: np.zeros(t.resolve_shape(shape, sizes), dtype)
                    for name, dtype, shape in t.DATA_TABLE}

  def __getattr__(self, name):
    try:
      a = self.__dict__["_arrays"][name]
    except KeyError:
      raise AttributeError(f"Data has no field {name!r}") from None
    return a[0].item() if name in _DATA_SCALARS else a


class Compiled:
  """An MJCF model compiled to arrays (numpy only); `preview()` poses it, api.build_model
  makes the engine's Model of it."""

  def __init__(self, source, assets=None, simulated=True):
    """Parse and compile `source` (a file path or an XML string) as numjoco.load_model does;
    errors are the compiler's (MjcfError naming the file, line and element). `simulated=False`
    also compiles the flex features the engine does not simulate (tests of the compiler)."""
    from numjoco.engine.mjcf import compile_model
    sizes, arrays, names = compile_model(source, assets, simulated=simulated)
    self.path = (source if isinstance(source, str) and not source.lstrip().startswith("<")
                 else None)
    self.lropt = arrays.pop("_lengthrange")
    self.visual, self.statistic = arrays.pop("_visual", {}), arrays.pop("_statistic", {})
    self.sizes, self.names = sizes, names
    self.arrays = t.check_arrays(t.MODEL_TABLE, sizes, arrays, "Model")
    self._model = None

  @property
  def model(self):
    """The PreviewModel (one per Compiled): set_fixed's subtree masses and m.stat filled."""
    if self._model is None:
      m = PreviewModel(self.sizes, self.arrays, self.names, self.path, self.visual,
                       self.statistic)
      d = self.pose()
      set_stat(m, d)
      m.stat.apply_user()
      self._model = m
    return self._model

  def pose(self, key=None):
    """A PreviewData at qpos0 (or keyframe `key`: index or name), posed as mj_forward poses
    it: kinematics, subtree_com, cameras and lights (tracking ones as set_const sets them up)."""
    m = self._model or PreviewModel(self.sizes, self.arrays, self.names, self.path, {}, {})
    d0 = PreviewData(self.sizes)
    reset(m, d0)
    ref = kinematics(m, d0)
    if key is None:
      return d0
    d = PreviewData(self.sizes)
    reset(m, d, key)
    kinematics(m, d, ref)
    return d

  def preview(self, key=None):
    """(PreviewModel, PreviewData at qpos0 or at keyframe `key`)."""
    return self.model, self.pose(key)


def reset(m, d, key=None):
  """qpos, mocap poses (and time, qvel, act, ctrl) as engine.io.reset_data sets them."""
  d.qpos[:] = m.qpos0
  mocap = np.nonzero(m.body_mocapid >= 0)[0]
  d.mocap_pos[m.body_mocapid[mocap]] = m.body_pos[mocap]
  d.mocap_quat[m.body_mocapid[mocap]] = m.body_quat[mocap]
  if key is None:
    return
  names = m.names.get(t.mjtObj.KEY, [])
  k = (names.index(key) if key in names else -1) if isinstance(key, str) else int(key)
  if not 0 <= k < m.nkey:
    raise ValueError(f"keyframe {key!r} does not exist (model has {m.nkey})")
  d._arrays["time"][0] = m.key_time[k]
  set_key(m, d, k)


def set_key(m, d, k):
  """qpos, qvel, act, ctrl and the mocap poses of keyframe k (mj_resetDataKeyframe sets these,
  and time and the plastic state, which the callers set on their kind of Data)."""
  d.qpos[:] = m.key_qpos[k]
  d.qvel[:] = m.key_qvel[k]
  d.act[:] = m.key_act[k]
  d.ctrl[:] = m.key_ctrl[k]
  if m.nmocap:
    d.mocap_pos[:] = m.key_mpos[k].reshape(-1, 3)
    d.mocap_quat[:] = m.key_mquat[k].reshape(-1, 4)


# ---------------------------------------------------------------------------- kinematics

def _local_to_global(d, body, pos, quat, sameframe, xpos_out, xquat_out, xmat_out):
  """Frames of objects attached to `body` at (pos, quat) (mj_local2Global, vectorised)."""
  if len(body) == 0:
    return
  sf = np.asarray(sameframe)
  xpos = np.stack(rotation.mulmatvec(d.xmat[body].T, pos.T), 1) + d.xpos[body]
  on_body, on_inertia = sf == _SF_BODY, sf == _SF_INERTIA
  xpos[on_body] = d.xpos[body[on_body]]
  xpos[on_inertia] = d.xipos[body[on_inertia]]
  xquat = rotation.quat_mul(d.xquat[body].T, quat.T).T
  xmat = rotation.quat2mat_rows(xquat)
  rot_body = on_body | (sf == _SF_BODYROT)
  rot_inertia = on_inertia | (sf == _SF_INERTIAROT)
  xquat[rot_body], xmat[rot_body] = d.xquat[body[rot_body]], d.xmat[body[rot_body]]
  xquat[rot_inertia] = d.xiquat[body[rot_inertia]]
  xmat[rot_inertia] = d.ximat[body[rot_inertia]]
  xpos_out[:], xmat_out[:] = xpos, xmat
  if xquat_out is not None:
    xquat_out[:] = xquat


def _bodies(m, d):
  """Body frames, joint anchors and axes (mj_kinematics' tree walk)."""
  qpos, qpos0 = d.qpos, m.qpos0
  d.xquat[0] = (1.0, 0.0, 0.0, 0.0)
  xpos, xquat = d.xpos, d.xquat
  for i in range(1, m.nbody):
    jntadr, jntnum = int(m.body_jntadr[i]), int(m.body_jntnum[i])
    if jntnum == 1 and m.jnt_type[jntadr] == _FREE:
      a = int(m.jnt_qposadr[jntadr])
      x = tuple(float(v) for v in qpos[a:a + 3])
      q = rotation.normalize_quat([float(v) for v in qpos[a + 3:a + 7]])
      d.xanchor[jntadr] = x
      d.xaxis[jntadr] = m.jnt_axis[jntadr]
    else:
      pid, mocap = int(m.body_parentid[i]), int(m.body_mocapid[i])
      if mocap >= 0:
        b = tuple(float(v) for v in d.mocap_pos[mocap])
        r = rotation.normalize_quat([float(v) for v in d.mocap_quat[mocap]])
      else:
        b = tuple(float(v) for v in m.body_pos[i])
        r = tuple(float(v) for v in m.body_quat[i])
      if pid > 0:
        pm = d.xmat[pid]
        x = (pm[0] * b[0] + pm[1] * b[1] + pm[2] * b[2] + xpos[pid, 0],
             pm[3] * b[0] + pm[4] * b[1] + pm[5] * b[2] + xpos[pid, 1],
             pm[6] * b[0] + pm[7] * b[1] + pm[8] * b[2] + xpos[pid, 2])
        q = rotation.quat_mul([float(v) for v in xquat[pid]], r)
      else:
        x, q = b, r
      for j in range(jntadr, jntadr + jntnum):
        a, jt = int(m.jnt_qposadr[j]), int(m.jnt_type[j])
        ja = tuple(float(v) for v in m.jnt_axis[j])
        jp = tuple(float(v) for v in m.jnt_pos[j])
        ax = rotation.rot_vec_quat(ja, q)
        an = rotation.rot_vec_quat(jp, q)
        an = (an[0] + x[0], an[1] + x[1], an[2] + x[2])
        if jt == _SLIDE:
          s = float(qpos[a] - qpos0[a])
          x = (x[0] + ax[0] * s, x[1] + ax[1] * s, x[2] + ax[2] * s)
        else:
          if jt == _BALL:
            rq = rotation.normalize_quat([float(v) for v in qpos[a:a + 4]])
          else:
            h = 0.5 * float(qpos[a] - qpos0[a])
            s = math.sin(h)
            rq = (math.cos(h), ja[0] * s, ja[1] * s, ja[2] * s)
          q = rotation.quat_mul(q, rq)
          v = rotation.rot_vec_quat(jp, q)
          x = (an[0] - v[0], an[1] - v[1], an[2] - v[2])
        d.xanchor[j] = an
        d.xaxis[j] = ax
    xquat[i] = rotation.normalize_quat(q)
    xpos[i] = x
    d.xmat[i] = rotation.quat2mat_rows(xquat[i:i + 1])[0]   # children read it
  d.xmat[0] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _subtree_com(m, d):
  """subtree_com as mj_comPos computes it (subtree masses as mj_setConst's set_fixed)."""
  nbody = m.nbody
  sub = np.array(m.body_mass, float)
  com = d.xipos * sub[:, None]
  for i in range(nbody - 1, 0, -1):
    p = m.body_parentid[i]
    sub[p] += sub[i]
    com[p] += com[i]
  small = sub < t.MINVAL
  com[~small] *= (1.0 / sub[~small])[:, None]
  com[small] = d.xipos[small]
  d.subtree_com[:] = com


def _camlight_pos(d, b, pos, mode, ref, kind, i):
  """World position of camera or light i (kind "cam" or "light") on body b at local pos; in
  the tracking modes body b's xpos plus ref's {kind}_pos0, or its subtree_com plus
  {kind}_poscom0."""
  if mode == _TRACK:
    return d.xpos[b] + ref[kind + "_pos0"][i]
  if mode == _TRACKCOM:
    return d.subtree_com[b] + ref[kind + "_poscom0"][i]
  return d.xmat[b].reshape(3, 3) @ pos + d.xpos[b]


def _camlight(m, d, ref):
  """Camera and light frames with their modes (mj_camlight); `ref` holds the offsets that
  mj_setConst records at qpos0 (None: this is that pass, modes read as fixed)."""
  for i in range(m.ncam):
    b, tb = int(m.cam_bodyid[i]), int(m.cam_targetbodyid[i])
    mode = int(m.cam_mode[i]) if ref is not None else 0
    pos = _camlight_pos(d, b, m.cam_pos[i], mode, ref, "cam", i)
    mat = rotation.quat2mat_rows(rotation.quat_mul(d.xquat[b], m.cam_quat[i])[None])[0]
    if mode in (_TRACK, _TRACKCOM):
      mat = ref["cam_mat0"][i]
    elif mode in (_TARGETBODY, _TARGETBODYCOM) and tb >= 0:
      src = d.xpos if mode == _TARGETBODY else d.subtree_com
      z = _unit(pos - src[tb])
      x = _unit(np.cross((0.0, 0.0, 1.0), z))
      y = _unit(np.cross(z, x))
      mat = np.stack([x, y, z], 1).ravel()
    d.cam_xpos[i], d.cam_xmat[i] = pos, mat
  for i in range(m.nlight):
    b, tb = int(m.light_bodyid[i]), int(m.light_targetbodyid[i])
    mode = int(m.light_mode[i]) if ref is not None else 0
    pos = _camlight_pos(d, b, m.light_pos[i], mode, ref, "light", i)
    dirn = np.array(rotation.rot_vec_quat(m.light_dir[i], d.xquat[b]))
    if mode in (_TRACK, _TRACKCOM):
      dirn = ref["light_dir0"][i]
    elif mode in (_TARGETBODY, _TARGETBODYCOM) and tb >= 0:
      dirn = (d.xpos if mode == _TARGETBODY else d.subtree_com)[tb] - pos
    d.light_xpos[i], d.light_xdir[i] = pos, _unit(dirn)


def _tendon_paths(m, d):
  """Path points of spatial tendons through sites and pulleys (mj_tendon's wrap_xpos,
  wrap_obj, ten_wrapadr, ten_wrapnum). A tendon that wraps around a geom is left out of the
  preview (its tangent points need the engine's wrapping code): drawn once the physics runs."""
  xpos, obj = d.wrap_xpos.reshape(-1, 3), d.wrap_obj.reshape(-1)
  count = 0
  for i in range(m.ntendon):
    d.ten_wrapadr[i], d.ten_wrapnum[i] = count, 0
    adr, num = int(m.tendon_adr[i]), int(m.tendon_num[i])
    types = m.wrap_type[adr:adr + num]
    if num == 0 or types[0] == _WRAP_JOINT or np.isin(types, _WRAP_GEOMS).any():
      continue
    for j in range(num):
      pulley = types[j] == _WRAP_PULLEY
      xpos[count] = 0.0 if pulley else d.site_xpos[m.wrap_objid[adr + j]]
      obj[count] = -2 if pulley else -1
      count += 1
    d.ten_wrapnum[i] = num


def _unit(v):
  n = math.sqrt(float(v @ v))
  return v / n if n > t.MINVAL else np.asarray(v, float)


def kinematics(m, d, ref=None):
  """Pose `d` at its qpos and mocap poses: mj_kinematics, subtree_com and mj_camlight, in
  numpy. With ref=None, `d` must be at qpos0: the camera/light offsets that mj_setConst
  records there are computed and returned; pass them as `ref` for any other pose."""
  _bodies(m, d)
  body = np.arange(1, m.nbody)
  d.xipos[0], d.ximat[0], d.xiquat[0] = 0.0, (1, 0, 0, 0, 1, 0, 0, 0, 1), (1, 0, 0, 0)
  _local_to_global(d, body, m.body_ipos[1:], m.body_iquat[1:], np.where(
      m.body_sameframe[1:] == _SF_INERTIA, 0, m.body_sameframe[1:]), d.xipos[1:],
      d.xiquat[1:], d.ximat[1:])
  _local_to_global(d, np.asarray(m.geom_bodyid), m.geom_pos, m.geom_quat, m.geom_sameframe,
                   d.geom_xpos, None, d.geom_xmat)
  _local_to_global(d, np.asarray(m.site_bodyid), m.site_pos, m.site_quat, m.site_sameframe,
                   d.site_xpos, None, d.site_xmat)
  _subtree_com(m, d)
  _tendon_paths(m, d)
  _flex_vertices(m, d)
  if ref is None:   # mj_setConst's pass: modes read as fixed, offsets recorded
    _camlight(m, d, None)
    cb = np.asarray(m.cam_bodyid)
    ct = np.where(np.asarray(m.cam_targetbodyid) >= 0, m.cam_targetbodyid, cb)
    lb = np.asarray(m.light_bodyid)
    lt = np.where(np.asarray(m.light_targetbodyid) >= 0, m.light_targetbodyid, lb)
    ref = dict(cam_pos0=d.cam_xpos - d.xpos[cb], cam_poscom0=d.cam_xpos - d.subtree_com[ct],
               cam_mat0=d.cam_xmat.copy(), light_pos0=d.light_xpos - d.xpos[lb],
               light_poscom0=d.light_xpos - d.subtree_com[lt], light_dir0=d.light_xdir.copy())
  _camlight(m, d, ref)
  return ref


def _flex_vertices(m, d):
  """flexvert_xpos of non-interpolated flexes (engine/flex.py vertex_positions)."""
  for f in range(m.nflex):
    if m.flex_interp[f]:
      continue
    a, n = m.flex_vertadr[f], m.flex_vertnum[f]
    b = np.asarray(m.flex_vertbodyid[a:a + n])
    local = np.asarray(m.flex_vert[a:a + n])
    if m.flex_centered[f]:
      local = np.zeros_like(local)
    d.flexvert_xpos[a:a + n] = d.xpos[b] + np.einsum("nij,nj->ni", d.xmat[b].reshape(-1, 3, 3),
                                                      local)


def set_stat(m, d):
  """m.stat's center, extent, meansize and meanmass from the poses at qpos0, as mj_setConst's
  setStat (meaninertia needs the mass matrix: left to the engine). The caller applies the
  values given in <statistic> (m.stat.apply_user)."""
  pts = [d.xpos[1:], d.xipos[1:], d.xanchor[:m.njnt], d.site_xpos[:m.nsite]]
  lo, hi = np.full(3, t.MAXVAL), np.full(3, -t.MAXVAL)
  for p in pts:
    if len(p):
      lo, hi = np.minimum(lo, p.min(0)), np.maximum(hi, p.max(0))
  r = np.where(m.geom_rbound > 0, m.geom_rbound, 0.0)
  plane = (m.geom_rbound <= 0) & (m.geom_type == _PLANE)
  sx, sy = m.geom_size[:, 0], m.geom_size[:, 1]
  r = np.where(plane, np.where((sx != 0) | (sy != 0), np.maximum(sx, sy) * 0.1, 0.01), r)
  if m.ngeom:
    lo = np.minimum(lo, (d.geom_xpos - r[:, None]).min(0))
    hi = np.maximum(hi, (d.geom_xpos + r[:, None]).max(0))
  st = m.stat
  st.center = 0.5 * (lo + hi)
  if hi[0] > lo[0]:
    st.extent = max(1e-5, float(np.max(hi - lo)))
  body = np.zeros(m.nbody)
  for j in range(m.njnt):
    b = m.jnt_bodyid[j]
    body[b] = max(body[b], np.linalg.norm(d.xipos[b] - d.xanchor[j]))
    b = m.body_parentid[b]
    body[b] = max(body[b], np.linalg.norm(d.xipos[b] - d.xanchor[j]))
  body[0] = 0
  for b in range(1, m.nbody):
    for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
      if m.geom_rbound[g] > 0:
        body[b] = max(body[b], m.geom_rbound[g] + np.linalg.norm(d.xipos[b] - d.geom_xpos[g]))
  if m.nbody > 1:
    body[1:] = np.maximum(body[1:], 1e-5)
    st.meansize = float(np.sum(body[1:] / (m.nbody - 1)))
  # dof_length: 1 for translations, the body's size for rotations (sleep's velocity weights)
  rot = np.ones(m.nv, bool)
  for j in range(m.njnt):
    a, jt = m.jnt_dofadr[j], m.jnt_type[j]
    if jt == _SLIDE:
      rot[a] = False
    elif jt == _FREE:
      rot[a:a + 3] = False
  m.dof_length = np.where(rot, body[m.dof_bodyid], 1.0)
  if m.nbody > 1:
    st.meanmass = float(np.sum(m.body_mass[1:]) / (m.nbody - 1))
  st.extent = max(st.extent, 2 * st.meansize)
