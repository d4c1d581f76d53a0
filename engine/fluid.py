"""Fluid forces (MuJoCo's mj_fluid in engine_passive.c): the inertia-box model per body and the
ellipsoid model per geom (fluidshape="ellipsoid"), accumulated into qfrc_fluid.

All velocities and forces are MuJoCo's (rot:lin) 6-vectors, kept as scalar tuples.
"""
import math

from numjoco.engine import math as mm
from numjoco.engine import smooth
from numjoco.engine._jit import inline, jit
from numjoco.engine.types import mjtGeom
from numjoco.engine._sig import unit, M, D, NEEDS_FLUID
from numjoco.engine.types import MINVAL as _MINVAL

_SPHERE, _CAPSULE, _CYLINDER = int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE), int(mjtGeom.CYLINDER)
_PI = math.pi


@jit
def local_velocity(m, d, body, p0, p1, p2, rot):
  """6D velocity of the frame (p, rot) rigidly attached to `body`, in that frame, minus the wind."""
  w0 = w1 = w2 = v0 = v1 = v2 = 0.0
  # dof-less (static or mocap-welded) bodies do not move: mj_objectVelocity returns zero
  if m.body_dofnum[m.body_weldid[body]] != 0:
    c = d.cvel[body]
    r = m.body_rootid[body]
    # cvel's linear part is taken at the subtree com; move it to p: v - (p - com) x w
    x0, x1, x2 = mm.cross(p0 - d.subtree_com[r, 0], p1 - d.subtree_com[r, 1],
                          p2 - d.subtree_com[r, 2], c[0], c[1], c[2])
    w0, w1, w2 = mm.mat_t_vec(rot, c[0], c[1], c[2])
    v0, v1, v2 = mm.mat_t_vec(rot, c[3] - x0, c[4] - x1, c[5] - x2)
  # the wind is a pure translation, so only its rotation into the local frame matters
  wind = m.opt_wind
  l0, l1, l2 = mm.mat_t_vec(rot, wind[0], wind[1], wind[2])
  return w0, w1, w2, v0 - l0, v1 - l1, v2 - l2


@jit
def _apply_local(m, d, body, rot, p0, p1, p2, t0, t1, t2, f0, f1, f2):
  """Rotate a local torque/force pair to world and add it, applied at p, into qfrc_fluid."""
  wt0, wt1, wt2 = mm.mat_vec(rot, t0, t1, t2)
  wf0, wf1, wf2 = mm.mat_vec(rot, f0, f1, f2)
  smooth.apply_ft(m, d, wf0, wf1, wf2, wt0, wt1, wt2, p0, p1, p2, body, d.qfrc_fluid)


@inline
def box_sides(m, i):
  """Sides of the uniform box with body i's mass and principal inertia."""
  mass = m.body_mass[i]
  inertia = m.body_inertia[i]
  return (math.sqrt(max(_MINVAL, inertia[1] + inertia[2] - inertia[0]) / mass * 6.0),
          math.sqrt(max(_MINVAL, inertia[0] + inertia[2] - inertia[1]) / mass * 6.0),
          math.sqrt(max(_MINVAL, inertia[0] + inertia[1] - inertia[2]) / mass * 6.0))


@jit
def inertia_box(m, d, i):
  """Drag on body i modelled as its equivalent inertia box (mj_inertiaBoxFluidModel)."""
  density, viscosity = m.opt_density[0], m.opt_viscosity[0]
  b0, b1, b2 = box_sides(m, i)
  rot = d.ximat[i]
  p0, p1, p2 = d.xipos[i, 0], d.xipos[i, 1], d.xipos[i, 2]
  w0, w1, w2, v0, v1, v2 = local_velocity(m, d, i, p0, p1, p2, rot)

  t0 = t1 = t2 = f0 = f1 = f2 = 0.0
  if viscosity > 0:
    # Stokes drag of the sphere whose diameter is the mean box side
    diam = (b0 + b1 + b2) / 3.0
    sa = -_PI * diam * diam * diam * viscosity
    sl = -3.0 * _PI * diam * viscosity
    t0, t1, t2 = w0 * sa, w1 * sa, w2 * sa
    f0, f1, f2 = v0 * sl, v1 * sl, v2 * sl
  if density > 0:
    # quadratic drag on the box faces
    f0 -= 0.5 * density * b1 * b2 * abs(v0) * v0
    f1 -= 0.5 * density * b0 * b2 * abs(v1) * v1
    f2 -= 0.5 * density * b0 * b1 * abs(v2) * v2
    q0, q1, q2 = b0 * b0 * b0 * b0, b1 * b1 * b1 * b1, b2 * b2 * b2 * b2
    t0 -= density * b0 * (q1 + q2) * abs(w0) * w0 / 64.0
    t1 -= density * b1 * (q0 + q2) * abs(w1) * w1 / 64.0
    t2 -= density * b2 * (q0 + q1) * abs(w2) * w2 / 64.0
  _apply_local(m, d, i, rot, p0, p1, p2, t0, t1, t2, f0, f1, f2)


@jit
def geom_semi_axes(size, gtype):
  """Semi-axes of the ellipsoid standing for a geom (mju_geomSemiAxes)."""
  if gtype == _SPHERE:
    return size[0], size[0], size[0]
  if gtype == _CAPSULE:
    return size[0], size[0], size[1] + size[0]
  if gtype == _CYLINDER:
    return size[0], size[0], size[1]
  return size[0], size[1], size[2]


@jit
def added_mass(density, coef, w0, w1, w2, v0, v1, v2):
  """Local torque/force from the fluid mass carried along with the geom (mj_addedMassForces)."""
  # the acceleration-dependent term is left out, as in MuJoCo (it would depend on qacc)
  # virtual linear and angular momenta; coef[6:9] virtual mass, coef[9:12] virtual inertia
  p0, p1, p2 = density * coef[6] * v0, density * coef[7] * v1, density * coef[8] * v2
  h0, h1, h2 = density * coef[9] * w0, density * coef[10] * w1, density * coef[11] * w2
  f0, f1, f2 = mm.cross(p0, p1, p2, w0, w1, w2)
  a0, a1, a2 = mm.cross(p0, p1, p2, v0, v1, v2)
  c0, c1, c2 = mm.cross(h0, h1, h2, w0, w1, w2)
  return (0.0 + a0) + c0, (0.0 + a1) + c1, (0.0 + a2) + c2, f0, f1, f2


@jit
def _max_moment(s0, s1, s2):
  """Moment of inertia scale of an ellipsoid about axis s0 (mji_ellipsoid_max_moment)."""
  dm = max(s1, s2)
  return 8.0 / 15.0 * _PI * s0 * ((dm * dm) * (dm * dm))


@jit
def viscous(density, viscosity, s0, s1, s2, coef, w0, w1, w2, v0, v1, v2):
  """Local drag, lift and viscous torque/force on an ellipsoid (mj_viscousForces)."""
  blunt, slender, ang_drag, kutta, magnus = coef[1], coef[2], coef[3], coef[4], coef[5]
  volume = 4.0 / 3.0 * _PI * s0 * s1 * s2
  d_max = max(max(s0, s1), s2)
  d_min = min(min(s0, s1), s2)
  d_mid = s0 + s1 + s2 - d_max - d_min
  a_max = _PI * d_max * d_mid

  # Magnus lift: proportional to w x v
  mg0, mg1, mg2 = mm.cross(w0, w1, w2, v0, v1, v2)
  ms = magnus * density * volume
  mg0, mg1, mg2 = mg0 * ms, mg1 * ms, mg2 * ms

  # Projected area along v and Kutta lift. MuJoCo evaluates these with semi-axes scaled by
  # d_max and a unit velocity: the raw products (~size^8 v^2) would fall below mjMINVAL for
  # small geoms or slow motion and be clamped, breaking the v^2 scaling of the lift.
  speed = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
  u0 = u1 = u2 = 0.0
  if speed > 0.0:
    u0, u1, u2 = v0 / speed, v1 / speed, v2 / speed
  inv = 1.0 / d_max if d_max > 0.0 else 0.0
  a12, a20, a01 = (s1 * inv) * (s2 * inv), (s2 * inv) * (s0 * inv), (s0 * inv) * (s1 * inv)
  # normal to the projected section (not unit), and the projection integrals
  n0, n1, n2 = (a12 * a12) * u0, (a20 * a20) * u1, (a01 * a01) * u2
  proj_denom = n0 * n0 + n1 * n1 + n2 * n2
  x0, x1, x2 = a12 * u0, a20 * u1, a01 * u2
  proj_num = x0 * x0 + x1 * x1 + x2 * x2
  a_proj = _PI * d_max * d_max * math.sqrt(proj_denom / max(_MINVAL, proj_num))
  # cosine between v and the section normal, folded with the normal's missing normalization
  cos_alpha = proj_num / max(_MINVAL, proj_denom)

  # Kutta-Joukowski lift: circulation (n x v) crossed with v
  k0, k1, k2 = mm.cross(n0, n1, n2, v0, v1, v2)
  ks = kutta * density * cos_alpha * a_proj
  k0, k1, k2 = k0 * ks, k1 * ks, k2 * ks
  kf0, kf1, kf2 = mm.cross(k0, k1, k2, v0, v1, v2)

  # Stokes drag of the equivalent sphere (linear in velocity)
  eq_d = 2.0 / 3.0 * (s0 + s1 + s2)
  lin_force_coef = 3.0 * _PI * eq_d
  lin_torque_coef = _PI * eq_d * eq_d * eq_d

  # quadratic angular drag from the moments about each axis
  i_max = 8.0 / 15.0 * _PI * d_mid * ((d_max * d_max) * (d_max * d_max))
  ii0, ii1, ii2 = _max_moment(s0, s1, s2), _max_moment(s1, s2, s0), _max_moment(s2, s0, s1)
  mv0 = w0 * (ang_drag * ii0 + slender * (i_max - ii0))
  mv1 = w1 * (ang_drag * ii1 + slender * (i_max - ii1))
  mv2 = w2 * (ang_drag * ii2 + slender * (i_max - ii2))

  drag_lin = (viscosity * lin_force_coef
              + density * speed * (a_proj * blunt + slender * (a_max - a_proj)))
  drag_ang = (viscosity * lin_torque_coef
              + density * math.sqrt(mv0 * mv0 + mv1 * mv1 + mv2 * mv2))
  return (-drag_ang * w0, -drag_ang * w1, -drag_ang * w2,
          mg0 + kf0 - drag_lin * v0, mg1 + kf1 - drag_lin * v1, mg2 + kf2 - drag_lin * v2)


@jit
def ellipsoid(m, d, body):
  """Forces on each geom of `body` modelled as an ellipsoid (mj_ellipsoidFluidModel)."""
  density, viscosity = m.opt_density[0], m.opt_viscosity[0]
  for g in range(m.body_geomadr[body], m.body_geomadr[body] + m.body_geomnum[body]):
    coef = m.geom_fluid[g]
    # coef[0] scales all forces; 0 turns the geom's fluid interaction off
    scale = coef[0]
    if scale == 0.0:
      continue
    s0, s1, s2 = geom_semi_axes(m.geom_size[g], m.geom_type[g])
    rot = d.geom_xmat[g]
    p0, p1, p2 = d.geom_xpos[g, 0], d.geom_xpos[g, 1], d.geom_xpos[g, 2]
    w0, w1, w2, v0, v1, v2 = local_velocity(m, d, body, p0, p1, p2, rot)
    t0, t1, t2, f0, f1, f2 = added_mass(density, coef, w0, w1, w2, v0, v1, v2)
    vt0, vt1, vt2, vf0, vf1, vf2 = viscous(density, viscosity, s0, s1, s2, coef,
                                           w0, w1, w2, v0, v1, v2)
    # same accumulation order as MuJoCo: added-mass terms first, then the viscous ones
    t0, t1, t2 = (t0 + vt0) * scale, (t1 + vt1) * scale, (t2 + vt2) * scale
    f0, f1, f2 = (f0 + vf0) * scale, (f1 + vf1) * scale, (f2 + vf2) * scale
    _apply_local(m, d, body, rot, p0, p1, p2, t0, t1, t2, f0, f1, f2)


@jit
def uses_ellipsoids(m, i):
  """True when body i takes the ellipsoid model: one ellipsoid-model geom (geom_fluid[g, 0] >
  0) switches the whole body from the inertia box to the ellipsoids."""
  for g in range(m.body_geomadr[i], m.body_geomadr[i] + m.body_geomnum[i]):
    if m.geom_fluid[g, 0] > 0:
      return True
  return False


@unit((M, D), needs=NEEDS_FLUID)
def fluid(m, d):
  """Add fluid forces into qfrc_fluid (passive.passive calls it for a nonzero density or
  viscosity only)."""
  for i in range(m.nbody):
    # massless bodies (and the world) get no fluid forces
    if m.body_mass[i] < _MINVAL:
      continue
    if uses_ellipsoids(m, i):
      ellipsoid(m, d, i)
    else:
      inertia_box(m, d, i)
