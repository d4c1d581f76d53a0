"""Sensors (MuJoCo's engine_sensor.c): sensor_pos, sensor_vel, sensor_acc write d.sensordata in
MuJoCo's layout; rne_post_constraint (cacc, cfrc_int, cfrc_ext) feeds the force-type sensors.
The collision sensors (distance/normal/fromto) call the narrowphase through geom_distance
(mj_geomDistance); the contact sensor reads d.contact_* and efc_force; rangefinders cast rays
(engine/ray.py) from a site or from every pixel of a camera; the tactile sensor evaluates the
signed distances of engine/collision/sdf.py at the vertices of a mesh; the one sensor plugin,
mujoco.sensor.touch_grid, bins contact forces by direction after the built-in sensors.

Noise is never added (MuJoCo only stores sensor_noise); cutoff clamps REAL and POSITIVE sensors.
"""
import math

import numpy as np

from numjoco.engine.collision import distance
from numjoco.engine.collision import sdf as sdf
from numjoco.engine import constraint
from numjoco.engine import energy
from numjoco.engine import flex_contact as fc
from numjoco.engine import history
from numjoco.engine import math as mm
from numjoco.engine import passive as ps
from numjoco.engine import ray as rays
from numjoco.engine import sleep as sleepmod
from numjoco.engine import smooth
from numjoco.engine._jit import inline, jit
from numjoco.engine.smooth import subtree_vel
from numjoco.engine.types import (mjtConstraint, mjtCone, mjtDataType, mjtDisableBit, mjtEq, mjtGeom,
                          mjtObj, mjtSensor, mjtStage, mjtTrn, mjtWrap)
from numjoco.engine._sig import unit, M, D, b1, i8, f8, f8v, NEEDS_SENSOR

_DSBL_SENSOR = int(mjtDisableBit.SENSOR)
_DSBL_GRAVITY = int(mjtDisableBit.GRAVITY)
_DSBL_NATIVECCD = int(mjtDisableBit.NATIVECCD)
_POS, _VEL, _ACC = int(mjtStage.POS), int(mjtStage.VEL), int(mjtStage.ACC)
_REAL, _POSITIVE = int(mjtDataType.REAL), int(mjtDataType.POSITIVE)
_BODY, _XBODY, _GEOM, _SITE = (int(mjtObj.BODY), int(mjtObj.XBODY), int(mjtObj.GEOM),
                                int(mjtObj.SITE))
_OBJ_JOINT, _OBJ_TENDON = int(mjtObj.JOINT), int(mjtObj.TENDON)
_LIMIT_JOINT = int(mjtConstraint.LIMIT_JOINT)
_LIMIT_TENDON = int(mjtConstraint.LIMIT_TENDON)
_FRICTION_TENDON = int(mjtConstraint.FRICTION_TENDON)
_EQUALITY = int(mjtConstraint.EQUALITY)
_DSBL_SPRING, _DSBL_DAMPER = int(mjtDisableBit.SPRING), int(mjtDisableBit.DAMPER)
_WRAP_JOINT, _WRAP_PULLEY, _WRAP_SITE = int(mjtWrap.JOINT), int(mjtWrap.PULLEY), int(mjtWrap.SITE)
_PYRAMIDAL = int(mjtCone.PYRAMIDAL)
_EQ_CONNECT, _EQ_WELD, _EQ_TENDON = int(mjtEq.CONNECT), int(mjtEq.WELD), int(mjtEq.TENDON)
_TRN_TENDON = int(mjtTrn.TENDON)
_PLANE, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX = (
    int(mjtGeom.PLANE), int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE), int(mjtGeom.ELLIPSOID), int(mjtGeom.CYLINDER),
    int(mjtGeom.BOX))
_HFIELD, _MESH = int(mjtGeom.HFIELD), int(mjtGeom.MESH)
_TOUCH_GRID = 5   # engine/mjcf/_plugin.py's kind of the mujoco.sensor.touch_grid plugin
_u = np.uintp     # an index known to be >= 0: no wraparound test on the load (shared/DESIGN.md)

S = mjtSensor
_TOUCH, _ACCELEROMETER, _VELOCIMETER, _GYRO = (int(S.TOUCH), int(S.ACCELEROMETER),
                                               int(S.VELOCIMETER), int(S.GYRO))
_FORCE, _TORQUE, _MAGNETOMETER = int(S.FORCE), int(S.TORQUE), int(S.MAGNETOMETER)
_JOINTPOS, _JOINTVEL, _TENDONPOS, _TENDONVEL = (int(S.JOINTPOS), int(S.JOINTVEL),
                                                int(S.TENDONPOS), int(S.TENDONVEL))
_ACTUATORPOS, _ACTUATORVEL, _ACTUATORFRC = (int(S.ACTUATORPOS), int(S.ACTUATORVEL),
                                            int(S.ACTUATORFRC))
_JOINTACTFRC, _TENDONACTFRC = int(S.JOINTACTFRC), int(S.TENDONACTFRC)
_BALLQUAT, _BALLANGVEL = int(S.BALLQUAT), int(S.BALLANGVEL)
_JOINTLIMITPOS, _JOINTLIMITVEL, _JOINTLIMITFRC = (int(S.JOINTLIMITPOS), int(S.JOINTLIMITVEL),
                                                  int(S.JOINTLIMITFRC))
_TENDONLIMITPOS, _TENDONLIMITVEL, _TENDONLIMITFRC = (int(S.TENDONLIMITPOS),
                                                     int(S.TENDONLIMITVEL),
                                                     int(S.TENDONLIMITFRC))
_FRAMEPOS, _FRAMEQUAT, _FRAMEXAXIS = int(S.FRAMEPOS), int(S.FRAMEQUAT), int(S.FRAMEXAXIS)
_FRAMEYAXIS, _FRAMEZAXIS = int(S.FRAMEYAXIS), int(S.FRAMEZAXIS)
_FRAMELINVEL, _FRAMEANGVEL = int(S.FRAMELINVEL), int(S.FRAMEANGVEL)
_FRAMELINACC, _FRAMEANGACC = int(S.FRAMELINACC), int(S.FRAMEANGACC)
_SUBTREECOM, _SUBTREELINVEL, _SUBTREEANGMOM = (int(S.SUBTREECOM), int(S.SUBTREELINVEL),
                                               int(S.SUBTREEANGMOM))
_E_POTENTIAL, _E_KINETIC, _CLOCK = int(S.E_POTENTIAL), int(S.E_KINETIC), int(S.CLOCK)
_RANGEFINDER, _INSIDESITE = int(S.RANGEFINDER), int(S.INSIDESITE)
_CAMPROJECTION, _CONTACT = int(S.CAMPROJECTION), int(S.CONTACT)
_GEOMDIST, _GEOMNORMAL, _GEOMFROMTO = int(S.GEOMDIST), int(S.GEOMNORMAL), int(S.GEOMFROMTO)
_TACTILE, _PLUGIN = int(S.TACTILE), int(S.PLUGIN)


# ------------------------------------------------------------------------ frames of objects

@jit
def _frame(m, d, objtype, objid):
  """(xpos, xmat) arrays holding the frame of an object with a spatial frame."""
  if objtype == _XBODY:
    return d.xpos, d.xmat
  if objtype == _BODY:
    return d.xipos, d.ximat
  if objtype == _GEOM:
    return d.geom_xpos, d.geom_xmat
  if objtype == _SITE:
    return d.site_xpos, d.site_xmat
  return d.cam_xpos, d.cam_xmat


@jit
def _xquat(m, d, objtype, objid):
  """Global orientation quaternion of an object (get_xquat)."""
  if objtype == _XBODY:
    q = d.xquat[objid]
    return q[0], q[1], q[2], q[3]
  if objtype == _BODY:
    lq = m.body_iquat[objid]
  elif objtype == _GEOM:
    lq = m.geom_quat[objid]
  elif objtype == _SITE:
    lq = m.site_quat[objid]
  else:
    lq = m.cam_quat[objid]
  q = d.xquat[sleepmod.object_body(m, objtype, objid)]
  return mm.quat_mul(q[0], q[1], q[2], q[3], lq[0], lq[1], lq[2], lq[3])


@jit
def _motion_at(m, d, vec, objtype, objid, local):
  """Spatial motion vector `vec` (com-based, of the object's body) moved to the object's
  origin, rotated into its frame when `local` (mju_transformSpatial on motion)."""
  xpos, xmat = _frame(m, d, objtype, objid)
  b = sleepmod.object_body(m, objtype, objid)
  c = d.subtree_com[m.body_rootid[b]]
  p = xpos[objid]
  w0, w1, w2 = vec[0], vec[1], vec[2]
  c0, c1, c2 = mm.cross(p[0] - c[0], p[1] - c[1], p[2] - c[2], w0, w1, w2)
  l0, l1, l2 = vec[3] - c0, vec[4] - c1, vec[5] - c2
  if local:
    w0, w1, w2 = mm.mat_t_vec(xmat[objid], w0, w1, w2)
    l0, l1, l2 = mm.mat_t_vec(xmat[objid], l0, l1, l2)
  return w0, w1, w2, l0, l1, l2


@jit
def object_velocity(m, d, objtype, objid, local):
  """6D velocity (rot:lin) of an object at its origin, world or local orientation
  (mj_objectVelocity)."""
  b = sleepmod.object_body(m, objtype, objid)
  if m.body_dofnum[m.body_weldid[b]] == 0:
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
  return _motion_at(m, d, d.cvel[b], objtype, objid, local)


@jit
def object_acceleration(m, d, objtype, objid, local):
  """6D acceleration (rot:lin) of an object at its origin with the Coriolis correction
  (mj_objectAcceleration); needs cacc from rne_post_constraint. MuJoCo 4.0 has no shortcut for
  dof-less bodies here: a world-fixed frame reads -gravity, like an accelerometer."""
  b = sleepmod.object_body(m, objtype, objid)
  a0, a1, a2, a3, a4, a5 = _motion_at(m, d, d.cacc[b], objtype, objid, local)
  v0, v1, v2, v3, v4, v5 = _motion_at(m, d, d.cvel[b], objtype, objid, local)
  c0, c1, c2 = mm.cross(v0, v1, v2, v3, v4, v5)
  return a0, a1, a2, a3 + c0, a4 + c1, a5 + c2


# ------------------------------------------------------------------ post-constraint forces

@jit
def contact_force(m, d, i):
  """6D force:torque of contact i in its contact frame (mj_contactForce), net of its adhesion."""
  f0 = f1 = f2 = f3 = f4 = f5 = 0.0
  adr = d.contact_efc_address[i]
  if i < 0 or i >= d.ncon[0] or adr < 0:
    return f0, f1, f2, f3, f4, f5
  dim = d.contact_dim[i]
  out = d.scratch_small[0:6]
  for k in range(6):
    out[k] = 0.0
  if m.opt_cone[0] == _PYRAMIDAL:
    if dim == 1:
      out[0] = d.efc_force[adr]
    else:
      for k in range(2 * (dim - 1)):
        out[0] += d.efc_force[adr + k]
      for k in range(dim - 1):
        out[k + 1] = (d.efc_force[adr + 2 * k] - d.efc_force[adr + 2 * k + 1]) \
            * d.contact_friction[i, k]
  else:
    for k in range(dim):
      out[k] = d.efc_force[adr + k]
  # adhesion shifts the cone: the rows carry the pull, the contact's force is net of it (4.0)
  out[0] -= d.contact_adhesion[i]
  return out[0], out[1], out[2], out[3], out[4], out[5]


@unit((M, D), needs=NEEDS_SENSOR)
def rne_post_constraint(m, d):
  """cacc, cfrc_int and cfrc_ext from qacc, applied forces, contacts and connect/weld rows
  (mj_rnePostConstraint)."""
  nbody = m.nbody
  for b in range(nbody):
    for k in range(6):
      d.cfrc_ext[b, k] = 0.0
  for k in range(6):
    d.cacc[0, k] = 0.0
    d.cfrc_int[0, k] = 0.0
  if not (m.opt_disableflags[0] & _DSBL_GRAVITY):
    for k in range(3):
      d.cacc[0, 3 + k] = -m.opt_gravity[k]
  for b in range(1, nbody):
    x, p = d.xfrc_applied[b], d.xfrc_perturb[b]
    f0, f1, f2 = x[0] + p[0], x[1] + p[1], x[2] + p[2]
    t0, t1, t2 = x[3] + p[3], x[4] + p[4], x[5] + p[5]
    if f0 == 0.0 and f1 == 0.0 and f2 == 0.0 and t0 == 0.0 and t1 == 0.0 and t2 == 0.0:
      continue
    r = m.body_rootid[b]
    _add_force_root(d, b, r, 1.0, t0, t1, t2, f0, f1, f2, d.xipos[b, 0], d.xipos[b, 1],
                    d.xipos[b, 2])
  for i in range(d.ncon[0]):
    if d.contact_efc_address[i] < 0:
      continue
    l0, l1, l2, l3, l4, l5 = contact_force(m, d, i)
    fr = d.contact_frame[i]
    t0, t1, t2 = mm.mat_t_vec(fr, l3, l4, l5)
    f0, f1, f2 = mm.mat_t_vec(fr, l0, l1, l2)
    p = d.contact_pos[i]
    if d.contact_geom[i, 0] < 0 or d.contact_geom[i, 1] < 0:
      continue   # MuJoCo's rnePostConstraint leaves flex contacts out of cfrc_ext
    b1 = m.geom_bodyid[d.contact_geom1[i]]
    b2 = m.geom_bodyid[d.contact_geom2[i]]
    if b1:
      _add_force_root(d, b1, m.body_rootid[b1], -1.0, t0, t1, t2, f0, f1, f2, p[0], p[1], p[2])
    if b2:
      _add_force_root(d, b2, m.body_rootid[b2], 1.0, t0, t1, t2, f0, f1, f2, p[0], p[1], p[2])
  _equality_forces(m, d)
  _tendon_forces(m, d)
  for j in range(1, nbody):
    par = _u(m.body_parentid[j])   # unsigned indices: no wraparound test on the loads
    bda = _u(m.body_dofadr[j])
    for k in range(6):
      s = d.cacc[par, k]
      for v in range(bda, bda + _u(m.body_dofnum[j])):
        s += d.cdof_dot[v, k] * d.qvel[v] + d.cdof[v, k] * d.qacc[v]
      d.cacc[j, k] = s
    body = d.scratch_small[0:6]
    corr = d.scratch_small[6:12]
    mm.mul_inert_vec(body, d.cinert[j], d.cacc[j])
    mm.mul_inert_vec(corr, d.cinert[j], d.cvel[j])
    mm.cross_force_add(body, d.cvel[j], corr)
    for k in range(6):
      d.cfrc_int[j, k] = body[k] - d.cfrc_ext[j, k]
  for j in range(nbody - 1, 0, -1):
    par = _u(m.body_parentid[j])
    for k in range(6):
      d.cfrc_int[par, k] += d.cfrc_int[j, k]


@jit
def _add_force_root(d, b, r, sign, t0, t1, t2, f0, f1, f2, p0, p1, p2):
  """cfrc_ext[b] += sign * (torque:force at p, moved to subtree_com[r])."""
  c = d.subtree_com[r]
  x0, x1, x2 = mm.cross(c[0] - p0, c[1] - p1, c[2] - p2, f0, f1, f2)
  out = d.cfrc_ext[b]
  out[0] += sign * (t0 - x0)
  out[1] += sign * (t1 - x1)
  out[2] += sign * (t2 - x2)
  out[3] += sign * f0
  out[4] += sign * f1
  out[5] += sign * f2


@jit
def _weld_torque(m, d, eid, r0, r1, r2):
  """World torque of a weld's rotational rows with forces r (MuJoCo 4.0's mj_rnePostConstraint).

  A row of the weld is 0.5 ts Im(neg(q1) w q0 relpose) for an angular velocity w, with ts the
  torquescale and q0, q1 the frames of the two sides: with neg(q1) q0 relpose = (s, v), the
  rows are A w with A = 0.5 ts (s I - [v]x) R1', so their torque is A' r =
  0.5 ts R1 (s r + v x r)."""
  o1, o2 = m.eq_obj1id[eid], m.eq_obj2id[eid]
  b1, b2 = (o1, o2) if m.eq_objtype[eid] == _BODY else (m.site_bodyid[o1], m.site_bodyid[o2])
  a0, a1, a2, a3, n0, n1, n2, n3 = constraint.weld_quats(m, d, eid, b1, b2)
  s, v0, v1, v2 = mm.quat_mul(n0, n1, n2, n3, a0, a1, a2, a3)
  c0, c1, c2 = mm.cross(v0, v1, v2, r0, r1, r2)
  h = 0.5 * m.eq_data[eid, 10]
  x0, x1, x2 = h * (s * r0 + c0), h * (s * r1 + c1), h * (s * r2 + c2)
  # R1 x: the rotation of q1 = conj(neg(q1))
  q0, q1, q2, q3 = n0, -n1, -n2, -n3
  return mm.quat_rot(q0, q1, q2, q3, x0, x1, x2)


@jit
def _equality_forces(m, d):
  """cfrc_ext from connect and weld rows (body or site semantics), as MuJoCo 4.0 (the weld's
  rotational force as the world torque it applies: _weld_torque)."""
  i = 0
  ne = d.ne[0]
  while i < ne:
    eid = d.efc_id[i]
    et = m.eq_type[eid]
    if et != _EQ_CONNECT and et != _EQ_WELD:
      i += 1
      continue
    f0, f1, f2 = d.efc_force[i], d.efc_force[i + 1], d.efc_force[i + 2]
    t0 = t1 = t2 = 0.0
    if et == _EQ_WELD:
      t0, t1, t2 = _weld_torque(m, d, eid, d.efc_force[i + 3], d.efc_force[i + 4],
                                d.efc_force[i + 5])
    body_sem = m.eq_objtype[eid] == _BODY
    data = m.eq_data[eid]
    for side in range(2):
      obj = m.eq_obj1id[eid] if side == 0 else m.eq_obj2id[eid]
      k = obj if body_sem else m.site_bodyid[obj]
      if k == 0:
        continue
      if body_sem:
        off = 3 if (et == _EQ_WELD) == (side == 0) else 0
        o0, o1, o2 = data[off], data[off + 1], data[off + 2]
      else:
        o0, o1, o2 = m.site_pos[obj, 0], m.site_pos[obj, 1], m.site_pos[obj, 2]
      q0, q1, q2 = mm.mat_vec(d.xmat[k], o0, o1, o2)
      p0, p1, p2 = q0 + d.xpos[k, 0], q1 + d.xpos[k, 1], q2 + d.xpos[k, 2]
      sign = 1.0 if side == 0 else -1.0
      _add_force_root(d, k, m.body_rootid[k], sign, t0, t1, t2, f0, f1, f2, p0, p1, p2)
    i += 6 if et == _EQ_WELD else 3


@jit
def _tendon_sign(m, d, t, row):
  """+1 or -1: efc row `row` is +-ten_J of tendon t (a limit row's side)."""
  a = m.ten_J_rowadr[t]
  col, val = m.ten_J_colind[a], d.ten_J[a]
  r = d.efc_J_rowadr[row]
  for k in range(r, r + d.efc_J_rownnz[row]):
    if d.efc_J_colind[k] == col:
      return 1.0 if d.efc_J[k] * val > 0 else -1.0
  return 1.0


@jit
def _tendon_force(m, d, t):
  """The force along tendon t: spring and damper (polynomial terms and actuator damping),
  its actuators, its limit, friction-loss and equality rows, and its armature's inertia, such
  that J_t' f is what the tendon applies to the dofs."""
  poly = d.scratch_small[12:12 + ps.NPOLY]
  fs, fd = ps.tendon_passive(m, d, t, poly, not (m.opt_disableflags[0] & _DSBL_SPRING),
                             not (m.opt_disableflags[0] & _DSBL_DAMPER))
  f = fs + fd
  for j in range(m.nactuator):
    if m.actuator_trntype[j] == _TRN_TENDON and m.actuator_trnid[j, 0] == t:
      o = m.actuator_outadr[j]
      f += d.actuator_force[o] * m.actuator_gear[o, 0]
  if m.ten_J_rownnz[t] > 0:
    for i in range(d.nefc[0]):
      typ = d.efc_type[i]
      if typ == _LIMIT_TENDON and d.efc_id[i] == t:
        f += _tendon_sign(m, d, t, i) * d.efc_force[i]
      elif typ == _FRICTION_TENDON and d.efc_id[i] == t:
        f += d.efc_force[i]
      elif typ == _EQUALITY and m.eq_type[d.efc_id[i]] == _EQ_TENDON:
        eid = d.efc_id[i]
        if m.eq_obj1id[eid] == t:
          f += d.efc_force[i]
        if m.eq_obj2id[eid] == t:
          data = m.eq_data[eid]
          x = d.ten_length[t] - m.tendon_length0[t]
          deriv = data[1] + 2 * data[2] * x + 3 * data[3] * x * x + 4 * data[4] * x * x * x
          f -= deriv * d.efc_force[i]
  arm = m.tendon_armature[t] + smooth.actuator_armature(m, t, True)
  if arm != 0.0:
    a = m.ten_J_rowadr[t]
    jq = 0.0
    for k in range(a, a + m.ten_J_rownnz[t]):
      jq += d.ten_J[k] * d.qacc[m.ten_J_colind[k]]
    f -= arm * (jq + constraint.tendon_dot(m, d, t))
  return f


@jit
def _tendon_forces(m, d):
  """cfrc_ext from the spatial tendons (MuJoCo 4.0's mj_rnePostConstraint): each straight
  segment of the path between two bodies pulls them towards each other with the tendon's force
  (over the pulley divisor of its branch), at the path points."""
  for t in range(m.ntendon):
    adr, num = m.tendon_adr[t], m.tendon_num[t]
    if num == 0 or m.wrap_type[adr] == _WRAP_JOINT:
      continue
    f = _tendon_force(m, d, t)
    if f == 0.0:
      continue
    # the path points of mj_tendon: one per site, two per geom it wraps, -2 per pulley
    k = d.ten_wrapadr[t]
    end = k + d.ten_wrapnum[t]
    divisor = 1.0
    prev = -1          # previous point's body, -1 at a branch start
    pk = 0
    for w in range(adr, adr + num):
      typ = m.wrap_type[w]
      if typ == _WRAP_PULLEY:
        divisor = m.wrap_prm[w]
        prev = -1
        k += 1
        continue
      if typ == _WRAP_SITE:
        npts, body = 1, m.site_bodyid[m.wrap_objid[w]]
      elif k < end and d.wrap_obj[k >> 1, k & 1] == m.wrap_objid[w]:
        npts, body = 2, m.geom_bodyid[m.wrap_objid[w]]
      else:
        continue      # a geom the path does not touch
      for _ in range(npts):
        if prev >= 0 and prev != body:
          p = d.wrap_xpos[pk >> 1, (pk & 1) * 3:(pk & 1) * 3 + 3]
          q = d.wrap_xpos[k >> 1, (k & 1) * 3:(k & 1) * 3 + 3]
          u0, u1, u2 = mm.normalize3(q[0] - p[0], q[1] - p[1], q[2] - p[2])
          g = f / divisor
          if prev:
            _add_force_root(d, prev, m.body_rootid[prev], -g, 0.0, 0.0, 0.0, u0, u1, u2,
                            p[0], p[1], p[2])
          if body:
            _add_force_root(d, body, m.body_rootid[body], g, 0.0, 0.0, 0.0, u0, u1, u2,
                            q[0], q[1], q[2])
        prev, pk = body, k
        k += 1


# ------------------------------------------------------------------------- inside geom

@jit
def inside_geom(pos, mat, size, gtype, p0, p1, p2):
  """Whether point p lies strictly inside a sphere/capsule/ellipsoid/cylinder/box
  (mju_insideGeom)."""
  v0, v1, v2 = p0 - pos[0], p1 - pos[1], p2 - pos[2]
  if gtype == _SPHERE:
    return v0 * v0 + v1 * v1 + v2 * v2 < size[0] * size[0]
  l0, l1, l2 = mm.mat_t_vec(mat, v0, v1, v2)
  if gtype == _CAPSULE:
    z = min(max(l2, -size[1]), size[1])
    return l0 * l0 + l1 * l1 + (l2 - z) * (l2 - z) < size[0] * size[0]
  if gtype == _ELLIPSOID:
    return (l0 * l0 / (size[0] * size[0]) + l1 * l1 / (size[1] * size[1])
            + l2 * l2 / (size[2] * size[2]) < 1)
  if gtype == _CYLINDER:
    return abs(l2) < size[1] and l0 * l0 + l1 * l1 < size[0] * size[0]
  if gtype == _BOX:
    return abs(l0) < size[0] and abs(l1) < size[1] and abs(l2) < size[2]
  if gtype == _PLANE:
    return l2 < 0
  return False


# ------------------------------------------------------------------------------- stages

@jit
def _cutoff(m, i, out):
  """Clamp sensor i's values to its cutoff (REAL: both sides, POSITIVE: above)."""
  cutoff = m.sensor_cutoff[i]
  if cutoff <= 0:
    return
  st = m.sensor_type[i]
  if st == _CONTACT or st == _GEOMFROMTO:   # contact ignores it, fromto reads it as distmax
    return
  dt = m.sensor_datatype[i]
  for j in range(m.sensor_dim[i]):
    if dt == _REAL:
      out[j] = -cutoff if out[j] < -cutoff else (cutoff if out[j] > cutoff else out[j])
    elif dt == _POSITIVE:
      out[j] = min(cutoff, out[j])


@jit
def _limit_row(d, ctype, objid):
  """First limit row of joint/tendon `objid`, -1 when it is inactive."""
  for j in range(d.ne[0] + d.nf[0], d.nefc[0]):
    if d.efc_type[j] == ctype and d.efc_id[j] == objid:
      return j
  return -1


@jit
def _put3(out, a, b, c):
  out[0], out[1], out[2] = a, b, c


@jit
def _put_motion(out, v, lin):
  """out = the linear (lin) or the angular half of the 6D motion v (rot:lin)."""
  if lin:
    _put3(out, v[3], v[4], v[5])
  else:
    _put3(out, v[0], v[1], v[2])


@jit
def _state_entries(m, d, i, stage, out):
  """out = sensor i's object's entries of the stage's state array: qpos / qvel / qfrc_actuator
  of a joint (from its qpos or dof address), ten_length / ten_velocity of a tendon,
  actuator_length / actuator_velocity / actuator_force of an actuator (the jointpos,
  tendonvel, ballangvel, actuatorfrc, ... sensors)."""
  ot, oid = m.sensor_objtype[i], m.sensor_objid[i]
  if ot == _OBJ_JOINT:
    src = d.qpos if stage == _POS else (d.qvel if stage == _VEL else d.qfrc_actuator)
    a = m.jnt_qposadr[oid] if stage == _POS else m.jnt_dofadr[oid]
  elif ot == _OBJ_TENDON:
    src, a = (d.ten_length if stage == _POS else d.ten_velocity), oid
  else:
    src = (d.actuator_length if stage == _POS else
           (d.actuator_velocity if stage == _VEL else d.actuator_force))
    a = m.actuator_outadr[oid]
  for k in range(m.sensor_dim[i]):
    out[k] = src[a + k]


@jit
def compute_sensor(m, d, i, out):
  """out = the value of sensor i at the current state, whatever its history (mj_computeSensor);
  the step also calls it to sample delayed sensors."""
  stage = m.sensor_needstage[i]
  if stage == _POS:
    _value_pos(m, d, i, out)
  elif stage == _VEL:
    _value_vel(m, d, i, out)
  else:
    _value_acc(m, d, i, out)


@jit
def _compute_or_read(m, d, i, out):
  """Sensor i into `out` (its sensordata): read from its history buffer at time - delay when
  delayed, or when an interval sensor is not due yet; else computed. True when computed."""
  n = m.sensor_history[i, 0]
  if n > 0:
    if m.sensor_delay[i] > 0:
      history.read_sensor_into(m, d, i, d.time[0], -1, out)
      return False
    period = m.sensor_interval[i, 0]
    if period > 0 and d.history[m.sensor_historyadr[i]] + period > d.time[0]:
      history.read_sensor_into(m, d, i, d.time[0], -1, out)
      return False
  compute_sensor(m, d, i, out)
  return True


# [stage, sensor type]: the types whose values need subtree_vel (velocity stage) or
# rne_post_constraint (acceleration stage; 4.0 also runs it before the sensor plugins) first
_NEEDS_PREP = np.zeros((_ACC + 1, max(S) + 1), np.bool_)
_NEEDS_PREP[_VEL, [_SUBTREELINVEL, _SUBTREEANGMOM]] = True
_NEEDS_PREP[_ACC, [_ACCELEROMETER, _FORCE, _TORQUE, _FRAMELINACC, _FRAMEANGACC, _PLUGIN]] = True


@inline
def _stage_sensors(m, d, stage, plugins):
  """The awake sensors of `stage` (a sleeping sensor keeps its value), computed or read from
  their history (`_compute_or_read`); plugin sensors too when `plugins`."""
  sleeping = sleepmod.filtering_bodies(m, d)
  for i in range(m.nsensor):
    if sleeping and sleepmod.sensor_state(m, d, i) == sleepmod.ASLEEP:
      continue
    if m.sensor_needstage[i] == stage and (plugins or m.sensor_type[i] != _PLUGIN):
      _compute_or_read(m, d, i, d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]])


@unit((M, D), b1)
def sensor_pos(m, d):
  """Position-stage sensors; returns True when it computed energy[0] (e_potential)."""
  energypos = False
  if m.opt_disableflags[0] & _DSBL_SENSOR:
    return energypos
  sleeping = sleepmod.filtering_bodies(m, d)
  for i in range(m.nsensor):
    if m.sensor_needstage[i] != _POS:
      continue
    if sleeping and sleepmod.sensor_state(m, d, i) == sleepmod.ASLEEP:
      continue   # a sleeping sensor keeps its value
    out = d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]]
    if _compute_or_read(m, d, i, out):
      energypos = energypos or m.sensor_type[i] == _E_POTENTIAL
  return energypos


@unit((M, D, i8, f8v), needs=NEEDS_SENSOR)
def _value_pos(m, d, i, out):
  """out = the value of position-stage sensor i (cutoff applied)."""
  st, oid = m.sensor_type[i], m.sensor_objid[i]
  ot, rt, rid = m.sensor_objtype[i], m.sensor_reftype[i], m.sensor_refid[i]
  if st == _MAGNETOMETER:
    g = m.opt_magnetic
    v0, v1, v2 = mm.mat_t_vec(d.site_xmat[oid], g[0], g[1], g[2])
    _put3(out, v0, v1, v2)
  elif st == _GEOMDIST or st == _GEOMNORMAL or st == _GEOMFROMTO:
    _collision_sensor(m, d, i, out)
  elif st == _CONTACT:
    _contact_sensor(m, d, i, out)
  elif st == _CAMPROJECTION:
    _cam_project(m, d, oid, rid, out)
  elif st == _RANGEFINDER:
    _rangefinder(m, d, i, out)
  elif st == _JOINTPOS or st == _TENDONPOS or st == _ACTUATORPOS:
    _state_entries(m, d, i, _POS, out)
  elif st == _BALLQUAT:
    a = m.jnt_qposadr[oid]
    q0, q1, q2, q3 = d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]
    n = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    if n < 1e-15:
      q0, q1, q2, q3 = 1.0, 0.0, 0.0, 0.0
    elif abs(n - 1.0) > 1e-15:
      q0, q1, q2, q3 = q0 / n, q1 / n, q2 / n, q3 / n
    out[0], out[1], out[2], out[3] = q0, q1, q2, q3
  elif st == _JOINTLIMITPOS or st == _TENDONLIMITPOS:
    j = _limit_row(d, _LIMIT_JOINT if st == _JOINTLIMITPOS else _LIMIT_TENDON, oid)
    out[0] = d.efc_pos[j] - d.efc_margin[j] if j >= 0 else 0.0
  elif st == _FRAMEPOS or st == _FRAMEXAXIS or st == _FRAMEYAXIS or st == _FRAMEZAXIS:
    xpos, xmat = _frame(m, d, ot, oid)
    if st == _FRAMEPOS:
      v0, v1, v2 = xpos[oid, 0], xpos[oid, 1], xpos[oid, 2]
    else:
      c = st - _FRAMEXAXIS
      v0, v1, v2 = xmat[oid, c], xmat[oid, c + 3], xmat[oid, c + 6]
    if rid >= 0:
      rpos, rmat = _frame(m, d, rt, rid)
      if st == _FRAMEPOS:
        v0, v1, v2 = v0 - rpos[rid, 0], v1 - rpos[rid, 1], v2 - rpos[rid, 2]
      v0, v1, v2 = mm.mat_t_vec(rmat[rid], v0, v1, v2)
    _put3(out, v0, v1, v2)
  elif st == _FRAMEQUAT:
    q0, q1, q2, q3 = _xquat(m, d, ot, oid)
    if rid >= 0:
      r0, r1, r2, r3 = _xquat(m, d, rt, rid)
      q0, q1, q2, q3 = mm.quat_mul(r0, -r1, -r2, -r3, q0, q1, q2, q3)
    out[0], out[1], out[2], out[3] = q0, q1, q2, q3
  elif st == _INSIDESITE:
    xpos, _ = _frame(m, d, ot, oid)
    p = xpos[oid]
    if ot == _BODY and oid > 0 and m.body_mass[oid] < 1e-15 and m.body_subtreemass[oid] >= 1e-15:
      p = d.subtree_com[oid]   # massless parent: xipos is the body origin
    out[0] = 1.0 if inside_geom(d.site_xpos[rid], d.site_xmat[rid], m.site_size[rid],
                                m.site_type[rid], p[0], p[1], p[2]) else 0.0
  elif st == _SUBTREECOM:
    _put3(out, d.subtree_com[oid, 0], d.subtree_com[oid, 1], d.subtree_com[oid, 2])
  elif st == _E_POTENTIAL:
    energy.energy_pos(m, d)
    out[0] = d.energy[0]
  elif st == _E_KINETIC:
    energy.energy_vel(m, d)
    out[0] = d.energy[1]
  elif st == _CLOCK:
    out[0] = d.time[0]
  _cutoff(m, i, out)


@jit
def _sensor_stage(m, d, stage):
  """The sensors of the velocity or acceleration stage (mj_sensorVel, mj_sensorAcc): first
  subtree_vel or rne_post_constraint when a sensor needs it, then the built-in sensors (and the
  plugin sensors, which the acceleration stage computes after them)."""
  if m.opt_disableflags[0] & _DSBL_SENSOR:
    return
  prep = _NEEDS_PREP[stage]
  for i in range(m.nsensor):
    if prep[m.sensor_type[i]]:
      if stage == _VEL:
        subtree_vel(m, d)
      else:
        rne_post_constraint(m, d)
      break
  _stage_sensors(m, d, stage, stage == _VEL)
  if stage == _ACC:
    _plugin_sensors(m, d)


@unit((M, D))
def sensor_vel(m, d):
  """Velocity-stage sensors (mj_sensorVel)."""
  _sensor_stage(m, d, _VEL)


@unit((M, D, i8, f8v), needs=NEEDS_SENSOR)
def _value_vel(m, d, i, out):
  """out = the value of velocity-stage sensor i (cutoff applied)."""
  st, oid = m.sensor_type[i], m.sensor_objid[i]
  ot, rt, rid = m.sensor_objtype[i], m.sensor_reftype[i], m.sensor_refid[i]
  if st == _VELOCIMETER or st == _GYRO:
    _put_motion(out, object_velocity(m, d, _SITE, oid, True), st == _VELOCIMETER)
  elif st == _JOINTVEL or st == _TENDONVEL or st == _ACTUATORVEL or st == _BALLANGVEL:
    _state_entries(m, d, i, _VEL, out)
  elif st == _JOINTLIMITVEL or st == _TENDONLIMITVEL:
    j = _limit_row(d, _LIMIT_JOINT if st == _JOINTLIMITVEL else _LIMIT_TENDON, oid)
    out[0] = d.efc_vel[j] if j >= 0 else 0.0
  elif st == _FRAMELINVEL or st == _FRAMEANGVEL:
    w0, w1, w2, l0, l1, l2 = object_velocity(m, d, ot, oid, False)
    if rid >= 0:
      xpos, _ = _frame(m, d, ot, oid)
      rpos, rmat = _frame(m, d, rt, rid)
      r0, r1, r2, r3, r4, r5 = object_velocity(m, d, rt, rid, False)
      w0, w1, w2 = w0 - r0, w1 - r1, w2 - r2
      l0, l1, l2 = l0 - r3, l1 - r4, l2 - r5
      c0, c1, c2 = mm.cross(xpos[oid, 0] - rpos[rid, 0], xpos[oid, 1] - rpos[rid, 1],
                            xpos[oid, 2] - rpos[rid, 2], r0, r1, r2)
      l0, l1, l2 = l0 + c0, l1 + c1, l2 + c2
      w0, w1, w2 = mm.mat_t_vec(rmat[rid], w0, w1, w2)
      l0, l1, l2 = mm.mat_t_vec(rmat[rid], l0, l1, l2)
    _put_motion(out, (w0, w1, w2, l0, l1, l2), st == _FRAMELINVEL)
  elif st == _CONTACT:
    _contact_sensor(m, d, i, out)
  elif st == _TACTILE:
    _tactile(m, d, i, out)
  elif st == _SUBTREELINVEL:
    _put3(out, d.subtree_linvel[oid, 0], d.subtree_linvel[oid, 1], d.subtree_linvel[oid, 2])
  elif st == _SUBTREEANGMOM:
    _put3(out, d.subtree_angmom[oid, 0], d.subtree_angmom[oid, 1], d.subtree_angmom[oid, 2])
  _cutoff(m, i, out)


@unit((M, D))
def sensor_acc(m, d):
  """Acceleration-stage sensors (mj_sensorAcc)."""
  _sensor_stage(m, d, _ACC)


@unit((M, D, i8, f8v), needs=NEEDS_SENSOR)
def _value_acc(m, d, i, out):
  """out = the value of acceleration-stage sensor i (cutoff applied)."""
  st, oid, ot = m.sensor_type[i], m.sensor_objid[i], m.sensor_objtype[i]
  if st == _TOUCH:
    out[0] = _touch(m, d, oid)
  elif st == _CONTACT:
    _contact_sensor(m, d, i, out)
  elif st == _ACCELEROMETER:
    _put_motion(out, object_acceleration(m, d, _SITE, oid, True), True)
  elif st == _FORCE or st == _TORQUE:
    b = m.site_bodyid[oid]
    c = d.subtree_com[m.body_rootid[b]]
    p = d.site_xpos[oid]
    f = d.cfrc_int[b]
    x0, x1, x2 = mm.cross(p[0] - c[0], p[1] - c[1], p[2] - c[2], f[3], f[4], f[5])
    if st == _FORCE:
      v0, v1, v2 = mm.mat_t_vec(d.site_xmat[oid], f[3], f[4], f[5])
      _put3(out, v0, v1, v2)
    else:
      v0, v1, v2 = mm.mat_t_vec(d.site_xmat[oid], f[0] - x0, f[1] - x1, f[2] - x2)
      _put3(out, v0, v1, v2)
  elif st == _ACTUATORFRC or st == _JOINTACTFRC:
    _state_entries(m, d, i, _ACC, out)
  elif st == _TENDONACTFRC:
    s = 0.0
    for j in range(m.nactuator):
      if m.actuator_trntype[j] == _TRN_TENDON and m.actuator_trnid[j, 0] == oid:
        s += d.actuator_force[m.actuator_outadr[j]]
    out[0] = s
  elif st == _JOINTLIMITFRC or st == _TENDONLIMITFRC:
    j = _limit_row(d, _LIMIT_JOINT if st == _JOINTLIMITFRC else _LIMIT_TENDON, oid)
    out[0] = d.efc_force[j] if j >= 0 else 0.0
  elif st == _FRAMELINACC or st == _FRAMEANGACC:
    _put_motion(out, object_acceleration(m, d, ot, oid, False), st == _FRAMELINACC)
  _cutoff(m, i, out)


@jit
def _touch(m, d, site):
  """Sum of normal forces of the contacts of the site's body whose force ray, cast from the
  contact point, passes through the site's volume."""
  b = m.site_bodyid[site]
  total = 0.0
  pos, mat, size = rays.tuple3(d.site_xpos[site]), d.site_xmat[site], rays.tuple3(m.site_size[site])
  for j in range(d.ncon[0]):
    b1 = fc.contact_body(m, d, j, 0)   # mj_flexBody on a flex side, as 4.0's touch
    b2 = fc.contact_body(m, d, j, 1)
    if d.contact_efc_address[j] < 0 or (b != b1 and b != b2):
      continue
    fn, _, _, _, _, _ = contact_force(m, d, j)
    if fn <= 0:
      continue
    fr = d.contact_frame[j]
    r0, r1, r2 = fr[0] * fn, fr[1] * fn, fr[2] * fn
    n = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if n < 1e-15:
      r0, r1, r2 = 1.0, 0.0, 0.0
    else:
      r0, r1, r2 = r0 / n, r1 / n, r2 / n
    if b == b2:
      r0, r1, r2 = -r0, -r1, -r2
    x, _, _, _ = rays.ray_geom_normal(pos, mat, size, rays.tuple3(d.contact_pos[j]), (r0, r1, r2),
                                      m.site_type[site], False)
    if x >= 0:
      total += fn
  return total


# -------------------------------------------- collision sensors (collision/distance.py)

@jit
def _geom_range(m, objtype, objid):
  """(first geom, count): a body's geoms or one geom."""
  if objtype == _BODY:
    return m.body_geomadr[objid], m.body_geomnum[objid]
  return objid, 1


@unit((M, D, i8, f8v), needs=NEEDS_SENSOR)
def _collision_sensor(m, d, i, out):
  """distance / normal / fromto: the closest geom pair of the two objects within the cutoff."""
  cutoff = m.sensor_cutoff[i]
  dist = cutoff
  fromto = d.scratch_small[0:6]   # free in the position stage (the narrowphase is done)
  new = d.scratch_small[6:12]
  for k in range(6):
    fromto[k] = 0.0
  a1, n1 = _geom_range(m, m.sensor_objtype[i], m.sensor_objid[i])
  a2, n2 = _geom_range(m, m.sensor_reftype[i], m.sensor_refid[i])
  for g1 in range(a1, a1 + n1):
    for g2 in range(a2, a2 + n2):
      dnew = distance.geom_distance(m, d, g1, g2, cutoff, new)
      if dnew < dist:
        dist = dnew
        for k in range(6):
          fromto[k] = new[k]
  st = m.sensor_type[i]
  if st == _GEOMDIST:
    out[0] = dist
  elif st == _GEOMNORMAL:
    v0, v1, v2 = fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]
    if v0 != 0.0 or v1 != 0.0 or v2 != 0.0:
      nrm = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
      if nrm >= 1e-15:   # mju_normalize3
        v0, v1, v2 = v0 / nrm, v1 / nrm, v2 / nrm
      else:
        v0, v1, v2 = 1.0, 0.0, 0.0
    _put3(out, v0, v1, v2)
  else:
    for k in range(6):
      out[k] = fromto[k]


# ------------------------------------------------------------------------ camprojection

@jit
def _cam_project(m, d, site, cam, out):
  """Pixel coordinates of a site in a camera's image (MuJoCo's cam_project)."""
  res = m.cam_resolution[cam]
  ss, it = m.cam_sensorsize[cam], m.cam_intrinsic[cam]
  if ss[0] != 0 and ss[1] != 0:   # float arithmetic, as MuJoCo's C
    fx = float(np.float32(np.float32(it[0] / ss[0]) * np.float32(res[0])))
    fy = float(np.float32(np.float32(it[1] / ss[1]) * np.float32(res[1])))
  else:
    fx = fy = 0.5 / math.tan(m.cam_fovy[cam] * math.pi / 360.0) * res[1]
  p, c = d.site_xpos[site], d.cam_xpos[cam]
  x0, x1, x2 = mm.mat_t_vec(d.cam_xmat[cam], p[0] - c[0], p[1] - c[1], p[2] - c[2])
  den = x2
  if abs(den) < 1e-15:
    den = min(den, -1e-15) if den < 0 else max(den, 1e-15)
  out[0] = -fx * (x0 / den) + 0.5 * res[0]
  out[1] = fy * (x1 / den) + 0.5 * res[1]


# --------------------------------------------------------------------------- rangefinder

_RD_DIST, _RD_DIR, _RD_ORIGIN, _RD_POINT, _RD_NORMAL, _RD_DEPTH = 1, 2, 4, 8, 16, 32
_PROJ_PERSPECTIVE = 0


@jit
def _fill_raydata(out, o, spec, dist, org, vec, n0, n1, n2, cam, cpos, cz):
  """One ray's fields at out[o:], in mjtRayDataField order; returns the next offset
  (fill_raydata). Depth is the distance from the camera plane (the distance for a site)."""
  hit = dist >= 0
  if spec & _RD_DIST:
    out[o] = dist
    o += 1
  if spec & _RD_DIR:
    if hit:
      _put3(out[o:o + 3], vec[0], vec[1], vec[2])
    else:
      _put3(out[o:o + 3], 0.0, 0.0, 0.0)
    o += 3
  if spec & _RD_ORIGIN:
    _put3(out[o:o + 3], org[0], org[1], org[2])
    o += 3
  p0 = p1 = p2 = 0.0
  if hit:
    p0, p1, p2 = org[0] + vec[0] * dist, org[1] + vec[1] * dist, org[2] + vec[2] * dist
  if spec & _RD_POINT:
    _put3(out[o:o + 3], p0, p1, p2)
    o += 3
  if spec & _RD_NORMAL:
    if hit:
      _put3(out[o:o + 3], n0, n1, n2)
    else:
      _put3(out[o:o + 3], 0.0, 0.0, 0.0)
    o += 3
  if spec & _RD_DEPTH:
    if not hit:
      out[o] = -1.0
    elif cam:
      out[o] = -((p0 - cpos[0]) * cz[0] + (p1 - cpos[1]) * cz[1] + (p2 - cpos[2]) * cz[2])
    else:
      out[o] = dist
    o += 1
  return o


@jit
def cam_intrinsics(m, cam):
  """(fx, fy, cx, cy) in pixels and the orthographic extent of a camera (mju_camIntrinsics;
  sensorsize and intrinsic are float32, and so is MuJoCo's arithmetic on them)."""
  w, h = m.cam_resolution[cam, 0], m.cam_resolution[cam, 1]
  if m.cam_projection[cam] != _PROJ_PERSPECTIVE:
    fx, fy = w / 2.0, h / 2.0
    return fx, fy, fx, fy, m.cam_fovy[cam]
  ss, it = m.cam_sensorsize[cam], m.cam_intrinsic[cam]
  if ss[0] != 0 and ss[1] != 0:
    f4, f8 = np.float32, np.float64
    return (f8(it[0] / ss[0] * f4(w)), f8(it[1] / ss[1] * f4(h)),
            f8(it[2] / ss[0] * f4(w)), f8(it[3] / ss[1] * f4(h)), m.cam_fovy[cam])
  f = 0.5 / math.tan(m.cam_fovy[cam] * math.pi / 360.0) * h
  return f, f, w / 2.0, h / 2.0, m.cam_fovy[cam]


@jit
def cam_pixel_ray(m, d, cam, col, row, fx, fy, cx, cy, extent):
  """(origin, unit direction) of the ray through the centre of pixel (col, row), row 0 at
  the top of the image (mju_camPixelRay): one origin for perspective cameras, parallel rays
  from the image plane for orthographic ones."""
  px, py = col + 0.5 - cx, row + 0.5 - cy
  cpos, cmat = d.cam_xpos[cam], d.cam_xmat[cam]
  if m.cam_projection[cam] == _PROJ_PERSPECTIVE:
    v0, v1, v2 = mm.mat_vec(cmat, px / fx, -py / fy, -1.0)
    return (cpos[0], cpos[1], cpos[2]), mm.normalize3(v0, v1, v2)
  half = extent / 2
  o0, o1, o2 = mm.mat_vec(cmat, px / fx * half, -py / fy * half, 0.0)
  return (cpos[0] + o0, cpos[1] + o1, cpos[2] + o2), (-cmat[2], -cmat[5], -cmat[8])


@unit((M, D, i8, f8v), needs=NEEDS_SENSOR)
def _rangefinder(m, d, i, out):
  """rangefinder: one ray along a site's z axis, or one per pixel of a camera (row-major from
  the top-left), with the fields of sensor_intprm[i, 0] per ray."""
  spec, oid = m.sensor_intprm[i, 0], m.sensor_objid[i]
  want = (spec & _RD_NORMAL) != 0
  if m.sensor_objtype[i] == _SITE:
    xm = d.site_xmat[oid]
    org, vec = rays.tuple3(d.site_xpos[oid]), (xm[2], xm[5], xm[8])
    dist, _, n0, n1, n2 = rays.ray(m, d, org, vec, m.site_bodyid[oid], want)
    _fill_raydata(out, 0, spec, dist, org, vec, n0, n1, n2, False, org, vec)
    return
  cmat = d.cam_xmat[oid]
  cpos, cz = rays.tuple3(d.cam_xpos[oid]), (cmat[2], cmat[5], cmat[8])
  fx, fy, cx, cy, extent = cam_intrinsics(m, oid)
  body = m.cam_bodyid[oid]
  o = 0
  for row in range(m.cam_resolution[oid, 1]):
    for col in range(m.cam_resolution[oid, 0]):
      org, vec = cam_pixel_ray(m, d, oid, col, row, fx, fy, cx, cy, extent)
      dist, _, n0, n1, n2 = rays.ray(m, d, org, vec, body, want)
      o = _fill_raydata(out, o, spec, dist, org, vec, n0, n1, n2, True, cpos, cz)


# ------------------------------------------------------------------------ contact sensor

_UNKNOWN = int(mjtObj.UNKNOWN)
_CD_FOUND, _CD_FORCE, _CD_TORQUE, _CD_DIST, _CD_POS = 0, 1, 2, 3, 4
_CD_NORMAL, _CD_TANGENT, _CD_LINVEL, _CD_ANGVEL = 5, 6, 7, 8
_CD_SIZE = (1, 3, 3, 1, 3, 3, 3, 3, 3)


@jit
def _check_match(m, body, geom, otype, oid):
  """Whether a contact side (body, geom) matches a sensor object (checkMatch)."""
  if otype == _UNKNOWN or otype == _SITE:
    return True
  if otype == _GEOM:
    return oid == geom
  if otype == _BODY:
    return oid == body
  if otype == _XBODY:   # subtree: walk up from body
    while body > oid:
      body = m.body_parentid[body]
    return body == oid
  return False


@jit
def _match_contact(m, d, c, t1, id1, t2, id2):
  """0: contact c does not match; 1: it does; -1: it does with the normal flipped
  (matchContact)."""
  if t1 == _UNKNOWN and t2 == _UNKNOWN:
    return 1
  if t1 == _SITE:
    p = d.contact_pos[c]
    if not inside_geom(d.site_xpos[id1], d.site_xmat[id1], m.site_size[id1], m.site_type[id1],
                       p[0], p[1], p[2]):
      return 0
  g1, g2 = d.contact_geom1[c], d.contact_geom2[c]
  b1, b2 = fc.contact_body(m, d, c, 0), fc.contact_body(m, d, c, 1)
  m11 = _check_match(m, b1, g1, t1, id1)
  m12 = _check_match(m, b2, g2, t1, id1)
  m21 = _check_match(m, b1, g1, t2, id2)
  m22 = _check_match(m, b2, g2, t2, id2)
  if not m11 and not m12:
    return 0
  if not m21 and not m22:
    return 0
  if t1 != _UNKNOWN and t2 != _UNKNOWN:
    regular, reverse = m11 and m22, m12 and m21
    if regular:
      return 1
    return -1 if reverse else 0
  if t1 != _UNKNOWN:
    return 1 if m11 else -1
  return 1 if m22 else -1


@jit
def _point_velocity(m, d, b, p):
  """6D velocity (rot:lin) of body b at world point p."""
  v = d.cvel[b]
  c = d.subtree_com[m.body_rootid[b]]
  c0, c1, c2 = mm.cross(p[0] - c[0], p[1] - c[1], p[2] - c[2], v[0], v[1], v[2])
  return v[0], v[1], v[2], v[3] - c0, v[4] - c1, v[5] - c2


@jit
def _put_slot(out, spec, fields):
  """The fields the data bits `spec` request, in their order, into out: fields[k] holds the
  _CD_SIZE[k] values of field k (padded to 3)."""
  o = 0
  for k in range(9):
    if spec & (1 << k):
      for j in range(_CD_SIZE[k]):
        out[o + j] = fields[k][j]
      o += _CD_SIZE[k]


@jit
def _contact_slot(m, d, spec, out, c, flip, nfound):
  """One slot of a contact sensor: the requested fields of contact c (copySensorData); a
  flipped contact's frame turns 180 degrees about its second tangent."""
  fr, p = d.contact_frame[c], d.contact_pos[c]
  sgn = -1.0 if flip else 1.0
  force = torque = linvel = angvel = (0.0, 0.0, 0.0)
  if spec & ((1 << _CD_FORCE) | (1 << _CD_TORQUE)):
    f0, f1, f2, f3, f4, f5 = contact_force(m, d, c)
    force, torque = (f0, f1, sgn * f2), (f3, f4, sgn * f5)
  if spec & ((1 << _CD_LINVEL) | (1 << _CD_ANGVEL)):
    b1, b2 = fc.contact_body(m, d, c, 0), fc.contact_body(m, d, c, 1)
    w0, w1, w2, l0, l1, l2 = _point_velocity(m, d, b2, p)
    u0, u1, u2, k0, k1, k2 = _point_velocity(m, d, b1, p)
    v0, v1, v2 = mm.mat_vec(fr, l0 - k0, l1 - k1, l2 - k2)
    linvel = (v0, v1, sgn * v2)
    v0, v1, v2 = mm.mat_vec(fr, w0 - u0, w1 - u1, w2 - u2)
    angvel = (v0, v1, sgn * v2)
  _put_slot(out, spec, ((float(nfound), 0.0, 0.0), force, torque, (d.contact_dist[c], 0.0, 0.0),
                        (p[0], p[1], p[2]), (sgn * fr[0], sgn * fr[1], sgn * fr[2]),
                        (sgn * fr[3], sgn * fr[4], sgn * fr[5]), linvel, angvel))


@jit
def _contact_netforce(m, d, spec, out, t1, id1, t2, id2, nmatch):
  """reduce="netforce": one synthetic contact at the force-weighted centroid of the matches,
  with their total wrench about it, in the global frame."""
  pt0 = pt1 = pt2 = 0.0
  total = 0.0
  for c in range(d.ncon[0]):
    if _match_contact(m, d, c, t1, id1, t2, id2) == 0:
      continue
    f0, f1, f2, _, _, _ = contact_force(m, d, c)
    w = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    p = d.contact_pos[c]
    pt0, pt1, pt2 = pt0 + w * p[0], pt1 + w * p[1], pt2 + w * p[2]
    total += w
  inv = 1.0 / max(total, 1e-15)
  pt0, pt1, pt2 = pt0 * inv, pt1 * inv, pt2 * inv
  F0 = F1 = F2 = T0 = T1 = T2 = 0.0
  for c in range(d.ncon[0]):
    mc = _match_contact(m, d, c, t1, id1, t2, id2)
    if mc == 0:
      continue
    w0, w1, w2, w3, w4, w5 = contact_force(m, d, c)
    if mc < 0:   # the wrench on the other side
      w0, w1, w2, w3, w4, w5 = -w0, -w1, -w2, -w3, -w4, -w5
    fr, p = d.contact_frame[c], d.contact_pos[c]
    f0, f1, f2 = mm.mat_t_vec(fr, w0, w1, w2)
    q0, q1, q2 = mm.mat_t_vec(fr, w3, w4, w5)
    F0, F1, F2 = F0 + f0, F1 + f1, F2 + f2
    T0, T1, T2 = T0 + q0, T1 + q1, T2 + q2
    x0, x1, x2 = mm.cross(p[0] - pt0, p[1] - pt1, p[2] - pt2, f0, f1, f2)
    T0, T1, T2 = T0 + x0, T1 + x1, T2 + x2
  zero = (0.0, 0.0, 0.0)
  _put_slot(out, spec, ((float(nmatch), 0.0, 0.0), (F0, F1, F2), (T0, T1, T2), zero,
                        (pt0, pt1, pt2), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), zero, zero))


@jit
def _criterion(m, d, c, reduce):
  """Sort key of contact c: its distance (mindist) or minus its squared force (maxforce)."""
  if reduce == 1:
    return d.contact_dist[c]
  f0, f1, f2, _, _, _ = contact_force(m, d, c)
  return -(f0 * f0 + f1 * f1 + f2 * f2)


@jit
def _contact_sensor(m, d, i, out):
  """contact: match, reduce and extract as MuJoCo's contact sensor; intprm holds (data bits,
  reduce, num). Sorted reductions take the num smallest keys, ties by contact id, by repeated
  scans (no allocation; num is small)."""
  spec, reduce = m.sensor_intprm[i, 0], m.sensor_intprm[i, 1]
  size = 0
  for k in range(9):
    if spec & (1 << k):
      size += _CD_SIZE[k]
  num = m.sensor_dim[i] // size
  for k in range(m.sensor_dim[i]):
    out[k] = 0.0
  ncon = d.ncon[0]
  t1, id1 = m.sensor_objtype[i], m.sensor_objid[i]
  t2, id2 = m.sensor_reftype[i], m.sensor_refid[i]
  nmatch = 0
  for c in range(ncon):
    if _match_contact(m, d, c, t1, id1, t2, id2) != 0:
      nmatch += 1
  if nmatch == 0:   # all slots zero (netforce too: no unit normal/tangent in 4.0)
    return
  if reduce == 3:
    _contact_netforce(m, d, spec, out, t1, id1, t2, id2, nmatch)
    return
  nslot = min(num, nmatch)
  if reduce == 0:   # the first matches in d.contact order
    j = 0
    for c in range(ncon):
      if j == nslot:
        break
      mc = _match_contact(m, d, c, t1, id1, t2, id2)
      if mc != 0:
        _contact_slot(m, d, spec, out[j * size:(j + 1) * size], c, mc < 0, nmatch)
        j += 1
    return
  prev_key, prev_id = -np.inf, -1
  for j in range(nslot):
    best, bc, bflip = np.inf, -1, False
    for c in range(ncon):
      mc = _match_contact(m, d, c, t1, id1, t2, id2)
      if mc == 0:
        continue
      key = _criterion(m, d, c, reduce)
      after = key > prev_key or (key == prev_key and c > prev_id)
      if after and (bc < 0 or key < best):
        best, bc, bflip = key, c, mc < 0
    if bc < 0:
      return
    _contact_slot(m, d, spec, out[j * size:(j + 1) * size], bc, bflip, nmatch)
    prev_key, prev_id = best, bc


# -------------------------------------------------------------------------------- tactile

@unit((M, D, i8, f8v), f8, needs=NEEDS_SENSOR)
def _sdf_distance(m, d, g, x):
  """Signed distance of the world point x from geom g (mjc_distance of one geom): primitives
  analytically, sdf geoms by their plugin in the plugin's mesh frame, or by their mesh's octree
  in the geom frame."""
  p, c = d.geom_xpos[g], d.geom_xmat[g]
  l0, l1, l2 = mm.mat_t_vec(c, x[0] - p[0], x[1] - p[1], x[2] - p[2])
  gtype, size, kind, a, mesh = sdf.geom_side(m, g)
  pl = m.geom_plugin[g]
  if pl < 0:
    return sdf.geom_distance(m, gtype, size, kind, a, mesh, l0, l1, l2)
  q, r = m.mesh_quat[mesh], d.scratch_small[0:9]
  mm.quat2mat(r, q[0], q[1], q[2], q[3])
  l0, l1, l2 = mm.mat_vec(r, l0, l1, l2)
  mp = m.mesh_pos[mesh]
  return sdf.geom_distance(m, gtype, size, kind, a, mesh, l0 + mp[0], l1 + mp[1], l2 + mp[2])


@unit((M, D, i8, f8v), needs=NEEDS_SENSOR)
def _tactile(m, d, i, out):
  """Tactile sensor i (mjSENS_TACTILE): at each vertex (taxel) of mesh objid placed in the frame
  of geom refid, three blocks of mesh_vertnum values: the deepest penetration into the geoms
  that touch the geom's weld body (the other geom of each contact, each once), and the summed
  |sliding speed| along the vertex's two tangents (mesh_normal rows 1 and 2 of its frame, when
  the mesh has three normals per vertex), the speed taken at the taxel. As MuJoCo 4.0: mesh
  geoms are skipped (MJCF gives them no SDF octree); a height field, where 4.0 stops with
  "sdf collisions not available", is skipped too."""
  mesh, geom = m.sensor_objid[i], m.sensor_refid[i]
  weld = m.body_weldid[m.geom_bodyid[geom]]
  nvert = m.mesh_vertnum[mesh]
  for k in range(3 * nvert):
    out[k] = 0.0
  others = np.empty(d.ncon[0], np.int32)
  n = 0
  for c in range(d.ncon[0]):
    for side in range(2):
      g, o = ((d.contact_geom1[c], d.contact_geom2[c]) if side == 0
              else (d.contact_geom2[c], d.contact_geom1[c]))
      if g < 0 or m.body_weldid[m.geom_bodyid[g]] != weld:
        continue
      new = True
      for k in range(n):
        new = new and others[k] != o
      if new:
        others[n] = o
        n += 1
  if n == 0:
    return
  vert = m.mesh_vert[m.mesh_vertadr[mesh]:m.mesh_vertadr[mesh] + nvert]
  frame = m.mesh_normalnum[mesh] == 3 * nvert
  normal = m.mesh_normal[m.mesh_normaladr[mesh]:m.mesh_normaladr[mesh] + m.mesh_normalnum[mesh]]
  gpos, gmat = d.geom_xpos[geom], d.geom_xmat[geom]
  x = np.empty(3)
  for j in range(nvert):
    x0, x1, x2 = mm.mat_vec(gmat, float(vert[j, 0]), float(vert[j, 1]), float(vert[j, 2]))
    x[0], x[1], x[2] = x0 + gpos[0], x1 + gpos[1], x2 + gpos[2]
    for k in range(n):
      g = others[k]
      gt = m.geom_type[g]
      if gt == _MESH or gt == _HFIELD:
        continue
      depth = min(_sdf_distance(m, d, g, x), 0.0)
      if depth == 0:
        continue
      out[j] = max(out[j], -depth)
      if frame:
        _, _, _, s0, s1, s2 = _point_velocity(m, d, weld, x)
        _, _, _, o0, o1, o2 = _point_velocity(m, d, m.geom_bodyid[g], x)
        v0, v1, v2 = s0 - o0, s1 - o1, s2 - o2
        for a in range(1, 3):
          t = normal[3 * j + a]
          t0, t1, t2 = mm.mat_vec(gmat, float(t[0]), float(t[1]), float(t[2]))
          out[a * nvert + j] += abs(v0 * t0 + v1 * t1 + v2 * t2)


# ------------------------------------------------------------------------ sensor plugins

@jit
def _plugin_sensors(m, d):
  """The sensor plugins of the acceleration stage, in plugin order, after the built-in
  sensors (compute_plugin_sensors), each sensor of the plugin then clamped to its cutoff. The
  only one: mujoco.sensor.touch_grid."""
  for p in range(m.nplugin):
    if m.plugin_kind[p] != _TOUCH_GRID:
      continue
    for i in range(m.nsensor):
      if m.sensor_type[i] == _PLUGIN and m.sensor_plugin[i] == p:
        out = d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]]
        _touch_grid(m, d, i, m.plugin_param[p], out)
        _cutoff(m, i, out)
        break


@jit
def _bin_edges(n, fov, gamma):
  """n + 1 bin edges over [-1, 1] (touch_grid.cc's LinSpace, by repeated increments), bent
  by the foveal x -> gamma x^5 + (1 - gamma) x, times the field of view in radians."""
  e = np.empty(n + 1)
  inc = (1.0 - -1.0) / n
  x = -1.0
  g = max(0.0, min(1.0, gamma))
  scale = fov * math.pi / 180
  for k in range(n + 1):
    e[k] = (g * math.pow(x, 5.0) + (1 - g) * x if gamma != 0 else x) * scale
    x += inc
  return e


@jit
def _lower_bound(e, x):
  """Index of the first edge with x <= edge (len(e) when none)."""
  lo, hi = 0, len(e)
  while lo < hi:
    mid = (lo + hi) // 2
    if x <= e[mid]:
      hi = mid
    else:
      lo = mid + 1
  return lo


@jit
def _touch_grid(m, d, i, prm, out):
  """mujoco.sensor.touch_grid (plugin/sensor/touch_grid.cc) on site objid: the contacts of the
  site's weld body binned by azimuth and elevation of their point as seen from the site
  (looking down its -z), each bin summing nchannel of the contact's force and torque in the
  site frame ordered normal (z), x, y, negated where the weld is the contact's first side
  (4.0; the published source compares body ids); prm = (nchannel, size x, size y, fov x, fov y,
  gamma)."""
  for k in range(m.sensor_dim[i]):
    out[k] = 0.0
  nchannel, nx, ny = int(prm[0]), int(prm[1]), int(prm[2])
  site = m.sensor_objid[i]
  weld = m.body_weldid[m.site_bodyid[site]]
  ex, ey = _bin_edges(nx, prm[3], prm[5]), _bin_edges(ny, prm[4], prm[5])
  spos, smat = d.site_xpos[site], d.site_xmat[site]
  frame = nx * ny
  for c in range(d.ncon[0]):
    b1, b2 = fc.contact_body(m, d, c, 0), fc.contact_body(m, d, c, 1)
    if m.body_weldid[b1] != weld and m.body_weldid[b2] != weld:
      continue
    p = d.contact_pos[c]
    x0, x1, x2 = mm.mat_t_vec(smat, p[0] - spos[0], p[1] - spos[1], p[2] - spos[2])
    ix = _lower_bound(ex, math.atan2(x0, -x2))
    iy = _lower_bound(ey, math.atan2(x1, math.sqrt(x0 * x0 + x2 * x2)))
    if ix == 0 or ix == nx + 1 or iy == 0 or iy == ny + 1:
      continue
    f0, f1, f2, f3, f4, f5 = contact_force(m, d, c)
    fr = d.contact_frame[c]
    sign = -1.0 if m.body_weldid[b1] == weld else 1.0   # 4.0: from the weld's side
    w0, w1, w2 = mm.mat_t_vec(fr, f0, f1, f2)
    a0, a1, a2 = mm.mat_t_vec(smat, w0, w1, w2)
    w0, w1, w2 = mm.mat_t_vec(fr, f3, f4, f5)
    t0, t1, t2 = mm.mat_t_vec(smat, w0, w1, w2)
    cell = (iy - 1) * nx + ix - 1
    vals = (a2, a0, a1, t2, t0, t1)
    for ch in range(nchannel):
      out[ch * frame + cell] += sign * vals[ch]
