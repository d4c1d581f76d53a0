"""Forward dynamics (MuJoCo's mj_forward in engine_forward.c): its stages fwd_position,
fwd_velocity, fwd_actuation, fwd_acceleration and fwd_constraint, and forward. The
integrators and the step are engine/step.py."""

from numjoco.engine import actuation
from numjoco.engine import collision_driver
from numjoco.engine import constraint
from numjoco.engine import discrete
from numjoco.engine import energy
from numjoco.engine import flex as flexmod
from numjoco.engine import passive as ps
from numjoco.engine import sensor
from numjoco.engine import sleep
from numjoco.engine import smooth
from numjoco.engine import solver
from numjoco.engine.smooth import jit
from numjoco.engine.types import mjtDisableBit, mjtEnableBit, mjtIntegrator
from numjoco.engine._sig import unit, M, D, b1

_DSBL_ACTUATION = int(mjtDisableBit.ACTUATION)
_ENBL_ENERGY = int(mjtEnableBit.ENERGY)
_INT_DISCRETE = int(mjtIntegrator.DISCRETE)


@unit((M, D))
def fwd_position(m, d):
  """Position-dependent stages: kinematics, com_pos, camlight, flex, tendon, M and its factor,
  collision, constraint rows, transmission."""
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
  smooth.crb(m, d)
  smooth.factor_m(m, d)
  collision_driver.collision(m, d)
  if sleep.wake_collision(m, d):
    sleep.update(m, d)
    collision_driver.collision(m, d)
  if sleep.wake_equality(m, d):
    sleep.update(m, d)
  constraint.make_constraint(m, d)
  constraint.project_constraint(m, d)
  smooth.transmission(m, d)


@unit((M, D))
def fwd_velocity(m, d):
  """Velocity-dependent stages: tendon/actuator velocity, com_vel, passive, rne bias."""
  for i in range(m.ntendon):
    s = 0.0
    for a in range(m.ten_J_rowadr[i], m.ten_J_rowadr[i] + m.ten_J_rownnz[i]):
      s += d.ten_J[a] * d.qvel[m.ten_J_colind[a]]
    d.ten_velocity[i] = s
  flexmod.edge_velocity(m, d)
  actuated = not (m.opt_disableflags[0] & _DSBL_ACTUATION)
  for i in range(m.nout):
    s = 0.0
    if actuated:
      for a in range(d.moment_rowadr[i], d.moment_rowadr[i] + d.moment_rownnz[i]):
        s += d.actuator_moment[a] * d.qvel[d.moment_colind[a]]
    d.actuator_velocity[i] = s
  smooth.com_vel(m, d)
  ps.passive(m, d)
  constraint.reference_constraint(m, d)
  smooth.rne(m, d, False, d.qfrc_bias)
  _tendon_bias(m, d)


@jit
def _tendon_bias(m, d):
  """Bias force of tendon armature: qfrc_bias += ten_J' * armature * (dJ/dt qvel)
  (mj_tendonBias)."""
  for t in range(m.ntendon):
    arm = m.tendon_armature[t] + smooth._actuator_armature(m, t, True)
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


@unit((M, D))
def fwd_constraint(m, d):
  """Constraint stage: the model's solver gives qacc, efc_force, qfrc_constraint (and the
  discrete integrator's unconstrained free bodies their gyroscopic solve)."""
  solver.fwd_constraint(m, d)
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
  the last stage's."""
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
  forward_from_velocity(m, d, skip_sensor)


@unit((M, D, b1))
def forward_from_velocity(m, d, skip_sensor):
  """The stages after the position stage (mj_forwardSkip from mjSTAGE_POS)."""
  fwd_velocity(m, d)
  if not skip_sensor:
    sensor.sensor_vel(m, d)
  if m.opt_enableflags[0] & _ENBL_ENERGY:
    energy.energy_vel(m, d)
  fwd_actuation(m, d)
  fwd_acceleration(m, d)
  fwd_constraint(m, d)
  if not skip_sensor:
    sensor.sensor_acc(m, d)


@unit((M, D))
def forward(m, d):
  """Full forward dynamics at the current state (mj_forward)."""
  forward_skip(m, d, False)
