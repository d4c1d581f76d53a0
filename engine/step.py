"""Integration and the physics step (MuJoCo's mj_step and its integrators in engine_forward.c):
euler, rk4, implicit (and the discrete integrator's update), sensor history, the step itself
with MuJoCo's checks of the state (engine/check.py) and `step(m, d, nstep)`, the compiled loop
behind numjoco.step. Forward dynamics is engine/forward.py; under the FWDINV flag the step
compares it with inverse dynamics (engine/inverse.py) as mj_step does."""

from numjoco.engine import actuation
from numjoco.engine import check
from numjoco.engine import derivative
from numjoco.engine import forward as fwd
from numjoco.engine import history
from numjoco.engine import inverse
from numjoco.engine import math as mm
from numjoco.engine import passive as ps
from numjoco.engine import perturb
from numjoco.engine import sensor
from numjoco.engine import timer as tm
from numjoco.engine import sleep
from numjoco.engine import smooth
from numjoco.engine import state
from numjoco.engine._jit import jit
from numjoco.engine.types import ints, mjtDisableBit, mjtEnableBit, mjtIntegrator, mjtJoint
from numjoco.engine._sig import unit, M, D, b1, i8, f8v, f8m, NEEDS_IMPLICIT, NEEDS_RK4

_FREE, _BALL = ints(mjtJoint, "FREE BALL")
_DSBL_ACTUATION, _DSBL_EULERDAMP, _DSBL_DAMPER = ints(mjtDisableBit, "ACTUATION EULERDAMP DAMPER")
_ENBL_FWDINV = int(mjtEnableBit.FWDINV)
_INT_RK4, _INT_IMPLICIT, _INT_IMPLICITFAST, _INT_DISCRETE = (
    ints(mjtIntegrator, "RK4 IMPLICIT IMPLICITFAST DISCRETE"))


@jit
def _integrate_joint(m, qpos, qvel, h, j):
  """qpos of joint j <- qpos (+) qvel*h on the joint manifold (quaternions rotated, not added)."""
  pa = m.jnt_qposadr[j]
  va = m.jnt_dofadr[j]
  jt = m.jnt_type[j]
  if jt == _FREE:
    for k in range(3):
      qpos[pa + k] += h * qvel[va + k]
    mm.quat_integrate(qpos, pa + 3, qvel[va + 3], qvel[va + 4], qvel[va + 5], h)
  elif jt == _BALL:
    mm.quat_integrate(qpos, pa, qvel[va], qvel[va + 1], qvel[va + 2], h)
  else:
    qpos[pa] += h * qvel[va]


@jit
def integrate_pos(m, qpos, qvel, h):
  """qpos <- qpos (+) qvel*h on the joint manifold (quaternions rotated, not added)."""
  for j in range(m.njnt):
    _integrate_joint(m, qpos, qvel, h, j)


@jit
def integrate_pos_awake(m, d, qpos, qvel, h):
  """integrate_pos for the joints of awake bodies only (sleeping trees keep their qpos)."""
  for j in range(m.njnt):
    if d.body_awake[m.jnt_bodyid[j]] == sleep.AWAKE:
      _integrate_joint(m, qpos, qvel, h, j)


@unit((M, D), i8)
def sleep_init(m, d):
  """Put the trees with sleep policy 'init' to sleep at the reset state (mj_resetData): a full
  forward, then one sleep pass with only those trees ready; returns the number slept."""
  sleep.update(m, d, True)
  fwd.forward(m, d)
  for i in range(m.ntree):
    d.tree_asleep[i] = -1 if m.tree_sleep_policy[i] == sleep.POLICY_INIT else sleep.AWAKE_VALUE
  n = sleep.sleep(m, d)
  for i in range(m.nv):
    d.qacc_smooth[i] = 0.0
    d.qfrc_smooth[i] = 0.0
  d.nefc[0] = 0
  d.ne[0] = 0
  d.nf[0] = 0
  d.nl[0] = 0
  d.nisland[0] = 0
  sleep.update(m, d)
  return n


@jit
def _sensor_due(m, d, i):
  """Whether sensor i's buffer takes a sample at d.time: always, or for an interval sensor
  once its period has passed since its last computation time (the buffer's user slot)."""
  period = m.sensor_interval[i, 0]
  return period <= 0 or d.history[m.sensor_historyadr[i]] + period <= d.time[0]


@unit((M, D))
def presample_history(m, d):
  """d.history_sensordata = the values of the delayed sensors due this step, at the current
  state: RK4 calls it before its stages, whose forward passes overwrite what sensors read
  (MuJoCo's buffers hold the values of the step's start state)."""
  for i in range(m.nsensor):
    if m.sensor_history[i, 0] > 0 and m.sensor_delay[i] > 0 and _sensor_due(m, d, i):
      adr = m.sensor_adr[i]
      sensor.compute_sensor(m, d, i, d.history_sensordata[adr:adr + m.sensor_dim[i]])


@unit((M, D, b1))
def advance_history(m, d, presampled):
  """Append this step's sample at d.time to every history buffer (mj_advance): an actuator's
  raw controls; a sensor's sensordata, or its value computed now (`presampled`: taken from
  d.history_sensordata) when sensordata holds a delayed reading; an interval sensor only when
  due, its last computation time then advanced by exactly one period."""
  t = d.time[0]
  for i in range(m.nactuator):
    n = m.actuator_history[i, 0]
    if n <= 0:
      continue
    dim, uadr, adr = m.actuator_ctrlnum[i], m.actuator_ctrladr[i], m.actuator_historyadr[i]
    buf = d.history[adr:adr + history.size(n, dim)]
    off = history.insert(buf, n, dim, t)
    for k in range(dim):
      buf[off + k] = d.ctrl[uadr + k]
  for i in range(m.nsensor):
    n = m.sensor_history[i, 0]
    if n <= 0:
      continue
    dim, adr = m.sensor_dim[i], m.sensor_historyadr[i]
    buf = d.history[adr:adr + history.size(n, dim)]
    if not _sensor_due(m, d, i):
      continue
    period = m.sensor_interval[i, 0]
    if period > 0:
      buf[0] += period
    off = history.insert(buf, n, dim, t)
    sadr = m.sensor_adr[i]
    if m.sensor_delay[i] > 0 and not presampled:
      sensor.compute_sensor(m, d, i, buf[off:off + dim])
    else:
      src = d.history_sensordata if m.sensor_delay[i] > 0 else d.sensordata
      for k in range(dim):
        buf[off + k] = src[sadr + k]


@unit((M, D, f8v, f8v, f8v, b1, b1))
def advance(m, d, act_dot, qacc, qvel_for_pos, use_given_qvel, presampled):
  """Advance the history buffers, act, qvel, qpos and time by one step (mj_advance);
  `presampled`: the delayed sensors' samples are in d.history_sensordata (RK4)."""
  if m.nhistory > 0:
    advance_history(m, d, presampled)
  if m.na and not (m.opt_disableflags[0] & _DSBL_ACTUATION):
    actuation.advance_act(m, d, act_dot)
  h = m.opt_timestep[0]
  acc = qacc
  if sleep.sleep(m, d):
    # trees were put to sleep (qvel zeroed): the velocity-dependent stages again, then the
    # awake lists; the step goes on with the qacc it had (mj_advance)
    acc = d.sleep_qacc
    for i in range(m.nv):
      acc[i] = qacc[i]
    fwd.forward_from_velocity(m, d, False)
    sleep.update(m, d)
  qvel_pos = qvel_for_pos if use_given_qvel else d.qvel
  if sleep.filtering(m, d):
    for k in range(d.nv_awake[0]):
      i = d.dof_awake_ind[k]
      d.qvel[i] += acc[i] * h
    integrate_pos_awake(m, d, d.qpos, qvel_pos, h)
  else:
    for i in range(m.nv):
      d.qvel[i] += acc[i] * h
    integrate_pos(m, d.qpos, qvel_pos, h)
  ps.plastic_update(m, d, qvel_pos, h)
  d.time[0] += h
  for i in range(m.nv):
    d.qacc_warmstart[i] = d.qacc[i]


@unit((M, D))
def euler(m, d):
  """Semi-implicit Euler, with joint damping integrated implicitly as MuJoCo does (mj_Euler)."""
  qacc = d.scratch_nv[0]
  has_damping = False
  flags = m.opt_disableflags[0]
  if not (flags & _DSBL_EULERDAMP) and not (flags & _DSBL_DAMPER):
    for i in range(m.nv):
      if (m.dof_damping[i] > 0 or m.dof_dampingpoly[i, 0] != 0.0 or m.dof_dampingpoly[i, 1] != 0.0
          or m.jnt_actuatorid[m.dof_jntid[i]] != -1):
        has_damping = True
        break
  if not has_damping:
    for i in range(m.nv):
      qacc[i] = d.qacc[i]
  else:
    poly = d.scratch_small[0:ps.NPOLY]
    for k in range(m.nC):
      d.qH[k] = d.M[k]
    h = m.opt_timestep[0]
    for i in range(m.nv):
      damping = ps.dof_damping(m, i, poly)
      d.qH[m.M_rowadr[i] + m.M_rownnz[i] - 1] += h * ps.d_xpoly_force(damping, poly, d.qvel[i], True)
    smooth.warn_inertia(d, smooth.factor_i(d.qH, d.qHDiagInv, m.M_rownnz, m.M_rowadr,
                                           m.M_colind, m.nv))
    for i in range(m.nv):
      qacc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
    smooth.solve_ld(qacc, d.qH, d.qHDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind, m.nv)
  advance(m, d, d.act_dot, qacc, qacc, False, False)


@jit
def _rkmk_correct(m, vel, i, scale):
  """Munthe-Kaas correction of stage i's angular velocities of ball and free joints: the stage
  was formed by rotating by theta = scale * vel[i-1], so its slope in the Lie algebra is
  dexp^-1(theta, w) = w + theta x w / 2 + theta x (theta x w) / 12 (MuJoCo 4's RK4)."""
  for j in range(m.njnt):
    jt = m.jnt_type[j]
    if jt != _FREE and jt != _BALL:
      continue
    v = m.jnt_dofadr[j] + (3 if jt == _FREE else 0)
    t0, t1, t2 = scale * vel[i - 1, v], scale * vel[i - 1, v + 1], scale * vel[i - 1, v + 2]
    w0, w1, w2 = vel[i, v], vel[i, v + 1], vel[i, v + 2]
    c0, c1, c2 = mm.cross(t0, t1, t2, w0, w1, w2)
    e0, e1, e2 = mm.cross(t0, t1, t2, c0, c1, c2)
    vel[i, v] = w0 + 0.5 * c0 + e0 / 12.0
    vel[i, v + 1] = w1 + 0.5 * c1 + e1 / 12.0
    vel[i, v + 2] = w2 + 0.5 * c2 + e2 / 12.0


@unit((M, D), needs=NEEDS_RK4)
def rk4(m, d):
  """Classic 4th-order Runge-Kutta over (qpos, qvel, act) (mj_RungeKutta, N=4)."""
  nq, nv, na = m.nq, m.nv, m.na
  h = m.opt_timestep[0]
  t0 = d.time[0]
  a_coef = (0.5, 0.5, 1.0)
  b_coef = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)
  x0q, x0v, x0a = d.rk4_qpos, d.rk4_qvel, d.rk4_act
  if m.nhistory > 0:
    presample_history(m, d)
  vel, acc, actd = d.rk4_dqvel, d.rk4_dqacc, d.rk4_dact
  for k in range(nq):
    x0q[k] = d.qpos[k]
  for k in range(nv):
    x0v[k] = d.qvel[k]
    vel[0, k] = d.qvel[k]
    acc[0, k] = d.qacc[k]
  for k in range(na):
    x0a[k] = d.act[k]
    actd[0, k] = d.act_dot[k]
  # the activation update sees the initial state's actuator lengths and velocities (as in
  # MuJoCo: a DC motor's LuGre state is integrated with them)
  for k in range(m.nout):
    d.rk4_actstate[0, k] = d.actuator_length[k]
    d.rk4_actstate[1, k] = d.actuator_velocity[k]
  # and the plastic tendons' update sees the initial tendon lengths and Jacobian (MuJoCo
  # leaves them as they were before the stages)
  for k in range(m.ntendon):
    d.rk4_ten_length[k] = d.ten_length[k]
  for k in range(d.ten_J.shape[0]):
    d.rk4_ten_J[k] = d.ten_J[k]
  dq = d.scratch_nv[1]
  for i in range(1, 4):
    a = a_coef[i - 1]
    # stage state: X0 + h*a*F[i-1]
    for k in range(nq):
      d.qpos[k] = x0q[k]
    for k in range(nv):
      dq[k] = a * vel[i - 1, k]
    integrate_pos(m, d.qpos, dq, h)
    for k in range(nv):
      d.qvel[k] = x0v[k] + h * a * acc[i - 1, k]
    for k in range(na):
      d.act[k] = x0a[k] + h * a * actd[i - 1, k]
    d.time[0] = t0 + a * h
    fwd.forward_skip(m, d, True)
    for k in range(nv):
      vel[i, k] = d.qvel[k]
      acc[i, k] = d.qacc[k]
    _rkmk_correct(m, vel, i, h * a)
    for k in range(na):
      actd[i, k] = d.act_dot[k]
  dqacc = d.scratch_nv[2]
  dact = d.rk4_dact[0]
  for k in range(nv):
    dq[k] = 0.0
    dqacc[k] = 0.0
    for j in range(4):
      dq[k] += b_coef[j] * vel[j, k]
      dqacc[k] += b_coef[j] * acc[j, k]
  # combined act_dot goes in row 0 of rk4_dact once all stages have been read
  for k in range(na):
    s = 0.0
    for j in range(4):
      s += b_coef[j] * actd[j, k]
    actd[0, k] = s
  d.time[0] = t0
  for k in range(nq):
    d.qpos[k] = x0q[k]
  for k in range(nv):
    d.qvel[k] = x0v[k]
  for k in range(na):
    d.act[k] = x0a[k]
  for k in range(m.nout):
    d.actuator_length[k] = d.rk4_actstate[0, k]
    d.actuator_velocity[k] = d.rk4_actstate[1, k]
  for k in range(m.ntendon):
    d.ten_length[k] = d.rk4_ten_length[k]
  for k in range(d.ten_J.shape[0]):
    d.ten_J[k] = d.rk4_ten_J[k]
  advance(m, d, dact, dqacc, dq, True, True)
  # MuJoCo 4.0 leaves the step's combined acceleration in qacc, (qvel' - qvel) / h, while
  # qacc_warmstart (saved by advance) and act_dot keep the last stage's (its published source
  # leaves the last stage's qacc)
  for k in range(nv):
    d.qacc[k] = dqacc[k]


@unit((M, D), needs=NEEDS_IMPLICIT)
def implicit(m, d):
  """Implicit-in-velocity integration: (M - h D) qacc = f (implicit / implicitfast)."""
  qacc = d.scratch_nv[0]
  derivative.implicit_qacc(m, d, qacc)
  advance(m, d, d.act_dot, qacc, qacc, False, False)


@unit((M, D, i8), i8)
def step_once(m, d, resume):
  """One physics step (mj_step): check qpos and qvel, forward, check qacc, then the model's
  integrator; under the FWDINV enable flag, solver_fwdinv compares forward and inverse dynamics
  before it. Returns -1 once the step is done. A check that finds a bad value with autoreset on
  stops the step there and returns its warning (check.BADQPOS, BADQVEL or BADQACC): the caller
  resets Data (mj_resetData) and calls again with `resume` = that warning, and the step goes on
  where mj_step goes on after its reset (after BADQACC: forward again, qacc not checked).
  Timed as STEP, the integrator as ADVANCE but for RK4 (as MuJoCo; a step stopped by a check is
  not counted)."""
  t0 = tm.start(d)
  if resume < 0 and check.check_pos(m, d) >= 0 and check.autoreset(m):
    return check.BADQPOS
  if resume != check.BADQVEL and resume != check.BADQACC:
    if check.check_vel(m, d) >= 0 and check.autoreset(m):
      return check.BADQVEL
  fwd.forward(m, d)
  if resume != check.BADQACC and check.check_acc(m, d) >= 0 and check.autoreset(m):
    return check.BADQACC
  if m.opt_enableflags[0] & _ENBL_FWDINV:
    inverse.fwd_inv_stats(m, d)
  integ = m.opt_integrator[0]
  t = tm.start(d)
  if integ == _INT_RK4:
    rk4(m, d)
  elif integ == _INT_IMPLICIT or integ == _INT_IMPLICITFAST:
    implicit(m, d)
  elif integ == _INT_DISCRETE:
    # qacc is the step map (v+ - v) / h: the metric already made the update implicit
    advance(m, d, d.act_dot, d.qacc, d.qacc, False, False)
  else:
    euler(m, d)
  if integ != _INT_RK4:    # MuJoCo's mj_RungeKutta has no ADVANCE timer
    tm.end(d, tm.ADVANCE, t)
  tm.end(d, tm.STEP, t0)
  return -1


@unit((M, D, i8), i8)
def step(m, d, nstep):
  """`nstep` physics steps in one compiled call; returns the number of steps done, which is
  nstep unless a check stopped step s (autoreset on): then s, with the check's warning counted
  (see `step_once`; numjoco.engine.api resets Data and finishes that step)."""
  for s in range(nstep):
    if d.pert_active[0]:
      # the viewer's mouse spring, recomputed every substep (MuJoCo's simulate applies it
      # before each mj_step, from the previous step's kinematics)
      perturb.apply_perturb_pose(m, d, False)
      perturb.apply_perturb_force(m, d)
    else:
      perturb.clear_perturb_force(m, d)
    if step_once(m, d, -1) >= 0:
      return s
  return nstep


@unit((M, D, i8, f8m, i8), i8)
def step_record(m, d, nstep, rows, start):
  """`step`, writing the INTEGRATION state (engine/state.py's layout) after step s into row
  (start + s) % len(rows): the viewer's history of recent states."""
  for s in range(nstep):
    if step(m, d, 1) < 1:
      return s
    state.write_state(m, d, rows[(start + s) % rows.shape[0]])
  return nstep
