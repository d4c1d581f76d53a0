from numjoco.engine.types import MINVAL
"""MuJoCo's muscle model (engine_util_misc.c): active force-length-velocity gain, passive
force, activation dynamics, and the gain's velocity derivative (engine_derivative.c).

prm = (range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax); force < 0 means
scale / actuator_acc0.
"""

from numjoco.engine._jit import jit


@jit
def gain_length(length, lmin, lmax):
  """Normalised length-gain curve, 1 at length 1 (mju_muscleGainLength)."""
  if lmin <= length <= lmax:
    a = 0.5 * (lmin + 1)
    b = 0.5 * (1 + lmax)
    if length <= a:
      x = (length - lmin) / max(MINVAL, a - lmin)
      return 0.5 * x * x
    if length <= 1:
      x = (1 - length) / max(MINVAL, 1 - a)
      return 1 - 0.5 * x * x
    if length <= b:
      x = (length - 1) / max(MINVAL, b - 1)
      return 1 - 0.5 * x * x
    x = (lmax - length) / max(MINVAL, lmax - b)
    return 0.5 * x * x
  return 0.0


@jit
def _scaled(length, lr0, lr1, acc0, prm):
  """(force, L0, normalised length) shared by gain and bias."""
  force = prm[2]
  if force < 0:
    force = prm[3] / max(MINVAL, acc0)
  L0 = (lr1 - lr0) / max(MINVAL, prm[1] - prm[0])
  L = prm[0] + (length - lr0) / max(MINVAL, L0)
  return force, L0, L


@jit
def gain(length, vel, lr0, lr1, acc0, prm):
  """Active muscle force per unit activation, negative (mju_muscleGain)."""
  force, L0, L = _scaled(length, lr0, lr1, acc0, prm)
  V = vel / max(MINVAL, L0 * prm[6])
  FL = gain_length(L, prm[4], prm[5])
  fvmax = prm[8]
  y = fvmax - 1
  if V <= -1:
    FV = 0.0
  elif V <= 0:
    FV = (V + 1) * (V + 1)
  elif V <= y:
    FV = fvmax - (y - V) * (y - V) / max(MINVAL, y)
  else:
    FV = fvmax
  return -force * FL * FV


@jit
def gain_vel(length, vel, lr0, lr1, acc0, prm):
  """d gain / d vel (mjd_muscleGain_vel)."""
  force, L0, L = _scaled(length, lr0, lr1, acc0, prm)
  V = vel / max(MINVAL, L0 * prm[6])
  FL = gain_length(L, prm[4], prm[5])
  y = prm[8] - 1
  if V <= -1:
    dFV = 0.0
  elif V <= 0:
    dFV = 2 * V + 2
  elif V <= y:
    dFV = (-2 * V + 2 * y) / max(MINVAL, y)
  else:
    dFV = 0.0
  return -force * FL * dFV / max(MINVAL, L0 * prm[6])


@jit
def bias(length, lr0, lr1, acc0, prm):
  """Passive muscle force, negative (mju_muscleBias)."""
  force, L0, L = _scaled(length, lr0, lr1, acc0, prm)
  b = 0.5 * (1 + prm[5])
  if L <= 1:
    return 0.0
  if L <= b:
    x = (L - 1) / max(MINVAL, b - 1)
    return -force * prm[7] * 0.5 * x * x
  x = (L - b) / max(MINVAL, b - 1)
  return -force * prm[7] * (0.5 + x)


@jit
def _sigmoid(x):
  """Quintic smoothstep on [0, 1] (mju_sigmoid)."""
  if x <= 0:
    return 0.0
  if x >= 1:
    return 1.0
  return x * x * x * (3 * x * (2 * x - 5) + 10)


@jit
def dynamics(ctrl, act, prm):
  """Activation rate act_dot (mju_muscleDynamics), prm = (tau_act, tau_deact, tausmooth)."""
  c = 0.0 if ctrl < 0 else (1.0 if ctrl > 1 else ctrl)
  a = 0.0 if act < 0 else (1.0 if act > 1 else act)
  tau_act = prm[0] * (0.5 + 1.5 * a)
  tau_deact = prm[1] / (0.5 + 1.5 * a)
  dctrl = c - act
  if prm[2] < MINVAL:
    tau = tau_act if dctrl > 0 else tau_deact
  else:
    tau = tau_deact + (tau_act - tau_deact) * _sigmoid(dctrl / prm[2] + 0.5)
  return dctrl / max(MINVAL, tau)
