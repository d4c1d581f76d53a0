"""Passive forces (MuJoCo's engine_passive.c): joint and tendon springs/dampers with their
polynomial terms and actuator-inherited damping, gravity compensation, fluid forces, and the
constant pull of adhesive contacts."""

from numjoco.engine import flex as flexmod
from numjoco.engine import flex_contact as fc
from numjoco.engine import fluid
from numjoco.engine import math as mm
from numjoco.engine._jit import inline, jit
from numjoco.engine.smooth import actuator_drives, apply_ft
from numjoco.engine.types import mjtJoint, mjtDisableBit
from numjoco.engine._sig import unit, M, D

_FREE, _BALL = int(mjtJoint.FREE), int(mjtJoint.BALL)
_DSBL_SPRING = int(mjtDisableBit.SPRING)
_DSBL_DAMPER = int(mjtDisableBit.DAMPER)
_DSBL_GRAVITY = int(mjtDisableBit.GRAVITY)
_DSBL_CONTACT = int(mjtDisableBit.CONTACT)
NPOLY = 2


@inline
def _poly(linear, poly, x, flg_odd, deriv):
  """linear + sum_i poly[i] |x|^(i+1) (|x| when flg_odd), each term times (i + 2) when deriv."""
  if flg_odd:
    x = abs(x)
  res = linear
  xp = 1.0
  for i in range(poly.shape[0]):
    xp *= x
    res += ((i + 2) * poly[i] if deriv else poly[i]) * xp
  return res


@jit
def poly_force(linear, poly, x, flg_odd):
  """Stiffness/damping coefficient with polynomial terms: force = -x * poly_force(...)."""
  return _poly(linear, poly, x, flg_odd, False)


@jit
def d_xpoly_force(linear, poly, x, flg_odd):
  """Derivative of x * poly_force(x) with respect to x."""
  return _poly(linear, poly, x, flg_odd, True)


@inline
def spring_ref(m, d, j, padr):
  """(array, address) of joint j's spring reference: the plastic state when the joint yields,
  else qpos_spring at padr."""
  if m.jnt_plasticadr[j] >= 0:
    return d.plastic, m.jnt_plasticadr[j]
  return m.qpos_spring, padr


@inline
def free_offset(m, d, padr):
  """Translation (x, y, z, length) of the free joint at qpos address padr from qpos_spring."""
  dx0 = d.qpos[padr] - m.qpos_spring[padr]
  dx1 = d.qpos[padr + 1] - m.qpos_spring[padr + 1]
  dx2 = d.qpos[padr + 2] - m.qpos_spring[padr + 2]
  return dx0, dx1, dx2, (dx0 * dx0 + dx1 * dx1 + dx2 * dx2) ** 0.5


@jit
def actuator_damping(m, ident, is_tendon, poly):
  """Damping (and poly terms, added into `poly`) inherited from actuators (mj_actuatorDamping)."""
  aid = m.tendon_actuatorid[ident] if is_tendon else m.jnt_actuatorid[ident]
  if aid == -1:
    return 0.0
  damping = 0.0
  for k in range(m.nactuator):
    if aid >= 0 and k != aid:
      continue
    if aid < -1 and not actuator_drives(m, k, ident, is_tendon):
      continue
    g = m.actuator_gear[m.actuator_outadr[k], 0]
    damping += m.actuator_damping[k] * g * g
    for j in range(NPOLY):
      poly[j] += m.actuator_dampingpoly[k, j] * g * g
  return damping


@jit
def dof_damping(m, i, poly):
  """Total damping of dof i and its polynomial terms (written into `poly`)."""
  for j in range(NPOLY):
    poly[j] = m.dof_dampingpoly[i, j]
  return m.dof_damping[i] + actuator_damping(m, m.dof_jntid[i], False, poly)


@jit
def tendon_spring_range(m, d, i):
  """(lower, upper) spring lengths of tendon i: its plastic state when it yields."""
  a = m.tendon_plasticadr[i]
  if a >= 0:
    return d.plastic[a], d.plastic[a + 1]
  return m.tendon_lengthspring[i, 0], m.tendon_lengthspring[i, 1]


@jit
def plastic_update(m, d, qvel, h):
  """Ideal elasto-plastic springs (MuJoCo 4's springyield), after qpos has advanced by h*qvel:
  a joint's spring reference d.plastic follows qpos where the displacement passes
  jnt_springyield; a tendon's spring range follows its length (linearised: ten_length +
  h ten_J qvel) where it passes tendon_springyield outside the range. A slack tendon's range
  (0, L) keeps its 0 when it yields in tension."""
  if m.nplastic == 0 or m.opt_disableflags[0] & _DSBL_SPRING:
    return
  for j in range(m.njnt):
    a = m.jnt_plasticadr[j]
    if a < 0:
      continue
    y = m.jnt_springyield[j]
    padr = m.jnt_qposadr[j]
    if m.jnt_type[j] == _BALL:
      q = d.scratch_small[4:8]
      q[0], q[1], q[2], q[3] = mm.quat_normalize(d.qpos[padr], d.qpos[padr + 1],
                                                 d.qpos[padr + 2], d.qpos[padr + 3])
      v0, v1, v2 = mm.sub_quat(q, 0, d.plastic, a)
      r = (v0 * v0 + v1 * v1 + v2 * v2) ** 0.5
      if r > y:
        # rotate the reference towards qpos until the displacement is y
        mm.quat_integrate(d.plastic, a, v0, v1, v2, 1.0 - y / r)
    else:
      x = d.qpos[padr] - d.plastic[a]
      if x > y:
        d.plastic[a] = d.qpos[padr] - y
      elif x < -y:
        d.plastic[a] = d.qpos[padr] + y
  for i in range(m.ntendon):
    a = m.tendon_plasticadr[i]
    if a < 0:
      continue
    y = m.tendon_springyield[i]
    length = 0.0
    for k in range(m.ten_J_rowadr[i], m.ten_J_rowadr[i] + m.ten_J_rownnz[i]):
      length += d.ten_J[k] * qvel[m.ten_J_colind[k]]
    length = d.ten_length[i] + h * length
    lower, upper = d.plastic[a], d.plastic[a + 1]
    if length - upper > y:
      shift = length - upper - y
      d.plastic[a + 1] = upper + shift
      if not (lower == 0.0 and upper > 0.0):
        d.plastic[a] = lower + shift
    elif lower - length > y:
      shift = length - lower + y
      d.plastic[a] = lower + shift
      d.plastic[a + 1] = upper + shift


@jit
def _spring_damper(m, d, poly):
  enbl_spring = not (m.opt_disableflags[0] & _DSBL_SPRING)
  enbl_damper = not (m.opt_disableflags[0] & _DSBL_DAMPER)
  if enbl_spring:
    for j in range(m.njnt):
      k = m.jnt_stiffness[j]
      sp = m.jnt_stiffnesspoly[j]
      if k == 0.0 and sp[0] == 0.0 and sp[1] == 0.0:
        continue
      padr = m.jnt_qposadr[j]
      dadr = m.jnt_dofadr[j]
      jt = m.jnt_type[j]
      ref, radr = spring_ref(m, d, j, padr)
      if jt == _FREE or jt == _BALL:
        if jt == _FREE:
          dx0, dx1, dx2, r = free_offset(m, d, padr)
          kk = poly_force(k, sp, r, False)
          d.qfrc_spring[dadr] -= kk * dx0
          d.qfrc_spring[dadr + 1] -= kk * dx1
          d.qfrc_spring[dadr + 2] -= kk * dx2
          dadr += 3
          padr += 3
          radr += 3
        q = d.scratch_small[4:8]
        q[0], q[1], q[2], q[3] = mm.quat_normalize(d.qpos[padr], d.qpos[padr + 1],
                                                   d.qpos[padr + 2], d.qpos[padr + 3])
        v0, v1, v2 = mm.sub_quat(q, 0, ref, radr)
        r = (v0 * v0 + v1 * v1 + v2 * v2) ** 0.5
        kk = poly_force(k, sp, r, False)
        d.qfrc_spring[dadr] -= kk * v0
        d.qfrc_spring[dadr + 1] -= kk * v1
        d.qfrc_spring[dadr + 2] -= kk * v2
      else:
        x = d.qpos[padr] - ref[radr]
        d.qfrc_spring[dadr] = -x * poly_force(k, sp, x, False)
  if enbl_damper:
    for i in range(m.nv):
      damping = dof_damping(m, i, poly)
      if damping != 0.0 or poly[0] != 0.0 or poly[1] != 0.0:
        v = d.qvel[i]
        d.qfrc_damper[i] = -v * poly_force(damping, poly, v, True)
  for i in range(m.ntendon):
    frc_spring, frc_damper = tendon_passive(m, d, i, poly, enbl_spring, enbl_damper)
    if frc_spring == 0.0 and frc_damper == 0.0:
      continue
    for a in range(m.ten_J_rowadr[i], m.ten_J_rowadr[i] + m.ten_J_rownnz[i]):
      c = m.ten_J_colind[a]
      d.qfrc_spring[c] += d.ten_J[a] * frc_spring
      d.qfrc_damper[c] += d.ten_J[a] * frc_damper


@jit
def tendon_passive(m, d, i, poly, enbl_spring, enbl_damper):
  """(spring, damper) force along tendon i (polynomial terms and actuator damping included)."""
  stiffness = m.tendon_stiffness[i] if enbl_spring else 0.0
  sp = m.tendon_stiffnesspoly[i]
  has_sp = enbl_spring and (sp[0] != 0.0 or sp[1] != 0.0)
  damping = 0.0
  for j in range(NPOLY):
    poly[j] = 0.0
  if enbl_damper:
    for j in range(NPOLY):
      poly[j] = m.tendon_dampingpoly[i, j]
    damping = m.tendon_damping[i] + actuator_damping(m, i, True, poly)
  if stiffness == 0.0 and not has_sp and damping == 0.0 and poly[0] == 0.0 and poly[1] == 0.0:
    return 0.0, 0.0
  length = d.ten_length[i]
  lower, upper = tendon_spring_range(m, d, i)
  x = length - upper if length > upper else (length - lower if length < lower else 0.0)
  frc_spring = -x * poly_force(stiffness, sp, x, False) if enbl_spring else 0.0
  v = d.ten_velocity[i]
  frc_damper = -v * poly_force(damping, poly, v, True) if enbl_damper else 0.0
  return frc_spring, frc_damper


@jit
def gravcomp(m, d):
  """Gravity compensation forces into qfrc_gravcomp; True if any body has it."""
  if m.opt_disableflags[0] & _DSBL_GRAVITY:
    return False
  g = m.opt_gravity
  if g[0] == 0.0 and g[1] == 0.0 and g[2] == 0.0:
    return False
  has = False
  for i in range(1, m.nbody):
    gc = m.body_gravcomp[i]
    if gc != 0.0:
      has = True
      s = -m.body_mass[i] * gc
      apply_ft(m, d, g[0] * s, g[1] * s, g[2] * s, 0.0, 0.0, 0.0, d.xipos[i, 0], d.xipos[i, 1],
               d.xipos[i, 2], i, d.qfrc_gravcomp)
  return has


@jit
def adhesion(m, d):
  """qfrc_adhesion: each adhesive contact (active or in its gap) pulls its geoms together along
  the normal with its adhesion force (MuJoCo 4's mj_adhesion); True if any did."""
  if m.opt_disableflags[0] & _DSBL_CONTACT or m.nv == 0:
    return False
  has = False
  for c in range(d.ncon[0]):
    a = d.contact_adhesion[c]
    if a == 0.0 or d.contact_exclude[c] > 1:
      continue
    has = True
    f = d.contact_frame[c]
    p = d.contact_pos[c]
    # qfrc += J_normal' (-a), J_normal = n' (J(geom2 body) - J(geom1 body)) at the contact point
    b1, b2 = fc.contact_body(m, d, c, 0), fc.contact_body(m, d, c, 1)
    apply_ft(m, d, a * f[0], a * f[1], a * f[2], 0.0, 0.0, 0.0, p[0], p[1], p[2], b1,
             d.qfrc_adhesion)
    apply_ft(m, d, -a * f[0], -a * f[1], -a * f[2], 0.0, 0.0, 0.0, p[0], p[1], p[2], b2,
             d.qfrc_adhesion)
  return has


@unit((M, D))
def passive(m, d):
  """qfrc_spring, qfrc_damper, qfrc_gravcomp, qfrc_fluid, qfrc_adhesion and their sum
  qfrc_passive."""
  for i in range(m.nv):
    d.qfrc_spring[i] = 0.0
    d.qfrc_damper[i] = 0.0
    d.qfrc_gravcomp[i] = 0.0
    d.qfrc_fluid[i] = 0.0
    d.qfrc_adhesion[i] = 0.0
    d.qfrc_passive[i] = 0.0
  flags = m.opt_disableflags[0]
  if (flags & _DSBL_SPRING) and (flags & _DSBL_DAMPER):
    return
  poly = d.scratch_small[0:NPOLY]
  _spring_damper(m, d, poly)
  if m.nflex:
    flexmod.passive(m, d)   # a unit compiled only for models with flexes
  has_gravcomp = gravcomp(m, d)
  has_fluid = m.opt_viscosity[0] != 0.0 or m.opt_density[0] != 0.0   # _sig.NEEDS_FLUID
  if has_fluid:
    fluid.fluid(m, d)
  has_adhesion = adhesion(m, d)
  for i in range(m.nv):
    d.qfrc_passive[i] = d.qfrc_spring[i] + d.qfrc_damper[i]
    if has_fluid:
      d.qfrc_passive[i] += d.qfrc_fluid[i]
    if has_adhesion:
      d.qfrc_passive[i] += d.qfrc_adhesion[i]
    if has_gravcomp and not m.jnt_actgravcomp[m.dof_jntid[i]]:
      d.qfrc_passive[i] += d.qfrc_gravcomp[i]
