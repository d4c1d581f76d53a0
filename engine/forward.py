"""Forward dynamics (MuJoCo's mj_forward in engine_forward.c): its stages fwd_position,
fwd_velocity, fwd_actuation, fwd_acceleration and fwd_constraint, and forward. The
integrators and the step are engine/step.py."""

import numpy as np

from numjoco.engine import actuation
from numjoco.engine.collision import driver as collision_driver
from numjoco.engine import constraint
from numjoco.engine import discrete
from numjoco.engine import energy
from numjoco.engine import flex as flexmod
from numjoco.engine import passive as ps
from numjoco.engine import sensor
from numjoco.engine import sleep
from numjoco.engine import smooth
from numjoco.engine import island
from numjoco.engine import solver
from numjoco.engine import solver_pgs
from numjoco.engine import timer as tm
from numjoco.engine._jit import jit
from numjoco.engine.types import NISLAND, mjtDisableBit, mjtEnableBit, mjtIntegrator, mjtSolver
from numjoco.engine._sig import unit, M, D, b1

_u = np.uintp   # an index known to be >= 0: no wraparound test on the load (shared/DESIGN.md)
_DSBL_ACTUATION = int(mjtDisableBit.ACTUATION)
_DSBL_WARMSTART = int(mjtDisableBit.WARMSTART)
_PGS, _NEWTON = int(mjtSolver.PGS), int(mjtSolver.NEWTON)
_ENBL_ENERGY = int(mjtEnableBit.ENERGY)
_INT_DISCRETE = int(mjtIntegrator.DISCRETE)


@unit((M, D))
def fwd_position(m, d):
  """Position-dependent stages: kinematics, com_pos, camlight, flex, tendon, M and its factor,
  collision, constraint rows, transmission; timed as mj_fwdPosition (POSITION, and its parts
  POS_KINEMATICS with the transmission, POS_INERTIA, POS_COLLISION, POS_MAKE, POS_PROJECT)."""
  t0 = tm.start(d)
  smooth.kinematics(m, d)
  if sleep.wake(m, d):   # a sleeping tree moved or was pushed (or sleep was disabled)
    sleep.update(m, d)
  smooth.com_pos(m, d)
  smooth.camlight(m, d)
  flexmod.flex(m, d)
  if m.ntendon:
    smooth.tendon(m, d)   # linked only then (_sig.NEEDS_TENDON)
  if sleep.wake_tendon(m, d):
    sleep.update(m, d)
  t = tm.end(d, tm.POS_KINEMATICS, t0)
  smooth.crb(m, d)
  smooth.factor_m(m, d)
  tm.end(d, tm.POS_INERTIA, t)
  collision_driver.collision(m, d)    # timed inside (POS_COLLISION)
  if sleep.wake_collision(m, d):
    sleep.update(m, d)
    collision_driver.collision(m, d)
  if sleep.wake_equality(m, d):
    sleep.update(m, d)
  t = tm.start(d)
  constraint.make_constraint(m, d)
  t = tm.end(d, tm.POS_MAKE, t)
  constraint.project_constraint(m, d)
  t = tm.end(d, tm.POS_PROJECT, t)
  smooth.transmission(m, d)
  tm.add(d, tm.POS_KINEMATICS, t)
  tm.end(d, tm.POSITION, t0)


@unit((M, D))
def fwd_velocity(m, d):
  """Velocity-dependent stages: tendon/actuator velocity, com_vel, passive, rne bias."""
  for i in range(m.ntendon):
    s = 0.0
    a0 = _u(m.ten_J_rowadr[i])
    for a in range(a0, a0 + _u(m.ten_J_rownnz[i])):
      s += d.ten_J[a] * d.qvel[_u(m.ten_J_colind[a])]
    d.ten_velocity[i] = s
  flexmod.edge_velocity(m, d)
  actuated = not (m.opt_disableflags[0] & _DSBL_ACTUATION)
  for i in range(m.nout):
    s = 0.0
    if actuated:
      a0 = _u(d.moment_rowadr[i])
      for a in range(a0, a0 + _u(d.moment_rownnz[i])):
        s += d.actuator_moment[a] * d.qvel[_u(d.moment_colind[a])]
    d.actuator_velocity[i] = s
  smooth.com_vel(m, d)
  ps.passive(m, d)
  constraint.reference_constraint(m, d)
  smooth.rne(m, d, False, d.qfrc_bias)
  tendon_bias(m, d)


@jit
def tendon_bias(m, d):
  """Bias force of tendon armature: qfrc_bias += ten_J' * armature * (dJ/dt qvel)
  (mj_tendonBias)."""
  for t in range(m.ntendon):
    arm = m.tendon_armature[t] + smooth.actuator_armature(m, t, True)
    if arm == 0.0:
      continue
    coef = arm * constraint.tendon_dot(m, d, t)
    if coef == 0.0:
      continue
    a = m.ten_J_rowadr[t]
    for k in range(a, a + m.ten_J_rownnz[t]):
      d.qfrc_bias[m.ten_J_colind[k]] += coef * d.ten_J[k]


next_activation = actuation.next_activation
fwd_actuation = actuation.fwd_actuation


@jit
def xfrc_accumulate(m, d, qfrc):
  """qfrc += J' (xfrc_applied + xfrc_perturb) for every body (force at the body's com, torque);
  the viewer's perturbation is a separate buffer so the user's xfrc_applied is never touched."""
  for b in range(1, m.nbody):
    x, p = d.xfrc_applied[b], d.xfrc_perturb[b]
    f0, f1, f2 = x[0] + p[0], x[1] + p[1], x[2] + p[2]
    t0, t1, t2 = x[3] + p[3], x[4] + p[4], x[5] + p[5]
    if f0 == 0.0 and f1 == 0.0 and f2 == 0.0 and t0 == 0.0 and t1 == 0.0 and t2 == 0.0:
      continue
    smooth.apply_ft(m, d, f0, f1, f2, t0, t1, t2, d.xipos[b, 0], d.xipos[b, 1], d.xipos[b, 2], b,
                qfrc)


@unit((M, D))
def fwd_acceleration(m, d):
  """qfrc_smooth = passive - bias + applied + actuator + J'xfrc; qacc_smooth = M^-1 qfrc_smooth,
  or under the discrete integrator Mhat^-1 (qfrc_smooth - h K qvel) (engine/discrete.py)."""
  for i in range(m.nv):
    d.qfrc_smooth[i] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i] + d.qfrc_actuator[i]
  xfrc_accumulate(m, d, d.qfrc_smooth)
  if m.opt_integrator[0] == _INT_DISCRETE:
    discrete.metric(m, d)
    constraint.discrete_impedance(m, d)
  else:
    d.discrete_coupled[0] = 0   # (the integrator may have been switched at run time)
    smooth.solve_m(m, d, d.qacc_smooth, d.qfrc_smooth)


@jit
def warmstart(m, d):
  """qacc (and for PGS efc_force) to start from: the better of qacc_warmstart and qacc_smooth
  by cost, or qacc_smooth and zero forces with warmstart disabled (engine_forward.c)."""
  nv, nefc = m.nv, d.nefc[0]
  if m.opt_disableflags[0] & _DSBL_WARMSTART:
    for i in range(nv):
      d.qacc[i] = d.qacc_smooth[i]
    for i in range(nefc):
      d.efc_force[i] = 0.0
    return
  jar = d.solver_efc[solver.JAR]
  for i in range(nv):
    d.qacc[i] = d.qacc_warmstart[i]
  solver.mul_jac(d, jar, d.qacc_warmstart, nefc, nv)
  for i in range(nefc):
    jar[i] -= d.efc_aref[i]
  cost_warm = solver.constraint_update(m, d, jar, False)
  if m.opt_solver[0] == _PGS:
    if solver_pgs.dual_cost(m, d, d.efc_force) > 0:
      for i in range(nefc):
        d.efc_force[i] = 0.0
      for i in range(nv):
        d.qfrc_constraint[i] = 0.0
  else:
    Ma = d.solver_nv[solver.MA]
    rhs = solver.gauss_rhs(m, d)
    if m.opt_integrator[0] == _INT_DISCRETE:
      solver.mul_metric(m, d, Ma, d.qacc_warmstart)
    else:
      smooth.mul_m(m, d, Ma, d.qacc_warmstart)
    for i in range(nv):
      cost_warm += 0.5 * (Ma[i] - rhs[i]) * (d.qacc_warmstart[i] - d.qacc_smooth[i])
    cost_smooth = solver.constraint_update(m, d, d.efc_b, False)
    if cost_warm > cost_smooth:
      for i in range(nv):
        d.qacc[i] = d.qacc_smooth[i]
  # with islands, dofs in none start (and stay) at qacc_smooth
  if d.nisland[0] > 0:
    for i in range(d.nidof[0], nv):
      g = d.map_idof2dof[i]
      d.qacc[g] = d.qacc_smooth[g]


@jit
def _solve(m, d):
  """Islands, efc_b, warmstart, the model's solver (and no-slip), then qacc, efc_force,
  efc_state, qfrc_constraint and the solver statistics."""
  nv, nefc = m.nv, d.nefc[0]
  for i in range(nv):
    d.qfrc_constraint[i] = 0.0
  for k in range(NISLAND):
    d.solver_niter[k] = 0
  island.island(m, d)
  if d.discrete_coupled[0]:
    d.nisland[0] = 0   # the couplings join trees: one system
  if nefc == 0:
    for i in range(nv):
      d.qacc[i] = d.qacc_smooth[i]
    return
  solver.mul_jac(d, d.efc_b, d.qacc_smooth, nefc, nv)
  for i in range(nefc):
    d.efc_b[i] -= d.efc_aref[i]
  kind = m.opt_solver[0]
  noslip = m.opt_noslip_iterations[0] > 0
  if kind == _PGS or noslip:
    solver_pgs.make_y(m, d)
  warmstart(m, d)
  nisland = d.nisland[0]
  if nisland == 0:
    for i in range(nefc):
      d.map_iefc2efc[i] = i   # the one-system solve's row list
  if kind == _PGS:
    if nisland > 0:
      for k in range(nisland):
        a = d.island_iefcadr[k]
        solver_pgs.sol_pgs(m, d, k, d.island_ne[k], d.island_nf[k], d.island_nefc[k],
                           d.map_iefc2efc[a:a + d.island_nefc[k]], m.opt_iterations[0])
    else:
      solver_pgs.sol_pgs(m, d, -1, d.ne[0], d.nf[0], nefc, d.map_iefc2efc[:nefc],
                         m.opt_iterations[0])
  elif nisland == 1 and d.nidof[0] == nv:
    # one island holding every dof: its rows and dofs are all of them, in the model's order,
    # so the one-system solve is the island's solve (without gathering); MuJoCo's efc_state
    # keeps the warmstart's, as for any island solve
    saved = d.solver_int[1]
    for i in range(nefc):
      saved[i] = d.efc_state[i]
    d.solver_niter[0] = solver.primal(m, d, -1, kind == _NEWTON)
    for i in range(nefc):
      d.efc_state[i] = saved[i]
  elif nisland > 0:
    solver.solve_primal_islands(m, d, kind == _NEWTON)
  else:
    d.solver_niter[0] = solver.primal(m, d, -1, kind == _NEWTON)
  if noslip:
    if nisland > 0:
      for k in range(nisland):
        a = d.island_iefcadr[k]
        solver_pgs.sol_noslip(m, d, k, d.island_ne[k], d.island_nf[k], d.island_nefc[k],
                              d.map_iefc2efc[a:a + d.island_nefc[k]],
                              m.opt_noslip_iterations[0])
    else:
      solver_pgs.sol_noslip(m, d, -1, d.ne[0], d.nf[0], nefc, d.map_iefc2efc[:nefc],
                            m.opt_noslip_iterations[0])
  if kind == _PGS or noslip:
    # dual finish: qacc = qacc_smooth + M^-1 J' efc_force
    solver.mul_jac_t(d, d.qfrc_constraint, d.efc_force, nefc, nv)
    if m.opt_integrator[0] == _INT_DISCRETE:
      for i in range(nv):
        d.qacc[i] = d.qfrc_constraint[i]
      smooth.solve_ld(d.qacc, d.qLDhat, d.qLDhatDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind,
                      nv)
    else:
      smooth.solve_m(m, d, d.qacc, d.qfrc_constraint)
    for i in range(nv):
      d.qacc[i] += d.qacc_smooth[i]


@unit((M, D))
def fwd_constraint(m, d):
  """The constraint stage (mj_fwdConstraint): islands, efc_b, warmstart, the model's solver
  (engine/solver.py: CG, Newton; engine/solver_pgs.py: PGS, no-slip), then qacc, efc_force,
  efc_state, qfrc_constraint and the solver statistics. Every solver and the no-slip pass work
  island by island unless the ISLAND disable bit is set. Under the discrete integrator the
  unconstrained free bodies then get their gyroscopic solve; sleeping trees keep their qacc."""
  _solve(m, d)
  if m.opt_integrator[0] == _INT_DISCRETE:
    discrete.free_bodies(m, d)
  if sleep.filtering(m, d):
    # sleeping trees keep their qacc (MuJoCo's stages skip them): the last step's value
    for i in range(m.nv):
      if d.body_awake[m.dof_bodyid[i]] == sleep.ASLEEP:
        d.qacc[i] = d.qacc_warmstart[i]


@unit((M, D, b1))
def forward_skip(m, d, skip_sensor):
  """Forward dynamics; `skip_sensor` leaves the sensors as they are (RK4's inner stages,
  mj_forwardSkip). The energy is computed either way, as MuJoCo does: after an RK4 step it is
  the last stage's. Timed as FORWARD."""
  t0 = tm.start(d)
  fwd_position(m, d)
  energypos = False   # an e_potential sensor computed it already
  if not skip_sensor:
    energypos = sensor.sensor_pos(m, d)
  if not energypos:
    if m.opt_enableflags[0] & _ENBL_ENERGY:
      energy.energy_pos(m, d)
    else:
      d.energy[0] = 0.0
      d.energy[1] = 0.0
  _after_position(m, d, skip_sensor)
  tm.end(d, tm.FORWARD, t0)


@unit((M, D, b1))
def forward_from_velocity(m, d, skip_sensor):
  """The stages after the position stage (mj_forwardSkip from mjSTAGE_POS), timed as a whole
  as FORWARD."""
  t0 = tm.start(d)
  _after_position(m, d, skip_sensor)
  tm.end(d, tm.FORWARD, t0)


@jit
def _after_position(m, d, skip_sensor):
  """The stages after the position stage, timed as MuJoCo times them (VELOCITY, ACTUATION,
  CONSTRAINT)."""
  t = tm.start(d)
  fwd_velocity(m, d)
  tm.end(d, tm.VELOCITY, t)
  if not skip_sensor:
    sensor.sensor_vel(m, d)
  if m.opt_enableflags[0] & _ENBL_ENERGY:
    energy.energy_vel(m, d)
  t = tm.start(d)
  fwd_actuation(m, d)
  tm.end(d, tm.ACTUATION, t)
  fwd_acceleration(m, d)
  t = tm.start(d)
  fwd_constraint(m, d)
  tm.end(d, tm.CONSTRAINT, t)
  if not skip_sensor:
    sensor.sensor_acc(m, d)


@unit((M, D))
def forward(m, d):
  """Full forward dynamics at the current state (mj_forward)."""
  forward_skip(m, d, False)
