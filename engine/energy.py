"""Potential and kinetic energy when the ENERGY enable flag is set (mj_energyPos, mj_energyVel)."""
from numjoco.engine import math as mm
from numjoco.engine.passive import free_offset, spring_ref, tendon_spring_range
from numjoco.engine import sleep as sleepmod
from numjoco.engine._jit import jit
from numjoco.engine.smooth import mul_m
from numjoco.engine.types import mjtDisableBit, mjtJoint
from numjoco.engine._sig import unit, M, D, NEEDS_ENERGY

_DSBL_GRAVITY = int(mjtDisableBit.GRAVITY)
_DSBL_SPRING = int(mjtDisableBit.SPRING)
_FREE = int(mjtJoint.FREE)
_BALL = int(mjtJoint.BALL)


@jit
def poly_potential(linear, poly, x):
  """Energy of a spring whose force is -x * (linear + sum_i poly[i] x^(i+1)) (mju_polyPotential)."""
  res = 0.5 * linear * (x * x)
  xp = x
  for i in range(poly.shape[0]):
    xp *= x
    res += poly[i] / (i + 3) * (xp * x)
  return res


@unit((M, D), needs=NEEDS_ENERGY)
def energy_pos(m, d):
  """energy[0]: gravity potential of every body plus joint and tendon spring energy."""
  e = 0.0
  g = m.opt_gravity
  if not (m.opt_disableflags[0] & _DSBL_GRAVITY):
    for b in range(1, m.nbody):
      e -= m.body_mass[b] * (g[0] * d.xipos[b, 0] + g[1] * d.xipos[b, 1] + g[2] * d.xipos[b, 2])
  if not (m.opt_disableflags[0] & _DSBL_SPRING):
    # springs of sleeping trees are left out, as MuJoCo does (engine/sleep.py)
    sleeping = sleepmod.filtering_bodies(m, d)
    for j in range(m.njnt):
      if sleeping and d.body_awake[m.jnt_bodyid[j]] != sleepmod.AWAKE:
        continue
      k = m.jnt_stiffness[j]
      sp = m.jnt_stiffnesspoly[j]
      nonzero = k != 0.0
      for i in range(sp.shape[0]):
        nonzero = nonzero or sp[i] != 0.0
      if not nonzero:
        continue
      padr = m.jnt_qposadr[j]
      jt = m.jnt_type[j]
      ref, radr = spring_ref(m, d, j, padr)
      if jt == _FREE or jt == _BALL:
        if jt == _FREE:
          e += poly_potential(k, sp, free_offset(m, d, padr)[3])
          padr += 3
          radr += 3
        # MuJoCo takes the quaternion difference of the stored (unnormalised) qpos.
        v0, v1, v2 = mm.sub_quat(d.qpos, padr, ref, radr)
        e += poly_potential(k, sp, (v0 * v0 + v1 * v1 + v2 * v2) ** 0.5)
      else:
        e += poly_potential(k, sp, d.qpos[padr] - ref[radr])
    for i in range(m.ntendon):
      if sleeping and sleepmod.tendon_state(m, d, i) != sleepmod.AWAKE:
        continue
      length = d.ten_length[i]
      lower, upper = tendon_spring_range(m, d, i)
      x = length - upper if length > upper else (length - lower if length < lower else 0.0)
      e += poly_potential(m.tendon_stiffness[i], m.tendon_stiffnesspoly[i], x)
  d.energy[0] = e


@unit((M, D), needs=NEEDS_ENERGY)
def energy_vel(m, d):
  """energy[1]: kinetic energy 0.5 qvel' M qvel."""
  vec = d.scratch_nv[7]
  mul_m(m, d, vec, d.qvel)
  e = 0.0
  for i in range(m.nv):
    e += vec[i] * d.qvel[i]
  d.energy[1] = 0.5 * e
