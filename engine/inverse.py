"""Inverse dynamics (MuJoCo's engine_inverse.c): the generalized force that produces a given
qacc at the current qpos, qvel. qfrc_inverse = M qacc + qfrc_bias - qfrc_passive - qfrc_constraint,
with qfrc_constraint from the soft-constraint model at jar = J qacc - aref (mj_invConstraint)."""
import numpy as np

from numjoco.engine import constraint
from numjoco.engine import derivative
from numjoco.engine import discrete as disc
from numjoco.engine import energy
from numjoco.engine import forward as fwd
from numjoco.engine import passive as ps
from numjoco.engine import sensor
from numjoco.engine import smooth
from numjoco.engine import solver
from numjoco.engine._jit import jit
from numjoco.engine.types import ints, mjtDisableBit, mjtEnableBit, mjtIntegrator
from numjoco.engine._sig import unit, M, D, f8v, NEEDS_DISCRETE, NEEDS_FWDINV

_ENBL_ENERGY, _ENBL_INVDISCRETE = ints(mjtEnableBit, "ENERGY INVDISCRETE")
_DSBL_EULERDAMP = int(mjtDisableBit.EULERDAMP)
_INT_EULER, _INT_IMPLICIT, _INT_IMPLICITFAST, _INT_DISCRETE = (
    ints(mjtIntegrator, "EULER IMPLICIT IMPLICITFAST DISCRETE"))

# stages, as mjtStage
STAGE_NONE, STAGE_POS, STAGE_VEL = 0, 1, 2


@jit
def inv_constraint(m, d, jar):
  """efc_force, efc_state and qfrc_constraint from jar = J qacc - aref (mj_invConstraint)."""
  nefc = d.nefc[0]
  if nefc == 0:
    for i in range(m.nv):
      d.qfrc_constraint[i] = 0.0
    return
  solver.mul_jac(d, jar, d.qacc, nefc, m.nv)
  for i in range(nefc):
    jar[i] -= d.efc_aref[i]
  solver.constraint_update(m, d, jar, False)


@unit((M, D, f8v, f8v), needs=NEEDS_DISCRETE)
def discrete_acc(m, d, qfrc, A):
  """Turn the discrete-time qacc (what the integrator produced) into the continuous-time one the
  forward dynamics solved for, in place (mj_discreteAcc); `qfrc` (nv) and `A` (36) are work."""
  nv = m.nv
  qacc = d.qacc
  integ = m.opt_integrator[0]
  h = m.opt_timestep[0]
  if integ == _INT_EULER:
    damped = False
    if not (m.opt_disableflags[0] & _DSBL_EULERDAMP):
      for i in range(nv):
        if (m.dof_damping[i] > 0 or m.dof_dampingpoly[i, 0] != 0.0
            or m.dof_dampingpoly[i, 1] != 0.0 or m.jnt_actuatorid[m.dof_jntid[i]] != -1):
          damped = True
          break
    if not damped:
      return
    smooth.mul_m(m, d, qfrc, qacc)
    poly = A[0:ps.NPOLY]
    for i in range(nv):
      damping = ps.dof_damping(m, i, poly)
      qfrc[i] += h * ps.d_xpoly_force(damping, poly, d.qvel[i], True) * qacc[i]
  elif integ == _INT_IMPLICIT:
    derivative.smooth_vel(m, d, True)
    for k in range(m.nD):
      a = m.mapM2D[k]
      d.qLU[k] = (d.M[a] if a >= 0 else 0.0) - h * d.qDeriv[k]
    for i in range(nv):
      s = 0.0
      for k in range(m.D_rowadr[i], m.D_rowadr[i] + m.D_rownnz[i]):
        s += d.qLU[k] * qacc[m.D_colind[k]]
      qfrc[i] = s
  elif integ == _INT_IMPLICITFAST:
    derivative.smooth_vel(m, d, False)
    for k in range(m.nC):
      d.qH[k] = d.M[k] - h * d.qDeriv[m.mapD2M[k]]
    smooth.mul_sym(m, d.qH, qfrc, qacc)
    for j in range(m.njnt):
      if not derivative.free_mhat(m, d, j, h, A):
        continue
      adr = m.jnt_dofadr[j]
      for r in range(6):
        s = 0.0
        for c in range(6):
          s += A[6 * r + c] * qacc[adr + c]
        qfrc[adr + r] = s
  else:
    return
  smooth.solve_m(m, d, qacc, qfrc)


@jit
def inverse_skip(m, d, skipstage, skipsensor, jar, qacc_save, work, A):
  """Inverse dynamics, recomputing the stages after `skipstage` (mj_inverseSkip). Work arrays:
  jar (njmax), qacc_save and work (nv), A (36)."""
  nv = m.nv
  enabled = m.opt_enableflags[0]
  if skipstage < STAGE_POS:
    fwd.fwd_position(m, d)
    energypos = False   # an e_potential sensor computed it already
    if not skipsensor:
      energypos = sensor.sensor_pos(m, d)
    if enabled & _ENBL_ENERGY and not energypos:   # (unlike forward, no zeroing when off)
      energy.energy_pos(m, d)
  if skipstage < STAGE_VEL:
    fwd.fwd_velocity(m, d)
    if not skipsensor:
      sensor.sensor_vel(m, d)
    if enabled & _ENBL_ENERGY:
      energy.energy_vel(m, d)
  # the discrete integrator's qacc is the step map its metric produced: the constraints see it
  # as it is, and discrete.inverse_mul gives the smooth force (invdiscrete implied)
  disc_int = m.opt_integrator[0] == _INT_DISCRETE
  discrete = (enabled & _ENBL_INVDISCRETE) != 0 and not disc_int
  if disc_int:
    disc.build(m, d)
    constraint.discrete_impedance(m, d)
  if discrete:
    for i in range(nv):
      qacc_save[i] = d.qacc[i]
    discrete_acc(m, d, work, A)
  inv_constraint(m, d, jar)
  smooth.rne(m, d, False, d.qfrc_inverse)
  fwd.tendon_bias(m, d)
  if not skipsensor:
    sensor.sensor_acc(m, d)
  if disc_int:
    disc.inverse_mul(m, d, work)
  else:
    smooth.mul_m(m, d, work, d.qacc)
  for i in range(nv):
    d.qfrc_inverse[i] += work[i] - d.qfrc_passive[i] - d.qfrc_constraint[i]
  if discrete:
    for i in range(nv):
      d.qacc[i] = qacc_save[i]


@jit
def compare_fwd_inv(m, d, jar, qacc_save, work, A, qforce, save_qc, save_f, out):
  """out[0] = |qfrc_constraint(forward) - qfrc_constraint(inverse)|, out[1] = |qfrc_applied +
  qfrc_actuator + J'xfrc - qfrc_inverse|, leaving forward's results in place (mj_compareFwdInv)."""
  nv, nefc = m.nv, d.nefc[0]
  out[0] = 0.0
  out[1] = 0.0
  if nefc == 0:
    return
  for i in range(nv):
    qforce[i] = d.qfrc_applied[i] + d.qfrc_actuator[i]
  fwd.xfrc_accumulate(m, d, qforce)
  for i in range(nv):
    save_qc[i] = d.qfrc_constraint[i]
  for i in range(nefc):
    save_f[i] = d.efc_force[i]
  inverse_skip(m, d, STAGE_VEL, True, jar, qacc_save, work, A)
  s0 = 0.0
  s1 = 0.0
  for i in range(nv):
    s0 += (save_qc[i] - d.qfrc_constraint[i]) ** 2
    s1 += (qforce[i] - d.qfrc_inverse[i]) ** 2
  out[0] = np.sqrt(s0)
  out[1] = np.sqrt(s1)
  for i in range(nv):
    d.qfrc_constraint[i] = save_qc[i]
  for i in range(nefc):
    d.efc_force[i] = save_f[i]


@unit((M, D), needs=NEEDS_FWDINV)
def fwd_inv_stats(m, d):
  """d.solver_fwdinv from compare_fwd_inv, with its work arrays allocated here (mj_step under
  the FWDINV enable flag)."""
  nv, njmax = m.nv, d.efc_pos.shape[0]
  compare_fwd_inv(m, d, np.zeros(njmax), np.zeros(nv), np.zeros(nv), np.zeros(36), np.zeros(nv),
                  np.zeros(nv), np.zeros(njmax), d.solver_fwdinv)
