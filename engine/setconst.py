"""Compile-time constants that need the dynamics at qpos0 (MuJoCo's mj_setConst): dof_M0,
invweights, tendon/actuator lengths at qpos0, actuator acc0, camera/light offsets, and the
derived index fields (subtree mass, actuator ids on joints/tendons, tendon sparsity)."""
import numpy as np

from numjoco.engine import io
from numjoco.engine import math as mm
from numjoco.engine import preview
from numjoco.engine import smooth
from numjoco.engine._jit import jit
from numjoco.engine.types import MINVAL, mjtEq, mjtGain, mjtGeom, mjtJoint, mjtObj, mjtTrn, mjtWrap


@jit
def _set_m0(m, d, out):
  """dof_M0: diagonal of M at qpos0 without simple-dof shortcuts (mj_setM0)."""
  smooth.composite_inertia(m, d)
  buf = d.scratch_nbody[0, 0]
  for i in range(m.nv):
    smooth.mm.mul_inert_vec(buf, d.crb[m.dof_bodyid[i]], d.cdof[i])
    out[i] = m.dof_armature[i] + smooth.actuator_armature(m, m.dof_jntid[i], False) + \
        smooth.mm.dot6(d.cdof[i], buf)


@jit
def _position_stages(m, d):
  smooth.kinematics(m, d)
  smooth.com_pos(m, d)
  smooth.camlight(m, d)


@jit
def _spring_lengths(m, d):
  if m.ntendon:
    smooth.tendon(m, d)


@jit
def _inertia_stages(m, d):
  _spring_lengths(m, d)
  smooth.crb(m, d)
  smooth.factor_m(m, d)
  smooth.transmission(m, d)


def dof_chain(m, body):
  """Dofs that move `body`, from its own last dof to the root (MuJoCo's chain order)."""
  b = body
  while b > 0 and m.body_dofnum[b] == 0:
    b = m.body_parentid[b]
  out = []
  if b > 0:
    v = m.body_dofadr[b] + m.body_dofnum[b] - 1
    while v >= 0:
      out.append(v)
      v = m.dof_parentid[v]
  return out


def jac(m, d, point, body):
  """Dense (3, nv) translational and rotational Jacobians of a world point on `body` (mj_jac)."""
  jacp = np.zeros((3, m.nv))
  jacr = np.zeros((3, m.nv))
  off = np.asarray(point) - d.subtree_com[m.body_rootid[body]]
  for v in dof_chain(m, body):
    c = d.cdof[v]
    jacr[:, v] = c[:3]
    jacp[:, v] = c[3:] + np.cross(c[:3], off)
  return jacp, jacr


def _solve_m(m, d, mat):
  out = np.array(mat, dtype=np.float64)
  for r in range(out.shape[0]):
    x = np.ascontiguousarray(out[r])
    smooth.solve_m(m.struct, d.struct, x, x.copy())
    out[r] = x
  return out


def set_fixed(m):
  """Index-like constants: subtree mass, actuator ids on joints/tendons, fixed-tendon sparsity."""
  sub = m.body_mass.copy()
  for i in range(m.nbody - 1, 0, -1):
    sub[m.body_parentid[i]] += sub[i]
  m.body_subtreemass = sub
  jid = np.full(m.njnt, -1, np.int32)
  tid = np.full(m.ntendon, -1, np.int32)
  for i in range(m.nactuator):
    if (m.actuator_damping[i] == 0 and not m.actuator_dampingpoly[i].any()
        and m.actuator_armature[i] == 0):
      continue
    t = m.actuator_trntype[i]
    target = jid if t in (mjtTrn.JOINT, mjtTrn.JOINTINPARENT) else (
        tid if t == mjtTrn.TENDON else None)
    if target is not None:
      k = m.actuator_trnid[i, 0]
      target[k] = i if target[k] == -1 else -2
  m.jnt_actuatorid = jid
  m.tendon_actuatorid = tid
  adr = 0
  for i in range(m.ntendon):
    a, n = m.tendon_adr[i], m.tendon_num[i]
    dofs = set()
    for w in range(a, a + n):
      typ, oid = m.wrap_type[w], m.wrap_objid[w]
      if typ == mjtWrap.JOINT:
        dofs.add(int(m.jnt_dofadr[oid]))
        continue
      b = (m.site_bodyid[oid] if typ == mjtWrap.SITE else
           m.geom_bodyid[oid] if typ in (mjtWrap.SPHERE, mjtWrap.CYLINDER) else 0)
      while b > 0:   # spatial: every dof moving a body on the path (makeTendonSparse)
        dofs.update(range(m.body_dofadr[b], m.body_dofadr[b] + m.body_dofnum[b]))
        b = m.body_parentid[b]
    dofs = sorted(dofs)
    m.ten_J_rowadr[i] = adr
    m.ten_J_rownnz[i] = len(dofs)
    m.ten_J_colind[adr:adr + len(dofs)] = dofs
    adr += len(dofs)


def _eq_data(m, d):
  """Missing eq_data of body connect/weld constraints, from the pose at qpos0 (mj_setConst)."""
  for i in range(m.neq):
    id1, id2, data = m.eq_obj1id[i], m.eq_obj2id[i], m.eq_data[i]
    body = m.eq_objtype[i] == mjtObj.BODY
    if m.eq_type[i] == mjtEq.CONNECT:
      if not body:
        data[:] = 0
        continue
      pos = d.xmat[id1].reshape(3, 3) @ data[0:3] + d.xpos[id1]
      data[3:6] = d.xmat[id2].reshape(3, 3).T @ (pos - d.xpos[id2])
    elif m.eq_type[i] == mjtEq.WELD and body:
      if data[11] == 0:   # relpose given: keep it (normalised)
        if np.any(data[6:10] != 0):
          data[6:10] /= np.linalg.norm(data[6:10])
        continue
      pos = d.xmat[id2].reshape(3, 3) @ data[0:3] + d.xpos[id2]
      data[3:6] = d.xmat[id1].reshape(3, 3).T @ (pos - d.xpos[id1])
      q1 = d.xquat[id1] * np.array([1, -1, -1, -1])
      data[6:10] = mm.quat_mul(*q1, *d.xquat[id2])


def _set_stat(m, d):
  """m.stat from the model at qpos0 (MuJoCo's setStat), then the values given in <statistic>."""
  preview.set_stat(m, d)   # all but meaninertia, shared with the viewer's numpy first frame
  st = m.stat
  if m.nv:
    st.meaninertia = float(np.sum(d.M[m.M_rowadr + m.M_rownnz - 1]) / m.nv)
  st.apply_user()


def _auto_spring_damper(m):
  """Joints with springdamper="timeconst dampratio": stiffness and damping from the joint's
  inertia at qpos0 (dof_invweight0), as mjCModel::AutoSpringDamper."""
  for j in range(m.njnt):
    tc, dr = m.jnt_springdamper[j]
    if tc <= 0 or dr <= 0:
      continue
    adr = m.jnt_dofadr[j]
    ndim = {mjtJoint.FREE: 6, mjtJoint.BALL: 3}.get(int(m.jnt_type[j]), 1)
    inertia = ndim / max(MINVAL, float(np.sum(m.dof_invweight0[adr:adr + ndim])))
    m.jnt_stiffness[j] = inertia / max(MINVAL, tc * tc * dr * dr)
    m.dof_damping[adr:adr + ndim] = 2 * inertia / max(MINVAL, tc)


def set_const(m):
  """Fill every qpos0-dependent constant of `m` in place, as mj_setConst does."""
  set_fixed(m)
  d = io.make_data(m)
  cam_mode, light_mode = m.cam_mode.copy(), m.light_mode.copy()
  m.cam_mode = 0
  m.light_mode = 0
  d.qpos[:] = m.qpos0
  _position_stages(m.struct, d.struct)
  m0 = np.zeros(m.nv)
  _set_m0(m.struct, d.struct, m0)
  m.dof_M0 = m0
  _inertia_stages(m.struct, d.struct)
  m.tendon_length0 = d.ten_length
  spring = m.tendon_lengthspring
  if np.any((spring[:, 0] == -1) & (spring[:, 1] == -1)):
    # spatial tendons' spring length at qpos_spring (mj_setConst's setSpring)
    d.qpos[:] = m.qpos_spring
    _position_stages(m.struct, d.struct)
    _spring_lengths(m.struct, d.struct)
    for i in range(m.ntendon):
      if spring[i, 0] == -1 and spring[i, 1] == -1:
        spring[i] = d.ten_length[i]
        # keyframes without a plastic vector start from the measured length too
        a = m.tendon_plasticadr[i]
        if a >= 0:
          for k in range(m.nkey):
            if m.key_plastic[k, a] == -1 and m.key_plastic[k, a + 1] == -1:
              m.key_plastic[k, a:a + 2] = spring[i]
    d.qpos[:] = m.qpos0
    _position_stages(m.struct, d.struct)
    _inertia_stages(m.struct, d.struct)
  # the modes come back after every kinematics pass at qpos0 (cameras and lights posed as
  # fixed, as mj_setConst does), including the spring-length one above
  m.cam_mode = cam_mode
  m.light_mode = light_mode
  m.actuator_length0 = d.actuator_length
  nv = m.nv
  for i in range(1, m.nbody):
    if m.body_dofnum[m.body_weldid[i]] == 0:
      m.body_invweight0[i] = 0
    elif m.body_simple[i] == 2:
      m.body_invweight0[i] = (1 / max(MINVAL, m.body_mass[i]), 0)
    elif nv:
      jp, jr = jac(m, d, d.xipos[i], i)
      j6 = np.vstack([jp, jr])
      a = j6 @ _solve_m(m, d, j6).T
      m.body_invweight0[i] = (np.trace(a[:3, :3]) / 3, np.trace(a[3:, 3:]) / 3)
  for j in range(m.njnt):
    dof = m.jnt_dofadr[j]
    if m.body_simple[m.jnt_bodyid[j]] == 2:
      m.dof_invweight0[dof] = 1 / max(MINVAL, m.body_mass[m.jnt_bodyid[j]])
      continue
    n = {mjtJoint.FREE: 6, mjtJoint.BALL: 3}.get(int(m.jnt_type[j]), 1)
    e = np.zeros((n, nv))
    e[np.arange(n), dof + np.arange(n)] = 1
    a = e @ _solve_m(m, d, e).T
    if n == 6:
      m.dof_invweight0[dof:dof + 3] = np.trace(a[:3, :3]) / 3
      m.dof_invweight0[dof + 3:dof + 6] = np.trace(a[3:, 3:]) / 3
    elif n == 3:
      m.dof_invweight0[dof:dof + 3] = np.trace(a) / 3
    else:
      m.dof_invweight0[dof] = a[0, 0]
  for i in range(m.ntendon):
    row = np.zeros(nv)
    a, n = m.ten_J_rowadr[i], m.ten_J_rownnz[i]
    row[m.ten_J_colind[a:a + n]] = d.ten_J[a:a + n]
    m.tendon_invweight0[i] = row @ _solve_m(m, d, row[None])[0] if nv else 0
  for i in range(m.nout):
    row = np.zeros(nv)
    a, n = d.moment_rowadr[i], d.moment_rownnz[i]
    np.add.at(row, d.moment_colind[a:a + n], d.actuator_moment[a:a + n])
    m.actuator_acc0[i] = np.linalg.norm(_solve_m(m, d, row[None])[0]) if nv else 0
  _auto_spring_damper(m)
  _eq_data(m, d)
  _set_stat(m, d)
  for i in range(m.ncam):
    b, t = m.cam_bodyid[i], m.cam_targetbodyid[i]
    m.cam_pos0[i] = d.cam_xpos[i] - d.xpos[b]
    m.cam_poscom0[i] = d.cam_xpos[i] - d.subtree_com[t if t >= 0 else b]
    m.cam_mat0[i] = d.cam_xmat[i]
  for i in range(m.nlight):
    b, t = m.light_bodyid[i], m.light_targetbodyid[i]
    m.light_pos0[i] = d.light_xpos[i] - d.xpos[b]
    m.light_poscom0[i] = d.light_xpos[i] - d.subtree_com[t if t >= 0 else b]
    m.light_dir0[i] = d.light_xdir[i]
  # position-like actuators given a damping ratio (biasprm[2] > 0): damping from MuJoCo's
  # reflected inertia, the operational-space inertia (J M^-1 J')^-1 at qpos0 (several force
  # outputs: the inverse of their mean J M^-1 J', as for MuJoCo's SO3 servo); a PID keeps kp
  # only in biasprm[1]
  for i in range(m.nactuator):
    g, b = m.actuator_gainprm[i], m.actuator_biasprm[i]
    pid = m.actuator_gaintype[i] == mjtGain.PID
    if (not pid and g[0] != -b[1]) or b[2] <= 0:
      continue
    inv = 0.0
    outs = range(m.actuator_outadr[i], m.actuator_outadr[i] + m.actuator_outnum[i])
    for o in outs:
      row = np.zeros(nv)
      a, n = d.moment_rowadr[o], d.moment_rownnz[o]
      np.add.at(row, d.moment_colind[a:a + n], d.actuator_moment[a:a + n])
      inv += row @ _solve_m(m, d, row[None])[0] if nv else 0.0
    mass = len(outs) / inv if inv > MINVAL else 0.0
    b[2] = -b[2] * 2 * np.sqrt((-b[1] if pid else g[0]) * mass)
  return m


def set_flex_edge_constants(m):
  """flexedge_length0 and flexedge_invweight0 at qpos0, as MuJoCo's mj_setConst computes them
  (after set_const filled M and the kinematics), written into the Model's
  arrays; the rows' sparsity is the compiler's (_edge_sparsity)."""
  if not m.nflex:
    return
  d = io.make_data(m)
  d.qpos[:] = m.qpos0
  _position_stages(m.struct, d.struct)
  _inertia_stages(m.struct, d.struct)
  xmat = d.xmat.reshape(-1, 3, 3)
  jrows = {}
  length0 = np.zeros(m.nflexedge)
  invw = np.zeros(m.nflexedge)
  for f in range(m.nflex):
    va, ea = m.flex_vertadr[f], m.flex_edgeadr[f]
    if m.flex_interp[f]:    # MuJoCo leaves interpolated flexes' edge constants at 0
      continue
    vb = m.flex_vertbodyid[va:va + m.flex_vertnum[f]]
    vloc = m.flex_vert[va:va + m.flex_vertnum[f]]
    pos = d.xpos[vb] + np.einsum("nij,nj->ni", xmat[vb], vloc)
    for e in range(ea, ea + m.flex_edgenum[f]):
      v1, v2 = m.flex_edge[e]
      vec = pos[v2] - pos[v1]
      length0[e] = np.sqrt(vec @ vec)
      if m.flex_rigid[f] or not m.flexedge_J_rownnz[e] or not m.nv:
        continue
      b1, b2 = int(vb[v1]), int(vb[v2])
      j1, _ = jac(m, d, pos[v1], b1)
      j2, _ = jac(m, d, pos[v2], b2)
      jrows[e] = (vec / max(length0[e], MINVAL)) @ (j2 - j1)
  if m.nv:
    for f in range(m.nflex):
      va, ea = m.flex_vertadr[f], m.flex_edgeadr[f]
      if m.flex_interp[f]:
        continue
      for e in range(ea, ea + m.flex_edgenum[f]):
        b1, b2 = (m.flex_vertbodyid[va + v] for v in m.flex_edge[e])
        if m.flexedge_rigid[e]:
          invw[e] = 0.0
        elif m.body_simple[b1] == 2 and m.body_simple[b2] == 2:
          invw[e] = (1 / m.body_mass[b1] + 1 / m.body_mass[b2]) / 2
        elif e in jrows:
          row = jrows[e]
          invw[e] = row @ _solve_m(m, d, row[None])[0]
  m.flexedge_length0[:] = length0
  m.flexedge_invweight0[:] = invw
