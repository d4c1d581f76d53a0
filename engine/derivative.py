"""Velocity derivatives of smooth forces for the implicit integrators (MuJoCo's
engine_derivative.c: mjd_smooth_vel) and the solves of mj_implicitSkip (engine_forward.c):
sparse LU of (M - h D) for implicit, L'DL of its symmetric part plus a 6x6 LU per standalone
free body for implicitfast.

qDeriv uses MuJoCo's nD layout (D_rownnz, D_rowadr, D_colind, D_diag: full rows, ancestors and
descendants of each dof). rne_vel works, as MuJoCo does, on "B rows": per body, one 6-vector per
dof in B_colind (the dofs moving that body), stored as (nB, 6) arrays.

Notes: rne_vel allocates its work arrays (nD x 6 and 3 x nB x 6) until Data gets fields for them.
Sleeping is not handled.
"""
import math

import numpy as np

from numjoco.engine import actuation
from numjoco.engine import fluid
from numjoco.engine import muscle
from numjoco.engine import passive as ps
from numjoco.engine import smooth
from numjoco.engine import math as mm
from numjoco.engine._jit import jit
from numjoco.engine.types import (mjtJoint, mjtDyn, mjtGain, mjtBias, mjtDisableBit, mjtInput,
                          mjtIntegrator, mjtTrn)
from numjoco.engine._sig import unit, M, D, b1, i8, f8v, f8x2, NEEDS_DERIVATIVE, NEEDS_IMPLICIT
from numjoco.engine._sig import NEEDS_FLUID_DERIVATIVE
from numjoco.engine.types import MINVAL as _MINVAL

_FREE, _BALL = int(mjtJoint.FREE), int(mjtJoint.BALL)
_DYN_NONE = int(mjtDyn.NONE)
_TRN_TENDON = int(mjtTrn.TENDON)
_GAIN_AFFINE, _GAIN_DCMOTOR, _GAIN_SO3 = (int(mjtGain.AFFINE), int(mjtGain.DCMOTOR),
                                           int(mjtGain.SO3))
_GAIN_MUSCLE = int(mjtGain.MUSCLE)
_BIAS_AFFINE, _BIAS_SO3 = int(mjtBias.AFFINE), int(mjtBias.SO3)
_SERVO_INPUTS = int(mjtInput.POS | mjtInput.VEL | mjtInput.FF)
_DSBL_ACTUATION = int(mjtDisableBit.ACTUATION)
_DSBL_SPRING = int(mjtDisableBit.SPRING)
_DSBL_DAMPER = int(mjtDisableBit.DAMPER)
_INT_IMPLICIT, _INT_IMPLICITFAST = int(mjtIntegrator.IMPLICIT), int(mjtIntegrator.IMPLICITFAST)
_INT_DISCRETE = int(mjtIntegrator.DISCRETE)
_PI = math.pi


# ------------------------------------------------------------------------------------------------
# sparse J' B J accumulation into qDeriv


@jit
def _add_scaled_row(m, d, row, vals, cols, adr, nnz, scl):
  """qDeriv[row, cols] += scl * vals[adr:adr+nnz] where the sparsities meet (addToSclSparseInc)."""
  dadr = m.D_rowadr[row]
  dnnz = m.D_rownnz[row]
  s = 0
  k = 0
  while s < nnz and k < dnnz:
    cs = cols[adr + s]
    cd = m.D_colind[dadr + k]
    if cs == cd:
      d.qDeriv[dadr + k] += scl * vals[adr + s]
      s += 1
      k += 1
    elif cs < cd:
      s += 1
    else:
      k += 1


@jit
def _add_jtbj_row(m, d, vals, cols, adr, nnz, b):
  """qDeriv += J' b J for one sparse row J = vals[adr:adr+nnz] at columns cols (addJTBJSparse)."""
  for k in range(nnz):
    _add_scaled_row(m, d, cols[adr + k], vals, cols, adr, nnz, vals[adr + k] * b)


# ------------------------------------------------------------------------------------------------
# actuator and passive derivatives


@jit
def _add_jtbj_row_skip(m, d, vals, cols, adr, nnz, b, skip):
  """_add_jtbj_row leaving out the qDeriv rows r with skip[r] != 0 (addJTBJSparseSkip)."""
  for k in range(nnz):
    if skip[cols[adr + k]] == 0:
      _add_scaled_row(m, d, cols[adr + k], vals, cols, adr, nnz, vals[adr + k] * b)


@jit
def mark_clamped_dofs(m, d, dof_clamped):
  """dof_clamped[dof] = 1 where jnt_actfrcrange clamps qfrc_actuator; True if any is."""
  for k in range(m.nv):
    dof_clamped[k] = 0
  anyc = False
  for j in range(m.njnt):
    if not m.jnt_actfrclimited[j]:
      continue
    # as MuJoCo: the joint's first dof (hinge and slide joints carry the limit)
    dof = m.jnt_dofadr[j]
    f = d.qfrc_actuator[dof]
    if f <= m.jnt_actfrcrange[j, 0] or f >= m.jnt_actfrcrange[j, 1]:
      dof_clamped[dof] = 1
      anyc = True
  return anyc


@jit
def _tendon_saturated(m, d, t):
  """True if the summed actuator force on force-limited tendon t sits at its actfrcrange."""
  total = 0.0
  for k in range(m.nactuator):
    if m.actuator_trntype[k] == _TRN_TENDON and m.actuator_trnid[k, 0] == t:
      total += d.actuator_force[m.actuator_outadr[k]]
  # MuJoCo compares with a relative tolerance of 1e-10 of the bound (the clamp rescales the
  # forces, so their sum lands on the bound only to rounding), and a total of 0 at
  # a bound of 0 counts as saturated
  lo, hi = m.tendon_actfrcrange[t, 0], m.tendon_actfrcrange[t, 1]
  return total <= lo + 1e-10 * abs(lo) or total >= hi - 1e-10 * abs(hi)


@jit
def _dcmotor_vel(m, d, i):
  """d force / d velocity of a DC motor (as MuJoCo 4.0 computes it): back-EMF and the current
  state's one-step response (unless its rate is clipped) over the temperature-adjusted R, the controller's kd through the
  nominal R/K with the back-EMF compensation (none while Vmax clips the drive voltage), and
  LuGre's sigma1."""
  dyn, g = m.actuator_dynprm[i], m.actuator_gainprm[i]
  R, K, te = g[0], g[1], dyn[0]
  slots = actuation.dcmotor_slots(dyn, g)
  first = m.actuator_actadr[i]
  rt = R
  if slots[2] >= 0:
    rt *= 1 + g[2] * (d.act[first + slots[2]] + dyn[4] - g[3])
  rt = max(_MINVAL, rt)
  res = 0.0
  if te <= 0:
    res -= K * K / rt
  dvdw = 0.0
  spec = m.actuator_ctrlspec[i]
  if spec & _SERVO_INPUTS:
    dvdw = -g[6] * R / K + K
    if g[7] > 0:
      oadr = m.actuator_outadr[i]
      vel = d.actuator_velocity[oadr]
      pos, vref, ff, _ = actuation.servo_inputs(d.ctrl_clamped, m.actuator_ctrladr[i], spec)
      x_i = d.act[first + slots[1]] if slots[1] >= 0 else 0.0
      tau = g[4] * (pos - d.actuator_length[oadr]) + g[6] * (vref - vel) + g[5] * x_i + ff
      if abs(R / K * tau + K * vel) > g[7]:
        dvdw = 0.0
  # the current's one-step response; none while (di/dt)max clips its rate (as MuJoCo 4.0)
  last = first + m.actuator_actnum[i] - 1
  if te > 0 and not (dyn[1] > 0 and abs(d.act_dot[last]) >= dyn[1]):
    res += K * (dvdw - K) * (1 - math.exp(-m.opt_timestep[0] / te)) / rt
  elif dvdw != 0:
    res += K * dvdw / rt
  if dyn[6] > 0:
    res -= dyn[6]
  return res


@unit((M, D, i8), f8x2, needs=NEEDS_DERIVATIVE)
def actuator_slopes(m, d, i):
  """(d force / d velocity, d force / d length) of actuator i, both 0 for a force a clamp holds
  (its forcerange, an SO3 servo's norm at its bound, or every actuator on a tendon whose total
  force is at tendon_actfrcrange), as mjd_actuator_vel; the length slope (the discrete
  integrator's stiffness) of affine gains and biases only."""
  oadr = m.actuator_outadr[i]
  gt, bt = m.actuator_gaintype[i], m.actuator_biastype[i]
  # a force clamped by forcerange does not move with velocity
  if m.actuator_forcelimited[i]:
    f = d.actuator_force[oadr]
    if gt == _GAIN_SO3:
      nrm = math.sqrt(f * f + d.actuator_force[oadr + 1] ** 2 + d.actuator_force[oadr + 2] ** 2)
      if nrm >= m.actuator_forcerange[i, 1]:
        return 0.0, 0.0
    elif f <= m.actuator_forcerange[i, 0] or f >= m.actuator_forcerange[i, 1]:
      return 0.0, 0.0
  # nor does the total force on a tendon at its actuator force limit (exact when all the
  # tendon's actuators have equal moments, MuJoCo's approximation)
  if m.actuator_trntype[i] == _TRN_TENDON:
    t = m.actuator_trnid[i, 0]
    if m.tendon_actfrclimited[t] and _tendon_saturated(m, d, t):
      return 0.0, 0.0
  bias_vel = 0.0
  gain_vel = 0.0
  bias_len = 0.0
  gain_len = 0.0
  if bt == _BIAS_AFFINE or bt == _BIAS_SO3:
    bias_vel = m.actuator_biasprm[i, 2]
  if bt == _BIAS_AFFINE:
    bias_len = m.actuator_biasprm[i, 1]
  if gt == _GAIN_AFFINE:
    gain_vel = m.actuator_gainprm[i, 2]
    gain_len = m.actuator_gainprm[i, 1]
  elif gt == _GAIN_MUSCLE:
    gain_vel = muscle.gain_vel(
        d.actuator_length[oadr], d.actuator_velocity[oadr], m.actuator_lengthrange[oadr, 0],
        m.actuator_lengthrange[oadr, 1], m.actuator_acc0[oadr], m.actuator_gainprm[i])
  elif gt == _GAIN_DCMOTOR:
    # bias and gain parts together (the back-EMF belongs to the bias in MuJoCo)
    bias_vel += _dcmotor_vel(m, d, i)
  if gain_vel != 0.0 or gain_len != 0.0:
    if m.actuator_dyntype[i] == _DYN_NONE:
      # MuJoCo 4.0 uses the control after ctrlrange clamping (its published source multiplies
      # by the raw ctrl)
      u = d.ctrl_clamped[m.actuator_ctrladr[i]]
    else:
      adr = m.actuator_actadr[i] + m.actuator_actnum[i] - 1
      u = d.act[adr]
      if m.actuator_actearly[i]:
        u = actuation.next_activation(m, d, i, adr, d.act_dot[adr])
    bias_vel += gain_vel * u
    bias_len += gain_len * u
  return bias_vel, bias_len


@unit((M, D), needs=NEEDS_DERIVATIVE)
def actuator_vel(m, d):
  """qDeriv += d qfrc_actuator / d qvel for affine, PID, DC-motor, SO3 and muscle actuators
  (mjd_actuator_vel).

  Forces that a clamp holds constant contribute nothing, as in MuJoCo (actuator_slopes),
  nor do the qDeriv rows of dofs whose qfrc_actuator is at jnt_actfrcrange.
  """
  if m.opt_disableflags[0] & _DSBL_ACTUATION:
    return
  dof_clamped = d.ivec_nv[0]
  any_dof_clamped = mark_clamped_dofs(m, d, dof_clamped)
  for i in range(m.nactuator):
    if actuation.actuator_disabled(m, i):
      continue
    oadr = m.actuator_outadr[i]
    bias_vel = actuator_slopes(m, d, i)[0]
    if bias_vel != 0.0:
      for o in range(oadr, oadr + m.actuator_outnum[i]):
        if any_dof_clamped:
          _add_jtbj_row_skip(m, d, d.actuator_moment, d.moment_colind, d.moment_rowadr[o],
                             d.moment_rownnz[o], bias_vel, dof_clamped)
        else:
          _add_jtbj_row(m, d, d.actuator_moment, d.moment_colind, d.moment_rowadr[o],
                        d.moment_rownnz[o], bias_vel)


@jit
def _body_chain(m, body, chain):
  """Dofs moving `body`, increasing, into chain; returns their number (mj_bodyChain)."""
  if m.body_simple[body]:
    n = m.body_dofnum[body]
    for k in range(n):
      chain[k] = m.body_dofadr[body] + k
    return n
  b = m.body_weldid[body]
  if m.body_dofnum[b] == 0:
    return 0
  n = 0
  da = m.body_dofadr[b] + m.body_dofnum[b] - 1
  while da >= 0:
    chain[n] = da
    n += 1
    da = m.dof_parentid[da]
  for k in range(n // 2):
    chain[k], chain[n - 1 - k] = chain[n - 1 - k], chain[k]
  return n


@jit
def _local_jac_row(m, d, body, r, chain, n, out):
  """Row r (rot 0-2, lin 3-5) of the com Jacobian of `body` in its inertial frame, on chain."""
  rot = d.ximat[body]
  o0, o1, o2 = smooth.com_offset(m, d, body, d.xipos[body, 0], d.xipos[body, 1], d.xipos[body, 2])
  axis = r % 3
  for p in range(n):
    c = d.cdof[chain[p]]
    if r < 3:
      j0, j1, j2 = c[0], c[1], c[2]
    else:
      j0, j1, j2 = smooth.point_jac_col(c, o0, o1, o2)
    # ximat' * J, summed over world axes in MuJoCo's order (mju_mulMatTMat)
    out[p] = ((0.0 + rot[axis] * j0) + rot[3 + axis] * j1) + rot[6 + axis] * j2


@jit
def _fluid_box_vel(m, d, i, chain, jrow):
  """qDeriv += derivative of the inertia-box fluid force on body i (mjd_inertiaBoxFluid)."""
  density, viscosity = m.opt_density[0], m.opt_viscosity[0]
  b0, b1, b2 = fluid.box_sides(m, i)
  lv = fluid.local_velocity(m, d, i, d.xipos[i, 0], d.xipos[i, 1], d.xipos[i, 2], d.ximat[i])
  n = _body_chain(m, i, chain)
  # per local row: viscous (Stokes) coefficient, then quadratic-drag coefficient
  if viscosity > 0:
    diam = (b0 + b1 + b2) / 3.0
    for r in range(6):
      b = -_PI * diam * diam * diam * viscosity if r < 3 else -3.0 * _PI * diam * viscosity
      _local_jac_row(m, d, i, r, chain, n, jrow)
      _add_jtbj_row(m, d, jrow, chain, 0, n, b)
  if density > 0:
    q0, q1, q2 = b0 * b0 * b0 * b0, b1 * b1 * b1 * b1, b2 * b2 * b2 * b2
    for r in range(6):
      if r == 0:
        b = -density * b0 * (q1 + q2) * 2 * abs(lv[0]) / 64.0
      elif r == 1:
        b = -density * b1 * (q0 + q2) * 2 * abs(lv[1]) / 64.0
      elif r == 2:
        b = -density * b2 * (q0 + q1) * 2 * abs(lv[2]) / 64.0
      elif r == 3:
        b = -0.5 * density * b1 * b2 * 2 * abs(lv[3])
      elif r == 4:
        b = -0.5 * density * b0 * b2 * 2 * abs(lv[4])
      else:
        b = -0.5 * density * b0 * b1 * 2 * abs(lv[5])
      _local_jac_row(m, d, i, r, chain, n, jrow)
      _add_jtbj_row(m, d, jrow, chain, 0, n, b)


@jit
def _geom_local_jac(m, d, g, body, chain, n, J):
  """Rows 0-5 (rot, lin) of the Jacobian of geom g's frame on chain, in the geom's frame."""
  rot = d.geom_xmat[g]
  o0, o1, o2 = smooth.com_offset(m, d, body, d.geom_xpos[g, 0], d.geom_xpos[g, 1],
                                 d.geom_xpos[g, 2])
  for p in range(n):
    c = d.cdof[chain[p]]
    l0, l1, l2 = smooth.point_jac_col(c, o0, o1, o2)
    for axis in range(3):
      J[axis, p] = ((0.0 + rot[axis] * c[0]) + rot[3 + axis] * c[1]) + rot[6 + axis] * c[2]
      J[3 + axis, p] = ((0.0 + rot[axis] * l0) + rot[3 + axis] * l1) + rot[6 + axis] * l2


@jit
def _quad_add(B, r0, c0, D):
  """B[r0:r0+3, c0:c0+3] += D for B 6x6 row-major flat; (3x3 row-major tuple or array: D[3k+l] at row k, column l)."""
  for k in range(3):
    for l in range(3):
      B[6 * (r0 + k) + c0 + l] += D[3 * k + l]


@jit
def _dcross(a0, a1, a2, b0, b1, b2):
  """(d(a x b)/da, d(a x b)/db) as row-major 3x3 tuples (mjd_cross)."""
  da = (0.0, b2, -b1, -b2, 0.0, b0, b1, -b0, 0.0)
  db = (0.0, -a2, a1, a2, 0.0, -a0, -a1, a0, 0.0)
  return da, db


@jit
def _dscale_cols(D, s0, s1, s2):
  """D diag(s) for a row-major 3x3 tuple."""
  return (D[0] * s0, D[1] * s1, D[2] * s2, D[3] * s0, D[4] * s1, D[5] * s2,
          D[6] * s0, D[7] * s1, D[8] * s2)


@jit
def _ellipsoid_B(density, viscosity, s, coef, lv, B, drag_only):
  """B (6x6 flat) = d(local torque, force)/d(local rot, lin velocity) of an ellipsoid geom;
  `drag_only`: its dissipative part alone, the viscous, blunt, slender and angular drag (the
  discrete integrator's metric: MuJoCo leaves the Kutta and Magnus lift and the added mass
  out)."""
  s0, s1, s2 = s[0], s[1], s[2]
  blunt, slender, ang_drag, kutta, magnus = coef[1], coef[2], coef[3], coef[4], coef[5]
  if drag_only:
    kutta = 0.0
    magnus = 0.0
  w0, w1, w2, x, y, z = lv[0], lv[1], lv[2], lv[3], lv[4], lv[5]
  for k in range(36):
    B[k] = 0.0

  # Magnus force: force += magnus_coef w x v
  mc = magnus * density * (4.0 / 3.0 * _PI * s0 * s1 * s2)
  da, db = _dcross(mc * w0, mc * w1, mc * w2, mc * x, mc * y, mc * z)
  _quad_add(B, 3, 0, da)
  _quad_add(B, 3, 3, db)

  # Kutta lift and viscous drag (mjd_kutta_lift, mjd_viscous_drag). Both are homogeneous, of
  # degree 2 in the semi-axes and 1 in the speed: as MuJoCo 4.0 (and engine/fluid.py), evaluate
  # them for semi-axes scaled by d_max and a unit velocity, then scale back; the raw products
  # (up to size^40 v^8) would fall below mjMINVAL for small geoms and be clamped (as MuJoCo 3
  # clamps them).
  d_max = max(max(s0, s1), s2)
  d_min = min(min(s0, s1), s2)
  d_mid = s0 + s1 + s2 - d_max - d_min
  eq_d = 2.0 / 3.0 * (s0 + s1 + s2)
  lin_coef = viscosity * 3.0 * _PI * eq_d
  speed = math.sqrt(x * x + y * y + z * z)
  D = _kutta_drag(density, kutta, blunt, slender, s0, s1, s2, d_max, d_mid, x, y, z, speed)
  _quad_add(B, 3, 3, D)
  B[21] -= lin_coef
  B[28] -= lin_coef
  B[35] -= lin_coef

  # viscous torque (mjd_viscous_torque)
  lin_torq = viscosity * (_PI * eq_d * eq_d * eq_d)
  i_max = 8.0 / 15.0 * _PI * d_mid * (d_max * d_max) * (d_max * d_max)
  ii0 = _ellipsoid_max_moment(s0, s1, s2)
  ii1 = _ellipsoid_max_moment(s1, s2, s0)
  ii2 = _ellipsoid_max_moment(s2, s0, s1)
  mc0 = ang_drag * ii0 + slender * (i_max - ii0)
  mc1 = ang_drag * ii1 + slender * (i_max - ii1)
  mc2 = ang_drag * ii2 + slender * (i_max - ii2)
  mv0, mv1, mv2 = w0 * mc0, w1 * mc1, w2 * mc2
  dens = density / max(_MINVAL, math.sqrt(mv0 * mv0 + mv1 * mv1 + mv2 * mv2))
  m0, m1, m2 = -dens * w0 * mc0 * mc0, -dens * w1 * mc1 * mc1, -dens * w2 * mc2 * mc2
  dg = w0 * m0 + w1 * m1 + w2 * m2 - lin_torq
  D = (dg + m0 * w0, m1 * w0, m2 * w0,
       m0 * w1, dg + m1 * w1, m2 * w1,
       m0 * w2, m1 * w2, dg + m2 * w2)
  _quad_add(B, 0, 0, D)
  if drag_only:
    return

  # added mass (mjd_addedMassForces): vm = coef[6:9], vi = coef[9:12]
  vm0, vm1, vm2 = density * coef[6], density * coef[7], density * coef[8]
  vi0, vi1, vi2 = density * coef[9], density * coef[10], density * coef[11]
  da, db = _dcross(vi0 * w0, vi1 * w1, vi2 * w2, w0, w1, w2)
  _quad_add(B, 0, 0, db)
  _quad_add(B, 0, 0, _dscale_cols(da, vi0, vi1, vi2))
  da, db = _dcross(vm0 * x, vm1 * y, vm2 * z, x, y, z)
  _quad_add(B, 0, 3, db)
  _quad_add(B, 0, 3, _dscale_cols(da, vm0, vm1, vm2))
  da, db = _dcross(vm0 * x, vm1 * y, vm2 * z, w0, w1, w2)
  _quad_add(B, 3, 0, db)
  _quad_add(B, 3, 3, _dscale_cols(da, vm0, vm1, vm2))


@jit
def _kutta_drag(density, kutta, blunt, slender, s0, s1, s2, d_max, d_mid, vx, vy, vz, speed):
  """d(Kutta lift + quadratic drag)/d(local linear velocity), a row-major 3x3 tuple."""
  if speed == 0.0 or d_max == 0.0:
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
  inv = 1.0 / d_max
  t0, t1, t2 = s0 * inv, s1 * inv, s2 * inv
  x, y, z = vx / speed, vy / speed, vz / speed
  scl = d_max * d_max * speed
  a = (t1 * t2) * (t1 * t2)
  b = (t2 * t0) * (t2 * t0)
  c = (t0 * t1) * (t0 * t1)
  aa, bb, cc = a * a, b * b, c * c
  xx, yy, zz, xy, yz, xz = x * x, y * y, z * z, x * y, y * z, x * z
  proj_denom = aa * xx + bb * yy + cc * zz
  proj_num = a * xx + b * yy + c * zz
  norm2 = xx + yy + zz

  # Kutta lift
  df_denom = _PI * kutta * density / max(_MINVAL, math.sqrt(proj_denom * proj_num * norm2))
  dfx = yy * (a - b) + zz * (a - c)
  dfy = xx * (b - a) + zz * (b - c)
  dfz = xx * (c - a) + yy * (c - b)
  proj_term = proj_num / max(_MINVAL, proj_denom)
  cos_term = proj_num / max(_MINVAL, norm2)
  t2p = 2 * proj_num
  i0 = aa * proj_term - a + cos_term
  i1 = bb * proj_term - b + cos_term
  i2 = cc * proj_term - c + cos_term
  k00 = (((a - a) * t2p + dfx * i0) * xx - dfx * proj_num) * df_denom
  k01 = (((b - a) * t2p + dfx * i1) * xy) * df_denom
  k02 = (((c - a) * t2p + dfx * i2) * xz) * df_denom
  k10 = (((a - b) * t2p + dfy * i0) * xy) * df_denom
  k11 = (((b - b) * t2p + dfy * i1) * yy - dfy * proj_num) * df_denom
  k12 = (((c - b) * t2p + dfy * i2) * yz) * df_denom
  k20 = (((a - c) * t2p + dfz * i0) * xz) * df_denom
  k21 = (((b - c) * t2p + dfz * i1) * yz) * df_denom
  k22 = (((c - c) * t2p + dfz * i2) * zz - dfz * proj_num) * df_denom

  # quadratic drag, blunt and slender, with the derivative of the projected area
  a_max = _PI * (d_mid * inv)
  dA_coef = _PI / max(_MINVAL, math.sqrt(proj_num * proj_num * proj_num * proj_denom))
  a_proj = _PI * math.sqrt(proj_denom / max(_MINVAL, proj_num))
  quad_coef = density * (a_proj * blunt + slender * (a_max - a_proj))
  ap_coef = density * (blunt - slender)
  g0 = ap_coef * dA_coef * a * x * (b * yy * (a - b) + c * zz * (a - c))
  g1 = ap_coef * dA_coef * b * y * (a * xx * (b - a) + c * zz * (b - c))
  g2 = ap_coef * dA_coef * c * z * (a * xx * (c - a) + b * yy * (c - b))
  q = -quad_coef
  return ((k00 + (xx + 1.0) * q - g0 * x) * scl, (k01 + xy * q - g1 * x) * scl,
          (k02 + xz * q - g2 * x) * scl, (k10 + xy * q - g0 * y) * scl,
          (k11 + (yy + 1.0) * q - g1 * y) * scl, (k12 + yz * q - g2 * y) * scl,
          (k20 + xz * q - g0 * z) * scl, (k21 + yz * q - g1 * z) * scl,
          (k22 + (zz + 1.0) * q - g2 * z) * scl)


@jit
def _ellipsoid_max_moment(d0, d1, d2):
  """8/15 pi d0 max(d1, d2)^4 (ellipsoid_max_moment)."""
  dm = max(d1, d2)
  return 8.0 / 15.0 * _PI * d0 * ((dm * dm) * (dm * dm))


@jit
def _fluid_ellipsoid_vel(m, d, i, chain, J, B):
  """qDeriv += derivative of the ellipsoid fluid forces on body i's geoms (mjd_ellipsoidFluid)."""
  density, viscosity = m.opt_density[0], m.opt_viscosity[0]
  n = _body_chain(m, i, chain)
  # symmetrised for implicitfast (free bodies excepted: their 6x6 block is solved unsymmetric)
  # and for the discrete integrator's metric
  symmetric = ((m.opt_integrator[0] == _INT_IMPLICITFAST and not is_free_body(m, i))
               or m.opt_integrator[0] == _INT_DISCRETE)
  for g in range(m.body_geomadr[i], m.body_geomadr[i] + m.body_geomnum[i]):
    coef = m.geom_fluid[g]
    if coef[0] == 0.0:
      continue
    s = fluid.geom_semi_axes(m.geom_size[g], m.geom_type[g])
    rot = d.geom_xmat[g]
    lv = fluid.local_velocity(m, d, i, d.geom_xpos[g, 0], d.geom_xpos[g, 1],
                              d.geom_xpos[g, 2], rot)
    _geom_local_jac(m, d, g, i, chain, n, J)
    _ellipsoid_B(density, viscosity, s, coef, lv, B, m.opt_integrator[0] == _INT_DISCRETE)
    if symmetric:
      for r in range(6):
        for c in range(r + 1, 6):
          v = 0.5 * (B[6 * r + c] + B[6 * c + r])
          B[6 * r + c] = v
          B[6 * c + r] = v
    # qDeriv += J' B J over the nonzero entries of B (addJTBJSparse)
    for r in range(6):
      for c in range(6):
        b = B[6 * r + c]
        if b == 0.0:
          continue
        for k in range(n):
          _add_scaled_row(m, d, chain[k], J[c], chain, 0, n, J[r, k] * b)


@unit((M, D), b1, needs=NEEDS_DERIVATIVE)
def passive_vel(m, d):
  """qDeriv += d qfrc_passive / d qvel (mjd_passive_vel); returns True."""
  flags = m.opt_disableflags[0]
  if (flags & _DSBL_SPRING) and (flags & _DSBL_DAMPER):
    return True
  complete = True
  if m.opt_viscosity[0] > 0 or m.opt_density[0] > 0:
    fluid_vel(m, d)
  if flags & _DSBL_DAMPER:
    return complete
  poly = d.scratch_small[0:ps.NPOLY]
  for i in range(m.nv):
    damping = ps.dof_damping(m, i, poly)
    d.qDeriv[m.D_rowadr[i] + m.D_diag[i]] -= ps.d_xpoly_force(damping, poly, d.qvel[i], True)
  for t in range(m.ntendon):
    for k in range(ps.NPOLY):
      poly[k] = m.tendon_dampingpoly[t, k]
    damping = m.tendon_damping[t] + ps.actuator_damping(m, t, True, poly)
    b = -ps.d_xpoly_force(damping, poly, d.ten_velocity[t], True)
    if b != 0.0:
      _add_jtbj_row(m, d, d.ten_J, m.ten_J_colind, m.ten_J_rowadr[t], m.ten_J_rownnz[t], b)
  return complete


@unit((M, D), needs=NEEDS_FLUID_DERIVATIVE)
def fluid_vel(m, d):
  """qDeriv += d (fluid forces) / d qvel of every body (the fluid part of mjd_passive_vel)."""
  chain = d.ivec_nv[1]
  jrow = d.scratch_nv[3]
  for i in range(m.nbody):
    if m.body_mass[i] < _MINVAL:
      continue
    if fluid.uses_ellipsoids(m, i):
      _fluid_ellipsoid_vel(m, d, i, chain, d.scratch_nv[2:8],
                           d.scratch_nbody.reshape(d.scratch_nbody.size))
    else:
      _fluid_box_vel(m, d, i, chain, jrow)


# ------------------------------------------------------------------------------------------------
# derivative of the RNE bias force (mjd_rne_vel), on B rows


@jit
def _copy_from_parent(m, mat, n):
  """B row of body n <- the shared (ancestor) part of its parent's B row (copyFromParent)."""
  if n == 0 or m.body_weldid[m.body_parentid[n]] == 0:
    return
  ndof = 0
  b = m.body_weldid[m.body_parentid[n]]
  while b > 0:
    ndof += m.body_dofnum[b]
    b = m.body_weldid[m.body_parentid[b]]
  # ancestor dofs come first in both rows, as B_colind is sorted
  src = m.B_rowadr[m.body_parentid[n]]
  dst = m.B_rowadr[n]
  for c in range(ndof):
    for k in range(6):
      mat[dst + c, k] = mat[src + c, k]


@jit
def _add_to_parent(m, mat, n):
  """Parent's B row += body n's B row at their common columns (addToParent)."""
  if n == 0 or m.body_weldid[m.body_parentid[n]] == 0:
    return
  p = m.body_parentid[n]
  a, ap = m.B_rowadr[n], m.B_rowadr[p]
  i, ip = 0, 0
  while i < m.B_rownnz[n] and ip < m.B_rownnz[p]:
    c, cp = m.B_colind[a + i], m.B_colind[ap + ip]
    if c == cp:
      for k in range(6):
        mat[ap + ip, k] += mat[a + i, k]
      i += 1
      ip += 1
    elif c > cp:
      ip += 1
    else:
      # the child's columns are a subset of the parent's: cannot happen in a valid model
      i += 1


@jit
def _dcross_motion(out, oadr, src, sadr, n, v):
  """out[oadr+c] = src[sadr+c] x v (motion cross product, derivative wrt the velocity), c < n."""
  for c in range(n):
    x = src[sadr + c]
    # terms summed in MuJoCo's column order of mjd_crossMotion_vel (mju_mulMatMat)
    out[oadr + c, 0] = x[1] * v[2] - x[2] * v[1]
    out[oadr + c, 1] = -x[0] * v[2] + x[2] * v[0]
    out[oadr + c, 2] = x[0] * v[1] - x[1] * v[0]
    out[oadr + c, 3] = ((x[1] * v[5] - x[2] * v[4]) + x[4] * v[2]) - x[5] * v[1]
    out[oadr + c, 4] = ((-x[0] * v[5] + x[2] * v[3]) - x[3] * v[2]) + x[5] * v[0]
    out[oadr + c, 5] = ((x[0] * v[4] - x[1] * v[3]) + x[3] * v[1]) - x[4] * v[0]


@jit
def _add_row6(mat, r, v):
  """mat[r] += v for 6-vectors."""
  for k in range(6):
    mat[r, k] += v[k]


@jit
def _num_ancestors(m, j):
  """Number of dof ancestors of dof j, i.e. its position in its body's B row."""
  # from the legacy (nM) layout: M_rownnz drops the zero entries of simple bodies
  end = m.dof_Madr[j + 1] if j < m.nv - 1 else m.nM
  return end - (m.dof_Madr[j] + 1)


@jit
def _com_vel_vel(m, d, dcvel, dcdofdot):
  """d cvel / d qvel (B rows) and d cdof_dot / d qvel (D rows) (mjd_comVel_vel)."""
  for i in range(1, m.nbody):
    _copy_from_parent(m, dcvel, i)
    ba = m.B_rowadr[i]
    j = m.body_dofadr[i]
    last = j + m.body_dofnum[i]
    while j < last:
      jadr = _num_ancestors(m, j)
      jt = m.jnt_type[m.dof_jntid[j]]
      if jt == _FREE:
        # translations: cdof_dot = 0, cvel += cdof qvel
        for r in range(3):
          _add_row6(dcvel, ba + jadr + r, d.cdof[j + r])
        j += 3
        jadr += 3
        jt = _BALL
      if jt == _BALL:
        for r in range(3):
          _dcross_motion(dcdofdot, m.D_rowadr[j + r], dcvel, ba, jadr + r, d.cdof[j + r])
        for r in range(3):
          _add_row6(dcvel, ba + jadr + r, d.cdof[j + r])
        j += 3
      else:
        _dcross_motion(dcdofdot, m.D_rowadr[j], dcvel, ba, jadr, d.cdof[j])
        _add_row6(dcvel, ba + jadr, d.cdof[j])
        j += 1


@jit
def _inert_mul(i, v0, v1, v2, v3, v4, v5):
  """cinert i times a spatial motion vector, as a tuple (mju_mulInertVec)."""
  return (i[0] * v0 + i[3] * v1 + i[4] * v2 - i[8] * v4 + i[7] * v5,
          i[3] * v0 + i[1] * v1 + i[5] * v2 + i[8] * v3 - i[6] * v5,
          i[4] * v0 + i[5] * v1 + i[2] * v2 - i[7] * v3 + i[6] * v4,
          i[8] * v1 - i[7] * v2 + i[9] * v3,
          i[6] * v2 - i[8] * v0 + i[9] * v4,
          i[7] * v0 - i[6] * v1 + i[9] * v5)


@jit
def _cross_force(v0, v1, v2, v3, v4, v5, f0, f1, f2, f3, f4, f5):
  """v x* f for a spatial motion v and force f, as a tuple (mju_crossForce)."""
  return (-v2 * f1 + v1 * f2 - v5 * f4 + v4 * f5,
          v2 * f0 - v0 * f2 + v5 * f3 - v3 * f5,
          -v1 * f0 + v0 * f1 - v4 * f3 + v3 * f4,
          -v2 * f4 + v1 * f5,
          v2 * f3 - v0 * f5,
          -v1 * f3 + v0 * f4)


@jit
def _dot6(a, b):
  """6-vector dot product in mju_dot's order of additions (4 lanes, then the tail)."""
  return ((a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5])


@jit
def _body_dfrc(m, d, i, dcvel, dcacc, dcfrc):
  """Dcfrc(body i) = d(cinert cacc + cvel x* cinert cvel)/d qvel on its B row."""
  ci = d.cinert[i]
  cv = d.cvel[i]
  f = _inert_mul(ci, cv[0], cv[1], cv[2], cv[3], cv[4], cv[5])
  ba = m.B_rowadr[i]
  for c in range(ba, ba + m.B_rownnz[i]):
    a = dcacc[c]
    g = _inert_mul(ci, a[0], a[1], a[2], a[3], a[4], a[5])
    x = dcvel[c]
    ix = _inert_mul(ci, x[0], x[1], x[2], x[3], x[4], x[5])
    # d(cvel x* I cvel) = dcvel x* (I cvel) + cvel x* (I dcvel)
    t = _cross_force(x[0], x[1], x[2], x[3], x[4], x[5], f[0], f[1], f[2], f[3], f[4], f[5])
    u = _cross_force(cv[0], cv[1], cv[2], cv[3], cv[4], cv[5],
                     ix[0], ix[1], ix[2], ix[3], ix[4], ix[5])
    for k in range(6):
      dcfrc[c, k] = g[k] + (t[k] + u[k])


@jit
def rne_vel_into(m, d, dcdofdot, dcvel, dcacc, dcfrc):
  """qDeriv -= d qfrc_bias / d qvel, given work arrays (nD,6), (nB,6) x3 (mjd_rne_vel)."""
  for r in range(dcdofdot.shape[0]):
    for k in range(6):
      dcdofdot[r, k] = 0.0
  for r in range(dcvel.shape[0]):
    for k in range(6):
      dcvel[r, k] = 0.0
      dcacc[r, k] = 0.0
      dcfrc[r, k] = 0.0
  _com_vel_vel(m, d, dcvel, dcdofdot)
  for i in range(1, m.nbody):
    _copy_from_parent(m, dcacc, i)
    ba, bn = m.B_rowadr[i], m.B_rownnz[i]
    for j in range(m.body_dofadr[i], m.body_dofadr[i] + m.body_dofnum[i]):
      # dcacc += cdof_dot d(qvel) + d(cdof_dot) qvel; D row j starts like B row i
      _add_row6(dcacc, ba + _num_ancestors(m, j), d.cdof_dot[j])
      da = m.D_rowadr[j]
      q = d.qvel[j]
      for c in range(bn):
        for k in range(6):
          dcacc[ba + c, k] += dcdofdot[da + c, k] * q
    _body_dfrc(m, d, i, dcvel, dcacc, dcfrc)
  for i in range(m.nbody - 1, 0, -1):
    _add_to_parent(m, dcfrc, i)
  for j in range(m.nv):
    i = m.dof_bodyid[j]
    ba, da = m.B_rowadr[i], m.D_rowadr[j]
    for c in range(m.B_rownnz[i]):
      d.qDeriv[da + c] -= _dot6(dcfrc[ba + c], d.cdof[j])


@jit
def rne_vel(m, d):
  """qDeriv -= d qfrc_bias / d qvel. TEMPORARY: allocates its work arrays (see module notes)."""
  rne_vel_into(m, d, np.empty((m.nD, 6)), np.empty((m.nB, 6)), np.empty((m.nB, 6)),
               np.empty((m.nB, 6)))


@unit((M, D, b1), b1, needs=NEEDS_DERIVATIVE)
def smooth_vel(m, d, flg_bias):
  """qDeriv = d(qfrc_actuator + qfrc_passive [- qfrc_bias])/d qvel (mjd_smooth_vel)."""
  for k in range(m.nD):
    d.qDeriv[k] = 0.0
  actuator_vel(m, d)
  complete = passive_vel(m, d)
  if flg_bias:
    rne_vel(m, d)
  return complete


# ------------------------------------------------------------------------------------------------
# sparse LU in the D layout (mju_factorLUSparse / mju_solveLUSparse)


@jit
def factor_lu_sparse(lu, remaining, m):
  """In place reverse-order LU, original = (U+I) L, of a D-layout matrix (mju_factorLUSparse)."""
  # tree sparsity: no fill-in; `remaining` is an int work array of size nv
  n = m.nv
  rowadr, colind = m.D_rowadr, m.D_colind
  for i in range(n):
    remaining[i] = m.D_rownnz[i]
  for i in range(n - 1, -1, -1):
    # rows are consumed from the right, so the last remaining element of row i is (i, i)
    remaining[i] -= 1
    ii = rowadr[i] + remaining[i]
    for j in range(i - 1, -1, -1):
      ji = rowadr[j] + remaining[j] - 1
      if colind[ji] != i:
        continue
      remaining[j] -= 1
      lu[ji] = lu[ji] / lu[ii]
      luji = lu[ji]
      # (j,k) -= (i,k) (j,i) for k < i; row i's columns are a subset of row j's (tree)
      icnt = rowadr[i]
      jend = rowadr[j] + remaining[j]
      for jcnt in range(rowadr[j], jend):
        if icnt < rowadr[i] + remaining[i] and colind[icnt] == colind[jcnt]:
          lu[jcnt] -= lu[icnt] * luji
          icnt += 1


@jit
def _dot_sparse(vals, adr, x, colind, nnz):
  """Sparse-dense dot product in mju_dotSparse's order of additions (4 lanes, then the tail)."""
  r0 = r1 = r2 = r3 = 0.0
  k = 0
  while k <= nnz - 4:
    r0 += vals[adr + k] * x[colind[adr + k]]
    r1 += vals[adr + k + 1] * x[colind[adr + k + 1]]
    r2 += vals[adr + k + 2] * x[colind[adr + k + 2]]
    r3 += vals[adr + k + 3] * x[colind[adr + k + 3]]
    k += 4
  res = (r0 + r2) + (r1 + r3)
  while k < nnz:
    res += vals[adr + k] * x[colind[adr + k]]
    k += 1
  return res


@jit
def solve_lu_sparse(x, lu, m):
  """In place x <- inv(A) x given factor_lu_sparse's factor of A."""
  rownnz, rowadr, diag, colind = m.D_rownnz, m.D_rowadr, m.D_diag, m.D_colind
  n = m.nv
  # (U+I) y = x: U holds the columns right of the diagonal
  for i in range(n - 1, -1, -1):
    d1 = diag[i] + 1
    nnz = rownnz[i] - d1
    if nnz > 0:
      x[i] -= _dot_sparse(lu, rowadr[i] + d1, x, colind, nnz)
  # L x = y
  for i in range(n):
    dg = diag[i]
    adr = rowadr[i]
    if dg > 0:
      x[i] -= _dot_sparse(lu, adr, x, colind, dg)
    x[i] /= lu[adr + dg]


# ------------------------------------------------------------------------------------------------
# standalone free bodies (implicitfast): local 6x6 solve with the gyroscopic derivative


@jit
def is_free_body(m, body):
  """True for a body with a single free joint whose tree has no other dofs (mj_isFreeBody).
  Welded descendants are allowed: MuJoCo 4.0 gives such a body the free-body solve with the
  subtree's composite inertia (its step equals (M + h dbias/dqvel)^-1 qfrc_smooth with the
  whole tree's bias derivative; its published source requires a childless body)."""
  if m.body_jntnum[body] != 1 or m.jnt_type[m.body_jntadr[body]] != _FREE:
    return False
  adr = m.jnt_dofadr[m.body_jntadr[body]]
  return m.tree_dofnum[m.dof_treeid[adr]] == 6


@jit
def _mat3_mul(a, b, ta):
  """3x3 product a*b (or a'*b when ta) of row-major 9-arrays/tuples, written to a 9-tuple."""
  if ta:
    return (a[0] * b[0] + a[3] * b[3] + a[6] * b[6], a[0] * b[1] + a[3] * b[4] + a[6] * b[7],
            a[0] * b[2] + a[3] * b[5] + a[6] * b[8], a[1] * b[0] + a[4] * b[3] + a[7] * b[6],
            a[1] * b[1] + a[4] * b[4] + a[7] * b[7], a[1] * b[2] + a[4] * b[5] + a[7] * b[8],
            a[2] * b[0] + a[5] * b[3] + a[8] * b[6], a[2] * b[1] + a[5] * b[4] + a[8] * b[7],
            a[2] * b[2] + a[5] * b[5] + a[8] * b[8])
  return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
          a[0] * b[2] + a[1] * b[5] + a[2] * b[8], a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
          a[3] * b[1] + a[4] * b[4] + a[5] * b[7], a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
          a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
          a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@jit
def _bias_col(mass, s0, s1, s2, w0, w1, w2, h0, h1, h2, K, iw, j):
  """Column j of C = -mass [s]_x K + [w]_x Iw - [h]_x (h = Iw w) for _free_bias_blocks."""
  sk0 = s1 * K[6 + j] - s2 * K[3 + j]
  sk1 = s2 * K[j] - s0 * K[6 + j]
  sk2 = s0 * K[3 + j] - s1 * K[j]
  wi0 = w1 * iw[6 + j] - w2 * iw[3 + j]
  wi1 = w2 * iw[j] - w0 * iw[6 + j]
  wi2 = w0 * iw[3 + j] - w1 * iw[j]
  # -[h]_x entries: MuJoCo adds them as a third term (0 on the diagonal)
  e0 = h2 if j == 1 else (-h1 if j == 2 else 0.0)
  e1 = -h2 if j == 0 else (h0 if j == 2 else 0.0)
  e2 = h1 if j == 0 else (-h0 if j == 1 else 0.0)
  return -mass * sk0 + wi0 + e0, -mass * sk1 + wi1 + e1, -mass * sk2 + wi2 + e2


@jit
def _free_inertia(m, d, body):
  """(mass, com - joint origin, world inertia about the com as a row-major 9-tuple) of the
  rigid assembly a free body moves: the body itself, or with welded descendants their
  composite (crb, about the root's subtree com)."""
  if m.body_subtreemass[body] == m.body_mass[body]:
    Xi = d.ximat[body]
    inr = m.body_inertia[body]
    # Xi diag(inertia) Xi'
    x0 = Xi[0] * inr[0]; x1 = Xi[1] * inr[1]; x2 = Xi[2] * inr[2]
    x3 = Xi[3] * inr[0]; x4 = Xi[4] * inr[1]; x5 = Xi[5] * inr[2]
    x6 = Xi[6] * inr[0]; x7 = Xi[7] * inr[1]; x8 = Xi[8] * inr[2]
    i00 = x0 * Xi[0] + x1 * Xi[1] + x2 * Xi[2]
    i11 = x3 * Xi[3] + x4 * Xi[4] + x5 * Xi[5]
    i22 = x6 * Xi[6] + x7 * Xi[7] + x8 * Xi[8]
    i01 = x0 * Xi[3] + x1 * Xi[4] + x2 * Xi[5]
    i02 = x0 * Xi[6] + x1 * Xi[7] + x2 * Xi[8]
    i12 = x3 * Xi[6] + x4 * Xi[7] + x5 * Xi[8]
    return (m.body_mass[body], (d.xipos[body, 0] - d.xpos[body, 0],
                                d.xipos[body, 1] - d.xpos[body, 1],
                                d.xipos[body, 2] - d.xpos[body, 2]),
            (i00, i01, i02, i01, i11, i12, i02, i12, i22))
  # crb: inertia about p = subtree_com[root] (xx yy zz xy xz yz), mass * (com - p), mass
  c = d.crb[body]
  p = d.subtree_com[m.body_rootid[body]]
  mass = c[9]
  e0, e1, e2 = c[6] / mass, c[7] / mass, c[8] / mass
  ee = e0 * e0 + e1 * e1 + e2 * e2
  # parallel axis back to the com
  i00 = c[0] - mass * (ee - e0 * e0)
  i11 = c[1] - mass * (ee - e1 * e1)
  i22 = c[2] - mass * (ee - e2 * e2)
  i01 = c[3] + mass * e0 * e1
  i02 = c[4] + mass * e0 * e2
  i12 = c[5] + mass * e1 * e2
  return (mass, (p[0] + e0 - d.xpos[body, 0], p[1] + e1 - d.xpos[body, 1],
                 p[2] + e2 - d.xpos[body, 2]),
          (i00, i01, i02, i01, i11, i12, i02, i12, i22))


@jit
def _free_bias_blocks(m, d, body, adr):
  """(mass, lin, rot): 3x3 blocks of d qfrc_bias / d qvel_rot of a free body
  (freeBias_vel_blocks); the rotational columns of the 6x6 bias Jacobian are [-mass*lin; rot],
  the linear ones zero."""
  mass, sv, iw = _free_inertia(m, d, body)
  s0, s1, s2 = sv
  R = d.xmat[body]
  w0, w1, w2 = mm.mat_vec(R, d.qvel[adr + 3], d.qvel[adr + 4], d.qvel[adr + 5])
  ws0, ws1, ws2 = mm.cross(w0, w1, w2, s0, s1, s2)
  h0, h1, h2 = mm.mat_vec(iw, w0, w1, w2)
  wds = w0 * s0 + w1 * s1 + w2 * s2
  # K = [w x s]_x + [w]_x [s]_x: derivative of w x (w x s) wrt w
  K = (s0 * w0 - wds, s0 * w1 - ws2, s0 * w2 + ws1,
       s1 * w0 + ws2, s1 * w1 - wds, s1 * w2 - ws0,
       s2 * w0 - ws1, s2 * w1 + ws0, s2 * w2 - wds)
  lin = _mat3_mul(K, R, False)
  # C = -mass [s]_x K + [w]_x Iw - [Iw w]_x, column by column
  a0, a1, a2 = _bias_col(mass, s0, s1, s2, w0, w1, w2, h0, h1, h2, K, iw, 0)
  b0, b1, b2 = _bias_col(mass, s0, s1, s2, w0, w1, w2, h0, h1, h2, K, iw, 1)
  c0, c1, c2 = _bias_col(mass, s0, s1, s2, w0, w1, w2, h0, h1, h2, K, iw, 2)
  C = (a0, b0, c0, a1, b1, c1, a2, b2, c2)
  rot = _mat3_mul(_mat3_mul(R, C, True), R, False)
  return mass, lin, rot


@jit
def free_mhat(m, d, jnt, h, A):
  """A (6x6 row-major) = M - h d qfrc_smooth/d qvel of a standalone free body (mjd_freeMhat)."""
  # qDeriv was computed without the bias term: its gyroscopic derivative is added here
  body = m.jnt_bodyid[jnt]
  adr = m.jnt_dofadr[jnt]
  if not is_free_body(m, body):
    return False
  gather_free_block(m, d.M, adr, A)
  for r in range(6):
    ra = m.D_rowadr[adr + r]
    for k in range(m.D_rownnz[adr + r]):
      c = m.D_colind[ra + k] - adr
      A[6 * r + c] -= h * d.qDeriv[ra + k]
  free_gyro(m, d, jnt, h, A)
  return True


@jit
def gather_free_block(m, vals, adr, A):
  """A (6x6 row-major, symmetric) = the block of a free joint's dofs adr..adr+5 of `vals`, a
  matrix on M's lower-triangle pattern (d.M, or the discrete integrator's d.qMhat)."""
  for k in range(36):
    A[k] = 0.0
  for r in range(6):
    ra = m.M_rowadr[adr + r]
    for k in range(m.M_rownnz[adr + r]):
      c = m.M_colind[ra + k] - adr
      A[6 * r + c] = vals[ra + k]
      A[6 * c + r] = vals[ra + k]


@jit
def free_gyro(m, d, jnt, h, A):
  """A (6x6 row-major) += h d qfrc_bias / d qvel of the free body of joint jnt: the
  gyroscopic part of mjd_freeMhat."""
  body = m.jnt_bodyid[jnt]
  adr = m.jnt_dofadr[jnt]
  # qfrc_smooth has -qfrc_bias, so -h * d(-bias) adds +h * B on the rotational columns
  mass, lin, rot = _free_bias_blocks(m, d, body, adr)
  h_mass = -h * mass
  for r in range(3):
    for c in range(3):
      A[6 * r + 3 + c] += h_mass * lin[3 * r + c]
      A[6 * (3 + r) + 3 + c] += h * rot[3 * r + c]
  return True


@jit
def factor_lu6(A, pivot):
  """In place 6x6 LU with partial pivoting (mju_factorLU6); False if singular."""
  for k in range(6):
    pivot[k] = k
    maxval = abs(A[k * 6 + k])
    maxrow = k
    for i in range(k + 1, 6):
      v = abs(A[i * 6 + k])
      if v > maxval:
        maxval = v
        maxrow = i
    if maxval < _MINVAL:
      return False
    if maxrow != k:
      pivot[k] = maxrow
      for j in range(6):
        A[k * 6 + j], A[maxrow * 6 + j] = A[maxrow * 6 + j], A[k * 6 + j]
    diaginv = 1.0 / A[k * 6 + k]
    for i in range(k + 1, 6):
      A[i * 6 + k] *= diaginv
      aik = A[i * 6 + k]
      for j in range(k + 1, 6):
        A[i * 6 + j] -= aik * A[k * 6 + j]
  return True


@jit
def solve_lu6(x, adr, LU, pivot):
  """In place x[adr:adr+6] <- inv(A) x given factor_lu6's factor and pivots (mju_solveLU6)."""
  for i in range(6):
    p = pivot[i]
    if p != i:
      x[adr + i], x[adr + p] = x[adr + p], x[adr + i]
    for j in range(i):
      x[adr + i] -= LU[i * 6 + j] * x[adr + j]
  for i in range(5, -1, -1):
    for j in range(i + 1, 6):
      x[adr + i] -= LU[i * 6 + j] * x[adr + j]
    x[adr + i] /= LU[i * 6 + i]


# ------------------------------------------------------------------------------------------------
# mj_implicitSkip before mj_advance


@jit
def _implicit_full(m, d, qacc):
  """implicit: qLU = M - h qDeriv (D layout, with the bias derivative), sparse LU solve."""
  smooth_vel(m, d, True)
  h = m.opt_timestep[0]
  for k in range(m.nD):
    a = m.mapM2D[k]
    d.qLU[k] = (d.M[a] if a >= 0 else 0.0) - h * d.qDeriv[k]
  factor_lu_sparse(d.qLU, d.ivec_nv[0], m)
  solve_lu_sparse(qacc, d.qLU, m)


@jit
def _implicit_fast(m, d, qacc):
  """implicitfast: L'DL solve of qH = M - h qDeriv (no bias); free bodies by a 6x6 LU."""
  smooth_vel(m, d, False)
  h = m.opt_timestep[0]
  for k in range(m.nC):
    d.qH[k] = d.M[k] + (-h) * d.qDeriv[m.mapD2M[k]]
  # free-body rows keep M: their (possibly unsymmetric) block is solved locally below
  for j in range(m.njnt):
    if m.jnt_type[j] != _FREE or not is_free_body(m, m.jnt_bodyid[j]):
      continue
    adr = m.jnt_dofadr[j]
    for r in range(adr, adr + 6):
      for k in range(m.M_rowadr[r], m.M_rowadr[r] + m.M_rownnz[r]):
        d.qH[k] = d.M[k]
  smooth.warn_inertia(d, smooth.factor_i(d.qH, d.qHDiagInv, m.M_rownnz, m.M_rowadr,
                                         m.M_colind, m.nv))
  smooth.solve_ld(qacc, d.qH, d.qHDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind, m.nv)
  A = d.scratch_nbody.reshape(d.scratch_nbody.size)
  pivot = d.ivec_nv[1]
  for j in range(m.njnt):
    if not free_mhat(m, d, j, h, A):
      continue
    if factor_lu6(A, pivot):
      # the block is decoupled from other dofs (D is tree-local): overwrite its rows only
      adr = m.jnt_dofadr[j]
      for r in range(adr, adr + 6):
        qacc[r] = d.qfrc_smooth[r] + d.qfrc_constraint[r]
      solve_lu6(qacc, adr, A, pivot)


@unit((M, D, f8v), needs=NEEDS_IMPLICIT)
def implicit_qacc(m, d, qacc):
  """qacc solving (M - h qDeriv) qacc = qfrc_smooth + qfrc_constraint, as mj_implicitSkip does."""
  for i in range(m.nv):
    qacc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
  if m.opt_integrator[0] == _INT_IMPLICIT:
    _implicit_full(m, d, qacc)
  else:
    _implicit_fast(m, d, qacc)
