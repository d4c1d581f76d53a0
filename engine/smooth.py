"""Smooth dynamics stages, as MuJoCo's engine_core_smooth.c: kinematics, com_pos, camlight,
tendon, transmission, crb (M), factor_m / solve_m (sparse LDL following the tree), com_vel, rne.

Every stage takes (m, d) structrefs, reads Model and writes Data.
"""
import math

import numpy as np

from numjoco.engine import math as mm
from numjoco.engine import wrap as wrapmod
from numjoco.engine.types import (MINVAL, mjtJoint, mjtTrn, mjtDisableBit, mjtEnableBit, mjtWarning,
                          mjtWrap)

_FREE, _BALL, _SLIDE, _HINGE = int(mjtJoint.FREE), int(mjtJoint.BALL), int(mjtJoint.SLIDE), int(mjtJoint.HINGE)
_TRN_JOINT, _TRN_JOINTINPARENT, _TRN_TENDON = (int(mjtTrn.JOINT), int(mjtTrn.JOINTINPARENT),
                                               int(mjtTrn.TENDON))
_TRN_SO3 = int(mjtTrn.SO3)
_TRN_SLIDERCRANK, _TRN_SITE, _TRN_BODY = (int(mjtTrn.SLIDERCRANK), int(mjtTrn.SITE),
                                          int(mjtTrn.BODY))
_DSBL_GRAVITY = int(mjtDisableBit.GRAVITY)
_ENBL_SLEEP = int(mjtEnableBit.SLEEP)
_WRAP_NONE, _WRAP_JOINT, _WRAP_PULLEY = (int(mjtWrap.NONE), int(mjtWrap.JOINT),
                                         int(mjtWrap.PULLEY))
_WRAP_SPHERE, _WRAP_CYLINDER = int(mjtWrap.SPHERE), int(mjtWrap.CYLINDER)
# mjtSameFrame
_WARN_INERTIA = int(mjtWarning.INERTIA)
_SF_NONE, _SF_BODY, _SF_INERTIA, _SF_BODYROT, _SF_INERTIAROT = 0, 1, 2, 3, 4
# Indices read from the sparse layout's and the tree's int32 arrays are made unsigned (np.uintp)
# in the sparse kernels and the tree recursions below: a signed index gets a negative-index
# wraparound test at every access, which also keeps LLVM from hoisting and combining the loads.
# The arithmetic and its order are unchanged, so the results are the same bit for bit.
_u = np.uintp
_ONE = np.uintp(1)
# mjtCamLight
_CL_FIXED, _CL_TRACK, _CL_TRACKCOM, _CL_TARGETBODY, _CL_TARGETBODYCOM = 0, 1, 2, 3, 4

# IEEE division everywhere (error_model='numpy'): x/0 gives inf or nan as in MuJoCo's C code,
# where Numba's default raises ZeroDivisionError and tests the divisor before every division
from numjoco.engine._jit import jit
# small helpers called per body, pair or row: inlined into their callers, which saves the
# call and the reference counting of the Model/Data structs passed to it
from numjoco.engine._jit import inline
from numjoco.engine._sig import unit, M, D, NEEDS_TENDON


@inline
def _local_to_global(xpos_out, xquat_out, xmat_out, i, d, pos, quat, body, sameframe):
  """Frame of an object attached to `body` at (pos, quat): MuJoCo's mj_local2Global."""
  if sameframe == _SF_BODY:
    p0, p1, p2 = d.xpos[body, 0], d.xpos[body, 1], d.xpos[body, 2]
  elif sameframe == _SF_INERTIA:
    p0, p1, p2 = d.xipos[body, 0], d.xipos[body, 1], d.xipos[body, 2]
  else:
    p0, p1, p2 = mm.mat_vec(d.xmat[body], pos[0], pos[1], pos[2])
    p0 += d.xpos[body, 0]; p1 += d.xpos[body, 1]; p2 += d.xpos[body, 2]
  xpos_out[i, 0], xpos_out[i, 1], xpos_out[i, 2] = p0, p1, p2
  if sameframe == _SF_BODY or sameframe == _SF_BODYROT:
    for k in range(4):
      xquat_out[i, k] = d.xquat[body, k]
    for k in range(9):
      xmat_out[i, k] = d.xmat[body, k]
  elif sameframe == _SF_INERTIA or sameframe == _SF_INERTIAROT:
    for k in range(4):
      xquat_out[i, k] = d.xiquat[body, k]
    for k in range(9):
      xmat_out[i, k] = d.ximat[body, k]
  else:
    bq = d.xquat[body]
    q0, q1, q2, q3 = mm.quat_mul(bq[0], bq[1], bq[2], bq[3], quat[0], quat[1], quat[2], quat[3])
    xquat_out[i, 0], xquat_out[i, 1], xquat_out[i, 2], xquat_out[i, 3] = q0, q1, q2, q3
    mm.quat2mat(xmat_out[i], q0, q1, q2, q3)


@unit((M, D))
def kinematics(m, d):
  """Body, joint, inertial-frame, geom and site poses from qpos (mj_kinematics)."""
  for k in range(3):
    d.xpos[0, k] = 0.0
    d.xipos[0, k] = 0.0
  d.xquat[0, 0] = 1.0; d.xquat[0, 1] = 0.0; d.xquat[0, 2] = 0.0; d.xquat[0, 3] = 0.0
  d.xiquat[0, 0] = 1.0; d.xiquat[0, 1] = 0.0; d.xiquat[0, 2] = 0.0; d.xiquat[0, 3] = 0.0
  mm.quat2mat(d.xmat[0], 1.0, 0.0, 0.0, 0.0)
  mm.quat2mat(d.ximat[0], 1.0, 0.0, 0.0, 0.0)
  qpos = d.qpos
  sleeping = (m.opt_enableflags[0] & _ENBL_SLEEP) != 0 and d.ntree_awake[0] < m.ntree
  for i in range(1, m.nbody):
    jntadr = m.body_jntadr[i]
    jntnum = m.body_jntnum[i]
    if jntnum == 1 and m.jnt_type[jntadr] == _FREE:
      a = m.jnt_qposadr[jntadr]
      x0, x1, x2 = qpos[a], qpos[a + 1], qpos[a + 2]
      q0, q1, q2, q3 = mm.quat_normalize(qpos[a + 3], qpos[a + 4], qpos[a + 5], qpos[a + 6])
      d.xanchor[jntadr, 0], d.xanchor[jntadr, 1], d.xanchor[jntadr, 2] = x0, x1, x2
      for k in range(3):
        d.xaxis[jntadr, k] = m.jnt_axis[jntadr, k]
    else:
      pid = m.body_parentid[i]
      mocap = m.body_mocapid[i]
      if mocap >= 0:
        b0, b1, b2 = d.mocap_pos[mocap, 0], d.mocap_pos[mocap, 1], d.mocap_pos[mocap, 2]
        c = d.mocap_quat[mocap]
        r0, r1, r2, r3 = mm.quat_normalize(c[0], c[1], c[2], c[3])
      else:
        b0, b1, b2 = m.body_pos[i, 0], m.body_pos[i, 1], m.body_pos[i, 2]
        r0, r1, r2, r3 = m.body_quat[i, 0], m.body_quat[i, 1], m.body_quat[i, 2], m.body_quat[i, 3]
      if pid > 0:
        x0, x1, x2 = mm.mat_vec(d.xmat[pid], b0, b1, b2)
        x0 += d.xpos[pid, 0]; x1 += d.xpos[pid, 1]; x2 += d.xpos[pid, 2]
        pq = d.xquat[pid]
        q0, q1, q2, q3 = mm.quat_mul(pq[0], pq[1], pq[2], pq[3], r0, r1, r2, r3)
      else:
        x0, x1, x2 = b0, b1, b2
        q0, q1, q2, q3 = r0, r1, r2, r3
      for j in range(jntadr, jntadr + jntnum):
        a = m.jnt_qposadr[j]
        jt = m.jnt_type[j]
        ja = m.jnt_axis[j]
        jp = m.jnt_pos[j]
        ax0, ax1, ax2 = mm.quat_rot(q0, q1, q2, q3, ja[0], ja[1], ja[2])
        an0, an1, an2 = mm.quat_rot(q0, q1, q2, q3, jp[0], jp[1], jp[2])
        an0 += x0; an1 += x1; an2 += x2
        if jt == _SLIDE:
          s = qpos[a] - m.qpos0[a]
          x0 += ax0 * s; x1 += ax1 * s; x2 += ax2 * s
        else:
          if jt == _BALL:
            l0, l1, l2, l3 = mm.quat_normalize(qpos[a], qpos[a + 1], qpos[a + 2], qpos[a + 3])
          else:
            l0, l1, l2, l3 = mm.axis_angle_quat(ja[0], ja[1], ja[2], qpos[a] - m.qpos0[a])
          q0, q1, q2, q3 = mm.quat_mul(q0, q1, q2, q3, l0, l1, l2, l3)
          v0, v1, v2 = mm.quat_rot(q0, q1, q2, q3, jp[0], jp[1], jp[2])
          x0, x1, x2 = an0 - v0, an1 - v1, an2 - v2
        d.xanchor[j, 0], d.xanchor[j, 1], d.xanchor[j, 2] = an0, an1, an2
        d.xaxis[j, 0], d.xaxis[j, 1], d.xaxis[j, 2] = ax0, ax1, ax2
    q0, q1, q2, q3 = mm.quat_normalize(q0, q1, q2, q3)
    if sleeping and jntnum and d.body_awake[i] == 0:
      # a sleeping body whose pose changed (qpos written): its tree wakes (engine/sleep.py)
      xp, xq = d.xpos[i], d.xquat[i]
      if not (x0 == xp[0] and x1 == xp[1] and x2 == xp[2] and q0 == xq[0] and q1 == xq[1]
              and q2 == xq[2] and q3 == xq[3]):
        d.tree_awake[m.body_treeid[i]] = 1
    d.xquat[i, 0], d.xquat[i, 1], d.xquat[i, 2], d.xquat[i, 3] = q0, q1, q2, q3
    d.xpos[i, 0], d.xpos[i, 1], d.xpos[i, 2] = x0, x1, x2
    mm.quat2mat(d.xmat[i], q0, q1, q2, q3)

  for i in range(1, m.nbody):
    _local_to_global(d.xipos, d.xiquat, d.ximat, i, d, m.body_ipos[i], m.body_iquat[i], i,
                     m.body_sameframe[i])
  for g in range(m.ngeom):
    _local_to_global(d.geom_xpos, d.geom_xquat, d.geom_xmat, g, d, m.geom_pos[g], m.geom_quat[g],
                     m.geom_bodyid[g], m.geom_sameframe[g])
  for s in range(m.nsite):
    _local_to_global(d.site_xpos, d.site_xquat, d.site_xmat, s, d, m.site_pos[s], m.site_quat[s],
                     m.site_bodyid[s], m.site_sameframe[s])


@jit
def _inert_com(out, inertia, mat, dif0, dif1, dif2, mass):
  """cinert of a body: rotate principal inertia to world, shift by dif (mju_inertCom). The
  inputs are read into registers first: a store into out would make LLVM load them again."""
  m0, m1, m2, m3, m4, m5, m6, m7, m8 = (mat[0], mat[1], mat[2], mat[3], mat[4], mat[5],
                                        mat[6], mat[7], mat[8])
  i0, i1, i2 = inertia[0], inertia[1], inertia[2]
  # res_rot = mat * diag(inertia) * mat', entry (r, c) summed over the principal axes
  out[0] = (m0 * i0 * m0 + m1 * i1 * m1 + m2 * i2 * m2) + mass * (dif1 * dif1 + dif2 * dif2)
  out[1] = (m3 * i0 * m3 + m4 * i1 * m4 + m5 * i2 * m5) + mass * (dif0 * dif0 + dif2 * dif2)
  out[2] = (m6 * i0 * m6 + m7 * i1 * m7 + m8 * i2 * m8) + mass * (dif0 * dif0 + dif1 * dif1)
  out[3] = (m0 * i0 * m3 + m1 * i1 * m4 + m2 * i2 * m5) - mass * dif0 * dif1
  out[4] = (m0 * i0 * m6 + m1 * i1 * m7 + m2 * i2 * m8) - mass * dif0 * dif2
  out[5] = (m3 * i0 * m6 + m4 * i1 * m7 + m5 * i2 * m8) - mass * dif1 * dif2
  out[6] = mass * dif0
  out[7] = mass * dif1
  out[8] = mass * dif2
  out[9] = mass


@jit
def _dof_com(cdof, v, a0, a1, a2, o0, o1, o2, has_offset):
  """Motion dof in the com frame: rotation about axis a through offset, or translation."""
  if has_offset:
    c0, c1, c2 = mm.cross(a0, a1, a2, o0, o1, o2)
    cdof[v, 0], cdof[v, 1], cdof[v, 2] = a0, a1, a2
    cdof[v, 3], cdof[v, 4], cdof[v, 5] = c0, c1, c2
  else:
    cdof[v, 0], cdof[v, 1], cdof[v, 2] = 0.0, 0.0, 0.0
    cdof[v, 3], cdof[v, 4], cdof[v, 5] = a0, a1, a2


@unit((M, D))
def com_pos(m, d):
  """subtree_com, cinert and cdof in the frame centred at each tree's com (mj_comPos)."""
  nbody = m.nbody
  for i in range(nbody):
    for k in range(3):
      d.subtree_com[i, k] = d.xipos[i, k] * m.body_mass[i]
  for i in range(nbody - 1, 0, -1):
    p = _u(m.body_parentid[i])
    for k in range(3):
      d.subtree_com[p, k] += d.subtree_com[i, k]
  for i in range(nbody):
    if m.body_subtreemass[i] < 1e-15:
      for k in range(3):
        d.subtree_com[i, k] = d.xipos[i, k]
    else:
      s = 1.0 / m.body_subtreemass[i]
      for k in range(3):
        d.subtree_com[i, k] *= s
  for k in range(10):
    d.cinert[0, k] = 0.0
  for i in range(1, nbody):
    r = _u(m.body_rootid[i])
    _inert_com(d.cinert[i], m.body_inertia[i], d.ximat[i], d.xipos[i, 0] - d.subtree_com[r, 0],
               d.xipos[i, 1] - d.subtree_com[r, 1], d.xipos[i, 2] - d.subtree_com[r, 2],
               m.body_mass[i])
  for i in range(1, nbody):
    r = _u(m.body_rootid[i])
    j0 = _u(m.body_jntadr[i])   # unsigned indices: no wraparound test on the loads
    for j in range(j0, j0 + _u(m.body_jntnum[i])):
      da = _u(m.jnt_dofadr[j])
      o0 = d.subtree_com[r, 0] - d.xanchor[j, 0]
      o1 = d.subtree_com[r, 1] - d.xanchor[j, 1]
      o2 = d.subtree_com[r, 2] - d.xanchor[j, 2]
      jt = m.jnt_type[j]
      if jt == _FREE or jt == _BALL:
        if jt == _FREE:
          _dof_com(d.cdof, da, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)
          _dof_com(d.cdof, da + _u(1), 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, False)
          _dof_com(d.cdof, da + _u(2), 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, False)
          da += _u(3)
        xm = d.xmat[i]
        for k in range(3):
          _dof_com(d.cdof, da + _u(k), xm[k], xm[k + 3], xm[k + 6], o0, o1, o2, True)
      elif jt == _SLIDE:
        _dof_com(d.cdof, da, d.xaxis[j, 0], d.xaxis[j, 1], d.xaxis[j, 2], 0.0, 0.0, 0.0, False)
      else:
        _dof_com(d.cdof, da, d.xaxis[j, 0], d.xaxis[j, 1], d.xaxis[j, 2], o0, o1, o2, True)


@inline
def _unit3(x0, x1, x2):
  """x / |x|, or x itself when |x| <= 1e-15."""
  n = (x0 * x0 + x1 * x1 + x2 * x2) ** 0.5
  if n > 1e-15:
    x0 /= n; x1 /= n; x2 /= n
  return x0, x1, x2


@inline
def _camlight_pos(d, xpos, b, pos, pos0, poscom0, mode):
  """World position of a camera or light on body b at local pos; in the tracking modes the body's
  xpos plus pos0 (mjCAMLIGHT_TRACK) or its subtree_com plus poscom0 (mjCAMLIGHT_TRACKCOM)."""
  p0, p1, p2 = mm.mat_vec(d.xmat[b], pos[0], pos[1], pos[2])
  xpos[0] = p0 + d.xpos[b, 0]
  xpos[1] = p1 + d.xpos[b, 1]
  xpos[2] = p2 + d.xpos[b, 2]
  if mode == _CL_TRACK or mode == _CL_TRACKCOM:
    for k in range(3):
      if mode == _CL_TRACK:
        xpos[k] = d.xpos[b, k] + pos0[k]
      else:
        xpos[k] = d.subtree_com[b, k] + poscom0[k]


@jit
def camlight(m, d):
  """Camera and light poses, with their tracking / targeting modes (mj_camlight)."""
  for i in range(m.ncam):
    b = m.cam_bodyid[i]
    t = m.cam_targetbodyid[i]
    mode = m.cam_mode[i]
    _camlight_pos(d, d.cam_xpos[i], b, m.cam_pos[i], m.cam_pos0[i], m.cam_poscom0[i], mode)
    bq = d.xquat[b]
    cq = m.cam_quat[i]
    q0, q1, q2, q3 = mm.quat_mul(bq[0], bq[1], bq[2], bq[3], cq[0], cq[1], cq[2], cq[3])
    mm.quat2mat(d.cam_xmat[i], q0, q1, q2, q3)
    if mode == _CL_TRACK or mode == _CL_TRACKCOM:
      for k in range(9):
        d.cam_xmat[i, k] = m.cam_mat0[i, k]
    elif (mode == _CL_TARGETBODY or mode == _CL_TARGETBODYCOM) and t >= 0:
      src = d.xpos if mode == _CL_TARGETBODY else d.subtree_com
      z0, z1, z2 = _unit3(d.cam_xpos[i, 0] - src[t, 0], d.cam_xpos[i, 1] - src[t, 1],
                          d.cam_xpos[i, 2] - src[t, 2])
      x0, x1, x2 = mm.cross(0.0, 0.0, 1.0, z0, z1, z2)
      x0, x1, x2 = _unit3(x0, x1, x2)
      y0, y1, y2 = mm.cross(z0, z1, z2, x0, x1, x2)
      y0, y1, y2 = _unit3(y0, y1, y2)
      c = d.cam_xmat[i]
      c[0], c[3], c[6] = x0, x1, x2
      c[1], c[4], c[7] = y0, y1, y2
      c[2], c[5], c[8] = z0, z1, z2
  for i in range(m.nlight):
    b = m.light_bodyid[i]
    t = m.light_targetbodyid[i]
    mode = m.light_mode[i]
    _camlight_pos(d, d.light_xpos[i], b, m.light_pos[i], m.light_pos0[i], m.light_poscom0[i],
                  mode)
    bq = d.xquat[b]
    d0, d1, d2 = mm.quat_rot(bq[0], bq[1], bq[2], bq[3], m.light_dir[i, 0], m.light_dir[i, 1],
                             m.light_dir[i, 2])
    if mode == _CL_TRACK or mode == _CL_TRACKCOM:
      d0, d1, d2 = m.light_dir0[i, 0], m.light_dir0[i, 1], m.light_dir0[i, 2]
    elif (mode == _CL_TARGETBODY or mode == _CL_TARGETBODYCOM) and t >= 0:
      src = d.xpos if mode == _CL_TARGETBODY else d.subtree_com
      d0 = src[t, 0] - d.light_xpos[i, 0]
      d1 = src[t, 1] - d.light_xpos[i, 1]
      d2 = src[t, 2] - d.light_xpos[i, 2]
    d0, d1, d2 = _unit3(d0, d1, d2)
    d.light_xdir[i, 0], d.light_xdir[i, 1], d.light_xdir[i, 2] = d0, d1, d2


@jit
def _ten_add(m, d, i, dof, val):
  """ten_J[i, dof] += val in the tendon's sparse row (columns sorted, fixed at compile time)."""
  for k in range(m.ten_J_rowadr[i], m.ten_J_rowadr[i] + m.ten_J_rownnz[i]):
    if m.ten_J_colind[k] == dof:
      d.ten_J[k] += val
      return


@jit
def chain_end(m, body):
  """Where the dof chain of a point on `body` starts: the last dof of the first body from
  `body` toward the world that has dofs (its weld body); walk dof_parentid from it. -1 when
  the body is welded to the world. (The point's translational column at dof v is
  cdof lin + cdof ang x (p - subtree_com of the root).)"""
  b = m.body_weldid[body]
  if b == 0 or m.body_dofnum[b] == 0:
    return -1
  return m.body_dofadr[b] + m.body_dofnum[b] - 1


@inline
def com_offset(m, d, body, p0, p1, p2):
  """p - subtree_com of body's root: the lever arm of world point p in its translational
  Jacobian columns (cdof lin + cdof ang x offset)."""
  r = m.body_rootid[body]
  return p0 - d.subtree_com[r, 0], p1 - d.subtree_com[r, 1], p2 - d.subtree_com[r, 2]


@inline
def point_jac_col(c, o0, o1, o2):
  """Translational Jacobian column of a point at offset o (com_offset) for the dof whose cdof
  is c: lin + ang x o."""
  return (c[3] + (c[1] * o2 - c[2] * o1), c[4] + (c[2] * o0 - c[0] * o2),
          c[5] + (c[0] * o1 - c[1] * o0))


@inline
def point_chain(m, d, body, p0, p1, p2):
  """(first dof of the chain of world point p on `body`, -1 when welded to the world; the
  point's com_offset): walk the chain with dof_parentid, columns from point_jac_col."""
  o0, o1, o2 = com_offset(m, d, body, p0, p1, p2)
  return chain_end(m, body), o0, o1, o2


@jit
def apply_ft(m, d, f0, f1, f2, t0, t1, t2, p0, p1, p2, body, qfrc):
  """qfrc += J' [f; t] for a force f and torque t applied at world point p on `body`
  (mj_applyFT)."""
  v, o0, o1, o2 = point_chain(m, d, body, p0, p1, p2)
  while v >= 0:
    c = d.cdof[v]
    j0, j1, j2 = point_jac_col(c, o0, o1, o2)
    qfrc[v] += f0 * j0 + f1 * j1 + f2 * j2 + t0 * c[0] + t1 * c[1] + t2 * c[2]
    v = m.dof_parentid[v]


@jit
def _ten_point_jac(m, d, i, body, p0, p1, p2, u0, u1, u2, scale):
  """ten_J[i] += scale * u' * jacp(point p on body), walking the body's dof chain."""
  v, o0, o1, o2 = point_chain(m, d, body, p0, p1, p2)
  while v >= 0:
    j0, j1, j2 = point_jac_col(d.cdof[v], o0, o1, o2)
    _ten_add(m, d, i, v, scale * (u0 * j0 + u1 * j1 + u2 * j2))
    v = m.dof_parentid[v]


@jit
def _wrap_point(d, k, src, off):
  """wrap_xpos point k (MuJoCo's flat nwrap*2 x 3 layout) = src[off:off+3]."""
  r, c = k >> 1, (k & 1) * 3
  d.wrap_xpos[r, c] = src[off]
  d.wrap_xpos[r, c + 1] = src[off + 1]
  d.wrap_xpos[r, c + 2] = src[off + 2]


@jit
def _wrap_obj(d, k, obj):
  d.wrap_obj[k >> 1, k & 1] = obj


@jit
def _spatial_tendon(m, d, i, wrapcount):
  """Length, Jacobian row and path points of spatial tendon i (mj_tendon); returns the new
  wrap point count."""
  adr = m.tendon_adr[i]
  num = m.tendon_num[i]
  wpnt = d.ten_wpnt
  divisor = 1.0
  j = 0
  while j < num - 1:
    type0 = m.wrap_type[adr + j]
    type1 = m.wrap_type[adr + j + 1]
    id0 = m.wrap_objid[adr + j]
    id1 = m.wrap_objid[adr + j + 1]
    if type0 == _WRAP_PULLEY or type1 == _WRAP_PULLEY:
      if type0 == _WRAP_PULLEY:
        divisor = m.wrap_prm[adr + j]
        r, c = wrapcount >> 1, (wrapcount & 1) * 3
        d.wrap_xpos[r, c] = d.wrap_xpos[r, c + 1] = d.wrap_xpos[r, c + 2] = 0.0
        _wrap_obj(d, wrapcount, -2)
        d.ten_wrapnum[i] += 1
        wrapcount += 1
      j += 1
      continue
    for k in range(3):
      wpnt[k] = d.site_xpos[id0, k]
    wb0 = m.site_bodyid[id0]
    wb1 = wb0
    wb2 = wb0
    wb3 = wb0
    wlen = -1.0
    wrapid = -1
    wraptype = _WRAP_NONE
    if type1 == _WRAP_SPHERE or type1 == _WRAP_CYLINDER:
      wraptype = type1
      wrapid = id1
      type1 = m.wrap_type[adr + j + 2]
      id1 = m.wrap_objid[adr + j + 2]
      sideid = int(round(m.wrap_prm[adr + j + 1]))
      side = d.site_xpos[sideid if sideid >= 0 else 0]
      wlen = wrapmod.wrap(d.ten_wpnt[3:9], d.site_xpos[id0], d.site_xpos[id1],
                          d.geom_xpos[wrapid], d.geom_xmat[wrapid], m.geom_size[wrapid, 0],
                          wraptype == _WRAP_CYLINDER, side, sideid >= 0)
    if wlen < 0:
      for k in range(3):
        wpnt[3 + k] = d.site_xpos[id1, k]
      wb1 = m.site_bodyid[id1]
      d.ten_length[i] += _dist3(wpnt, 0, 3) / divisor
      nseg = 1
    else:
      for k in range(3):
        wpnt[9 + k] = d.site_xpos[id1, k]
      wb1 = wb2 = m.geom_bodyid[wrapid]
      wb3 = m.site_bodyid[id1]
      d.ten_length[i] += (_dist3(wpnt, 0, 3) + wlen + _dist3(wpnt, 6, 9)) / divisor
      nseg = 3
    for k in range(nseg):
      ba = wb0 if k == 0 else (wb1 if k == 1 else wb2)
      bb = wb1 if k == 0 else (wb2 if k == 1 else wb3)
      if ba == bb:
        continue
      u0 = wpnt[3 * k + 3] - wpnt[3 * k]
      u1 = wpnt[3 * k + 4] - wpnt[3 * k + 1]
      u2 = wpnt[3 * k + 5] - wpnt[3 * k + 2]
      n = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
      if n < 1e-15:
        u0, u1, u2 = 1.0, 0.0, 0.0   # mju_normalize3 of a zero vector
      else:
        u0, u1, u2 = u0 / n, u1 / n, u2 / n
      _ten_point_jac(m, d, i, bb, wpnt[3 * k + 3], wpnt[3 * k + 4], wpnt[3 * k + 5],
                     u0, u1, u2, 1.0 / divisor)
      _ten_point_jac(m, d, i, ba, wpnt[3 * k], wpnt[3 * k + 1], wpnt[3 * k + 2],
                     u0, u1, u2, -1.0 / divisor)
    _wrap_point(d, wrapcount, wpnt, 0)
    _wrap_obj(d, wrapcount, -1)
    if wlen >= 0:
      _wrap_point(d, wrapcount + 1, wpnt, 3)
      _wrap_point(d, wrapcount + 2, wpnt, 6)
      _wrap_obj(d, wrapcount + 1, wrapid)
      _wrap_obj(d, wrapcount + 2, wrapid)
    d.ten_wrapnum[i] += nseg
    wrapcount += nseg
    j += 2 if wraptype != _WRAP_NONE else 1
    if j == num - 1 or m.wrap_type[adr + j + 1] == _WRAP_PULLEY:
      _wrap_point(d, wrapcount, d.site_xpos[id1], 0)
      _wrap_obj(d, wrapcount, -1)
      d.ten_wrapnum[i] += 1
      wrapcount += 1
  return wrapcount


@jit
def _dist3(a, i, j):
  return math.sqrt((a[j] - a[i]) ** 2 + (a[j + 1] - a[i + 1]) ** 2 + (a[j + 2] - a[i + 2]) ** 2)


@unit((M, D), needs=NEEDS_TENDON)
def tendon(m, d):
  """Tendon lengths, sparse Jacobians and spatial paths (mj_tendon)."""
  wrapcount = 0
  for i in range(m.ntendon):
    d.ten_length[i] = 0.0
    rowadr = m.ten_J_rowadr[i]
    rownnz = m.ten_J_rownnz[i]
    for k in range(rowadr, rowadr + rownnz):
      d.ten_J[k] = 0.0
    d.ten_wrapadr[i] = wrapcount
    d.ten_wrapnum[i] = 0
    adr = m.tendon_adr[i]
    if m.wrap_type[adr] != _WRAP_JOINT:
      wrapcount = _spatial_tendon(m, d, i, wrapcount)
      continue
    for w in range(adr, adr + m.tendon_num[i]):
      jnt = m.wrap_objid[w]
      coef = m.wrap_prm[w]
      d.ten_length[i] += coef * d.qpos[m.jnt_qposadr[jnt]]
      _ten_add(m, d, i, m.jnt_dofadr[jnt], coef)


@jit
def jac_rows(m, d, out, r, body, p):
  """out[r:r+3] = translational, out[r+3:r+6] = rotational dense Jacobian of world point p
  on `body` (mj_jac)."""
  for k in range(6):
    for j in range(m.nv):
      out[r + k, j] = 0.0
  b = m.body_weldid[body]
  if m.body_dofnum[b] == 0:
    return
  root = m.body_rootid[body]
  o0 = p[0] - d.subtree_com[root, 0]
  o1 = p[1] - d.subtree_com[root, 1]
  o2 = p[2] - d.subtree_com[root, 2]
  v = m.body_dofadr[b] + m.body_dofnum[b] - 1
  while v >= 0:
    c = d.cdof[v]
    out[r, v] = c[3] + (c[1] * o2 - c[2] * o1)
    out[r + 1, v] = c[4] + (c[2] * o0 - c[0] * o2)
    out[r + 2, v] = c[5] + (c[0] * o1 - c[1] * o0)
    out[r + 3, v] = c[0]
    out[r + 4, v] = c[1]
    out[r + 5, v] = c[2]
    v = m.dof_parentid[v]


@jit
def _common_dof(m, b0, b1):
  """Last dof shared by the chains of bodies b0 and b1, or -1 (as mj_transmission)."""
  d0 = m.body_dofadr[b0] + m.body_dofnum[b0] - 1
  d1 = m.body_dofadr[b1] + m.body_dofnum[b1] - 1
  if d0 < 0 or d1 < 0 or m.body_dofnum[b0] == 0 or m.body_dofnum[b1] == 0:
    return -1
  while d0 != d1:
    if d0 < d1:
      d1 = m.dof_parentid[d1]
    else:
      d0 = m.dof_parentid[d0]
    if d0 == -1 or d1 == -1:
      return -1
  return d0


@jit
def _site_moment(m, d, i, gear):
  """Site transmission (with or without refsite): length, and the dense moment row in
  d.trn_jac[12]."""
  J = d.trn_jac
  row = J[12]
  nv = m.nv
  sid = m.actuator_trnid[i, 0]
  ref = m.actuator_trnid[i, 1]
  for j in range(nv):
    row[j] = 0.0
  jac_rows(m, d, J, 0, m.site_bodyid[sid], d.site_xpos[sid])
  length = 0.0
  if ref < 0:
    xm = d.site_xmat[sid]
    w0, w1, w2 = mm.mat_vec(xm, gear[0], gear[1], gear[2])
    w3, w4, w5 = mm.mat_vec(xm, gear[3], gear[4], gear[5])
    for j in range(nv):
      row[j] = (J[0, j] * w0 + J[1, j] * w1 + J[2, j] * w2
                + J[3, j] * w3 + J[4, j] * w4 + J[5, j] * w5)
    return length
  common = _common_dof(m, m.body_weldid[m.site_bodyid[sid]], m.body_weldid[m.site_bodyid[ref]])
  jac_rows(m, d, J, 6, m.site_bodyid[ref], d.site_xpos[ref])
  xr = d.site_xmat[ref]
  for part in range(2):
    g0, g1, g2 = gear[3 * part], gear[3 * part + 1], gear[3 * part + 2]
    if g0 == 0.0 and g1 == 0.0 and g2 == 0.0:
      continue
    if part == 0:
      v0 = d.site_xpos[sid, 0] - d.site_xpos[ref, 0]
      v1 = d.site_xpos[sid, 1] - d.site_xpos[ref, 1]
      v2 = d.site_xpos[sid, 2] - d.site_xpos[ref, 2]
      v0, v1, v2 = mm.mat_t_vec(xr, v0, v1, v2)
    else:
      a = d.site_xquat[sid]
      b = d.site_xquat[ref]
      v0, v1, v2 = mm.sub_quat4(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])
    length += v0 * g0 + v1 * g1 + v2 * g2
    r = 3 * part
    for k in range(3):
      for j in range(nv):
        J[r + k, j] -= J[6 + r + k, j]
    da = common
    while da >= 0:
      J[r, da] = J[r + 1, da] = J[r + 2, da] = 0.0
      da = m.dof_parentid[da]
    w0, w1, w2 = mm.mat_vec(xr, g0, g1, g2)
    for j in range(nv):
      row[j] += J[r, j] * w0 + J[r + 1, j] * w1 + J[r + 2, j] * w2
  return length


@jit
def _slidercrank_moment(m, d, i, gear):
  """Slider-crank transmission: length, and the dense moment row in d.trn_jac[12]."""
  J = d.trn_jac
  row = J[12]
  nv = m.nv
  cid = m.actuator_trnid[i, 0]
  sl = m.actuator_trnid[i, 1]
  rod = m.actuator_cranklength[i]
  xm = d.site_xmat[sl]
  ax0, ax1, ax2 = xm[2], xm[5], xm[8]
  v0 = d.site_xpos[cid, 0] - d.site_xpos[sl, 0]
  v1 = d.site_xpos[cid, 1] - d.site_xpos[sl, 1]
  v2 = d.site_xpos[cid, 2] - d.site_xpos[sl, 2]
  av = v0 * ax0 + v1 * ax1 + v2 * ax2
  det = av * av + rod * rod - (v0 * v0 + v1 * v1 + v2 * v2)
  if det <= 0:
    length = av
    la0, la1, la2 = v0, v1, v2
    lv0, lv1, lv2 = ax0, ax1, ax2
  else:
    sdet = math.sqrt(det)
    length = av - sdet
    f = 1 - av / sdet
    lv0, lv1, lv2 = ax0 * f + v0 / sdet, ax1 * f + v1 / sdet, ax2 * f + v2 / sdet
    la0, la1, la2 = v0 * f, v1 * f, v2 * f
  jac_rows(m, d, J, 0, m.site_bodyid[sl], d.site_xpos[sl])       # slider point and axis
  jac_rows(m, d, J, 6, m.site_bodyid[cid], d.site_xpos[cid])     # crank point
  for j in range(nv):
    # jacA = cross(jacr column, axis); jac = crank point - slider point
    ja0 = J[4, j] * ax2 - J[5, j] * ax1
    ja1 = J[5, j] * ax0 - J[3, j] * ax2
    ja2 = J[3, j] * ax1 - J[4, j] * ax0
    row[j] = (la0 * ja0 + la1 * ja1 + la2 * ja2
              + lv0 * (J[6, j] - J[0, j]) + lv1 * (J[7, j] - J[1, j])
              + lv2 * (J[8, j] - J[2, j])) * gear[0]
  return length * gear[0]


@jit
def _body_moment(m, d, i):
  """Body transmission (adhesion): minus the mean normal Jacobian of the body's contacts, in
  d.trn_jac[12] (mj_transmission's mjTRN_BODY); contacts excluded in the gap count with the
  Jacobian difference along their normal."""
  J = d.trn_jac
  row = J[12]
  nv = m.nv
  body = m.actuator_trnid[i, 0]
  for j in range(nv):
    row[j] = 0.0
  counter = 0
  elliptic = m.opt_cone[0] == 1
  for c in range(d.ncon[0]):
    g1, g2 = d.contact_geom1[c], d.contact_geom2[c]
    if g1 < 0 or g2 < 0:
      continue
    b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
    if b1 != body and b2 != body:
      continue
    ex = d.contact_exclude[c]
    if ex == 0:
      counter += 1
      adr = d.contact_efc_address[c]
      if adr < 0:
        continue
      dim = d.contact_dim[c]
      nrow = 1 if (dim == 1 or elliptic) else 2 * (dim - 1)
      w = 1.0 if nrow == 1 else 0.5 / (dim - 1)
      for r in range(adr, adr + nrow):
        for k in range(d.efc_J_rowadr[r], d.efc_J_rowadr[r] + d.efc_J_rownnz[r]):
          row[d.efc_J_colind[k]] += w * d.efc_J[k]
    elif ex == 1:
      counter += 1
      p = d.contact_pos[c]
      jac_rows(m, d, J, 0, b1, p)
      jac_rows(m, d, J, 6, b2, p)
      fr = d.contact_frame[c]
      for j in range(nv):
        row[j] += (fr[0] * (J[6, j] - J[0, j]) + fr[1] * (J[7, j] - J[1, j])
                   + fr[2] * (J[8, j] - J[2, j]))
  if counter:
    for j in range(nv):
      row[j] *= -1.0 / counter


@jit
def _so3_moment(m, d, i, out, adr):
  """SO3 transmission: 3 lengths (the relative orientation as an expmap) and 3 moment rows,
  from a ball joint (identity rows at its dofs) or a site relative to its refsite (the relative
  rotational Jacobian projected on the site's axes); returns the non-zeros written."""
  ident = m.actuator_trnid[i, 0]
  ref = m.actuator_trnid[i, 1]
  if ref < 0:
    qa = m.jnt_qposadr[ident]
    q0, q1, q2, q3 = mm.quat_normalize(d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2],
                                       d.qpos[qa + 3])
    a = mm.sub_quat4(q0, q1, q2, q3, 1.0, 0.0, 0.0, 0.0)
    for k in range(3):
      d.moment_rowadr[out + k] = adr + k
      d.moment_rownnz[out + k] = 1
      d.actuator_length[out + k] = a[k]
      d.moment_colind[adr + k] = m.jnt_dofadr[ident] + k
      d.actuator_moment[adr + k] = 1.0
    return 3
  # world orientations of both sites (MuJoCo 4.0; its published source multiplies the other way
  # round)
  b, br = m.site_bodyid[ident], m.site_bodyid[ref]
  sq, bq = m.site_quat[ident], d.xquat[b]
  q0, q1, q2, q3 = mm.quat_mul(bq[0], bq[1], bq[2], bq[3], sq[0], sq[1], sq[2], sq[3])
  sq, bq = m.site_quat[ref], d.xquat[br]
  r0, r1, r2, r3 = mm.quat_mul(bq[0], bq[1], bq[2], bq[3], sq[0], sq[1], sq[2], sq[3])
  v = mm.sub_quat4(q0, q1, q2, q3, r0, r1, r2, r3)
  J = d.trn_jac
  nv = m.nv
  jac_rows(m, d, J, 0, b, d.site_xpos[ident])
  jac_rows(m, d, J, 6, br, d.site_xpos[ref])
  for r in range(3):
    for j in range(nv):
      J[3 + r, j] -= J[9 + r, j]
  # the shared part of the two chains moves both frames alike
  c = _common_dof(m, m.body_weldid[b], m.body_weldid[br])
  while c >= 0:
    J[3, c] = J[4, c] = J[5, c] = 0.0
    c = m.dof_parentid[c]
  xm = d.site_xmat[ident]
  nnz = 0
  for k in range(3):
    d.moment_rowadr[out + k] = adr + nnz
    d.actuator_length[out + k] = v[k]
    w0, w1, w2 = xm[k], xm[k + 3], xm[k + 6]
    start = nnz
    for j in range(nv):
      val = J[3, j] * w0 + J[4, j] * w1 + J[5, j] * w2
      if val != 0.0:
        d.moment_colind[adr + nnz] = j
        d.actuator_moment[adr + nnz] = val
        nnz += 1
    d.moment_rownnz[out + k] = nnz - start
  return nnz


@unit((M, D))
def transmission(m, d):
  """Actuator lengths and sparse moment arms (mj_transmission), one row per force output:
  joint, tendon, site (with and without refsite), slider-crank, body (adhesion) and SO3."""
  adr = 0
  for i in range(m.nactuator):
    out = m.actuator_outadr[i]
    ident = m.actuator_trnid[i, 0]
    gear = m.actuator_gear[out]
    trn = m.actuator_trntype[i]
    if trn == _TRN_SO3:
      adr += _so3_moment(m, d, i, out, adr)
      continue
    d.moment_rowadr[out] = adr
    nnz = 0
    if trn == _TRN_JOINT or trn == _TRN_JOINTINPARENT:
      jt = m.jnt_type[ident]
      qa = m.jnt_qposadr[ident]
      if jt == _SLIDE or jt == _HINGE:
        nnz = 1
        d.moment_colind[adr] = m.jnt_dofadr[ident]
        d.actuator_length[out] = d.qpos[qa] * gear[0]
        d.actuator_moment[adr] = gear[0]
      elif jt == _BALL:
        # 3D gear: in the child frame for JOINT, the parent frame for JOINTINPARENT;
        # length = expmap of the joint quaternion . gear
        nnz = 3
        q0, q1, q2, q3 = mm.quat_normalize(d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2],
                                           d.qpos[qa + 3])
        a0, a1, a2 = mm.sub_quat4(q0, q1, q2, q3, 1.0, 0.0, 0.0, 0.0)
        g0, g1, g2 = gear[0], gear[1], gear[2]
        if trn == _TRN_JOINTINPARENT:
          g0, g1, g2 = mm.quat_rot(q0, -q1, -q2, -q3, g0, g1, g2)
        d.actuator_length[out] = a0 * g0 + a1 * g1 + a2 * g2
        for k in range(3):
          d.moment_colind[adr + k] = m.jnt_dofadr[ident] + k
        d.actuator_moment[adr] = g0
        d.actuator_moment[adr + 1] = g1
        d.actuator_moment[adr + 2] = g2
      else:
        # free joint: translational gear as is, rotational gear in the body frame for
        # JOINTINPARENT (rotated by the inverse joint quaternion), as given for JOINT
        nnz = 6
        d.actuator_length[out] = 0.0
        for k in range(6):
          d.moment_colind[adr + k] = m.jnt_dofadr[ident] + k
          d.actuator_moment[adr + k] = gear[k]
        if trn == _TRN_JOINTINPARENT:
          q0, q1, q2, q3 = mm.quat_normalize(d.qpos[qa + 3], d.qpos[qa + 4], d.qpos[qa + 5],
                                             d.qpos[qa + 6])
          g0, g1, g2 = mm.quat_rot(q0, -q1, -q2, -q3, gear[3], gear[4], gear[5])
          d.actuator_moment[adr + 3] = g0
          d.actuator_moment[adr + 4] = g1
          d.actuator_moment[adr + 5] = g2
    elif trn == _TRN_TENDON:
      d.actuator_length[out] = d.ten_length[ident] * gear[0]
      nnz = m.ten_J_rownnz[ident]
      ta = m.ten_J_rowadr[ident]
      for k in range(nnz):
        d.moment_colind[adr + k] = m.ten_J_colind[ta + k]
        d.actuator_moment[adr + k] = d.ten_J[ta + k] * gear[0]
    elif trn == _TRN_SITE or trn == _TRN_SLIDERCRANK or trn == _TRN_BODY:
      if trn == _TRN_SITE:
        d.actuator_length[out] = _site_moment(m, d, i, gear)
      elif trn == _TRN_SLIDERCRANK:
        d.actuator_length[out] = _slidercrank_moment(m, d, i, gear)
      else:
        d.actuator_length[out] = 0.0
        _body_moment(m, d, i)
      row = d.trn_jac[12]
      for j in range(m.nv):
        if row[j] != 0.0:
          d.moment_colind[adr + nnz] = j
          d.actuator_moment[adr + nnz] = row[j]
          nnz += 1
    d.moment_rownnz[out] = nnz
    adr += nnz


@inline
def actuator_drives(m, k, jnt_or_tendon, is_tendon):
  """Whether actuator k transmits to the joint or tendon jnt_or_tendon (the scan MuJoCo's
  mj_actuatorArmature / mj_actuatorDamping make when several actuators may drive it)."""
  if m.actuator_trnid[k, 0] != jnt_or_tendon:
    return False
  trn = m.actuator_trntype[k]
  if is_tendon:
    return trn == _TRN_TENDON
  return trn == _TRN_JOINT or trn == _TRN_JOINTINPARENT


@jit
def actuator_armature(m, jnt_or_tendon, is_tendon):
  """Armature an actuator passes on to the joint/tendon it drives (mj_actuatorArmature)."""
  aid = m.tendon_actuatorid[jnt_or_tendon] if is_tendon else m.jnt_actuatorid[jnt_or_tendon]
  if aid == -1:
    return 0.0
  if aid >= 0:
    g = m.actuator_gear[m.actuator_outadr[aid], 0]
    return m.actuator_armature[aid] * g * g
  total = 0.0
  for k in range(m.nactuator):
    if not actuator_drives(m, k, jnt_or_tendon, is_tendon):
      continue
    g = m.actuator_gear[m.actuator_outadr[k], 0]
    total += m.actuator_armature[k] * g * g
  return total


@jit
def composite_inertia(m, d):
  """crb: each body's cinert plus its descendants' (the world body excluded)."""
  for i in range(m.nbody):
    for k in range(10):
      d.crb[i, k] = d.cinert[i, k]
  for i in range(m.nbody - 1, 0, -1):
    p = _u(m.body_parentid[i])
    if p > 0:
      for k in range(10):
        d.crb[p, k] += d.crb[i, k]


@unit((M, D))
def crb(m, d):
  """Composite rigid-body inertias and the joint-space inertia M (mj_crb + tendon armature)."""
  nv = m.nv
  composite_inertia(m, d)
  M = d.M
  for k in range(m.nC):
    M[k] = 0.0
  buf = d.scratch_nbody[0, 0]
  for i in range(nv):
    adr = m.M_rowadr[i]
    if m.dof_simplenum[i]:
      M[adr] = m.dof_M0[i]
      continue
    madr = _u(adr + m.M_rownnz[i] - 1)
    M[madr] = m.dof_armature[i] + actuator_armature(m, m.dof_jntid[i], False)
    mm.mul_inert_vec(buf, d.crb[_u(m.dof_bodyid[i])], d.cdof[i])
    # buf in registers: a store into M would otherwise reload it
    b0, b1, b2, b3, b4, b5 = buf[0], buf[1], buf[2], buf[3], buf[4], buf[5]
    # up the dof's ancestors (unsigned indices: no wraparound test on the loads)
    j = _u(i)
    while True:
      c = d.cdof[j]
      M[madr] += c[0] * b0 + c[1] * b1 + c[2] * b2 + c[3] * b3 + c[4] * b4 + c[5] * b5
      madr -= _u(1)
      pj = m.dof_parentid[j]
      if pj < 0:
        break
      j = _u(pj)
  for t in range(m.ntendon):
    arm = m.tendon_armature[t] + actuator_armature(m, t, True)
    if arm == 0.0:
      continue
    ja, jn = m.ten_J_rowadr[t], m.ten_J_rownnz[t]
    for a in range(ja, ja + jn):
      ji = d.ten_J[a]
      if ji == 0.0:
        continue
      r = m.ten_J_colind[a]
      # M[r, c] += arm * J[r] * J[c] for c <= r in row r's sparsity
      for b in range(m.M_rowadr[r], m.M_rowadr[r] + m.M_rownnz[r]):
        c = m.M_colind[b]
        for e in range(ja, ja + jn):
          if m.ten_J_colind[e] == c:
            M[b] += arm * ji * d.ten_J[e]
            break


@jit
def factor_i(mat, diaginv, rownnz, rowadr, colind, nv):
  """In-place sparse L'DL factorisation of an inertia-like matrix in M's layout (mj_factorI).

  A pivot below mjMINVAL (a singular or indefinite matrix) is clamped to mjMINVAL, as MuJoCo
  does. Returns (number of pivots clamped, lowest dof clamped or -1), for warn_inertia."""
  nbad, bad = 0, -1
  for k in range(nv - 1, -1, -1):
    start = _u(rowadr[k])
    diag = _u(rownnz[k]) - _ONE
    end = start + diag
    if mat[end] < MINVAL:
      mat[end] = MINVAL
      nbad += 1
      bad = k
    inv_d = 1.0 / mat[end]
    diaginv[k] = inv_d
    for j in range(diag):   # the row's off-diagonal entries, last to first
      a = end - _ONE - j
      i = _u(colind[a])
      s = -mat[a] * inv_d
      ra = _u(rowadr[i])
      for c in range(_u(rownnz[i])):
        mat[ra + c] += s * mat[start + c]
    for c in range(diag):
      mat[start + c] *= inv_d
  return nbad, bad


@inline
def warn_inertia(d, clamped):
  """Count factor_i's clamped pivots as mjWARN_INERTIA warnings (lastinfo: the dof)."""
  nbad, bad = clamped
  if nbad > 0:
    d.warning_number[_WARN_INERTIA] += nbad
    d.warning_lastinfo[_WARN_INERTIA] = bad


@unit((M, D))
def factor_m(m, d):
  """qLD, qLDiagInv: sparse L'DL factor of M following the kinematic tree (mj_factorM)."""
  for k in range(m.nC):
    d.qLD[k] = d.M[k]
  warn_inertia(d, factor_i(d.qLD, d.qLDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind, m.nv))


@jit
def solve_ld(x, qld, diaginv, rownnz, rowadr, colind, nv):
  """In place x <- inv(L'DL) x for a factor in M's layout (mj_solveLD, one vector)."""
  for i in range(nv - 1, -1, -1):
    xi = x[i]
    n = _u(rownnz[i]) - _ONE
    if n == 0 or xi == 0.0:
      continue
    start = _u(rowadr[i])
    for a in range(start, start + n):
      x[_u(colind[a])] -= qld[a] * xi
  for i in range(nv):
    x[i] *= diaginv[i]
  for i in range(nv):
    n = _u(rownnz[i]) - _ONE
    if n > 0:
      start = _u(rowadr[i])
      s = 0.0
      for a in range(start, start + n):
        s += qld[a] * x[_u(colind[a])]
      x[i] -= s


@jit
def solve_m(m, d, x, y):
  """x = inv(M) y with the factor in d (x may be y)."""
  for k in range(m.nv):
    x[k] = y[k]
  solve_ld(x, d.qLD, d.qLDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind, m.nv)


@jit
def mul_sym(m, mat, res, vec):
  """res = mat vec for a symmetric matrix stored as its lower triangle in M's sparse layout
  (M_rowadr, M_rownnz, M_colind; the diagonal last in each row), as mj_mulM."""
  for i in range(m.nv):
    res[i] = 0.0
  for i in range(m.nv):
    adr = m.M_rowadr[i]
    n = m.M_rownnz[i]
    res[i] += mat[adr + n - 1] * vec[i]
    for a in range(adr, adr + n - 1):
      c = m.M_colind[a]
      res[i] += mat[a] * vec[c]
      res[c] += mat[a] * vec[i]


@jit
def mul_m(m, d, res, vec):
  """res = M vec using the sparse lower triangle of M (mj_mulM)."""
  mul_sym(m, d.M, res, vec)


@jit
def com_vel(m, d):
  """cvel (body spatial velocities) and cdof_dot (mj_comVel)."""
  for k in range(6):
    d.cvel[0, k] = 0.0
  cvel = d.scratch_nbody[0, 0]
  cdof, cdof_dot, qvel = d.cdof, d.cdof_dot, d.qvel
  three = _u(3)
  for i in range(1, m.nbody):
    p = _u(m.body_parentid[i])
    for k in range(6):
      cvel[k] = d.cvel[p, k]
    v = _u(m.body_dofadr[i])   # unsigned dof index: no wraparound test on the loads
    end = v + _u(m.body_dofnum[i])
    while v < end:
      jt = m.jnt_type[_u(m.dof_jntid[v])]
      if jt == _FREE:
        for r in range(v, v + three):
          for k in range(6):
            cdof_dot[r, k] = 0.0
          for k in range(6):
            cvel[k] += cdof[r, k] * qvel[r]
        v += three
        jt = _BALL
      if jt == _BALL:
        for r in range(v, v + three):
          mm.cross_motion(cdof_dot[r], cvel, cdof[r])
        for r in range(v, v + three):
          for k in range(6):
            cvel[k] += cdof[r, k] * qvel[r]
        v += three
      else:
        mm.cross_motion(cdof_dot[v], cvel, cdof[v])
        for k in range(6):
          cvel[k] += cdof[v, k] * qvel[v]
        v += _u(1)
    for k in range(6):
      d.cvel[i, k] = cvel[k]


@jit
def rne(m, d, flg_acc, result):
  """result = M qacc + C (flg_acc) or the bias C(qpos, qvel) alone (mj_rne)."""
  cacc = d.scratch_nbody[1]
  cfrc = d.scratch_nbody[2]
  tmp = d.scratch_nbody[0, 0]
  for k in range(6):
    cacc[0, k] = 0.0
  if not (m.opt_disableflags[0] & _DSBL_GRAVITY):
    for k in range(3):
      cacc[0, 3 + k] = -m.opt_gravity[k]
  for i in range(1, m.nbody):
    p = _u(m.body_parentid[i])
    bda = _u(m.body_dofadr[i])
    for k in range(6):
      s = cacc[p, k]
      for v in range(bda, bda + _u(m.body_dofnum[i])):
        s += d.cdof_dot[v, k] * d.qvel[v]
        if flg_acc:
          s += d.cdof[v, k] * d.qacc[v]
      cacc[i, k] = s
    mm.mul_inert_vec(cfrc[i], d.cinert[i], cacc[i])
    mm.mul_inert_vec(tmp, d.cinert[i], d.cvel[i])
    mm.cross_force_add(cfrc[i], d.cvel[i], tmp)
  for k in range(6):
    cfrc[0, k] = 0.0
  for i in range(m.nbody - 1, 0, -1):
    p = _u(m.body_parentid[i])
    if p:
      for k in range(6):
        cfrc[p, k] += cfrc[i, k]
  for v in range(m.nv):
    result[v] = mm.dot6(d.cdof[v], cfrc[_u(m.dof_bodyid[v])])


@jit
def subtree_vel(m, d):
  """subtree_linvel and subtree_angmom (mj_subtreeVel)."""
  bvel = d.scratch_nbody[3]
  for i in range(m.nbody):
    # body velocity at its com, in world frame: rot = cvel rot, lin = cvel lin + rot x (xipos-com)
    r = m.body_rootid[i]
    w0, w1, w2 = d.cvel[i, 0], d.cvel[i, 1], d.cvel[i, 2]
    o0 = d.xipos[i, 0] - d.subtree_com[r, 0]
    o1 = d.xipos[i, 1] - d.subtree_com[r, 1]
    o2 = d.xipos[i, 2] - d.subtree_com[r, 2]
    c0, c1, c2 = mm.cross(w0, w1, w2, o0, o1, o2)
    bvel[i, 0], bvel[i, 1], bvel[i, 2] = w0, w1, w2
    bvel[i, 3] = d.cvel[i, 3] + c0
    bvel[i, 4] = d.cvel[i, 4] + c1
    bvel[i, 5] = d.cvel[i, 5] + c2
    mass = m.body_mass[i]
    for k in range(3):
      d.subtree_linvel[i, k] = bvel[i, 3 + k] * mass
    a0, a1, a2 = mm.mat_t_vec(d.ximat[i], w0, w1, w2)
    a0 *= m.body_inertia[i, 0]; a1 *= m.body_inertia[i, 1]; a2 *= m.body_inertia[i, 2]
    l0, l1, l2 = mm.mat_vec(d.ximat[i], a0, a1, a2)
    d.subtree_angmom[i, 0], d.subtree_angmom[i, 1], d.subtree_angmom[i, 2] = l0, l1, l2
  for i in range(m.nbody - 1, -1, -1):
    if i:
      p = m.body_parentid[i]
      for k in range(3):
        d.subtree_linvel[p, k] += d.subtree_linvel[i, k]
    s = 1.0 / max(1e-15, m.body_subtreemass[i])
    for k in range(3):
      d.subtree_linvel[i, k] *= s
  for i in range(m.nbody - 1, 0, -1):
    p = m.body_parentid[i]
    mass = m.body_mass[i]
    dx0 = d.xipos[i, 0] - d.subtree_com[i, 0]
    dx1 = d.xipos[i, 1] - d.subtree_com[i, 1]
    dx2 = d.xipos[i, 2] - d.subtree_com[i, 2]
    dl0, dl1, dl2 = mm.cross(dx0, dx1, dx2, (bvel[i, 3] - d.subtree_linvel[i, 0]) * mass,
                             (bvel[i, 4] - d.subtree_linvel[i, 1]) * mass,
                             (bvel[i, 5] - d.subtree_linvel[i, 2]) * mass)
    d.subtree_angmom[i, 0] += dl0; d.subtree_angmom[i, 1] += dl1; d.subtree_angmom[i, 2] += dl2
    for k in range(3):
      d.subtree_angmom[p, k] += d.subtree_angmom[i, k]
    sm = m.body_subtreemass[i]
    dx0 = d.subtree_com[i, 0] - d.subtree_com[p, 0]
    dx1 = d.subtree_com[i, 1] - d.subtree_com[p, 1]
    dx2 = d.subtree_com[i, 2] - d.subtree_com[p, 2]
    dl0, dl1, dl2 = mm.cross(dx0, dx1, dx2, (d.subtree_linvel[i, 0] - d.subtree_linvel[p, 0]) * sm,
                             (d.subtree_linvel[i, 1] - d.subtree_linvel[p, 1]) * sm,
                             (d.subtree_linvel[i, 2] - d.subtree_linvel[p, 2]) * sm)
    d.subtree_angmom[p, 0] += dl0; d.subtree_angmom[p, 1] += dl1; d.subtree_angmom[p, 2] += dl2
