"""Tendon wrapping around spheres and cylinders (MuJoCo's mju_wrap, engine_util_misc.c).

Pure geometry on plain values: the wrap is solved in a 2D plane (the plane through the geom
centre and both endpoints for a sphere, the cylinder's cross-section for a cylinder), then
mapped back to 3D. With a side site, MuJoCo 4's rule applies: the tendon is the shortest path
homotopic to the polyline endpoint -> side site (projected onto the circle) -> endpoint, i.e.
the path with the same winding angle around the geom centre.
"""
import math

import numba

jit = numba.njit(cache=True, nogil=True, error_model="numpy")   # as engine.smooth.jit

MINVAL = 1e-15


@jit
def _is_intersect(a0, a1, b0, b1, c0, c1, e0, e1):
  """Whether 2D segments (a, b) and (c, e) intersect."""
  det = (e1 - c1) * (b0 - a0) - (e0 - c0) * (b1 - a1)
  if abs(det) < MINVAL:
    return False
  a = ((e0 - c0) * (a1 - c1) - (e1 - c1) * (a0 - c0)) / det
  b = ((b0 - a0) * (a1 - c1) - (b1 - a1) * (a0 - c0)) / det
  return 0 <= a <= 1 and 0 <= b <= 1


@jit
def _length_circle(p0, p1, q0, q1, ind, radius):
  """Arc length from p to q on the circle, counter-clockwise if ind else clockwise."""
  n = math.sqrt(p0 * p0 + p1 * p1)
  a0, a1 = p0 / n, p1 / n
  n = math.sqrt(q0 * q0 + q1 * q1)
  b0, b1 = q0 / n, q1 / n
  c = a0 * b0 + a1 * b1
  c = -1.0 if c < -1.0 else (1.0 if c > 1.0 else c)
  angle = math.acos(c)
  cross = p1 * q0 - p0 * q1
  if (cross > 0 and ind) or (cross < 0 and not ind):
    angle = 2 * math.pi - angle
  return radius * angle


@jit
def _wrap_circle(e0, e1, e2, e3, radius):
  """Shortest 2D wrap of the segment (e0,e1)-(e2,e3) around a circle at the origin, no side
  site: (length or -1, tangent points t0 (2), t1 (2))."""
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
  if t0 * t0 + t1 * t1 > sqrad:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  s0 = math.sqrt(sqlen0 - sqrad)
  s1 = math.sqrt(sqlen1 - sqrad)
  best = 0
  bgood = 0.0
  for i in range(2):
    sgn = 1.0 if i == 0 else -1.0
    x0 = (e0 * sqrad + sgn * radius * e1 * s0) / sqlen0
    x1 = (e1 * sqrad - sgn * radius * e0 * s0) / sqlen0
    y0 = (e2 * sqrad - sgn * radius * e3 * s1) / sqlen1
    y1 = (e3 * sqrad + sgn * radius * e2 * s1) / sqlen1
    good = -((x0 - y0) ** 2 + (x1 - y1) ** 2)
    if _is_intersect(e0, e1, x0, x1, e2, e3, y0, y1):
      good = -10000.0
    if i == 0:
      bgood = good
    elif not (bgood > good):
      best = 1
  sgn = 1.0 if best == 0 else -1.0
  x0 = (e0 * sqrad + sgn * radius * e1 * s0) / sqlen0
  x1 = (e1 * sqrad - sgn * radius * e0 * s0) / sqlen0
  y0 = (e2 * sqrad - sgn * radius * e3 * s1) / sqlen1
  y1 = (e3 * sqrad + sgn * radius * e2 * s1) / sqlen1
  if _is_intersect(e0, e1, x0, x1, e2, e3, y0, y1):
    return -1.0, 0.0, 0.0, 0.0, 0.0
  return _length_circle(x0, x1, y0, y1, best, radius), x0, x1, y0, y1


@jit
def _wrap_circle_side(e0, e1, e2, e3, s0, s1, radius):
  """2D wrap with a side point s on the circle (MuJoCo 4): the shortest path with the winding
  angle of the polyline e -> s -> e'. (length or -1, tangent points t0 (2), t1 (2))."""
  sqlen0 = e0 * e0 + e1 * e1
  sqlen1 = e2 * e2 + e3 * e3
  sqrad = radius * radius
  if sqlen0 < sqrad or sqlen1 < sqrad or radius < MINVAL:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  theta = (math.atan2(e0 * s1 - e1 * s0, e0 * s0 + e1 * s1)
           + math.atan2(s0 * e3 - s1 * e2, s0 * e2 + s1 * e3))
  l0, l1 = math.sqrt(sqlen0), math.sqrt(sqlen1)
  a0 = math.acos(min(1.0, radius / l0))
  a1 = math.acos(min(1.0, radius / l1))
  if theta >= a0 + a1:
    sgn = -1.0     # counter-clockwise wrap
    arc = theta - a0 - a1
  elif theta <= -(a0 + a1):
    sgn = 1.0      # clockwise wrap
    arc = -theta - a0 - a1
  else:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  q0 = math.sqrt(sqlen0 - sqrad)
  q1 = math.sqrt(sqlen1 - sqrad)
  x0 = (e0 * sqrad + sgn * radius * e1 * q0) / sqlen0
  x1 = (e1 * sqrad - sgn * radius * e0 * q0) / sqlen0
  y0 = (e2 * sqrad - sgn * radius * e3 * q1) / sqlen1
  y1 = (e3 * sqrad + sgn * radius * e2 * q1) / sqlen1
  return radius * arc, x0, x1, y0, y1


@jit
def _asin(x):
  return math.asin(-1.0 if x < -1.0 else (1.0 if x > 1.0 else x))


@jit
def _wrap_inside(e0, e1, e2, e3, radius):
  """2D inside wrap (side site inside the geom): one point on the circle the tendon passes
  through. (0 or -1, point (2), point (2))."""
  maxiter, zinit, tol = 20, 1 - 1e-7, 1e-6
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
  # default in case of numerical failure: the mean direction
  p0, p1 = 0.5 * (e0 + e2), 0.5 * (e1 + e3)
  n = math.sqrt(p0 * p0 + p1 * p1)
  if n > MINVAL:
    p0, p1 = p0 / n * radius, p1 / n * radius
  A = radius / len0
  B = radius / len1
  cosG = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1)
  if cosG < -1 + MINVAL:
    return -1.0, 0.0, 0.0, 0.0, 0.0
  if cosG > 1 - MINVAL:
    return 0.0, p0, p1, p0, p1
  G = math.acos(cosG)
  z = zinit
  f = _asin(A * z) + _asin(B * z) - 2 * _asin(z) + G
  if f > 0:
    return 0.0, p0, p1, p0, p1
  it = 0
  while it < maxiter and abs(f) > tol:
    df = (A / max(MINVAL, math.sqrt(max(0.0, 1 - z * z * A * A)))
          + B / max(MINVAL, math.sqrt(max(0.0, 1 - z * z * B * B)))
          - 2 / max(MINVAL, math.sqrt(max(0.0, 1 - z * z))))
    if df > -MINVAL:
      return 0.0, p0, p1, p0, p1
    z1 = z - f / df
    if z1 > z:
      return 0.0, p0, p1, p0, p1
    z = z1
    f = _asin(A * z) + _asin(B * z) - 2 * _asin(z) + G
    if f > tol:
      return 0.0, p0, p1, p0, p1
    it += 1
  if it >= maxiter:
    return 0.0, p0, p1, p0, p1
  if e0 * e3 - e1 * e2 > 0:
    v0, v1 = e0 / len0, e1 / len0
    ang = _asin(z) - _asin(A * z)
  else:
    v0, v1 = e2 / len1, e3 / len1
    ang = _asin(z) - _asin(B * z)
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
    a00, a01, a02 = p00 / n0, p01 / n0, p02 / n0
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
      nrm = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
    m0, m1, m2 = m0 / nrm, m1 / nrm, m2 / nrm
    a10 = m1 * a02 - m2 * a01
    a11 = m2 * a00 - m0 * a02
    a12 = m0 * a01 - m1 * a00
    nrm = math.sqrt(a10 * a10 + a11 * a11 + a12 * a12)
    a10, a11, a12 = a10 / nrm, a11 / nrm, a12 / nrm
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
    sd0 = s0 * a00 + s1 * a01 + s2 * a02
    sd1 = s0 * a10 + s1 * a11 + s2 * a12
    nrm = math.sqrt(sd0 * sd0 + sd1 * sd1)
    if nrm > MINVAL:
      sd0, sd1 = sd0 / nrm * radius, sd1 / nrm * radius
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
    L0 = math.sqrt((p00 - r0) ** 2 + (p01 - r1) ** 2)
    L1 = math.sqrt((p10 - r3) ** 2 + (p11 - r4) ** 2)
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
