"""Actuation (MuJoCo's mj_fwdActuation and mj_nextActivation): controls, activation dynamics
(integrator, filter, muscle, PID, DC motor), gains and biases (fixed, affine, muscle, PID,
DC motor, SO3 geodesic servo), force clamps and qfrc_actuator.

Layout (MuJoCo 4): actuator i reads ctrl[actuator_ctrladr[i] : +actuator_ctrlnum[i]] and writes
actuator_force[actuator_outadr[i] : +actuator_outnum[i]]; nu = sum(ctrlnum), nout = sum(outnum).
"""
import math

import numpy as np

from numjoco.engine import check
from numjoco.engine import history
from numjoco.engine import math as mm
from numjoco.engine import muscle
from numjoco.engine._jit import inline, jit
from numjoco.engine.types import (ints, mjtBias, mjtChart, mjtDisableBit, mjtDyn, mjtGain,
                                  mjtInput, mjtJoint, mjtTrn)
from numjoco.engine._sig import unit, M, D
from numjoco.engine.types import MINVAL as _MINVAL

_u = np.uintp   # an index known to be >= 0: no wraparound test on the load (shared/DESIGN.md)
_FREE, _BALL = ints(mjtJoint, "FREE BALL")
_DYN_NONE, _DYN_INTEGRATOR, _DYN_FILTER, _DYN_FILTEREXACT, _DYN_MUSCLE, _DYN_DCMOTOR, _DYN_PID = (
    ints(mjtDyn, "NONE INTEGRATOR FILTER FILTEREXACT MUSCLE DCMOTOR PID"))
_GAIN_FIXED, _GAIN_AFFINE, _GAIN_MUSCLE, _GAIN_DCMOTOR, _GAIN_SO3, _GAIN_PID = (
    ints(mjtGain, "FIXED AFFINE MUSCLE DCMOTOR SO3 PID"))
_BIAS_NONE, _BIAS_AFFINE, _BIAS_MUSCLE, _BIAS_DCMOTOR, _BIAS_SO3 = (
    ints(mjtBias, "NONE AFFINE MUSCLE DCMOTOR SO3"))
_TRN_JOINT, _TRN_JOINTINPARENT, _TRN_TENDON, _TRN_SITE = (
    ints(mjtTrn, "JOINT JOINTINPARENT TENDON SITE"))
_IN_POS, _IN_VEL, _IN_FF, _IN_VOLT = ints(mjtInput, "POS VEL FF VOLTAGE")
_CHART_QUAT = int(mjtChart.QUAT)
_DSBL_ACTUATION, _DSBL_CLAMPCTRL, _DSBL_GRAVITY = (
    ints(mjtDisableBit, "ACTUATION CLAMPCTRL GRAVITY"))


@jit
def _round(x):
  """C's round(): halves away from zero (mju_round)."""
  return math.copysign(math.floor(abs(x) + 0.5), x)


@inline
def _slot(present, k):
  """(offset of a state, next free offset): (k, k + 1) when the state is present, else (-1, k)."""
  if present:
    return k, k + 1
  return -1, k


@jit
def dcmotor_slots(dynprm, gainprm):
  """Offsets of a DC motor's states in its activation block (-1: absent), in the order slew,
  integral, temperature, bristle, current, and their count (mj_dcmotorSlots)."""
  slew, k = _slot(dynprm[7] > 0, 0)
  integral, k = _slot(gainprm[5] > 0, k)
  temp, k = _slot(dynprm[2] > 0, k)
  bristle, k = _slot(dynprm[5] > 0, k)
  current, k = _slot(dynprm[0] > 0, k)
  return slew, integral, temp, bristle, current, k


@jit
def _stribeck(v, fc, fs, vs):
  """LuGre's Stribeck curve g(v) (mj_lugreStribeck)."""
  r = v / max(_MINVAL, vs)
  return fc + (fs - fc) * math.exp(-r * r)


@jit
def next_activation(m, d, i, adr, act_dot):
  """Activation after one step (mj_nextActivation): filterexact and a DC motor's current
  integrated exactly, its LuGre bristle state by exact zero-order hold, its integral clamped
  to Imax; actrange clamps all but DC motors."""
  act = d.act[adr]
  h = m.opt_timestep[0]
  dt = m.actuator_dyntype[i]
  if dt == _DYN_FILTEREXACT:
    tau = max(_MINVAL, m.actuator_dynprm[i, 0])
    act = act + act_dot * tau * (1.0 - math.exp(-h / tau))
  elif dt == _DYN_DCMOTOR:
    dyn, gain, bias = m.actuator_dynprm[i], m.actuator_gainprm[i], m.actuator_biasprm[i]
    slots = dcmotor_slots(dyn, gain)
    off = adr - m.actuator_actadr[i]
    if off == slots[4]:
      te = max(_MINVAL, dyn[0])
      act = act + act_dot * te * (1.0 - math.exp(-h / te))
    elif off == slots[3]:
      # dz/dt = a z + v with a = -sigma0 |v| / g(v), held over the step
      v = d.actuator_velocity[m.actuator_outadr[i]]
      g = _stribeck(v, bias[3], bias[4], bias[5])
      a = -dyn[5] * abs(v) / max(_MINVAL, g)
      e = math.exp(a * h)
      integ = (e - 1.0) / a if abs(a) > _MINVAL else h
      act = e * act + integ * v
    elif off == slots[1]:
      act = act + act_dot * h
      imax = dyn[8]
      if imax > 0:
        act = -imax if act < -imax else (imax if act > imax else act)
    else:
      act = act + act_dot * h
  else:
    act = act + act_dot * h
  if dt != _DYN_DCMOTOR and m.actuator_actlimited[i]:
    lo, hi = m.actuator_actrange[i, 0], m.actuator_actrange[i, 1]
    act = lo if act < lo else (hi if act > hi else act)
  return act


@jit
def wrap_period(m, i):
  """Period of a rotational setpoint (servos and PIDs on a ball joint, or on a site with a
  refsite and purely rotational gear): 2 pi |gear|; 0 when setpoints are not wrapped."""
  dt = m.actuator_dyntype[i]
  gt = m.actuator_gaintype[i]
  servo = (gt == _GAIN_FIXED and m.actuator_biastype[i] == _BIAS_AFFINE
           and m.actuator_gainprm[i, 0] == -m.actuator_biasprm[i, 1]
           and (dt == _DYN_NONE or dt == _DYN_INTEGRATOR))
  if not servo and gt != _GAIN_PID:
    return 0.0
  g = m.actuator_gear[m.actuator_outadr[i]]
  trn = m.actuator_trntype[i]
  if (trn == _TRN_SITE and m.actuator_trnid[i, 1] >= 0 and g[0] == 0.0 and g[1] == 0.0
      and g[2] == 0.0):
    return 2 * math.pi * math.sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5])
  if ((trn == _TRN_JOINT or trn == _TRN_JOINTINPARENT)
      and m.jnt_type[m.actuator_trnid[i, 0]] == _BALL):
    return 2 * math.pi * math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2])
  return 0.0


@jit
def wrap_setpoint(u, length, period):
  """The representative of setpoint u nearest `length`."""
  return u - period * _round((u - length) / period)


@jit
def _slew_limit(u, u_prev, slew, h, period):
  """Rate-limited setpoint and its act_dot (slewLimit)."""
  if period > 0:
    u = wrap_setpoint(u, u_prev, period)
  s = slew * h
  lo, hi = u_prev - s, u_prev + s
  ueff = lo if u < lo else (hi if u > hi else u)
  return ueff, (ueff - u_prev) / h


@jit
def servo_inputs(ctrl, uadr, spec):
  """(pos, vel, ff, voltage) of a control block in canonical order; absent inputs are 0."""
  k = uadr
  pos = vel = ff = volt = 0.0
  if spec & _IN_POS:
    pos = ctrl[k]
    k += 1
  if spec & _IN_VEL:
    vel = ctrl[k]
    k += 1
  if spec & _IN_FF:
    ff = ctrl[k]
    k += 1
  if spec & _IN_VOLT:
    volt = ctrl[k]
  return pos, vel, ff, volt


@jit
def _dcmotor_voltage(ctrl, uadr, spec, length, vel, x_i, g):
  """Terminal voltage of a DC motor: its torque-space PID driven through R/K with back-EMF
  compensation and clamped to Vmax, plus the raw voltage input (dcmotorVoltage)."""
  pos, vref, ff, volt = servo_inputs(ctrl, uadr, spec)
  v = 0.0
  if spec & (_IN_POS | _IN_VEL | _IN_FF):
    torque = g[4] * (pos - length) + g[6] * (vref - vel) + g[5] * x_i + ff
    v = g[0] / g[1] * torque + g[1] * vel
    vmax = g[7]
    if vmax > 0:
      v = -vmax if v < -vmax else (vmax if v > vmax else v)
  return v + volt


@jit
def _read_ctrl(m, d):
  """d.ctrl_clamped: the controls actuation uses, clamped by ctrlrange, all zero if any is bad
  (mju_isBad; the first bad one counted as mjWARN_BADCTRL, as mj_fwdActuation does: d.ctrl
  keeps its values and nothing is reset). A delayed actuator's controls come from its history
  buffer at time - delay (mj_readCtrl), the others' from d.ctrl. Every force, dynamics and
  derivative reads this."""
  ctrl = d.ctrl_clamped
  for i in range(m.nactuator):
    uadr = m.actuator_ctrladr[i]
    if m.actuator_delay[i] != 0.0 and m.actuator_history[i, 0] > 0:
      history.read_ctrl_into(m, d, i, d.time[0], -1, ctrl[uadr:uadr + m.actuator_ctrlnum[i]])
    else:
      for k in range(uadr, uadr + m.actuator_ctrlnum[i]):
        ctrl[k] = d.ctrl[k]
  bad = -1
  clamp = not (m.opt_disableflags[0] & _DSBL_CLAMPCTRL)
  for k in range(m.nu):
    c = ctrl[k]
    if clamp and m.actuator_ctrllimited[k]:
      lo, hi = m.actuator_ctrlrange[k, 0], m.actuator_ctrlrange[k, 1]
      c = lo if c < lo else (hi if c > hi else c)
    if bad < 0 and check.is_bad(c):
      bad = k
    ctrl[k] = c
  if bad >= 0:
    check.warning(d, check.BADCTRL, bad)
    for k in range(m.nu):
      ctrl[k] = 0.0


@jit
def _pid_dynamics(m, d, i, ctrl, uadr, oadr, adr):
  """act_dot of a PID's states [slew, integral]; the slewed setpoint replaces ctrl[uadr]."""
  dyn = m.actuator_dynprm[i]
  period = wrap_period(m, i)
  if dyn[1] > 0:
    u, ad = _slew_limit(ctrl[uadr], d.act[adr], dyn[1], m.opt_timestep[0], period)
    ctrl[uadr] = u
    d.act_dot[adr] = ad
    adr += 1
  if m.actuator_gainprm[i, 0] > 0:
    err = ctrl[uadr] - d.actuator_length[oadr]
    if period > 0:
      err -= period * _round(err / period)
    imax = dyn[0]
    if imax > 0:
      z = d.act[adr]
      if z >= imax:
        err = min(err, 0.0)
      elif z <= -imax:
        err = max(err, 0.0)
    d.act_dot[adr] = err


@jit
def _dcmotor_dynamics(m, d, i, ctrl, uadr, oadr, first, last):
  """act_dot of a DC motor's states: slew, integral, temperature, bristle, current."""
  dyn, g = m.actuator_dynprm[i], m.actuator_gainprm[i]
  adr = first
  vel = d.actuator_velocity[oadr]
  R, K, te = g[0], g[1], dyn[0]
  if dyn[7] > 0:
    u, ad = _slew_limit(ctrl[uadr], d.act[adr], dyn[7], m.opt_timestep[0], 0.0)
    ctrl[uadr] = u
    d.act_dot[adr] = ad
    adr += 1
  x_i = 0.0
  if g[5] > 0:
    x_i = d.act[adr]
    ad = ctrl[uadr] - d.actuator_length[oadr]
    imax = dyn[8]
    if imax > 0:
      if x_i >= imax:
        ad = min(ad, 0.0)
      elif x_i <= -imax:
        ad = max(ad, 0.0)
    d.act_dot[adr] = ad
    adr += 1
  V = _dcmotor_voltage(ctrl, uadr, m.actuator_ctrlspec[i], d.actuator_length[oadr], vel, x_i, g)
  if dyn[2] > 0:
    T = d.act[adr]
    R *= 1 + g[2] * (T + dyn[4] - g[3])
    current = d.act[last] if te > 0 else (V - K * vel) / R
    d.act_dot[adr] = (R * current * current - T / dyn[2]) / dyn[3]
    adr += 1
  if dyn[5] > 0:
    b = m.actuator_biasprm[i]
    gs = _stribeck(vel, b[3], b[4], b[5])
    a = -dyn[5] * abs(vel) / max(_MINVAL, gs)
    d.act_dot[adr] = a * d.act[adr] + vel
    adr += 1
  if te > 0:
    idot = (V / R - K / R * vel - d.act[last]) / te
    dimax = dyn[1]
    if dimax > 0:
      idot = -dimax if idot < -dimax else (dimax if idot > dimax else idot)
    d.act_dot[last] = idot


@jit
def _pid_plugin_ctrl(m, d, i, actearly):
  """The setpoint of a `mujoco.pid` plugin actuator (Pid::GetCtrl): d.ctrl clamped by its
  ctrlrange, or its last activation when it has dynamics; slew-limited around the previous
  setpoint (kept in act) once time has started."""
  adr = m.actuator_actadr[i]
  if m.actuator_dyntype[i] == _DYN_NONE:
    k = m.actuator_ctrladr[i]
    u = d.ctrl[k]
    if m.actuator_ctrllimited[k]:
      lo, hi = m.actuator_ctrlrange[k, 0], m.actuator_ctrlrange[k, 1]
      u = lo if u < lo else (hi if u > hi else u)
  else:
    last = adr + m.actuator_actnum[i] - 1
    u = next_activation(m, d, i, last, d.act_dot[last]) if actearly else d.act[last]
  prm = m.actuator_pluginprm[i]
  if prm[4] >= 0 and d.time[0] > 0:
    prev = d.act[adr + (1 if prm[1] != 0 else 0)]
    lo, hi = prev - prm[4] * m.opt_timestep[0], prev + prm[4] * m.opt_timestep[0]
    u = lo if u < lo else (hi if u > hi else u)
  return u


@jit
def _pid_plugin_integral(m, d, i, err):
  """The error integral after this step, clamped (the PID plugin's state update)."""
  prm = m.actuator_pluginprm[i]
  z = d.act[m.actuator_actadr[i]] + err * m.opt_timestep[0]
  if prm[3] >= 0:
    z = -prm[3] if z < -prm[3] else (prm[3] if z > prm[3] else z)
  return z


@jit
def _pid_plugin_act_dot(m, d, i):
  """act_dot of a `mujoco.pid` plugin actuator's states [integral, previous setpoint]
  (Pid::ActDot): each moves to its new value in one step."""
  prm, h = m.actuator_pluginprm[i], m.opt_timestep[0]
  u = _pid_plugin_ctrl(m, d, i, False)
  adr = m.actuator_actadr[i]
  if prm[1] != 0:
    z = _pid_plugin_integral(m, d, i, u - d.actuator_length[m.actuator_outadr[i]])
    d.act_dot[adr] = (z - d.act[adr]) / h
    adr += 1
  if prm[4] >= 0:
    d.act_dot[adr] = (u - d.act[adr]) / h


@jit
def _pid_plugin_force(m, d, i):
  """actuator_force of a `mujoco.pid` plugin actuator (Pid::Compute): kp e + kd de/dt + ki z."""
  prm = m.actuator_pluginprm[i]
  oadr = m.actuator_outadr[i]
  u = _pid_plugin_ctrl(m, d, i, m.actuator_actearly[i])
  err = u - d.actuator_length[oadr]
  udot = 0.0
  if m.actuator_dyntype[i] != _DYN_NONE:
    udot = d.act_dot[m.actuator_actadr[i] + m.actuator_actnum[i] - 1]
  z = _pid_plugin_integral(m, d, i, err) if prm[1] != 0 else 0.0
  d.actuator_force[oadr] = prm[0] * err + prm[2] * (udot - d.actuator_velocity[oadr]) + prm[1] * z


@jit
def _act_dot(m, d, ctrl):
  """act_dot of every stateful actuator."""
  for i in range(m.nactuator):
    first = m.actuator_actadr[i]
    if first < 0:
      continue
    num = m.actuator_actnum[i]
    for k in range(first, first + num):
      d.act_dot[k] = 0.0
    last = first + num - 1
    uadr, oadr = m.actuator_ctrladr[i], m.actuator_outadr[i]
    dt = m.actuator_dyntype[i]
    if dt == _DYN_INTEGRATOR:
      n = m.actuator_ctrlnum[i]
      for j in range(n):
        d.act_dot[last - n + 1 + j] = ctrl[uadr + j]
    elif dt == _DYN_FILTER or dt == _DYN_FILTEREXACT:
      tau = max(_MINVAL, m.actuator_dynprm[i, 0])
      d.act_dot[last] = (ctrl[uadr] - d.act[last]) / tau
    elif dt == _DYN_MUSCLE:
      d.act_dot[last] = muscle.dynamics(ctrl[uadr], d.act[last], m.actuator_dynprm[i])
    elif dt == _DYN_PID:
      _pid_dynamics(m, d, i, ctrl, uadr, oadr, first)
    elif dt == _DYN_DCMOTOR:
      _dcmotor_dynamics(m, d, i, ctrl, uadr, oadr, first, last)
  for i in range(m.nactuator):   # actuator plugins, after the built-in dynamics
    if m.actuator_plugin[i] >= 0:
      _pid_plugin_act_dot(m, d, i)


@jit
def _expmap_quat(v0, v1, v2):
  """Unit quaternion of rotation vector v (expmap2Quat)."""
  angle = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
  if angle < _MINVAL:
    return 1.0, 0.0, 0.0, 0.0
  s = math.sin(angle * 0.5)
  return math.cos(angle * 0.5), v0 / angle * s, v1 / angle * s, v2 / angle * s


@jit
def _so3_force(m, d, i, ctrl):
  """SO3 geodesic servo: force = kp log(q_cur^-1 q_target) + const + kv * velocity, per output
  in the child frame."""
  uadr, oadr = m.actuator_ctrladr[i], m.actuator_outadr[i]
  if m.actuator_ctrlspec[i] == _CHART_QUAT:
    t0, t1, t2, t3 = mm.quat_normalize(ctrl[uadr], ctrl[uadr + 1], ctrl[uadr + 2],
                                       ctrl[uadr + 3])
  else:
    if m.actuator_dyntype[i] == _DYN_NONE:
      u0, u1, u2 = ctrl[uadr], ctrl[uadr + 1], ctrl[uadr + 2]
    else:
      a = m.actuator_actadr[i]
      if m.actuator_actearly[i]:
        u0 = next_activation(m, d, i, a, d.act_dot[a])
        u1 = next_activation(m, d, i, a + 1, d.act_dot[a + 1])
        u2 = next_activation(m, d, i, a + 2, d.act_dot[a + 2])
      else:
        u0, u1, u2 = d.act[a], d.act[a + 1], d.act[a + 2]
    t0, t1, t2, t3 = _expmap_quat(u0, u1, u2)
  L = d.actuator_length
  c0, c1, c2, c3 = _expmap_quat(L[oadr], L[oadr + 1], L[oadr + 2])
  e = mm.sub_quat4(t0, t1, t2, t3, c0, c1, c2, c3)
  kp = m.actuator_gainprm[i, 0]
  b = m.actuator_biasprm[i]
  for k in range(3):
    d.actuator_force[oadr + k] = kp * e[k] + b[0] + b[2] * d.actuator_velocity[oadr + k]


@jit
def _gain(m, d, i):
  """Gain of a single-output actuator (DC motor: K with a current state, else K / R(T))."""
  gt = m.actuator_gaintype[i]
  prm = m.actuator_gainprm[i]
  oadr = m.actuator_outadr[i]
  if gt == _GAIN_AFFINE:
    return prm[0] + prm[1] * d.actuator_length[oadr] + prm[2] * d.actuator_velocity[oadr]
  if gt == _GAIN_MUSCLE:
    return muscle.gain(d.actuator_length[oadr], d.actuator_velocity[oadr],
                       m.actuator_lengthrange[oadr, 0], m.actuator_lengthrange[oadr, 1],
                       m.actuator_acc0[oadr], prm)
  if gt == _GAIN_PID:
    return 0.0
  if gt == _GAIN_DCMOTOR:
    dyn = m.actuator_dynprm[i]
    slots = dcmotor_slots(dyn, prm)
    adr = m.actuator_actadr[i]
    R, K = prm[0], prm[1]
    if slots[2] >= 0:
      R *= 1 + prm[2] * (d.act[adr + slots[2]] + dyn[4] - prm[3])
    return K if dyn[0] > 0 else K / max(_MINVAL, R)
  return prm[0]


@jit
def _siso_force(m, d, i, ctrl):
  """gain * (ctrl or act) + bias of a single-output actuator (PID: its servo terms)."""
  oadr, uadr = m.actuator_outadr[i], m.actuator_ctrladr[i]
  gt = m.actuator_gaintype[i]
  gain = _gain(m, d, i)
  actnum = m.actuator_actnum[i]
  length = d.actuator_length[oadr]
  if gt == _GAIN_PID:
    b = m.actuator_biasprm[i]
    qref, vref, ff, _ = servo_inputs(ctrl, uadr, m.actuator_ctrlspec[i])
    period = wrap_period(m, i)
    if period > 0:
      qref = wrap_setpoint(qref, length, period)
    force = -b[1] * qref - b[2] * vref + ff
    ki = m.actuator_gainprm[i, 0]
    if actnum and ki > 0:
      a = m.actuator_actadr[i] + actnum - 1
      z = next_activation(m, d, i, a, d.act_dot[a]) if m.actuator_actearly[i] else d.act[a]
      force += ki * z
  elif actnum == 0 or (gt == _GAIN_DCMOTOR and m.actuator_dynprm[i, 0] <= 0):
    u = ctrl[uadr] if m.actuator_ctrlnum[i] else 0.0
    spec = m.actuator_ctrlspec[i]
    if gt == _GAIN_DCMOTOR and spec != _IN_VOLT and m.actuator_ctrlnum[i] > 0:
      # the controller's terminal voltage is the input (ctrl keeps the setpoints)
      slot = dcmotor_slots(m.actuator_dynprm[i], m.actuator_gainprm[i])[1]
      x_i = d.act[m.actuator_actadr[i] + slot] if slot >= 0 else 0.0
      u = _dcmotor_voltage(ctrl, uadr, spec, length, d.actuator_velocity[oadr], x_i,
                           m.actuator_gainprm[i])
    period = wrap_period(m, i)
    if period > 0:
      u = wrap_setpoint(u, length, period)
    force = gain * u
  else:
    a = m.actuator_actadr[i] + actnum - 1
    act = next_activation(m, d, i, a, d.act_dot[a]) if m.actuator_actearly[i] else d.act[a]
    period = wrap_period(m, i)
    if period > 0:
      act = wrap_setpoint(act, length, period)
    force = gain * act
  bt = m.actuator_biastype[i]
  bprm = m.actuator_biasprm[i]
  vel = d.actuator_velocity[oadr]
  if bt == _BIAS_AFFINE:
    force += bprm[0] + bprm[1] * length + bprm[2] * vel
  elif bt == _BIAS_MUSCLE:
    force += muscle.bias(length, m.actuator_lengthrange[oadr, 0],
                         m.actuator_lengthrange[oadr, 1], m.actuator_acc0[oadr], bprm)
  elif bt == _BIAS_DCMOTOR and m.actuator_dynprm[i, 0] <= 0:
    force -= gain * m.actuator_gainprm[i, 1] * vel   # back-EMF of the stateless motor
  d.actuator_force[oadr] = force


@jit
def actuator_disabled(m, i):
  """Whether actuator i's group (0..30) is in opt.disableactuator (mj_actuatorDisabled): it
  then gives no force and its activation is held."""
  g = m.actuator_group[i]
  return 0 <= g <= 30 and (m.opt_disableactuator[0] >> g) & 1 == 1


@jit
def _clamp_forces(m, d):
  """forcerange: per output, or on the torque's norm for SO3 servos."""
  for i in range(m.nactuator):
    if not m.actuator_forcelimited[i]:
      continue
    lo, hi = m.actuator_forcerange[i, 0], m.actuator_forcerange[i, 1]
    oadr = m.actuator_outadr[i]
    f = d.actuator_force
    if m.actuator_gaintype[i] == _GAIN_SO3:
      nrm = math.sqrt(f[oadr] ** 2 + f[oadr + 1] ** 2 + f[oadr + 2] ** 2)
      if nrm > hi:
        for k in range(3):
          f[oadr + k] *= hi / nrm
    else:
      for k in range(oadr, oadr + m.actuator_outnum[i]):
        f[k] = lo if f[k] < lo else (hi if f[k] > hi else f[k])


@jit
def _dcmotor_mechanical(m, d):
  """Cogging torque and LuGre friction of DC motors, added after the force clamps."""
  for i in range(m.nactuator):
    if m.actuator_biastype[i] != _BIAS_DCMOTOR or actuator_disabled(m, i):
      continue
    b, dyn = m.actuator_biasprm[i], m.actuator_dynprm[i]
    oadr = m.actuator_outadr[i]
    if b[0] != 0.0:
      d.actuator_force[oadr] += b[0] * math.sin(b[1] * d.actuator_length[oadr] + b[2])
    if dyn[5] > 0:
      a = m.actuator_actadr[i] + dcmotor_slots(dyn, m.actuator_gainprm[i])[3]
      d.actuator_force[oadr] -= dyn[5] * d.act[a] + dyn[6] * d.act_dot[a]


@unit((M, D))
def fwd_actuation(m, d):
  """actuator_force, act_dot and qfrc_actuator from ctrl, act and the transmission."""
  for k in range(m.nout):
    d.actuator_force[k] = 0.0
  for k in range(m.nv):
    d.qfrc_actuator[k] = 0.0
  if m.nactuator == 0 or (m.opt_disableflags[0] & _DSBL_ACTUATION):
    return
  _read_ctrl(m, d)
  ctrl = d.ctrl_clamped
  _act_dot(m, d, ctrl)
  tendon_frclimited = False
  for i in range(m.nactuator):
    if actuator_disabled(m, i) or m.actuator_plugin[i] >= 0:
      continue
    if m.actuator_gaintype[i] == _GAIN_SO3:
      _so3_force(m, d, i, ctrl)
      continue
    if m.actuator_trntype[i] == _TRN_TENDON and m.tendon_actfrclimited[m.actuator_trnid[i, 0]]:
      tendon_frclimited = True
    _siso_force(m, d, i, ctrl)
  for i in range(m.nactuator):   # plugins compute after the built-in types (even disabled ones)
    if m.actuator_plugin[i] >= 0:
      _pid_plugin_force(m, d, i)
  if tendon_frclimited:
    _clamp_tendon_actuator_force(m, d)
  _clamp_forces(m, d)
  _dcmotor_mechanical(m, d)
  for k in range(m.nout):
    f = d.actuator_force[k]
    a0 = _u(d.moment_rowadr[k])
    for a in range(a0, a0 + _u(d.moment_rownnz[k])):
      d.qfrc_actuator[_u(d.moment_colind[a])] += d.actuator_moment[a] * f
  g = m.opt_gravity
  if not (m.opt_disableflags[0] & _DSBL_GRAVITY) and (g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0):
    for j in range(m.njnt):
      if m.jnt_actgravcomp[j]:
        jt = m.jnt_type[j]
        n = 6 if jt == _FREE else (3 if jt == _BALL else 1)
        for k in range(m.jnt_dofadr[j], m.jnt_dofadr[j] + n):
          d.qfrc_actuator[k] += d.qfrc_gravcomp[k]
  for j in range(m.njnt):
    if m.jnt_actfrclimited[j]:
      jt = m.jnt_type[j]
      n = 6 if jt == _FREE else (3 if jt == _BALL else 1)
      lo, hi = m.jnt_actfrcrange[j, 0], m.jnt_actfrcrange[j, 1]
      for k in range(m.jnt_dofadr[j], m.jnt_dofadr[j] + n):
        f = d.qfrc_actuator[k]
        d.qfrc_actuator[k] = lo if f < lo else (hi if f > hi else f)


@jit
def _clamp_tendon_actuator_force(m, d):
  """Scale forces of actuators on a force-limited tendon so their sum stays in range."""
  for t in range(m.ntendon):
    s = 0.0
    for i in range(m.nactuator):
      if m.actuator_trntype[i] == _TRN_TENDON and m.actuator_trnid[i, 0] == t:
        s += d.actuator_force[m.actuator_outadr[i]]
    if not m.tendon_actfrclimited[t] or s == 0.0:
      continue
    lo, hi = m.tendon_actfrcrange[t, 0], m.tendon_actfrcrange[t, 1]
    scale = lo / s if s < lo else (hi / s if s > hi else 1.0)
    for i in range(m.nactuator):
      if m.actuator_trntype[i] == _TRN_TENDON and m.actuator_trnid[i, 0] == t:
        d.actuator_force[m.actuator_outadr[i]] *= scale


@jit
def advance_act(m, d, act_dot):
  """act <- next activation of every actuator; setpoints on rotational transmissions that an
  integrator keeps in act are moved to their representative nearest the length, SO3 ones to an
  angle of at most pi (mj_advance)."""
  for i in range(m.nactuator):
    adr = m.actuator_actadr[i]
    if adr < 0:
      continue
    disabled = actuator_disabled(m, i)
    for j in range(adr, adr + m.actuator_actnum[i]):
      d.act[j] = next_activation(m, d, i, j, 0.0 if disabled else act_dot[j])
  for i in range(m.nactuator):
    if m.actuator_dyntype[i] != _DYN_INTEGRATOR:
      continue
    period = wrap_period(m, i)
    if period > 0:
      adr = m.actuator_actadr[i] + m.actuator_actnum[i] - 1
      d.act[adr] = wrap_setpoint(d.act[adr], d.actuator_length[m.actuator_outadr[i]], period)
    elif m.actuator_gaintype[i] == _GAIN_SO3:
      adr = m.actuator_actadr[i]
      angle = math.sqrt(d.act[adr] ** 2 + d.act[adr + 1] ** 2 + d.act[adr + 2] ** 2)
      if angle > math.pi:
        scale = (angle - 2 * math.pi * _round(angle / (2 * math.pi))) / angle
        for k in range(3):
          d.act[adr + k] *= scale
