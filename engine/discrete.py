"""MuJoCo's `discrete` integrator (mjINT_DISCRETE): the constraint solve and the implicit
update are one step.

Forward dynamics solves Gauss's principle in the effective metric Mhat = M + h D + h^2 K, where
D and K are the damping and stiffness slopes of the smooth forces, each term clamped to its
dissipative sign:

    Mhat qacc = qfrc_smooth - h K qvel + J' efc_force,    qvel += h qacc,  qpos += h qvel

so `qacc` is the step map (v+ - v) / h. The backbone of Mhat (joint damping and stiffness, on
M's diagonal) joins M's tree factorisation (qMhat, qLDhat); tendon and actuator terms are
couplings w g g' applied matrix-free by the primal solvers (under PGS they are left out of the
metric and integrate explicitly). The constraint rows are treated implicitly too
(engine/constraint.py). MuJoCo's published source has no such integrator: every rule here follows
what MuJoCo 4.0 computes (tests/test_discrete.py compares against it).
"""
from numjoco.engine import actuation
from numjoco.engine import derivative
from numjoco.engine import passive as ps
from numjoco.engine import smooth
from numjoco.engine import solver
from numjoco.engine._jit import jit
from numjoco.engine.types import mjtDisableBit, mjtJoint, mjtSolver, mjtTrn
from numjoco.engine._sig import unit, M, D, NEEDS_DISCRETE

_SLIDE, _HINGE, _FREE = int(mjtJoint.SLIDE), int(mjtJoint.HINGE), int(mjtJoint.FREE)
_DSBL_SPRING = int(mjtDisableBit.SPRING)
_DSBL_DAMPER = int(mjtDisableBit.DAMPER)
_DSBL_ACTUATION = int(mjtDisableBit.ACTUATION)
_PGS = int(mjtSolver.PGS)
_TRN_JOINT, _TRN_JOINTINPARENT = int(mjtTrn.JOINT), int(mjtTrn.JOINTINPARENT)


@jit
def dof_terms(m, d, i, poly):
  """(D, K) of dof i in the backbone: the slope of its damping (polynomial and actuator-inherited
  terms included) at qvel and of its joint's spring at qpos, each clamped at 0. Ball and free
  joints use their linear stiffness on every dof."""
  flags = m.opt_disableflags[0]
  D = 0.0
  K = 0.0
  if not (flags & _DSBL_DAMPER):
    damping = ps.dof_damping(m, i, poly)
    D = max(0.0, ps.d_xpoly_force(damping, poly, d.qvel[i], True))
  if not (flags & _DSBL_SPRING):
    j = m.dof_jntid[i]
    k = m.jnt_stiffness[j]
    sp = m.jnt_stiffnesspoly[j]
    if k != 0.0 or sp[0] != 0.0 or sp[1] != 0.0:
      jt = m.jnt_type[j]
      if jt == _SLIDE or jt == _HINGE:
        padr = m.jnt_qposadr[j]
        if m.jnt_plasticadr[j] >= 0:
          x = d.qpos[padr] - d.plastic[m.jnt_plasticadr[j]]
        else:
          x = d.qpos[padr] - m.qpos_spring[padr]
        K = max(0.0, ps.d_xpoly_force(k, sp, x, False))
      else:
        K = max(0.0, k)
  return D, K


@jit
def _tendon_terms(m, d, t, poly):
  """(D, K) of tendon t: its damping slope at ten_velocity and its spring's slope outside the
  spring's length range (0 inside), each clamped at 0."""
  flags = m.opt_disableflags[0]
  D = 0.0
  K = 0.0
  if not (flags & _DSBL_DAMPER):
    for j in range(ps.NPOLY):
      poly[j] = m.tendon_dampingpoly[t, j]
    damping = m.tendon_damping[t] + ps.actuator_damping(m, t, True, poly)
    D = max(0.0, ps.d_xpoly_force(damping, poly, d.ten_velocity[t], True))
  if not (flags & _DSBL_SPRING):
    k = m.tendon_stiffness[t]
    sp = m.tendon_stiffnesspoly[t]
    if k != 0.0 or sp[0] != 0.0 or sp[1] != 0.0:
      length = d.ten_length[t]
      lower, upper = ps.tendon_spring_range(m, d, t)
      if length > upper or length < lower:
        x = length - upper if length > upper else length - lower
        K = max(0.0, ps.d_xpoly_force(k, sp, x, False))
  return D, K


@unit((M, D), needs=NEEDS_DISCRETE)
def build(m, d):
  """The metric at the current state: qMhat (M, the joint terms, and the symmetric fluid drag
  blocks, as implicitfast's), its factor qLDhat, the coupling weights, and qfrc_hat = -h K qvel
  (the shift alone: metric adds qfrc_smooth)."""
  h = m.opt_timestep[0]
  nv = m.nv
  poly = d.scratch_small[0:ps.NPOLY]
  for k in range(m.nC):
    d.qMhat[k] = d.M[k]
  for i in range(nv):
    d.qfrc_hat[i] = 0.0
  flags = m.opt_disableflags[0]
  if ((m.opt_density[0] > 0 or m.opt_viscosity[0] > 0)
      and not ((flags & _DSBL_SPRING) and (flags & _DSBL_DAMPER))):
    for k in range(m.nD):
      d.qDeriv[k] = 0.0
    derivative.fluid_vel(m, d)
    for k in range(m.nC):
      d.qMhat[k] -= h * d.qDeriv[m.mapD2M[k]]
  for i in range(nv):
    D, K = dof_terms(m, d, i, poly)
    if D != 0.0 or K != 0.0:
      d.qMhat[m.M_rowadr[i] + m.M_rownnz[i] - 1] += h * D + h * h * K
      d.qfrc_hat[i] -= h * K * d.qvel[i]
  coupled = 0
  for t in range(m.ntendon):
    d.ten_mhat[t] = 0.0
  for o in range(m.nout):
    d.actuator_mhat[o] = 0.0
  if m.opt_solver[0] != _PGS:
    for t in range(m.ntendon):
      D, K = _tendon_terms(m, d, t, poly)
      w = h * D + h * h * K
      if w == 0.0:
        continue
      coupled = 1
      d.ten_mhat[t] = w
      if K != 0.0:
        s = h * K * d.ten_velocity[t]
        for a in range(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t]):
          d.qfrc_hat[m.ten_J_colind[a]] -= s * d.ten_J[a]
    if not (m.opt_disableflags[0] & _DSBL_ACTUATION):
      # a dof whose actuator force is at its jnt_actfrcrange does not move with the actuators
      dof_clamped = d.ivec_nv[0]
      any_clamped = derivative.mark_clamped_dofs(m, d, dof_clamped)
      for i in range(m.nactuator):
        if actuation.actuator_disabled(m, i) or (any_clamped and _touches(m, d, i, dof_clamped)):
          continue
        dv, dl = derivative.actuator_slopes(m, d, i)
        D = max(0.0, -dv)
        K = max(0.0, -dl)
        w = h * D + h * h * K
        if w == 0.0:
          continue
        coupled = 1
        for o in range(m.actuator_outadr[i], m.actuator_outadr[i] + m.actuator_outnum[i]):
          d.actuator_mhat[o] = w
          if K != 0.0:
            s = h * K * d.actuator_velocity[o]
            for a in range(d.moment_rowadr[o], d.moment_rowadr[o] + d.moment_rownnz[o]):
              d.qfrc_hat[d.moment_colind[a]] -= s * d.actuator_moment[a]
  d.discrete_coupled[0] = coupled
  for k in range(m.nC):
    d.qLDhat[k] = d.qMhat[k]
  smooth.factor_i(d.qLDhat, d.qLDhatDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind, nv)
  for i in range(nv):
    d.dof_mhat[i] = d.qMhat[m.M_rowadr[i] + m.M_rownnz[i] - 1]
  for t in range(m.ntendon):
    w = d.ten_mhat[t]
    if w != 0.0:
      for a in range(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t]):
        d.dof_mhat[m.ten_J_colind[a]] += w * d.ten_J[a] * d.ten_J[a]
  for o in range(m.nout):
    w = d.actuator_mhat[o]
    if w != 0.0:
      for a in range(d.moment_rowadr[o], d.moment_rowadr[o] + d.moment_rownnz[o]):
        d.dof_mhat[d.moment_colind[a]] += w * d.actuator_moment[a] * d.actuator_moment[a]


@unit((M, D), needs=NEEDS_DISCRETE)
def metric(m, d):
  """The metric and qacc_smooth = Mhat^-1 (qfrc_smooth - h K qvel), after qfrc_smooth (the
  acceleration stage of mj_forward under the discrete integrator)."""
  build(m, d)
  nv = m.nv
  for i in range(nv):
    d.qfrc_hat[i] += d.qfrc_smooth[i]
  if d.discrete_coupled[0]:
    solver.solve_metric_dense(m, d, d.qacc_smooth, d.qfrc_hat)
  else:
    for i in range(nv):
      d.qacc_smooth[i] = d.qfrc_hat[i]
    smooth.solve_ld(d.qacc_smooth, d.qLDhat, d.qLDhatDiagInv, m.M_rownnz, m.M_rowadr,
                    m.M_colind, nv)


@jit
def _mark_touched(m, d, touched):
  """touched[dof] = 1 for the dofs of any constraint row; returns the number of standalone
  free bodies (0: nothing else to do)."""
  nfree = 0
  for j in range(m.njnt):
    if m.jnt_type[j] == _FREE and derivative.is_free_body(m, m.jnt_bodyid[j]):
      nfree += 1
  if nfree == 0:
    return 0
  for i in range(m.nv):
    touched[i] = 0
  for r in range(d.nefc[0]):
    for a in range(d.efc_J_rowadr[r], d.efc_J_rowadr[r] + d.efc_J_rownnz[r]):
      touched[d.efc_J_colind[a]] = 1
  return nfree


@jit
def _free_block(m, d, j, touched, A):
  """A (6x6 row-major) = the backbone block + h d bias / d qvel of joint j's body if it is a
  standalone free body that no constraint row or coupling touches; returns whether it is."""
  if m.jnt_type[j] != _FREE or not derivative.is_free_body(m, m.jnt_bodyid[j]):
    return False
  adr = m.jnt_dofadr[j]
  for r in range(adr, adr + 6):
    if touched[r] or (d.discrete_coupled[0] and not _uncoupled(m, d, r)):
      return False
  derivative.gather_free_block(m, d.qMhat, adr, A)
  derivative.free_gyro(m, d, j, m.opt_timestep[0], A)
  return True


@unit((M, D), needs=NEEDS_DISCRETE)
def free_bodies(m, d):
  """qacc of standalone free bodies that no constraint row touches, solved with their exact
  gyroscopic derivative (a 6x6 LU of the backbone block + h d bias/d qvel), as MuJoCo does (a
  body in contact keeps the symmetric solve)."""
  touched = d.ivec_nv[0]
  if _mark_touched(m, d, touched) == 0:
    return
  A = d.scratch_nbody.reshape(d.scratch_nbody.size)
  pivot = d.ivec_nv[1]
  for j in range(m.njnt):
    if _free_block(m, d, j, touched, A) and derivative.factor_lu6(A, pivot):
      adr = m.jnt_dofadr[j]
      for r in range(adr, adr + 6):
        d.qacc[r] = d.qfrc_hat[r]
      derivative.solve_lu6(d.qacc, adr, A, pivot)


@jit
def inverse_mul(m, d, out):
  """out = Mhat qacc + h K qvel (free bodies: their gyroscopic block times qacc): the smooth
  force the step map qacc needs, for mj_inverse under the discrete integrator (4.0's inverse is
  consistent with its forward: qfrc_inverse = qfrc_applied + qfrc_actuator + J'xfrc); after
  build."""
  solver.mul_metric(m, d, out, d.qacc)
  touched = d.ivec_nv[0]
  if _mark_touched(m, d, touched):
    A = d.scratch_nbody.reshape(d.scratch_nbody.size)
    for j in range(m.njnt):
      if _free_block(m, d, j, touched, A):
        adr = m.jnt_dofadr[j]
        for r in range(6):
          s = 0.0
          for c in range(6):
            s += A[6 * r + c] * d.qacc[adr + c]
          out[adr + r] = s
  for i in range(m.nv):
    out[i] -= d.qfrc_hat[i]


@jit
def _touches(m, d, i, dof_clamped):
  """True if actuator i drives a joint whose dof is clamped (as MuJoCo 4.0: only joint
  transmissions are dropped; site and tendon ones keep their term)."""
  trn = m.actuator_trntype[i]
  if trn != _TRN_JOINT and trn != _TRN_JOINTINPARENT:
    return False
  for o in range(m.actuator_outadr[i], m.actuator_outadr[i] + m.actuator_outnum[i]):
    for a in range(d.moment_rowadr[o], d.moment_rowadr[o] + d.moment_rownnz[o]):
      if dof_clamped[d.moment_colind[a]]:
        return True
  return False


@jit
def _uncoupled(m, d, dof):
  """True if no tendon or actuator coupling reaches dof."""
  for t in range(m.ntendon):
    if d.ten_mhat[t] != 0.0:
      for a in range(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t]):
        if m.ten_J_colind[a] == dof:
          return False
  for o in range(m.nout):
    if d.actuator_mhat[o] != 0.0:
      for a in range(d.moment_rowadr[o], d.moment_rowadr[o] + d.moment_rownnz[o]):
        if d.moment_colind[a] == dof:
          return False
  return True
