"""Tendon wrapping around spheres and cylinders (MuJoCo's mju_wrap, engine_util_misc.c).

Pure geometry on plain values: the wrap is solved in a 2D plane (the plane through the geom
centre and both endpoints for a sphere, the cylinder's cross-section for a cylinder), then
mapped back to 3D. The arithmetic follows mju_wrap as MuJoCo 4.0.1's library computes it (its
inside and side-site wraps differ from the published source): with a side site outside the
geom, the tendon takes the tangent pair turning the way the polyline endpoint -> side site
(projected onto the circle) -> endpoint winds; with one inside, it passes
through one point on the circle found by Newton's method on an angle.
"""
import math


from numjoco.engine._jit import jit
from numjoco.engine.types import MINVAL


@jit
def _normalize2(x, y):
  """(x, y) scaled to unit length by its inverse norm, or (1, 0) if the norm is below MINVAL
  (mju_normalize)."""
  n = math.sqrt(x * x + y * y)
  if n < MINVAL:
    return 1.0, 0.0
  inv = 1 / n
  return x * inv, y * inv


@jit
def _normalize3(x, y, z):
  """(x, y, z) scaled to unit length by its inverse norm, or (1, 0, 0) if the norm is below
  MINVAL (mju_normalize3)."""
  n = math.sqrt(x * x + y * y + z * z)
  if n < MINVAL:
    return 1.0, 0.0, 0.0
  inv = 1 / n
  return x * inv, y * inv, z * inv


@jit
def _is_intersect(a0, a1, b0, b1, c0, c1, e0, e1):
  """Whether 2D segments (a, b) and (c, e) intersect, as MuJoCo 4.0.1's mju_wrap tests it: the
  four intersection parameters compared by sign, without division; the
  far ends exclusive."""
  det = (e1 - c1) * (b0 - a0) - (e0 - c0) * (b1 - a1)
  if abs(det) < MINVAL:
    return False
  sgn = 1.0 if det > 0 else -1.0
  far_a = ((e0 - c0) * (b1 - e1) - (e1 - c1) * (b0 - e0)) * sgn        # (a - 1) * |det|
  num_a = ((e0 - c0) * (a1 - c1) - (e1 - c1) * (a0 - c0)) * sgn        # a * |det|
  num_b = ((b0 - a0) * (a1 - c1) - (b1 - a1) * (a0 - c0)) * sgn        # b * |det|
  far_b = ((b0 - a0) * (b1 - e1) + (b1 - a1) * -(b0 - e0)) * sgn      # (b - 1) * |det|
  return far_a < 0 and num_a >= 0 and num_b >= 0 and far_b < 0


@jit
def _length_circle(p0, p1, q0, q1, ind, radius):
  """Arc length from p to q on the circle, the short way, or the long way when the turn from p
  to q is counter-clockwise and ind, or clockwise and not ind; arcs up to 1e-6 rad never flip
  (length_circle as MuJoCo 4.0.1 computes it: the angle by atan2)."""
  cross = p1 * q0 - p0 * q1
  angle = math.atan2(abs(cross), (p0 * q0 + p1 * q1) + 0.0)
  if angle > 1e-6 and ((cross > 0 and ind) or (cross < 0 and not ind)):
    angle = 2 * math.pi - angle
  return radius * angle


@jit
def _tangent_points(e0, e1, e2, e3, sgn, sqrad, radius, sqlen0, sqlen1, q0, q1):
  """The tangent points from the endpoints to the circle on the side sgn (+1 or -1)."""
  x0 = (e0 * sqrad + sgn * radius * e1 * q0) / sqlen0
  x1 = (e1 * sqrad - sgn * radius * e0 * q0) / sqlen0
  y0 = (e2 * sqrad - sgn * radius * e3 * q1) / sqlen1
  y1 = (e3 * sqrad + sgn * radius * e2 * q1) / sqlen1
  return x0, x1, y0, y1


@jit
def _wrap_circle_any(e0, e1, e2, e3, s0, s1, has_side, radius):
  """2D wrap of the segment (e0,e1)-(e2,e3) around a circle at the origin (wrap_circle as in
  MuJoCo 4.0.1's mju_wrap). (length or -1, tangent points t0 (2), t1 (2)).

  No wrap when an endpoint is inside the circle, the endpoints coincide, or the segment misses
  the circle and (with a side point s on the circle) the winding angle theta of the polyline
  e -> s -> e' differs from the direct angle by less than pi. Of the two tangent-point pairs,
  without a side point the shorter chord not crossing the segments wins; with one, the pair
  turning the way theta turns. No wrap when the chosen pair's segments cross. The arc length is
  |theta - angle(e, t0) - angle(t1, e')| * radius with a side point, else length_circle's.
  """
  sqlen0 = e0 * e0 + e1 * e1
  sqlen1 = e2 * e2 + e3 * e3
  sqrad = radius * radius
  if sqlen0 < sqrad or sqlen1 < sqrad or radius < MINVAL:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  d0, d1 = e2 - e0, e3 - e1
  dd = d0 * d0 + d1 * d1
  if dd < MINVAL:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  a = -(d0 * e0 + d1 * e1) / dd
  a = 0.0 if a < 0 else (1.0 if a > 1 else a)
  t0, t1 = a * d0 + e0, a * d1 + e1
  theta = 0.0
  if has_side:
    theta = (math.atan2(e0 * s1 - e1 * s0, e0 * s0 + e1 * s1)
             + math.atan2(s0 * e3 - s1 * e2, s0 * e2 + s1 * e3))
    if t0 * t0 + t1 * t1 > sqrad:
      phi = math.atan2(e0 * e3 - e1 * e2, e0 * e2 + e1 * e3)
      if abs(theta - phi) < math.pi:
        return -1.0, 0.0, 0.0, 0.0, 0.0
  elif t0 * t0 + t1 * t1 > sqrad:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  q0 = math.sqrt(sqlen0 - sqrad)
  q1 = math.sqrt(sqlen1 - sqrad)
  x0, x1, y0, y1 = _tangent_points(e0, e1, e2, e3, 1.0, sqrad, radius, sqlen0, sqlen1, q0, q1)
  good0 = -((x0 - y0) * (x0 - y0) + (x1 - y1) * (x1 - y1))
  if _is_intersect(e0, e1, x0, x1, e2, e3, y0, y1):
    good0 = -10000.0
  x0, x1, y0, y1 = _tangent_points(e0, e1, e2, e3, -1.0, sqrad, radius, sqlen0, sqlen1, q0, q1)
  good1 = -((x0 - y0) * (x0 - y0) + (x1 - y1) * (x1 - y1))
  if _is_intersect(e0, e1, x0, x1, e2, e3, y0, y1):
    good1 = -10000.0
  if has_side:
    best = 1 if theta > 0 else 0
  else:
    best = 0 if good0 > good1 else 1
  x0, x1, y0, y1 = _tangent_points(e0, e1, e2, e3, 1.0 if best == 0 else -1.0, sqrad, radius,
                                   sqlen0, sqlen1, q0, q1)
  if _is_intersect(e0, e1, x0, x1, e2, e3, y0, y1):
    return -1.0, 0.0, 0.0, 0.0, 0.0
  if has_side:
    arc = (theta - math.atan2(e0 * x1 - e1 * x0, e0 * x0 + e1 * x1)
           - math.atan2(y0 * e3 - y1 * e2, y0 * e2 + y1 * e3))
    return abs(arc) * radius, x0, x1, y0, y1
  return _length_circle(x0, x1, y0, y1, best, radius), x0, x1, y0, y1


@jit
def _wrap_circle(e0, e1, e2, e3, radius):
  """2D wrap around a circle at the origin without a side point (see _wrap_circle_any)."""
  return _wrap_circle_any(e0, e1, e2, e3, 0.0, 0.0, False, radius)


@jit
def _wrap_circle_side(e0, e1, e2, e3, s0, s1, radius):
  """2D wrap around a circle at the origin with a side point s on it (see _wrap_circle_any)."""
  return _wrap_circle_any(e0, e1, e2, e3, s0, s1, True, radius)


@jit
def _inside_f(t, A, B, G):
  """f(t) = asin(A sin t) + asin(B sin t) - 2t + G and sin t: zero at the inside-wrap angle."""
  z = math.sin(t)
  return math.asin(A * z) + math.asin(B * z) - (t + t) + G, z


@jit
def _wrap_inside(e0, e1, e2, e3, radius):
  """2D inside wrap (side site inside the geom): the one point on the circle the tendon passes
  through, as MuJoCo 4.0.1's mju_wrap computes it. (0 or -1, point (2),
  point (2)).

  No wrap when an endpoint is inside the circle or the segment crosses it. Otherwise Newton's
  method on the angle t (z = sin t) for f(t) = asin(A sin t) + asin(B sin t) - 2t + G with
  A = r/|e|, B = r/|e'|, G the angle between e and e', from t = pi/2 while |f| > 1e-6, at most
  20 steps; the point is e (if e x e' > 0, else e') turned by t - asin(A sin t) (B for e').
  When f(pi/2) > 0, the derivative is not negative, a step does not decrease t, f rises above
  1e-6, or 20 steps do not converge, the point is the mean direction of the endpoints.
  """
  len0 = math.sqrt(e0 * e0 + e1 * e1)
  len1 = math.sqrt(e2 * e2 + e3 * e3)
  d0, d1 = e2 - e0, e3 - e1
  dd = d0 * d0 + d1 * d1
  if len0 <= radius or len1 <= radius or radius < MINVAL or len0 < MINVAL or len1 < MINVAL:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  if dd > MINVAL:
    a = -(d0 * e0 + d1 * e1) / dd
    if 0 < a < 1:
      t0, t1 = e0 + a * d0, e1 + a * d1
      if math.sqrt(t0 * t0 + t1 * t1) <= radius:
        return -1.0, 0.0, 0.0, 0.0, 0.0
  # default, in case of numerical failure: the mean direction
  p0, p1 = _normalize2(0.5 * (e0 + e2), 0.5 * (e1 + e3))
  p0, p1 = p0 * radius, p1 * radius
  A = radius / len0
  B = radius / len1
  cosG = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1)
  if cosG < -1 + MINVAL:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  if cosG > 1 - MINVAL:
    return 0.0, p0, p1, p0, p1
  G = math.acos(cosG)
  t = 0.5 * math.pi
  z = 1.0
  f = math.asin(A) + math.asin(B) - math.pi + G
  if f > 0:
    return 0.0, p0, p1, p0, p1
  it = 0
  while it < 20 and abs(f) > 1e-6:
    sA = math.sqrt(1.0 + z * z * -A * A)
    sB = math.sqrt(1.0 + z * z * -B * B)
    df = (A / max(MINVAL, sA) + B / max(MINVAL, sB)) * math.cos(t) - 2.0
    if df > -MINVAL:
      return 0.0, p0, p1, p0, p1
    t1 = t - f / df
    if t1 > t:
      return 0.0, p0, p1, p0, p1
    t = t1
    f, z = _inside_f(t, A, B, G)
    if f > 1e-6:
      return 0.0, p0, p1, p0, p1
    it += 1
  if it >= 20:
    return 0.0, p0, p1, p0, p1
  if e0 * e3 - e1 * e2 > 0:
    v0, v1 = _normalize2(e0, e1)
    ang = t - math.asin(A * z)
  else:
    v0, v1 = _normalize2(e2, e3)
    ang = t - math.asin(B * z)
  c, s = math.cos(ang), math.sin(ang)
  p0 = radius * (c * v0 - s * v1)
  p1 = radius * (s * v0 + c * v1)
  return 0.0, p0, p1, p0, p1


@jit
def wrap(out, x0, x1, xpos, xmat, radius, is_cylinder, side, has_side):
  """Wrap the segment x0-x1 (3D) around a sphere or infinite cylinder at xpos/xmat (mju_wrap).

  Writes the two 3D tangent points into out[0:6]; returns the wrap length, or -1 if the
  straight segment is the tendon path.
  """
  # endpoints in the geom frame
  p00 = xmat[0] * (x0[0] - xpos[0]) + xmat[3] * (x0[1] - xpos[1]) + xmat[6] * (x0[2] - xpos[2])
  p01 = xmat[1] * (x0[0] - xpos[0]) + xmat[4] * (x0[1] - xpos[1]) + xmat[7] * (x0[2] - xpos[2])
  p02 = xmat[2] * (x0[0] - xpos[0]) + xmat[5] * (x0[1] - xpos[1]) + xmat[8] * (x0[2] - xpos[2])
  p10 = xmat[0] * (x1[0] - xpos[0]) + xmat[3] * (x1[1] - xpos[1]) + xmat[6] * (x1[2] - xpos[2])
  p11 = xmat[1] * (x1[0] - xpos[0]) + xmat[4] * (x1[1] - xpos[1]) + xmat[7] * (x1[2] - xpos[2])
  p12 = xmat[2] * (x1[0] - xpos[0]) + xmat[5] * (x1[1] - xpos[1]) + xmat[8] * (x1[2] - xpos[2])
  n0 = math.sqrt(p00 * p00 + p01 * p01 + p02 * p02)
  n1 = math.sqrt(p10 * p10 + p11 * p11 + p12 * p12)
  if n0 < MINVAL or n1 < MINVAL:
    return -1.0
  # 2D frame of the wrapping plane
  if not is_cylinder:
    inv = 1 / n0
    a00, a01, a02 = p00 * inv, p01 * inv, p02 * inv
    m0 = p01 * p12 - p02 * p11
    m1 = p02 * p10 - p00 * p12
    m2 = p00 * p11 - p01 * p10
    nrm = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
    if nrm < MINVAL:
      # endpoints parallel: any normal, from the largest component of axis 0
      i = 0
      if abs(a01) > abs(a00) and abs(a01) > abs(a02):
        i = 1
      if abs(a02) > abs(a00) and abs(a02) > abs(a01):
        i = 2
      b0 = 0.0 if i == 0 else 1.0
      b1 = 0.0 if i == 1 else 1.0
      b2 = 0.0 if i == 2 else 1.0
      m0 = a01 * b2 - a02 * b1
      m1 = a02 * b0 - a00 * b2
      m2 = a00 * b1 - a01 * b0
      m0, m1, m2 = _normalize3(m0, m1, m2)
    else:
      inv = 1 / nrm
      m0, m1, m2 = m0 * inv, m1 * inv, m2 * inv
    a10, a11, a12 = _normalize3(m1 * a02 - m2 * a01, m2 * a00 - m0 * a02, m0 * a01 - m1 * a00)
  else:
    a00, a01, a02 = 1.0, 0.0, 0.0
    a10, a11, a12 = 0.0, 1.0, 0.0
  e0 = p00 * a00 + p01 * a01 + p02 * a02
  e1 = p00 * a10 + p01 * a11 + p02 * a12
  e2 = p10 * a00 + p11 * a01 + p12 * a02
  e3 = p10 * a10 + p11 * a11 + p12 * a12
  if has_side:
    q0, q1, q2 = side[0] - xpos[0], side[1] - xpos[1], side[2] - xpos[2]
    s0 = xmat[0] * q0 + xmat[3] * q1 + xmat[6] * q2
    s1 = xmat[1] * q0 + xmat[4] * q1 + xmat[7] * q2
    s2 = xmat[2] * q0 + xmat[5] * q1 + xmat[8] * q2
    sd0, sd1 = _normalize2(s0 * a00 + s1 * a01 + s2 * a02, s0 * a10 + s1 * a11 + s2 * a12)
    sd0, sd1 = sd0 * radius, sd1 * radius
    if math.sqrt(s0 * s0 + s1 * s1 + s2 * s2) < radius:
      wlen, t0, t1, u0, u1 = _wrap_inside(e0, e1, e2, e3, radius)
    else:
      wlen, t0, t1, u0, u1 = _wrap_circle_side(e0, e1, e2, e3, sd0, sd1, radius)
  else:
    wlen, t0, t1, u0, u1 = _wrap_circle(e0, e1, e2, e3, radius)
  if wlen < 0:
    return -1.0
  # back to 3D in the geom frame
  r0 = a00 * t0 + a10 * t1
  r1 = a01 * t0 + a11 * t1
  r2 = a02 * t0 + a12 * t1
  r3 = a00 * u0 + a10 * u1
  r4 = a01 * u0 + a11 * u1
  r5 = a02 * u0 + a12 * u1
  if is_cylinder:
    L0 = math.sqrt((p00 - r0) * (p00 - r0) + (p01 - r1) * (p01 - r1))
    L1 = math.sqrt((p10 - r3) * (p10 - r3) + (p11 - r4) * (p11 - r4))
    tot = L0 + wlen + L1
    r2 = p02 + (p12 - p02) * L0 / tot
    r5 = p02 + (p12 - p02) * (L0 + wlen) / tot
    height = abs(r5 - r2)
    wlen = math.sqrt(wlen * wlen + height * height)
  out[0] = xmat[0] * r0 + xmat[1] * r1 + xmat[2] * r2 + xpos[0]
  out[1] = xmat[3] * r0 + xmat[4] * r1 + xmat[5] * r2 + xpos[1]
  out[2] = xmat[6] * r0 + xmat[7] * r1 + xmat[8] * r2 + xpos[2]
  out[3] = xmat[0] * r3 + xmat[1] * r4 + xmat[2] * r5 + xpos[0]
  out[4] = xmat[3] * r3 + xmat[4] * r4 + xmat[5] * r5 + xpos[1]
  out[5] = xmat[6] * r3 + xmat[7] * r4 + xmat[8] * r5 + xpos[2]
  return wlen
