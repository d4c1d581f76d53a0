"""Constraint rows, as MuJoCo's engine_core_constraint.c (everything before the solver).

`make_constraint` (position stage, after collision): equality, friction-loss, limit and contact
rows with a sparse Jacobian in MuJoCo's row layout (row i: values efc_J[a:a+n] at columns
efc_J_colind[a:a+n], ascending, with a = efc_J_rowadr[i], n = efc_J_rownnz[i], rows packed),
then efc_diagA, efc_R, efc_D, efc_KBIP and
contact_mu (mj_makeConstraint = instantiate* + mj_diagApprox + mj_makeImpedance).
`project_constraint` (position stage, after make_constraint): the exact diagonal under DIAGEXACT.
`reference_constraint` (velocity stage, after com_vel): efc_vel and efc_aref, including
MuJoCo 4's Jdot*v correction of connect/weld rows.
`constraint_b` (start of fwd_constraint): efc_b = J qacc_smooth - aref.

Our Jacobian is always sparse and stores only nonzeros (a row costs its dofs, never nv), but
MuJoCo's choice of a sparse Jacobian (`jacobian` sparse, or auto with nv >= 60) changes which rows
exist (an equality row whose dof chain is empty, a contact between bodies that share every dof),
so that choice is followed where it decides row counts.
Scratch (engine-only Data fields): cnstr_jac (4, 6, nv) Jacobian buffers, cnstr_vec (nv),
cnstr_row (2, 6) per-row pos and margin.
"""
import math

import numpy as np

from numjoco.engine import flex_contact as fc
from numjoco.engine import math as mm
from numjoco.engine import sleep as sleepmod
from numjoco.engine import smooth
from numjoco.engine._borrow import borrowed as _b
from numjoco.engine._jit import inline, jit
from numjoco.engine.collision.support import normalize3 as _normalize3
from numjoco.engine.types import (MAXIMP, MINIMP, MINVAL, ints, mjtCone, mjtConstraint,
                                  mjtDisableBit, mjtEnableBit, mjtEq, mjtJacobian, mjtJoint, mjtObj,
                                  mjtWarning, mjtWrap)
from numjoco.engine._sig import unit, M, D

# dof ids read from int32 scratch (the contact's dof chain) index as unsigned: a signed index
# gets a negative-index wraparound test at every access
_u = np.uintp

# the row types (mjtConstraint), read by the solvers and the islands too
(EQUALITY, FRICTION_DOF, FRICTION_TENDON, LIMIT_JOINT, LIMIT_TENDON, FRICTIONLESS, PYRAMIDAL,
 ELLIPTIC) = ints(mjtConstraint, "EQUALITY FRICTION_DOF FRICTION_TENDON LIMIT_JOINT LIMIT_TENDON "
                                 "CONTACT_FRICTIONLESS CONTACT_PYRAMIDAL CONTACT_ELLIPTIC")
_WRAP_JOINT, _WRAP_PULLEY = ints(mjtWrap, "JOINT PULLEY")
_EQ_CONNECT, _EQ_WELD, _EQ_JOINT, _EQ_TENDON, _EQ_FLEX = ints(mjtEq, "CONNECT WELD JOINT TENDON FLEX")
_OBJ_BODY = int(mjtObj.BODY)
_FREE, _BALL, _SLIDE, _HINGE = ints(mjtJoint, "FREE BALL SLIDE HINGE")
_DSBL_CONSTRAINT, _DSBL_EQUALITY, _DSBL_FRICTIONLOSS, _DSBL_LIMIT, _DSBL_CONTACT, _DSBL_REFSAFE = (
    ints(mjtDisableBit, "CONSTRAINT EQUALITY FRICTIONLOSS LIMIT CONTACT REFSAFE"))
_INT_DISCRETE = 4   # mjINT_DISCRETE
_ENBL_OVERRIDE, _ENBL_DIAGEXACT = ints(mjtEnableBit, "OVERRIDE DIAGEXACT")
_PYRAMID = int(mjtCone.PYRAMIDAL)
_JAC_SPARSE, _JAC_AUTO = ints(mjtJacobian, "SPARSE AUTO")
_WARN_CNSTRFULL = int(mjtWarning.CNSTRFULL)
_MINMU = 1e-5  # mjMINMU


# ---------------------------------------------------------------- small helpers

@jit
def is_sparse(m):
  """Whether MuJoCo would use a sparse constraint Jacobian for this model (mj_isSparse)."""
  jac = m.opt_jacobian[0]
  return jac == _JAC_SPARSE or (jac == _JAC_AUTO and m.nv >= 60)


@jit
def assign_ref(m, target, source):
  """Contact solref, or opt.o_solref under the override flag (mj_assignRef)."""
  o = m.opt_enableflags[0] & _ENBL_OVERRIDE
  for k in range(2):
    target[k] = m.opt_o_solref[k] if o else source[k]


@jit
def assign_imp(m, target, source):
  """Contact solimp, or opt.o_solimp under the override flag (mj_assignImp)."""
  o = m.opt_enableflags[0] & _ENBL_OVERRIDE
  for k in range(5):
    target[k] = m.opt_o_solimp[k] if o else source[k]


@jit
def assign_friction(m, target, source):
  """Contact friction (or opt.o_friction under override), at least mjMINMU (mj_assignFriction)."""
  o = m.opt_enableflags[0] & _ENBL_OVERRIDE
  for k in range(5):
    target[k] = max(_MINMU, m.opt_o_friction[k] if o else source[k])


@jit
def assign_margin(m, source):
  """Contact margin, or opt.o_margin under the override flag (mj_assignMargin)."""
  return m.opt_o_margin[0] if m.opt_enableflags[0] & _ENBL_OVERRIDE else source


@jit
def _mul_quat_axis(q0, q1, q2, q3, a0, a1, a2):
  """Quaternion q times the pure quaternion (0, a) (mju_mulQuatAxis), the terms added in
  the order of MuJoCo's compiled mju_mulQuatAxis (by axis component), so that it agrees bit for
  bit."""
  return ((-q1 * a0 - q2 * a1) - q3 * a2,
          (q0 * a0 - q3 * a1) + q2 * a2,
          (q3 * a0 + q0 * a1) - q1 * a2,
          (q1 * a1 - q2 * a0) + q0 * a2)


@jit
def _deriv_quat(q0, q1, q2, q3, w0, w1, w2):
  """Time derivative of q under angular velocity w: 0.5 * q * (0, w) (mju_derivQuat)."""
  return (0.5 * (-w0 * q1 - w1 * q2 - w2 * q3),
          0.5 * (w0 * q0 + w1 * q3 - w2 * q2),
          0.5 * (-w0 * q3 + w1 * q0 + w2 * q1),
          0.5 * (w0 * q2 - w1 * q1 + w2 * q0))


# ---------------------------------------------------------------- Jacobians

@jit
def jac(m, d, out, p0, p1, p2, body):
  """Dense 6 x nv Jacobian of a world point on `body`: rows 0-2 translation, 3-5 rotation
  (mj_jac)."""
  nv = m.nv
  for r in range(6):
    for k in range(nv):
      out[r, k] = 0.0
  root = m.body_rootid[body]
  o0 = p0 - d.subtree_com[root, 0]
  o1 = p1 - d.subtree_com[root, 1]
  o2 = p2 - d.subtree_com[root, 2]
  b = m.body_weldid[body]
  if m.body_dofnum[b] == 0:
    return
  i = m.body_dofadr[b] + m.body_dofnum[b] - 1
  while i >= 0:
    c = d.cdof[i]
    out[3, i] = c[0]
    out[4, i] = c[1]
    out[5, i] = c[2]
    out[0, i] = c[3] + (c[1] * o2 - c[2] * o1)
    out[1, i] = c[4] + (c[2] * o0 - c[0] * o2)
    out[2, i] = c[5] + (c[0] * o1 - c[1] * o0)
    i = m.dof_parentid[i]


@jit
def jac_dot(m, d, out, p0, p1, p2, body):
  """Dense 6 x nv time derivative of `jac` (mj_jacDot): rows 0-2 translation, 3-5 rotation."""
  nv = m.nv
  for r in range(6):
    for k in range(nv):
      out[r, k] = 0.0
  root = m.body_rootid[body]
  c0, c1, c2 = d.subtree_com[root, 0], d.subtree_com[root, 1], d.subtree_com[root, 2]
  o0, o1, o2 = p0 - c0, p1 - c1, p2 - c2
  # linear velocity of the point: cvel moved from the com to the point
  v = d.cvel[body]
  pv0 = v[3] - (o1 * v[2] - o2 * v[1])
  pv1 = v[4] - (o2 * v[0] - o0 * v[2])
  pv2 = v[5] - (o0 * v[1] - o1 * v[0])
  b = m.body_weldid[body]
  if m.body_dofnum[b] == 0:
    return
  cd = d.cnstr_row[0]
  i = m.body_dofadr[b] + m.body_dofnum[b] - 1
  while i >= 0:
    c = d.cdof[i]
    j = m.dof_jntid[i]
    jt = m.jnt_type[j]
    if jt == _BALL or (jt == _FREE and i >= m.jnt_dofadr[j] + 3):
      w = d.cvel[m.dof_bodyid[i]]
      cd[0] = -w[2] * c[1] + w[1] * c[2]
      cd[1] = w[2] * c[0] - w[0] * c[2]
      cd[2] = -w[1] * c[0] + w[0] * c[1]
      cd[3] = -w[2] * c[4] + w[1] * c[5] + (-w[5] * c[1] + w[4] * c[2])
      cd[4] = w[2] * c[3] - w[0] * c[5] + (w[5] * c[0] - w[3] * c[2])
      cd[5] = -w[1] * c[3] + w[0] * c[4] + (-w[4] * c[0] + w[3] * c[1])
    else:
      for k in range(6):
        cd[k] = d.cdof_dot[i, k]
    out[3, i] += cd[0]
    out[4, i] += cd[1]
    out[5, i] += cd[2]
    out[0, i] += cd[3] + (cd[1] * o2 - cd[2] * o1) + (c[1] * pv2 - c[2] * pv1)
    out[1, i] += cd[4] + (cd[2] * o0 - cd[0] * o2) + (c[2] * pv0 - c[0] * pv2)
    out[2, i] += cd[5] + (cd[0] * o1 - cd[1] * o0) + (c[0] * pv1 - c[1] * pv0)
    i = m.dof_parentid[i]


@inline
def _chain_next(m, da, da1, da2):
  """Both chains past dof da, the larger of their current dofs (a step of mj_mergeChain)."""
  return (m.dof_parentid[da1] if da1 == da else da1,
          m.dof_parentid[da2] if da2 == da else da2)


@inline
def _chain_count(m, b1, b2, skipcommon):
  """Number of dofs in MuJoCo's merged sparse dof chain of two bodies (mj_mergeChain and
  mj_mergeChainSimple as mj_jacDifPair picks them); only decides which rows exist."""
  if m.nv == 0:
    return 0
  if m.body_simple[b1] and m.body_simple[b2]:
    return m.body_dofnum[b1] + m.body_dofnum[b2]
  b1 = m.body_weldid[b1]
  b2 = m.body_weldid[b2]
  if m.body_dofnum[b1] == 0 and m.body_dofnum[b2] == 0:
    return 0
  da1 = m.body_dofadr[b1] + m.body_dofnum[b1] - 1
  da2 = m.body_dofadr[b2] + m.body_dofnum[b2] - 1
  n = 0
  while da1 >= 0 or da2 >= 0:
    da = max(da1, da2)
    if skipcommon and da1 == da and da2 == da:
      break
    da1, da2 = _chain_next(m, da, da1, da2)
    n += 1
  return n


# ---------------------------------------------------------------- adding rows

@jit
def _row_start(d, row):
  """Address of row `row`'s first entry in efc_J: rows are packed in order."""
  if row == 0:
    return 0
  return d.efc_J_rowadr[row - 1] + d.efc_J_rownnz[row - 1]


@jit
def _skipped(m, nvsparse, rows):
  """mj_addConstraint's rule for the rows of a non-contact constraint: none is added when they
  have no dofs (sparse Jacobian: nvsparse <= 0) or are all zero (dense: the 2D `rows`)."""
  if is_sparse(m):
    return nvsparse <= 0
  for r in range(rows.shape[0]):
    for k in range(rows.shape[1]):
      if rows[r, k] != 0.0:
        return False
  return True


@jit
def _add_rows(m, d, src, size, has_pos, frictionloss, typ, oid, nvsparse):
  """Append `size` rows src[0:size, :nv] (mj_addConstraint). Rows of a non-contact constraint
  that are all zero (dense) or have no dofs (sparse: nvsparse == 0) are skipped, as MuJoCo
  does. Returns False when the rows do not fit in njmax."""
  nv = m.nv
  contact = typ == FRICTIONLESS or typ == PYRAMIDAL or typ == ELLIPTIC
  if not contact and _skipped(m, nvsparse, src[:size, :nv]):
    return True
  nefc = d.nefc[0]
  if nefc + size > d.efc_pos.shape[0]:
    return False
  room = d.efc_J.shape[0]
  for r in range(size):
    row = nefc + r
    adr = _row_start(d, row)
    d.efc_J_rowadr[row] = adr
    n = 0
    for k in range(nv):
      v = src[r, k]
      if v != 0.0:
        if adr + n >= room:   # nJmax (types.efc_row_nnz) bounds rows; never write past it
          return False
        d.efc_J[adr + n] = v
        d.efc_J_colind[adr + n] = k
        n += 1
    d.efc_J_rownnz[row] = n
    _set_row(d, row, r, has_pos, frictionloss, typ, oid)
  _count_rows(d, typ, size)
  return True


@jit
def _set_row(d, row, r, has_pos, frictionloss, typ, oid):
  """efc_pos/margin (from cnstr_row's column r), frictionloss, type and id of one new row."""
  d.efc_pos[row] = d.cnstr_row[0, r] if has_pos else 0.0
  # equality rows have no margin (cnstr_row[1] may hold a previous call's values)
  d.efc_margin[row] = d.cnstr_row[1, r] if has_pos and typ != EQUALITY else 0.0
  d.efc_frictionloss[row] = frictionloss
  d.efc_type[row] = typ
  d.efc_id[row] = oid


@jit
def _count_rows(d, typ, size):
  """nefc and the ne/nf/nl counts after `size` rows of type `typ` were added."""
  d.nefc[0] += size
  if typ == EQUALITY:
    d.ne[0] += size
  elif typ == FRICTION_DOF or typ == FRICTION_TENDON:
    d.nf[0] += size
  elif typ == LIMIT_JOINT or typ == LIMIT_TENDON:
    d.nl[0] += size


@jit
def _add_sparse_row(m, d, cols, vals, n, has_pos, frictionloss, typ, oid, nvsparse):
  """`_add_rows` for one non-contact row given by its entries vals[:n] at ascending columns
  cols[:n] (zero elsewhere): O(n), not O(nv), per row (joint limits and friction of models
  with many dofs). Same skipping rule, same zero-dropping storage."""
  if _skipped(m, nvsparse, vals[None, :n]):
    return True
  row = d.nefc[0]
  if row + 1 > d.efc_pos.shape[0]:
    return False
  adr = _row_start(d, row)
  if adr + n > d.efc_J.shape[0]:   # nJmax (types.efc_row_nnz) bounds rows
    return False
  d.efc_J_rowadr[row] = adr
  cnt = 0
  for j in range(n):
    if vals[j] != 0.0:
      d.efc_J[adr + cnt] = vals[j]
      d.efc_J_colind[adr + cnt] = cols[j]
      cnt += 1
  d.efc_J_rownnz[row] = cnt
  _set_row(d, row, 0, has_pos, frictionloss, typ, oid)
  _count_rows(d, typ, 1)
  return True


@jit
def _add_tendon_row(m, d, t, scale, has_pos, frictionloss, typ):
  """One row `scale` * tendon t's sparse Jacobian row (friction loss or limit)."""
  cols, vals = d.ivec_nv[0], d.cnstr_vec
  a, n = m.ten_J_rowadr[t], m.ten_J_rownnz[t]
  for j in range(n):
    cols[j] = m.ten_J_colind[a + j]
    vals[j] = scale * d.ten_J[a + j]
  return _add_sparse_row(m, d, cols, vals, n, has_pos, frictionloss, typ, t, n)


@jit
def _tendon_row(m, d, out, t, scale):
  """out[:nv] = scale * dense row t of the sparse tendon Jacobian."""
  for k in range(m.nv):
    out[k] = 0.0
  for a in range(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t]):
    out[m.ten_J_colind[a]] = scale * d.ten_J[a]


# ---------------------------------------------------------------- equality

@jit
def _equality_anchors(m, d, i):
  """World anchor points and bodies of a connect/weld constraint (mj_equalityAnchors)."""
  o1, o2 = m.eq_obj1id[i], m.eq_obj2id[i]
  if m.eq_objtype[i] == _OBJ_BODY:
    data = m.eq_data[i]
    a1 = 0 if m.eq_type[i] == _EQ_CONNECT else 3  # weld stores body2's anchor first
    a2 = 3 - a1
    x0, x1, x2 = mm.mat_vec(d.xmat[o1], data[a1], data[a1 + 1], data[a1 + 2])
    y0, y1, y2 = mm.mat_vec(d.xmat[o2], data[a2], data[a2 + 1], data[a2 + 2])
    return (x0 + d.xpos[o1, 0], x1 + d.xpos[o1, 1], x2 + d.xpos[o1, 2],
            y0 + d.xpos[o2, 0], y1 + d.xpos[o2, 1], y2 + d.xpos[o2, 2], o1, o2)
  return (d.site_xpos[o1, 0], d.site_xpos[o1, 1], d.site_xpos[o1, 2],
          d.site_xpos[o2, 0], d.site_xpos[o2, 1], d.site_xpos[o2, 2],
          m.site_bodyid[o1], m.site_bodyid[o2])


@jit
def weld_quats(m, d, i, b1, b2):
  """(q0 * relpose or site frame 1, neg(q1) or neg(site frame 2)) of a weld."""
  o1, o2 = m.eq_obj1id[i], m.eq_obj2id[i]
  p = d.xquat[b1]
  if m.eq_objtype[i] == _OBJ_BODY:
    r = m.eq_data[i, 6:10]
    a0, a1, a2, a3 = mm.quat_mul(p[0], p[1], p[2], p[3], r[0], r[1], r[2], r[3])
    q = d.xquat[b2]
    n0, n1, n2, n3 = q[0], -q[1], -q[2], -q[3]
  else:
    s = m.site_quat[o1]
    a0, a1, a2, a3 = mm.quat_mul(p[0], p[1], p[2], p[3], s[0], s[1], s[2], s[3])
    q = d.xquat[b2]
    s = m.site_quat[o2]
    c0, c1, c2, c3 = mm.quat_mul(q[0], q[1], q[2], q[3], s[0], s[1], s[2], s[3])
    n0, n1, n2, n3 = c0, -c1, -c2, -c3
  return a0, a1, a2, a3, n0, n1, n2, n3


@jit
def _connect_weld(m, d, i):
  """Rows of a connect (3) or weld (6) constraint into cnstr_jac[2]; returns (size, NV)."""
  nv = m.nv
  j1, j2, jd = d.cnstr_jac[0], d.cnstr_jac[1], d.cnstr_jac[2]
  p0, p1, p2, q0, q1, q2, b1, b2 = _equality_anchors(m, d, i)
  cpos = d.cnstr_row[0]
  cpos[0], cpos[1], cpos[2] = p0 - q0, p1 - q1, p2 - q2
  jac(m, d, j1, p0, p1, p2, b1)
  jac(m, d, j2, q0, q1, q2, b2)
  for r in range(6):
    for k in range(nv):
      jd[r, k] = j1[r, k] - j2[r, k]
  nvs = _chain_count(m, b2, b1, False)
  if m.eq_type[i] == _EQ_CONNECT:
    return 3, nvs
  ts = m.eq_data[i, 10]
  a0, a1, a2, a3, n0, n1, n2, n3 = weld_quats(m, d, i, b1, b2)
  e0, e1, e2, e3 = mm.quat_mul(n0, n1, n2, n3, a0, a1, a2, a3)
  cpos[3], cpos[4], cpos[5] = e1 * ts, e2 * ts, e3 * ts
  for k in range(nv):
    t0, t1, t2, t3 = _mul_quat_axis(n0, n1, n2, n3, jd[3, k], jd[4, k], jd[5, k])
    u0, u1, u2, u3 = mm.quat_mul(t0, t1, t2, t3, a0, a1, a2, a3)
    jd[3, k] = 0.5 * u1 * ts
    jd[4, k] = 0.5 * u2 * ts
    jd[5, k] = 0.5 * u3 * ts
  return 6, nvs


@jit
def _scalar_object(m, d, row, obj, is_joint):
  """(position, reference position, NV) of joint or tendon `obj` of a scalar equality, its
  dense Jacobian row into row[:nv]."""
  if is_joint:
    a = m.jnt_qposadr[obj]
    for k in range(m.nv):
      row[k] = 0.0
    row[m.jnt_dofadr[obj]] = 1.0
    return d.qpos[a], m.qpos0[a], 1
  _tendon_row(m, d, row, obj, 1.0)
  return d.ten_length[obj], m.tendon_length0[obj], m.ten_J_rownnz[obj]


@jit
def _scalar_equality(m, d, i):
  """Row of a joint or tendon coupling (cubic polycoef) into cnstr_jac[2][0]; returns NV."""
  nv = m.nv
  data = m.eq_data[i]
  id0, id1 = m.eq_obj1id[i], m.eq_obj2id[i]
  row0, row1 = d.cnstr_jac[2, 0], d.cnstr_jac[1, 0]
  is_joint = m.eq_type[i] == _EQ_JOINT
  pos0, ref0, nvs = _scalar_object(m, d, row0, id0, is_joint)
  cpos = d.cnstr_row[0]
  if id1 >= 0:
    pos1, ref1, nvs1 = _scalar_object(m, d, row1, id1, is_joint)
    nvs += nvs1
    dif = pos1 - ref1
    cpos[0] = pos0 - ref0 - data[0] - (data[1] * dif + data[2] * dif * dif
                                       + data[3] * dif * dif * dif
                                       + data[4] * dif * dif * dif * dif)
    deriv = data[1] + 2 * data[2] * dif + 3 * data[3] * dif * dif + 4 * data[4] * dif * dif * dif
    for k in range(nv):
      row0[k] += row1[k] * -deriv
  else:
    cpos[0] = pos0 - ref0 - data[0]
  return nvs


@jit
def _flex_equality(m, d, i):
  """One row per non-rigid edge of flex eq_obj1id[i]: its length minus its rest length along
  flexedge_J (mjEQ_FLEX). False when the rows do not fit."""
  f = m.eq_obj1id[i]
  cols, vals = d.ivec_nv[0], d.cnstr_vec
  for e in range(m.flex_edgeadr[f], m.flex_edgeadr[f] + m.flex_edgenum[f]):
    if m.flexedge_rigid[e]:
      continue
    a, n = m.flexedge_J_rowadr[e], m.flexedge_J_rownnz[e]
    for j in range(n):
      cols[j] = m.flexedge_J_colind[a + j]
      vals[j] = d.flexedge_J[a + j]
    d.cnstr_row[0, 0] = d.flexedge_length[e] - m.flexedge_length0[e]
    if not _add_sparse_row(m, d, cols, vals, n, True, 0.0, EQUALITY, i, n):
      return False
  return True


@jit
def instantiate_equality(m, d, sleeping):
  """Rows of the active connect, weld, joint and tendon equalities (mj_instantiateEquality);
  with `sleeping` (sleep filtering), not those of sleeping equalities."""
  for i in range(m.neq):
    if not d.eq_active[i] or (sleeping and sleepmod.equality_state(m, d, i) == sleepmod.ASLEEP):
      continue
    typ = m.eq_type[i]
    if typ == _EQ_CONNECT or typ == _EQ_WELD:
      size, nvs = _connect_weld(m, d, i)
    elif typ == _EQ_JOINT or typ == _EQ_TENDON:
      size, nvs = 1, _scalar_equality(m, d, i)
    elif typ == _EQ_FLEX:
      if not _flex_equality(m, d, i):
        return False
      continue
    else:
      continue
    if not _add_rows(m, d, d.cnstr_jac[2], size, True, 0.0, EQUALITY, i, nvs):
      return False
  return True


# ---------------------------------------------------------------- friction loss, limits

@jit
def instantiate_friction(m, d, sleeping):
  """Friction-loss rows of dofs (with `sleeping`, of awake bodies), then tendons
  (mj_instantiateFriction)."""
  cols, vals = d.ivec_nv[0], d.cnstr_vec
  for i in range(m.nv):
    floss = m.dof_frictionloss[i]
    if floss != 0.0 and not (sleeping and d.body_awake[m.dof_bodyid[i]] == sleepmod.ASLEEP):
      cols[0], vals[0] = i, 1.0
      if not _add_sparse_row(m, d, cols, vals, 1, False, floss, FRICTION_DOF, i, 1):
        return False
  for i in range(m.ntendon):
    if m.tendon_frictionloss[i] > 0:
      if not _add_tendon_row(m, d, i, 1.0, False, m.tendon_frictionloss[i], FRICTION_TENDON):
        return False
  return True


@jit
def instantiate_limit(m, d, sleeping):
  """Rows of violated (dist < margin) joint limits (with `sleeping`, of awake bodies), then
  tendon limits (mj_instantiateLimit)."""
  cols, vals = d.ivec_nv[0], d.cnstr_vec
  pm = d.cnstr_row
  for i in range(m.njnt):
    if not m.jnt_limited[i] or (sleeping and d.body_awake[m.jnt_bodyid[i]] == sleepmod.ASLEEP):
      continue
    margin = m.jnt_margin[i]
    jt = m.jnt_type[i]
    if jt == _SLIDE or jt == _HINGE:
      value = d.qpos[m.jnt_qposadr[i]]
      for side in (-1, 1):
        dist = side * (m.jnt_range[i, (side + 1) // 2] - value)
        if dist < margin:
          cols[0], vals[0] = m.jnt_dofadr[i], -float(side)
          pm[0, 0], pm[1, 0] = dist, margin
          if not _add_sparse_row(m, d, cols, vals, 1, True, 0.0, LIMIT_JOINT, i, 1):
            return False
    elif jt == _BALL:
      a = m.jnt_qposadr[i]
      q0, q1, q2, q3 = mm.quat_normalize(d.qpos[a], d.qpos[a + 1], d.qpos[a + 2],
                                                d.qpos[a + 3])
      # quat2vel(q, 1): axis * angle, angle wrapped to (-pi, pi]
      x0, x1, x2, s = _normalize3(q1, q2, q3)
      speed = 2.0 * math.atan2(s, q0)
      if speed > math.pi:
        speed -= 2.0 * math.pi
      x0, x1, x2, value = _normalize3(x0 * speed, x1 * speed, x2 * speed)
      dist = max(m.jnt_range[i, 0], m.jnt_range[i, 1]) - value
      if dist < margin:
        adr = m.jnt_dofadr[i]
        cols[0], cols[1], cols[2] = adr, adr + 1, adr + 2
        vals[0], vals[1], vals[2] = -x0, -x1, -x2
        pm[0, 0], pm[1, 0] = dist, margin
        if not _add_sparse_row(m, d, cols, vals, 3, True, 0.0, LIMIT_JOINT, i, 3):
          return False
  for i in range(m.ntendon):
    if not m.tendon_limited[i]:
      continue
    value, margin = d.ten_length[i], m.tendon_margin[i]
    for side in (-1, 1):
      dist = side * (m.tendon_range[i, (side + 1) // 2] - value)
      if dist < margin:
        pm[0, 0], pm[1, 0] = dist, margin
        if not _add_tendon_row(m, d, i, -float(side), True, 0.0, LIMIT_TENDON):
          return False
  return True


# ---------------------------------------------------------------- contacts

@inline
def _contact_chain(m, b1, b2, chain, side):
  """Merged dof chains of two bodies, descending (mj_jacDifPair's columns): chain[:n] are the
  dofs, side[:n] bit 1 / bit 2 whether the dof moves body 1 / body 2. Returns n."""
  n = 0
  w1, w2 = m.body_weldid[b1], m.body_weldid[b2]
  da1 = m.body_dofadr[w1] + m.body_dofnum[w1] - 1 if m.body_dofnum[w1] else -1
  da2 = m.body_dofadr[w2] + m.body_dofnum[w2] - 1 if m.body_dofnum[w2] else -1
  while da1 >= 0 or da2 >= 0:
    da = max(da1, da2)
    chain[n] = da
    side[n] = (1 if da1 == da else 0) | (2 if da2 == da else 0)
    da1, da2 = _chain_next(m, da, da1, da2)
    n += 1
  return n


@jit
def _add_point_jac(jd, k, cd, p, com, sign):
  """Column k of the 6-row point Jacobian (translation, rotation), times sign, into jd."""
  j0, j1, j2 = smooth.point_jac_col(cd, p[0] - com[0], p[1] - com[1], p[2] - com[2])
  jd[0, k] += sign * j0
  jd[1, k] += sign * j1
  jd[2, k] += sign * j2
  jd[3, k] += sign * cd[0]
  jd[4, k] += sign * cd[1]
  jd[5, k] += sign * cd[2]


@jit
def _add_contact_rows(m, d, src, size, typ, oid, chain, n):
  """Append `size` contact rows whose nonzeros are the columns chain[:n] of src (the dense
  row is zero elsewhere). Returns False when the rows do not fit in njmax."""
  nefc = d.nefc[0]
  if nefc + size > d.efc_pos.shape[0]:
    return False
  for r in range(size):
    row = nefc + r
    adr = _row_start(d, row)
    if adr + n > d.efc_J.shape[0]:   # nJmax (types.efc_row_nnz) bounds rows
      return False
    d.efc_J_rowadr[row] = adr
    cnt = 0
    for c in range(n - 1, -1, -1):   # chain is descending; columns ascend
      k = _u(chain[c])
      v = src[r, k]
      if v != 0.0:
        d.efc_J[adr + cnt] = v
        d.efc_J_colind[adr + cnt] = k
        cnt += 1
    d.efc_J_rownnz[row] = cnt
    _set_row(d, row, r, True, 0.0, typ, oid)
  _count_rows(d, typ, size)
  return True


@inline
def _flex_side_scratch(d):
  """Scratch for a flex contact side's bodies (8 ids, 8 weights) and vertices (4 ids): the
  start of the GJK work buffers, which hold nothing between collision passes (allocating them
  at every make_constraint cost more than the stage's own work on small models)."""
  return _b(d.col_ibuf[0:8]), _b(d.col_fbuf[0:8]), _b(d.col_ibuf[8:12])


@jit
def _flex_contact_jac(m, d, i, jd, chain, mark, body, weight, vert):
  """Rows 0-5 of contact i's Jacobian difference (side 1 minus side 0) when a side is a flex:
  each side's bodies weighted as MuJoCo weighs them (flex_contact.side_bodies; MuJoCo's
  mj_jacSum), on the union of their dof chains, into jd's columns chain[:n] (descending).
  Returns n. mark: int scratch of nv."""
  nb = 0
  for side in range(2):
    k = fc.side_bodies(m, d, i, side, body[nb:], weight[nb:], vert)
    if side == 0:
      for j in range(nb, nb + k):
        weight[j] = -weight[j]
    nb += k
  for k in range(m.nv):
    mark[k] = 0
  for j in range(nb):
    da = smooth.chain_end(m, body[j])
    while da >= 0 and mark[da] == 0:
      mark[da] = 1
      da = m.dof_parentid[da]
  n = 0
  for k in range(m.nv - 1, -1, -1):
    if mark[k]:
      chain[n] = k
      n += 1
      for r in range(6):
        jd[r, k] = 0.0
  p = d.contact_pos[i]
  for j in range(nb):
    da = smooth.chain_end(m, body[j])
    com = d.subtree_com[m.body_rootid[body[j]]]
    while da >= 0:
      _add_point_jac(jd, da, d.cdof[da], p, com, weight[j])
      da = m.dof_parentid[da]
  return n


@jit
def instantiate_contact(m, d):
  """Rows of every non-excluded contact: frictionless, pyramidal 2(dim-1) or elliptic dim
  rows in the contact frame (mj_instantiateContact). Works on the dofs of the two bodies'
  chains only: J2 - J1 is zero elsewhere."""
  nv = m.nv
  if (m.opt_disableflags[0] & _DSBL_CONTACT) or d.ncon[0] == 0 or nv == 0:
    return True
  pyramid = m.opt_cone[0] == _PYRAMID
  sparse = is_sparse(m)
  jd, jf = _b(d.cnstr_jac[2]), _b(d.cnstr_jac[3])
  chain, side = _b(d.ivec_nv[0]), _b(d.ivec_nv[1])
  pm = d.cnstr_row
  fbody, fweight, fvert = _flex_side_scratch(d)
  for i in range(d.ncon[0]):
    if d.contact_exclude[i]:
      continue
    dim = d.contact_dim[i]
    d.contact_efc_address[i] = d.nefc[0]
    if d.contact_geom[i, 0] < 0 or d.contact_geom[i, 1] < 0:   # a flex side
      n = _flex_contact_jac(m, d, i, jd, chain, side, fbody, fweight, fvert)
      if sparse and n == 0:
        d.contact_efc_address[i] = -1
        d.contact_exclude[i] = 3
        continue
    else:
      b1 = m.geom_bodyid[d.contact_geom1[i]]
      b2 = m.geom_bodyid[d.contact_geom2[i]]
      if sparse and _chain_count(m, b1, b2, True) == 0:
        d.contact_efc_address[i] = -1
        d.contact_exclude[i] = 3
        continue
      n = _contact_chain(m, b1, b2, chain, side)
      p = _b(d.contact_pos[i])
      r1, r2 = m.body_rootid[b1], m.body_rootid[b2]
      com1, com2 = _b(d.subtree_com[r1]), _b(d.subtree_com[r2])
      for c in range(n):
        k = _u(chain[c])
        cd = _b(d.cdof[k])
        for r in range(6):
          jd[r, k] = 0.0
        if side[c] & 1:
          _add_point_jac(jd, k, cd, p, com1, -1.0)
        if side[c] & 2:
          _add_point_jac(jd, k, cd, p, com2, 1.0)
    # rotate to the contact frame: rows (normal, tangent1, tangent2) then angular rows
    f = _b(d.contact_frame[i])
    ntran = 3 if dim > 1 else 1
    for c in range(n):
      k = _u(chain[c])
      for r in range(ntran):
        jf[r, k] = f[3 * r] * jd[0, k] + f[3 * r + 1] * jd[1, k] + f[3 * r + 2] * jd[2, k]
      for r in range(dim - 3):
        jf[3 + r, k] = f[3 * r] * jd[3, k] + f[3 * r + 1] * jd[4, k] + f[3 * r + 2] * jd[5, k]
    dist, imargin = d.contact_dist[i], d.contact_includemargin[i]
    if dim == 1:
      pm[0, 0], pm[1, 0] = dist, imargin
      if not _add_contact_rows(m, d, jf, 1, FRICTIONLESS, i, chain, n):
        return False
    elif pyramid:
      pm[0, 0], pm[0, 1], pm[1, 0], pm[1, 1] = dist, dist, imargin, imargin
      for j in range(1, dim):
        fr = d.contact_friction[i, j - 1]
        for c in range(n):
          k = _u(chain[c])
          jd[0, k] = jf[0, k] + jf[j, k] * fr
          jd[1, k] = jf[0, k] + jf[j, k] * -fr
        if not _add_contact_rows(m, d, jd, 2, PYRAMIDAL, i, chain, n):
          return False
    else:
      for r in range(dim):
        pm[0, r], pm[1, r] = 0.0, 0.0
      pm[0, 0], pm[1, 0] = dist, imargin
      if not _add_contact_rows(m, d, jf, dim, ELLIPTIC, i, chain, n):
        return False
  return True


# ---------------------------------------------------------------- diagA, impedance

@jit
def diag_approx(m, d):
  """efc_diagA: MuJoCo's approximation of diag(J M^-1 J') from the invweight0 constants
  (mj_diagApprox)."""
  dA = d.efc_diagA
  fbody, fweight, fvert = _flex_side_scratch(d)
  weldcnt = 0
  i = 0
  nefc = d.nefc[0]
  while i < nefc:
    oid = d.efc_id[i]
    typ = d.efc_type[i]
    if typ == EQUALITY:
      et = m.eq_type[oid]
      if et == _EQ_CONNECT or et == _EQ_WELD:
        b1, b2 = m.eq_obj1id[oid], m.eq_obj2id[oid]
        if m.eq_objtype[oid] != _OBJ_BODY:
          b1, b2 = m.site_bodyid[b1], m.site_bodyid[b2]
        if et == _EQ_CONNECT:
          dA[i] = m.body_invweight0[b1, 0] + m.body_invweight0[b2, 0]
        else:
          r = 1 if weldcnt > 2 else 0
          dA[i] = m.body_invweight0[b1, r] + m.body_invweight0[b2, r]
          weldcnt = (weldcnt + 1) % 6
      else:
        o1, o2 = m.eq_obj1id[oid], m.eq_obj2id[oid]
        if et == _EQ_JOINT:
          dA[i] = m.dof_invweight0[m.jnt_dofadr[o1]]
          if o2 >= 0:
            dA[i] += m.dof_invweight0[m.jnt_dofadr[o2]]
        elif et == _EQ_FLEX:   # one row per non-rigid edge, in edge order
          for e in range(m.flex_edgeadr[o1], m.flex_edgeadr[o1] + m.flex_edgenum[o1]):
            if not m.flexedge_rigid[e]:
              dA[i] = m.flexedge_invweight0[e]
              i += 1
          i -= 1
        else:
          dA[i] = m.tendon_invweight0[o1]
          if o2 >= 0:
            dA[i] += m.tendon_invweight0[o2]
    elif typ == FRICTION_DOF:
      dA[i] = m.dof_invweight0[oid]
    elif typ == LIMIT_JOINT:
      dA[i] = m.dof_invweight0[m.jnt_dofadr[oid]]
    elif typ == FRICTION_TENDON or typ == LIMIT_TENDON:
      dA[i] = m.tendon_invweight0[oid]
    else:
      dim = d.contact_dim[oid]
      if d.contact_geom[oid, 0] >= 0 and d.contact_geom[oid, 1] >= 0:
        b1 = m.geom_bodyid[d.contact_geom1[oid]]
        b2 = m.geom_bodyid[d.contact_geom2[oid]]
        tran = 0.0 + m.body_invweight0[b1, 0] * 1.0 + m.body_invweight0[b2, 0] * 1.0
        rot = 0.0 + m.body_invweight0[b1, 1] * 1.0 + m.body_invweight0[b2, 1] * 1.0
      else:   # weighted average over each side's bodies
        tran = 0.0
        rot = 0.0
        for sd in range(2):
          nb = fc.side_bodies(m, d, oid, sd, fbody, fweight, fvert)
          for j in range(nb):
            tran += m.body_invweight0[fbody[j], 0] * fweight[j]
            rot += m.body_invweight0[fbody[j], 1] * fweight[j]
      if typ == FRICTIONLESS:
        dA[i] = tran
      elif typ == ELLIPTIC:
        for j in range(dim):
          dA[i + j] = tran if j < 3 else rot
        i += dim - 1
      else:
        for j in range(dim - 1):
          fri = d.contact_friction[oid, j]
          v = tran + fri * fri * (tran if j < 2 else rot)
          dA[i + 2 * j] = v
          dA[i + 2 * j + 1] = v
        i += 2 * dim - 3
    i += 1


@inline
def _sol_params(m, d, i, ref, reff, imp):
  """solref, solreffriction (contacts only, else 0) and solimp of row i, with MuJoCo's
  mixed-sign fallback, refsafe clamp and solimp limits (getsolparam)."""
  oid = d.efc_id[i]
  typ = d.efc_type[i]
  reff[0] = 0.0
  reff[1] = 0.0
  if typ == EQUALITY:
    src_ref, src_imp = _b(m.eq_solref[oid]), _b(m.eq_solimp[oid])
  elif typ == LIMIT_JOINT:
    src_ref, src_imp = _b(m.jnt_solref[oid]), _b(m.jnt_solimp[oid])
  elif typ == FRICTION_DOF:
    src_ref, src_imp = _b(m.dof_solref[oid]), _b(m.dof_solimp[oid])
  elif typ == LIMIT_TENDON:
    src_ref, src_imp = _b(m.tendon_solref_lim[oid]), _b(m.tendon_solimp_lim[oid])
  elif typ == FRICTION_TENDON:
    src_ref, src_imp = _b(m.tendon_solref_fri[oid]), _b(m.tendon_solimp_fri[oid])
  else:
    src_ref, src_imp = _b(d.contact_solref[oid]), _b(d.contact_solimp[oid])
    reff[0] = d.contact_solreffriction[oid, 0]
    reff[1] = d.contact_solreffriction[oid, 1]
  ref[0], ref[1] = src_ref[0], src_ref[1]
  for k in range(5):
    imp[k] = src_imp[k]
  # under the discrete integrator refsafe replaces stiff contact and limit rows instead
  # (make_impedance); other rows keep their authored time constant
  refsafe = (not (m.opt_disableflags[0] & _DSBL_REFSAFE)
             and m.opt_integrator[0] != _INT_DISCRETE)
  if (ref[0] > 0) ^ (ref[1] > 0):
    ref[0], ref[1] = 0.02, 1.0  # mixed format: MuJoCo's default
  # mju_max(a, b) = a >= b ? a : b: a NaN timestep gives a NaN time constant, as in MuJoCo
  h2 = 2 * m.opt_timestep[0]
  if refsafe and ref[0] > 0:
    ref[0] = ref[0] if ref[0] >= h2 else h2
  if (reff[0] > 0) ^ (reff[1] > 0):
    reff[0], reff[1] = 0.0, 0.0
  if refsafe and reff[0] > 0:
    reff[0] = reff[0] if reff[0] >= h2 else h2
  imp[0] = min(MAXIMP, max(MINIMP, imp[0]))
  imp[1] = min(MAXIMP, max(MINIMP, imp[1]))
  imp[2] = max(0.0, imp[2])
  imp[3] = min(MAXIMP, max(MINIMP, imp[3]))
  imp[4] = max(1.0, imp[4])


@jit
def _power(a, b):
  """a**b with MuJoCo's shortcuts for b = 1 and 2."""
  if b == 1:
    return a
  if b == 2:
    return a * a
  return math.pow(a, b)


@jit
def impedance(solimp, pos, margin):
  """(imp, dimp/dpos) of MuJoCo's solimp sigmoid at violation pos - margin (getimpedance)."""
  if solimp[0] == solimp[1] or solimp[2] <= MINVAL:
    return 0.5 * (solimp[0] + solimp[1]), 0.0
  x = (pos - margin) / solimp[2]
  sgn = 1.0
  if x < 0:
    x = -x
    sgn = -1.0
  if x >= 1 or x <= 0:
    return (solimp[1] if x >= 1 else solimp[0]), 0.0
  p = solimp[4]
  mid = solimp[3]
  if p == 1:
    y, yp = x, 1.0
  elif x <= mid:
    a = 1 / _power(mid, p - 1)
    y = a * _power(x, p)
    yp = p * a * _power(x, p - 1)
  else:
    b = 1 / _power(1 - mid, p - 1)
    y = 1 - b * _power(1 - x, p)
    yp = p * b * _power(1 - x, p - 1)
  return solimp[0] + y * (solimp[1] - solimp[0]), yp * sgn * (solimp[1] - solimp[0]) / solimp[2]


@jit
def _pos_dim(m, d, i):
  """(violation, rows) of the constraint starting at row i (getposdim)."""
  oid = d.efc_id[i]
  typ = d.efc_type[i]
  if typ == ELLIPTIC:
    return d.efc_pos[i], d.contact_dim[oid]
  if typ == PYRAMIDAL:
    return d.efc_pos[i], 2 * (d.contact_dim[oid] - 1)
  if typ == EQUALITY:
    n = 6 if m.eq_type[oid] == _EQ_WELD else (3 if m.eq_type[oid] == _EQ_CONNECT else 1)
    if n > 1:
      s = 0.0
      for k in range(n):
        s += d.efc_pos[i + k] * d.efc_pos[i + k]
      return math.sqrt(s), n
  return d.efc_pos[i], 1


@jit
def _discrete_row(m, d, r, replace, dampratio, imp, h, stage):
  """Row r under the discrete integrator (as MuJoCo 4.0 builds it): its spring-damper acts at the
  end of the step, which divides R (and aref, reference_constraint) by c = 1 + h b + h^2 k imp;
  a contact or limit row stiffer than the step can resolve (k > 1 / (imp h^2)) becomes that
  spring, with b = 2 dampratio sqrt(k) held to an impedance of at most MAXIMP; diagA is scaled
  by the ratio of the row's inverse inertias through the metric's backbone and through M; R is
  kept at or above MAXIMP's. The diagonal of a dof in the metric (dof_mhat) includes the
  couplings' diagonal entries (a tendon's and an actuator's, as in MuJoCo)."""
  KBIP = d.efc_KBIP
  k, b = KBIP[r, 0], KBIP[r, 1]
  if replace and k > 0 and k * imp * h * h > 1:
    k = 1 / (imp * h * h)
    cmax = (1 - imp) * MAXIMP / (imp * (1 - MAXIMP))
    b = min(2 * dampratio * math.sqrt(k), max(0.0, (cmax - 1 - h * h * k * imp) / h))
    KBIP[r, 0] = k
    KBIP[r, 1] = b
  if stage == 0:
    return
  c = 1 + h * b + h * h * k * imp
  diag = d.efc_diagA[r]
  if stage == 2:
    s0 = 0.0
    s1 = 0.0
    for a in range(d.efc_J_rowadr[r], d.efc_J_rowadr[r] + d.efc_J_rownnz[r]):
      dof = d.efc_J_colind[a]
      j2 = d.efc_J[a] * d.efc_J[a]
      s0 += j2 / d.M[m.M_rowadr[dof] + m.M_rownnz[dof] - 1]
      s1 += j2 / d.dof_mhat[dof]
    if s0 > 0:
      diag *= s1 / s0
  d.efc_R[r] = max(MINVAL, diag * (1 - imp) / (imp * c), diag * (1 - MAXIMP) / MAXIMP)


@jit
def make_impedance(m, d):
  """efc_R, efc_D, efc_KBIP, contact_mu; efc_diagA made consistent with R
  (mj_makeImpedance). Under the discrete integrator R is preliminary here: discrete_impedance
  finishes it at the acceleration stage, once the metric is known."""
  impedance_rows(m, d, 0)


@jit
def discrete_impedance(m, d):
  """The discrete integrator's rows at the acceleration stage (after engine/discrete.py's
  metric): diagA again (the invweight0 approximation scaled per row by the metric's diagonal,
  or under DIAGEXACT the exact diagonal through the metric's backbone factor), R and D with
  the rows' implicit spring-dampers, and aref."""
  if d.nefc[0] == 0:
    return
  if m.opt_enableflags[0] & _ENBL_DIAGEXACT:
    exact_diag(m, d, d.qLDhat, d.qLDhatDiagInv)
    impedance_rows(m, d, 1)
  else:
    diag_approx(m, d)
    impedance_rows(m, d, 2)
  reference_constraint(m, d)


@jit
def impedance_rows(m, d, disc_stage):
  """make_impedance; disc_stage (discrete integrator only): 0 position stage, 1 final with the
  exact diagonal, 2 final with the approximate one scaled by the metric."""
  nefc = d.nefc[0]
  R, KBIP = d.efc_R, d.efc_KBIP
  ref = _b(d.cnstr_row[0, 0:2])
  reff = _b(d.cnstr_row[0, 2:4])
  imp5 = _b(d.cnstr_row[1, 0:5])
  disc = m.opt_integrator[0] == _INT_DISCRETE
  refsafe = not (m.opt_disableflags[0] & _DSBL_REFSAFE)
  h = m.opt_timestep[0]
  i = 0
  while i < nefc:
    _sol_params(m, d, i, ref, reff, imp5)
    pos, dim = _pos_dim(m, d, i)
    imp, impp = impedance(imp5, pos, d.efc_margin[i])
    for j in range(dim):
      R[i + j] = max(MINVAL, (1 - imp) * d.efc_diagA[i + j] / imp)
      tp = d.efc_type[i + j]
      ell_fri = tp == ELLIPTIC and j > 0
      use_f = ell_fri and (reff[0] != 0.0 or reff[1] != 0.0)
      r0 = reff[0] if use_f else ref[0]
      r1 = reff[1] if use_f else ref[1]
      if tp == FRICTION_DOF or tp == FRICTION_TENDON or ell_fri:
        KBIP[i + j, 0] = 0.0
      elif r0 > 0:
        KBIP[i + j, 0] = 1 / max(MINVAL, imp5[1] * imp5[1] * r0 * r0 * r1 * r1)
      else:
        KBIP[i + j, 0] = -r0 / max(MINVAL, imp5[1] * imp5[1])
      if r1 > 0:
        KBIP[i + j, 1] = 2 / max(MINVAL, imp5[1] * r0)
      else:
        KBIP[i + j, 1] = -r1 / max(MINVAL, imp5[1])
      KBIP[i + j, 2] = imp
      KBIP[i + j, 3] = impp
      if disc:
        _discrete_row(m, d, i + j, refsafe and r0 > 0 and tp != EQUALITY, r1, imp, h,
                      disc_stage)
    i += dim
  # frictional contacts: R[1] = R[0]/impratio, regularised cone mu, friction-matched R
  i = d.ne[0] + d.nf[0]
  while i < nefc:
    tp = d.efc_type[i]
    if tp == PYRAMIDAL or tp == ELLIPTIC:
      oid = d.efc_id[i]
      dim = d.contact_dim[oid]
      fr = d.contact_friction[oid]
      R[i + 1] = R[i] / max(MINVAL, m.opt_impratio[0])
      mu = fr[0] * math.sqrt(R[i + 1] / R[i])
      d.contact_mu[oid] = mu
      if tp == ELLIPTIC:
        for j in range(1, dim - 1):
          R[i + j + 1] = R[i + 1] * fr[0] * fr[0] / (fr[j] * fr[j])
        i += dim - 1
      else:
        rpy = 2 * mu * mu * R[i]
        for j in range(2 * (dim - 1)):
          R[i + j] = rpy
        i += 2 * (dim - 1) - 1
    i += 1
  for i in range(nefc):
    d.efc_D[i] = 1 / R[i]
  for i in range(nefc):
    d.efc_diagA[i] = R[i] * KBIP[i, 2] / (1 - KBIP[i, 2])


# ---------------------------------------------------------------- stages

@unit((M, D))
def make_constraint(m, d):
  """All constraint rows at the current position, with diagA, R, D, KBIP (mj_makeConstraint).
  Rows that would overflow njmax clear every row and count a CNSTRFULL warning, as MuJoCo's
  failed arena allocation does."""
  d.ne[0] = 0
  d.nf[0] = 0
  d.nl[0] = 0
  d.nefc[0] = 0
  if m.opt_disableflags[0] & _DSBL_CONSTRAINT:
    return
  # each kind of row unless disabled, in MuJoCo's order
  flags, sleeping = m.opt_disableflags[0], sleepmod.filtering(m, d)
  ok = (flags & _DSBL_EQUALITY) != 0 or instantiate_equality(m, d, sleeping)
  ok = ok and ((flags & _DSBL_FRICTIONLOSS) != 0 or instantiate_friction(m, d, sleeping))
  ok = ok and ((flags & _DSBL_LIMIT) != 0 or instantiate_limit(m, d, sleeping))
  ok = ok and instantiate_contact(m, d)
  if not ok:
    d.warning_lastinfo[_WARN_CNSTRFULL] = d.efc_pos.shape[0]
    d.warning_number[_WARN_CNSTRFULL] += 1
    d.ne[0] = 0
    d.nf[0] = 0
    d.nl[0] = 0
    d.nefc[0] = 0
    for i in range(d.ncon[0]):
      d.contact_efc_address[i] = -1
    return
  if d.nefc[0] == 0:
    return
  diag_approx(m, d)
  make_impedance(m, d)


@jit
def project_constraint(m, d):
  """Under DIAGEXACT, efc_diagA = diag(J M^-1 J') and the impedance recomputed from it (the
  part of mj_projectConstraint that the primal solvers need; the dual's AR is the solver's)."""
  nefc = d.nefc[0]
  if (nefc == 0 or not (m.opt_enableflags[0] & _ENBL_DIAGEXACT)
      or m.opt_integrator[0] == _INT_DISCRETE):   # discrete_impedance does it
    return
  exact_diag(m, d, d.qLD, d.qLDiagInv)
  make_impedance(m, d)


@jit
def exact_diag(m, d, qLD, qLDiagInv):
  """efc_diagA = diag(J M^-1 J') with the L'DL factor (qLD, qLDiagInv) of M (or of a metric on
  M's pattern)."""
  nefc = d.nefc[0]
  nv = m.nv
  x = d.cnstr_vec
  J, colind = d.efc_J, d.efc_J_colind
  for i in range(nefc):
    for k in range(nv):
      x[k] = 0.0
    a0 = d.efc_J_rowadr[i]
    a1 = a0 + d.efc_J_rownnz[i]
    for a in range(a0, a1):
      x[colind[a]] = J[a]
    smooth.solve_ld(x, qLD, qLDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind, nv)
    s = 0.0
    for a in range(a0, a1):
      s += J[a] * x[colind[a]]
    d.efc_diagA[i] = s


@jit
def _jdotv(m, d):
  """efc_aref -= Jdot qvel on connect and weld rows (MuJoCo 4's mj_Jdotv, dense path)."""
  nv, ne = m.nv, d.ne[0]
  if ne == 0 or nv == 0:
    return
  jd1, jd2 = d.cnstr_jac[0], d.cnstr_jac[1]
  qvel = d.qvel
  aref = d.efc_aref
  row = 0
  while row < ne:
    eq = d.efc_id[row]
    typ = m.eq_type[eq]
    if typ != _EQ_CONNECT and typ != _EQ_WELD:
      while row < ne and d.efc_id[row] == eq:
        row += 1
      continue
    p0, p1, p2, q0, q1, q2, b1, b2 = _equality_anchors(m, d, eq)
    jac_dot(m, d, jd1, p0, p1, p2, b1)
    jac_dot(m, d, jd2, q0, q1, q2, b2)
    v1 = d.cnstr_row[1]
    for r in range(6):
      s1 = 0.0
      s2 = 0.0
      for k in range(nv):
        s1 += jd1[r, k] * qvel[k]
        s2 += jd2[r, k] * qvel[k]
      v1[r] = s1 - s2  # rows 0-2 translation, 3-5 rotation (jdv1 - jdv2)
    for r in range(3):
      aref[row + r] -= v1[r]
    row += 3
    if typ == _EQ_WELD:
      ts = m.eq_data[eq, 10]
      a0, a1, a2, a3, n0, n1, n2, n3 = weld_quats(m, d, eq, b1, b2)
      w1, w2 = d.cvel[b1], d.cvel[b2]
      dw0, dw1, dw2 = w1[0] - w2[0], w1[1] - w2[1], w1[2] - w2[2]
      o1, o2 = m.eq_obj1id[eq], m.eq_obj2id[eq]
      x = d.xquat[b1]
      y = d.xquat[b2]
      if m.eq_objtype[eq] == _OBJ_BODY:
        qd0, qd1, qd2, qd3 = _deriv_quat(x[0], x[1], x[2], x[3], w1[0], w1[1], w1[2])
        r = m.eq_data[eq, 6:10]
        e0, e1, e2, e3 = mm.quat_mul(qd0, qd1, qd2, qd3, r[0], r[1], r[2], r[3])
        f0, f1, f2, f3 = _deriv_quat(y[0], y[1], y[2], y[3], w2[0], w2[1], w2[2])
      else:
        s = m.site_quat[o1]
        c0, c1, c2, c3 = mm.quat_mul(x[0], x[1], x[2], x[3], s[0], s[1], s[2], s[3])
        e0, e1, e2, e3 = _deriv_quat(c0, c1, c2, c3, w1[0], w1[1], w1[2])
        s = m.site_quat[o2]
        c0, c1, c2, c3 = mm.quat_mul(y[0], y[1], y[2], y[3], s[0], s[1], s[2], s[3])
        f0, f1, f2, f3 = _deriv_quat(c0, c1, c2, c3, w2[0], w2[1], w2[2])
      f1, f2, f3 = -f1, -f2, -f3  # neg(qdot1)
      # d/dt of 0.5 * neg(q1) * (J0 - J1) v * q0 relpose, by the product rule
      t0, t1, t2, t3 = _mul_quat_axis(f0, f1, f2, f3, dw0, dw1, dw2)
      t0, t1, t2, t3 = mm.quat_mul(t0, t1, t2, t3, a0, a1, a2, a3)
      u0, u1, u2, u3 = _mul_quat_axis(n0, n1, n2, n3, v1[3], v1[4], v1[5])
      u0, u1, u2, u3 = mm.quat_mul(u0, u1, u2, u3, a0, a1, a2, a3)
      z0, z1, z2, z3 = _mul_quat_axis(n0, n1, n2, n3, dw0, dw1, dw2)
      z0, z1, z2, z3 = mm.quat_mul(z0, z1, z2, z3, e0, e1, e2, e3)
      aref[row] -= 0.5 * (t1 + u1 + z1) * ts
      aref[row + 1] -= 0.5 * (t2 + u2 + z2) * ts
      aref[row + 2] -= 0.5 * (t3 + u3 + z3) * ts
      row += 3


@jit
def _add_surface_vel(m, d):
  """Contact rows of efc_vel += the relative surface velocity contact_surfacevel (tangent1,
  tangent2, spin; MuJoCo 4's mj_addSurfaceVel): the rows then measure slip against the moving
  surface. Pyramidal edge rows (normal +- mu tangent) take +- mu times each component."""
  pyramid = m.opt_cone[0] == _PYRAMID
  for c in range(d.ncon[0]):
    adr = d.contact_efc_address[c]
    if adr < 0:
      continue
    sv = d.contact_surfacevel[c]
    if sv[0] == 0.0 and sv[1] == 0.0 and sv[2] == 0.0:
      continue
    dim = d.contact_dim[c]
    if dim == 1:
      continue
    for k in range(1, min(dim, 4)):
      if pyramid:
        mu = d.contact_friction[c, k - 1]
        d.efc_vel[adr + 2 * (k - 1)] += mu * sv[k - 1]
        d.efc_vel[adr + 2 * (k - 1) + 1] -= mu * sv[k - 1]
      else:
        d.efc_vel[adr + k] += sv[k - 1]


@jit
def _adhesion_ref(m, d):
  """efc_aref of adhesive contacts' normal rows += R * adhesion, spread equally over the
  2(dim-1) pyramid edges (mj_adhesionRef): with the passive pull qfrc_adhesion this translates
  the friction cone down the normal by the adhesion."""
  pyramid = m.opt_cone[0] == _PYRAMID
  for c in range(d.ncon[0]):
    adr = d.contact_efc_address[c]
    adh = d.contact_adhesion[c]
    if adr < 0 or adh == 0.0:
      continue
    dim = d.contact_dim[c]
    if dim == 1 or not pyramid:
      d.efc_aref[adr] += d.efc_R[adr] * adh
    else:
      edge = adh / (2 * (dim - 1))
      for j in range(adr, adr + 2 * (dim - 1)):
        d.efc_aref[j] += d.efc_R[j] * edge


@jit
def reference_constraint(m, d):
  """efc_vel = J qvel (+ surface velocities) and efc_aref = -B vel - K I (pos - margin)
  (+ the adhesion bias) - Jdot qvel (mj_referenceConstraint; needs cvel and cdof_dot, so it
  runs after com_vel)."""
  nefc = d.nefc[0]
  J, colind, qvel = d.efc_J, d.efc_J_colind, d.qvel
  for i in range(nefc):
    s = 0.0
    a0 = _u(d.efc_J_rowadr[i])
    for a in range(a0, a0 + _u(d.efc_J_rownnz[i])):
      s += J[a] * qvel[_u(colind[a])]
    d.efc_vel[i] = s
  _add_surface_vel(m, d)
  disc = m.opt_integrator[0] == _INT_DISCRETE
  h = m.opt_timestep[0]
  for i in range(nefc):
    kb = d.efc_KBIP[i]
    v = d.efc_vel[i]
    # the discrete integrator's spring acts at the end of the step (_discrete_row)
    r = d.efc_pos[i] - d.efc_margin[i] + (h * v if disc else 0.0)
    d.efc_aref[i] = -kb[1] * v - kb[0] * kb[2] * r
  _jdotv(m, d)
  if disc:
    # ... and the reference, Jdot qvel included but not the adhesion bias (as in MuJoCo), is
    # divided by c = 1 + h b + h^2 k imp
    for i in range(nefc):
      kb = d.efc_KBIP[i]
      d.efc_aref[i] /= 1 + h * kb[1] + h * h * kb[0] * kb[2]
  _adhesion_ref(m, d)


@jit
def constraint_b(m, d):
  """efc_b = J qacc_smooth - aref (the start of mj_fwdConstraint)."""
  J, colind, qacc = d.efc_J, d.efc_J_colind, d.qacc_smooth
  for i in range(d.nefc[0]):
    s = 0.0
    a0 = _u(d.efc_J_rowadr[i])
    for a in range(a0, a0 + _u(d.efc_J_rownnz[i])):
      s += J[a] * qacc[_u(colind[a])]
    d.efc_b[i] = s - d.efc_aref[i]


@jit
def tendon_dot(m, d, t):
  """(d/dt ten_J) . qvel of tendon t (mj_tendonDot): zero for fixed tendons; spatial tendons
  with armature pass only through sites and pulleys (the compiler rejects geom wraps)."""
  adr, num = m.tendon_adr[t], m.tendon_num[t]
  if m.wrap_type[adr] == _WRAP_JOINT:
    return 0.0
  J = d.trn_jac
  nv = m.nv
  qv = d.qvel
  res = 0.0
  divisor = 1.0
  j = 0
  while j < num - 1:
    t0, t1 = m.wrap_type[adr + j], m.wrap_type[adr + j + 1]
    if t0 == _WRAP_PULLEY or t1 == _WRAP_PULLEY:
      if t0 == _WRAP_PULLEY:
        divisor = m.wrap_prm[adr + j]
      j += 1
      continue
    s0, s1 = m.wrap_objid[adr + j], m.wrap_objid[adr + j + 1]
    b0, b1 = m.site_bodyid[s0], m.site_bodyid[s1]
    j += 1
    if b0 == b1:
      continue
    p0, p1 = d.site_xpos[s0], d.site_xpos[s1]
    u0, u1, u2 = p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]
    norm = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if norm < 1e-15:
      u0, u1, u2 = 1.0, 0.0, 0.0
    else:
      u0, u1, u2 = u0 / norm, u1 / norm, u2 / norm
    # relative velocity of the endpoints and its part normal to the segment, over the length
    smooth.jac_rows(m, d, J, 0, b0, p0)
    smooth.jac_rows(m, d, J, 6, b1, p1)
    w0 = w1 = w2 = 0.0
    for k in range(nv):
      w0 += (J[6, k] - J[0, k]) * qv[k]
      w1 += (J[7, k] - J[1, k]) * qv[k]
      w2 += (J[8, k] - J[2, k]) * qv[k]
    dot = u0 * w0 + u1 * w1 + u2 * w2
    sc = 1.0 / norm if norm > 1e-15 else 0.0
    dv0, dv1, dv2 = (w0 - u0 * dot) * sc, (w1 - u1 * dot) * sc, (w2 - u2 * dot) * sc
    term = dv0 * w0 + dv1 * w1 + dv2 * w2
    # time derivative of the endpoint Jacobians along the segment direction
    jac_dot(m, d, J[0:6], p0[0], p0[1], p0[2], b0)
    jac_dot(m, d, J[6:12], p1[0], p1[1], p1[2], b1)
    for k in range(nv):
      term += (u0 * (J[6, k] - J[0, k]) + u1 * (J[7, k] - J[1, k])
               + u2 * (J[8, k] - J[2, k])) * qv[k]
    res += term / divisor
  return res
