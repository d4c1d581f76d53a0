"""Analytic narrowphase, as MuJoCo's engine_collision_primitive.c and engine_collision_box.c.

Every pair function has the signature

  f(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame) -> ncon

with geom 1 the one of lower geom type (lower geom id for equal types); size (3,), pos (3,),
mat (9,) row-major. `margin` is what MuJoCo 4 passes: the pair margin plus gap, which for a
geom pair is geom_margin[g1] + geom_margin[g2] + geom_gap[g1] + geom_gap[g2] (a sum, not a
max). Contacts with dist <= margin are written to dist (50,), pos (50, 3) and frame (50, 9):
the normal (from geom 1 to geom 2) into frame[k, 0:3] and the tangent hint into
frame[k, 3:6] (zero unless the function sets one), as MuJoCo's mjPreContact. frame[k, 6:9]
is left to `make_frame`, which the driver calls on every contact. box_box's edge contact may
exceed margin by its rounding slack (1e-13 times the summed half-sizes), as MuJoCo's.
Rows at and beyond the returned count are scratch: box_box keeps its work vectors there.
"""
import math


from numjoco.engine.collision.support import normalize3 as _normalize3, put3
from numjoco.engine import math as mm
from numjoco.engine._borrow import borrowed as _b
from numjoco.engine._jit import jit

from numjoco.engine._jit import inline as _inline
from numjoco.engine._sig import unit, i4, i8, f8, f8v, f8m
from numjoco.engine.types import MINVAL as _MINVAL
from numjoco.engine.types import MAXVAL as _MAXVAL

from numjoco.engine.types import MAXCONPAIR as _MAXCONPAIR
# capsule-capsule: sin^2 of the axis angle below which the axes count as parallel (MuJoCo 4.0;
# the published source tests |det| < mjMINVAL instead)
_CAPCAP_PARALLEL = 1e-8

# mjtGeom values handled here
_PLANE, _SPHERE, _CAPSULE, _CYLINDER, _BOX = 0, 2, 3, 5, 6

# box-box rounding scales (mjBOXBOX_*, double precision)
_BB_SEPEPS = 1e-13
_BB_PAREPS = 1e-16
_BB_SGNEPS = 1e-9
_BB_DUPEPS = 1e-14
_BB_EDGEBIAS = 1e-6
_BB_MAXVERT = 12

# box-box scratch layout (rows past any contact it can return, which is at most 8)
_S_POLY0, _S_POLY1 = 26, 38      # pos rows: two clip polygons of _BB_MAXVERT vertices
_S_DIST = 38                     # dist rows: per-vertex plane distances while clipping
_S_ROT = 49                      # frame row: box2 axes in box1 frame
_S_REL = 48                      # frame row: pos21 (0:3), pos12 (3:6)
_S_EDGE0, _S_EDGE1 = 47, 46      # frame rows: edge stage vectors
_S_FACE0, _S_FACE1 = 45, 44      # frame rows: face stage vectors


#------------------------------------ small helpers ---------------------------------------------



@_inline
def _clip(x, lo, hi):
  """mju_clip."""
  if x < lo:
    return lo
  if x > hi:
    return hi
  return x


@_inline
def _div(a, b):
  """a / b with IEEE semantics for b == 0, as the C code relies on (inf, or nan for 0/0)."""
  if b != 0.0:
    return a / b
  if a != a or a == 0.0:
    return math.nan
  return math.copysign(math.inf, a) * math.copysign(1.0, b)


@_inline
def _pick(v0, v1, v2, i):
  """Component i of (v0, v1, v2)."""
  if i == 0:
    return v0
  if i == 1:
    return v1
  return v2


@_inline
def put_contact(dist, pos, frame, k, d, px, py, pz, nx, ny, nz):
  """Write contact k: distance, position, normal; zero tangent."""
  dist[k] = d
  put3(pos, k, 0, px, py, pz)
  put3(frame, k, 0, nx, ny, nz)
  put3(frame, k, 3, 0.0, 0.0, 0.0)


@jit
def make_frame(frame):
  """Complete a contact frame (9,) from its normal and optional tangent: mju_makeFrame."""
  x0, x1, x2, _ = _normalize3(frame[0], frame[1], frame[2])
  frame[0], frame[1], frame[2] = x0, x1, x2
  y0, y1, y2 = frame[3], frame[4], frame[5]
  if y0 * y0 + y1 * y1 + y2 * y2 < 0.25:
    y0, y1, y2 = 0.0, 0.0, 0.0
    if -0.5 < x1 < 0.5:
      y1 = 1.0
    else:
      y2 = 1.0
  s = x0 * y0 + x1 * y1 + x2 * y2
  y0, y1, y2, _ = _normalize3(y0 - x0 * s, y1 - x1 * s, y2 - x2 * s)
  frame[3], frame[4], frame[5] = y0, y1, y2
  frame[6] = x1 * y2 - x2 * y1
  frame[7] = x2 * y0 - x0 * y2
  frame[8] = x0 * y1 - x1 * y0


#------------------------------------ raw kernels -----------------------------------------------

@_inline
def _plane_sphere_raw(margin, n0, n1, n2, q0, q1, q2, s0, s1, s2, radius, dist, pos, frame, k):
  """Plane (point q, normal n) against sphere (center s); contact k; returns 0 or 1."""
  cdist = (s0 - q0) * n0 + (s1 - q1) * n1 + (s2 - q2) * n2
  if cdist > margin + radius:
    return 0
  d = cdist - radius
  scl = -d / 2 - radius
  put_contact(dist, pos, frame, k, d, s0 + n0 * scl, s1 + n1 * scl, s2 + n2 * scl, n0, n1, n2)
  return 1


@_inline
def _sphere_sphere_raw(margin, a0, a1, a2, mat1, r1, b0, b1, b2, mat2, r2, dist, pos, frame,
                       k):
  """Sphere (center a) against sphere (center b); z axes of mat1, mat2 break the tie of
  coincident centers; contact k; returns 0 or 1."""
  d0, d1, d2 = a0 - b0, a1 - b1, a2 - b2
  cdist_sqr = d0 * d0 + d1 * d1 + d2 * d2
  min_dist = margin + r1 + r2
  if cdist_sqr > min_dist * min_dist:
    return 0
  d = math.sqrt(cdist_sqr) - r1 - r2
  n0, n1, n2, length = _normalize3(b0 - a0, b1 - a1, b2 - a2)
  if length < _MINVAL:
    z10, z11, z12 = mat1[2], mat1[5], mat1[8]
    z20, z21, z22 = mat2[2], mat2[5], mat2[8]
    n0, n1, n2, _ = _normalize3(z11 * z22 - z12 * z21, z12 * z20 - z10 * z22,
                                z10 * z21 - z11 * z20)
  scl = r1 + d / 2
  put_contact(dist, pos, frame, k, d, n0 * scl + a0, n1 * scl + a1, n2 * scl + a2, n0, n1, n2)
  return 1


@_inline
def _sphere_box_raw(margin, s0, s1, s2, radius, pos2, mat2, size2, dist, pos, frame, k):
  """Sphere (center s) against box; contact k; returns 0 or 1."""
  c0, c1, c2 = mm.mat_t_vec(mat2, s0 - pos2[0], s1 - pos2[1], s2 - pos2[2])
  # clamp to the box (mju_clampVec: only positive limits act)
  k0 = _clip(c0, -size2[0], size2[0]) if size2[0] > 0 else c0
  k1 = _clip(c1, -size2[1], size2[1]) if size2[1] > 0 else c1
  k2 = _clip(c2, -size2[2], size2[2]) if size2[2] > 0 else c2
  t0, t1, t2, d = _normalize3(k0 - c0, k1 - c1, k2 - c2)
  if d - radius > margin:
    return 0
  if d <= _MINVAL:
    # center inside the box: push out through the nearest face
    closest = (size2[0] + size2[1] + size2[2]) * 2
    face = 0
    for i in range(6):
      side = size2[i // 2] if i % 2 else -size2[i // 2]
      gap = abs(side - _pick(c0, c1, c2, i // 2))
      if closest > gap:
        closest = gap
        face = i
    sgn = -1.0 if face % 2 else 1.0
    u0 = sgn if face // 2 == 0 else 0.0
    u1 = sgn if face // 2 == 1 else 0.0
    u2 = sgn if face // 2 == 2 else 0.0
    scl = (radius - closest) / 2
    p0, p1, p2 = c0 + u0 * scl, c1 + u1 * scl, c2 + u2 * scl
    n0, n1, n2 = mm.mat_vec(mat2, u0, u1, u2)
    d = -closest
  else:
    e0, e1, e2 = c0 + t0 * radius, c1 + t1 * radius, c2 + t2 * radius
    p0, p1, p2 = k0 * 0.5 + e0 * 0.5, k1 * 0.5 + e1 * 0.5, k2 * 0.5 + e2 * 0.5
    n0, n1, n2 = mm.mat_vec(mat2, t0, t1, t2)
  w0, w1, w2 = mm.mat_vec(mat2, p0, p1, p2)
  put_contact(dist, pos, frame, k, d - radius, w0 + pos2[0], w1 + pos2[1], w2 + pos2[2], n0, n1, n2)
  return 1


#------------------------------------ plane collisions ------------------------------------------

@jit
def plane_sphere(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Plane : sphere (mjc_PlaneSphere)."""
  return _plane_sphere_raw(margin, mat1[2], mat1[5], mat1[8], pos1[0], pos1[1], pos1[2],
                           pos2[0], pos2[1], pos2[2], size2[0], dist, pos, frame, 0)


@jit
def plane_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Plane : capsule (mjc_PlaneCapsule): one sphere test per end, tangent along the axis."""
  a0, a1, a2 = mat2[2], mat2[5], mat2[8]
  h = size2[1]
  g0, g1, g2 = h * a0, h * a1, h * a2
  n0, n1, n2 = mat1[2], mat1[5], mat1[8]
  c1 = _plane_sphere_raw(margin, n0, n1, n2, pos1[0], pos1[1], pos1[2],
                         pos2[0] + g0, pos2[1] + g1, pos2[2] + g2, size2[0], dist, pos, frame, 0)
  c2 = _plane_sphere_raw(margin, n0, n1, n2, pos1[0], pos1[1], pos1[2],
                         pos2[0] - g0, pos2[1] - g1, pos2[2] - g2, size2[0], dist, pos, frame,
                         c1)
  for k in range(c1 + c2):
    put3(frame, k, 3, a0, a1, a2)
  return c1 + c2


@jit
def plane_cylinder(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Plane : cylinder (mjc_PlaneCylinder): up to 4 points on the lower disk."""
  n0, n1, n2 = mat1[2], mat1[5], mat1[8]
  a0, a1, a2 = mat2[2], mat2[5], mat2[8]
  prjaxis = n0 * a0 + n1 * a1 + n2 * a2
  if prjaxis > 0:  # make the axis point towards the plane
    a0, a1, a2 = -a0, -a1, -a2
    prjaxis = -prjaxis
  v0, v1, v2 = pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]
  dist0 = v0 * n0 + v1 * n1 + v2 * n2

  # radial direction of the disk point nearest to the plane
  v0, v1, v2 = a0 * prjaxis - n0, a1 * prjaxis - n1, a2 * prjaxis - n2
  len_sqr = v0 * v0 + v1 * v1 + v2 * v2
  radius = size2[0]
  if len_sqr >= _MINVAL * _MINVAL:
    scl = radius / math.sqrt(len_sqr)
    v0 *= scl
    v1 *= scl
    v2 *= scl
  else:  # disk parallel to the plane: use the cylinder's x axis
    v0, v1, v2 = mat2[0] * radius, mat2[3] * radius, mat2[6] * radius
  prjvec = v0 * n0 + v1 * n1 + v2 * n2

  h = size2[1]
  a0, a1, a2 = a0 * h, a1 * h, a2 * h
  prjaxis *= h

  d = dist0 + prjaxis + prjvec
  if d > margin:
    return 0
  put_contact(dist, pos, frame, 0, d, pos2[0] + v0 + a0 - n0 * d * 0.5, pos2[1] + v1 + a1 - n1 * d * 0.5,
       pos2[2] + v2 + a2 - n2 * d * 0.5, n0, n1, n2)
  cnt = 1

  d = dist0 - prjaxis + prjvec
  if d <= margin:
    put_contact(dist, pos, frame, cnt, d, pos2[0] + v0 - a0 - n0 * d * 0.5,
         pos2[1] + v1 - a1 - n1 * d * 0.5, pos2[2] + v2 - a2 - n2 * d * 0.5, n0, n1, n2)
    cnt += 1

  # two more points of the near disk, a third of a turn either side
  prjvec1 = -prjvec * 0.5
  d = dist0 + prjaxis + prjvec1
  if d <= margin:
    s0, s1, s2, _ = _normalize3(v1 * a2 - v2 * a1, v2 * a0 - v0 * a2, v0 * a1 - v1 * a0)
    scl = radius * math.sqrt(3.0) / 2
    s0, s1, s2 = s0 * scl, s1 * scl, s2 * scl
    for sgn in (1.0, -1.0):
      put_contact(dist, pos, frame, cnt, d,
           pos2[0] + sgn * s0 + a0 + v0 * -0.5 + n0 * (-d * 0.5),
           pos2[1] + sgn * s1 + a1 + v1 * -0.5 + n1 * (-d * 0.5),
           pos2[2] + sgn * s2 + a2 + v2 * -0.5 + n2 * (-d * 0.5), n0, n1, n2)
      cnt += 1
  return cnt


@jit
def plane_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Plane : box (mjc_PlaneBox): the first 4 corners below margin, in corner order."""
  n0, n1, n2 = mat1[2], mat1[5], mat1[8]
  dist0 = (pos2[0] - pos1[0]) * n0 + (pos2[1] - pos1[1]) * n1 + (pos2[2] - pos1[2]) * n2
  cnt = 0
  for i in range(8):
    l0 = size2[0] if i & 1 else -size2[0]
    l1 = size2[1] if i & 2 else -size2[1]
    l2 = size2[2] if i & 4 else -size2[2]
    c0, c1, c2 = mm.mat_vec(mat2, l0, l1, l2)
    ldist = n0 * c0 + n1 * c1 + n2 * c2
    if dist0 + ldist > margin or ldist > 0:
      continue
    d = dist0 + ldist
    scl = -d / 2
    put_contact(dist, pos, frame, cnt, d, c0 + pos2[0] + n0 * scl, c1 + pos2[1] + n1 * scl,
         c2 + pos2[2] + n2 * scl, n0, n1, n2)
    cnt += 1
    if cnt >= 4:
      return 4
  return cnt


#------------------------------------ sphere and capsule collisions -----------------------------

@jit
def sphere_sphere(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Sphere : sphere (mjc_SphereSphere)."""
  return _sphere_sphere_raw(margin, pos1[0], pos1[1], pos1[2], mat1, size1[0],
                            pos2[0], pos2[1], pos2[2], mat2, size2[0], dist, pos, frame, 0)


@jit
def sphere_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Sphere : capsule (mjc_SphereCapsule): sphere against the nearest axis point."""
  a0, a1, a2 = mat2[2], mat2[5], mat2[8]
  x = (a0 * (pos1[0] - pos2[0]) + a1 * (pos1[1] - pos2[1]) + a2 * (pos1[2] - pos2[2]))
  x = _clip(x, -size2[1], size2[1])
  return _sphere_sphere_raw(margin, pos1[0], pos1[1], pos1[2], mat1, size1[0],
                            a0 * x + pos2[0], a1 * x + pos2[1], a2 * x + pos2[2], mat2,
                            size2[0], dist, pos, frame, 0)


@jit
def sphere_cylinder(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Sphere : cylinder (mjc_SphereCylinder): side, cap or rim, by the sphere center."""
  radius, height = size2[0], size2[1]
  a0, a1, a2 = mat2[2], mat2[5], mat2[8]
  v0, v1, v2 = pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]
  x = a0 * v0 + a1 * v1 + a2 * v2
  q0, q1, q2 = a0 * x, a1 * x, a2 * x
  p0, p1, p2 = v0 - q0, v1 - q1, v2 - q2
  p_sqr = p0 * p0 + p1 * p1 + p2 * p2

  side = abs(x) < height
  cap = p_sqr < radius * radius
  if side and cap:  # center inside: keep the shallower exit
    if height - abs(x) < radius - math.sqrt(p_sqr):
      side = False
    else:
      cap = False

  if side:
    return _sphere_sphere_raw(margin, pos1[0], pos1[1], pos1[2], mat1, size1[0],
                              q0 + pos2[0], q1 + pos2[1], q2 + pos2[2], mat2, size2[0],
                              dist, pos, frame, 0)
  if cap:
    hs = height if x > 0 else -height
    n0, n1, n2 = (a0, a1, a2) if x > 0 else (-a0, -a1, -a2)
    ncon = _plane_sphere_raw(margin, n0, n1, n2, pos2[0] + a0 * hs, pos2[1] + a1 * hs,
                             pos2[2] + a2 * hs, pos1[0], pos1[1], pos1[2], size1[0],
                             dist, pos, frame, 0)
    if ncon:  # the cap normal points out of the cylinder: flip it to point from the sphere
      frame[0, 0] = -frame[0, 0]
      frame[0, 1] = -frame[0, 1]
      frame[0, 2] = -frame[0, 2]
    return ncon

  # rim: sphere against a point
  scl = size2[0] / math.sqrt(p_sqr)
  hs = height if x > 0 else -height
  return _sphere_sphere_raw(margin, pos1[0], pos1[1], pos1[2], mat1, size1[0],
                            a0 * hs + p0 * scl + pos2[0], a1 * hs + p1 * scl + pos2[1],
                            a2 * hs + p2 * scl + pos2[2], mat2, 0.0, dist, pos, frame, 0)


@jit
def capsule_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Capsule : capsule (mjc_CapsuleCapsule, as MuJoCo 4.0): nearest segment points; when
  (nearly) parallel, the two ends of the overlap."""
  h1, h2 = size1[1], size2[1]
  e0, e1, e2 = mat1[2] * h1, mat1[5] * h1, mat1[8] * h1
  f0, f1, f2 = mat2[2] * h2, mat2[5] * h2, mat2[8] * h2
  d0, d1, d2 = pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]
  ma = e0 * e0 + e1 * e1 + e2 * e2
  mb = -(e0 * f0 + e1 * f1 + e2 * f2)
  mc = f0 * f0 + f1 * f1 + f2 * f2
  u = -(e0 * d0 + e1 * d1 + e2 * d2)
  v = f0 * d0 + f1 * d1 + f2 * d2
  det = ma * mc - mb * mb
  r1, r2 = size1[0], size2[0]

  if det >= _CAPCAP_PARALLEL * ma * mc:
    x1 = (mc * u - mb * v) / det
    x2 = (ma * v - mb * u) / det
    if x1 > 1:
      x1 = 1.0
      x2 = (v - mb) / mc
    elif x1 < -1:
      x1 = -1.0
      x2 = (v + mb) / mc
    if x2 > 1:
      x2 = 1.0
      x1 = _clip((u - mb) / ma, -1.0, 1.0)
    elif x2 < -1:
      x2 = -1.0
      x1 = _clip((u + mb) / ma, -1.0, 1.0)
    return _sphere_sphere_raw(margin, e0 * x1 + pos1[0], e1 * x1 + pos1[1], e2 * x1 + pos1[2],
                              mat1, r1, f0 * x2 + pos2[0], f1 * x2 + pos2[1],
                              f2 * x2 + pos2[2], mat2, r2, dist, pos, frame, 0)

  # (nearly) parallel axes: one contact at each end of the overlap along capsule 1's axis,
  # lower end first; each end is either an end of capsule 1 or an end of capsule 2
  xp = (u - mb) / ma  # capsule 2's +end, in capsule 1's axis coordinate
  xm = (u + mb) / ma  # capsule 2's -end
  n = 0
  for upper in range(2):
    if upper:
      from2 = max(xp, xm) < 1
      end2 = 1.0 if xp >= xm else -1.0
      end1 = 1.0
    else:
      from2 = min(xp, xm) > -1
      end2 = 1.0 if xp <= xm else -1.0
      end1 = -1.0
    if from2:  # an end of capsule 2 against its projection on capsule 1
      x1 = _clip((u - mb * end2) / ma, -1.0, 1.0)
      n += _sphere_sphere_raw(margin, e0 * x1 + pos1[0], e1 * x1 + pos1[1], e2 * x1 + pos1[2],
                              mat1, r1, pos2[0] + f0 * end2, pos2[1] + f1 * end2,
                              pos2[2] + f2 * end2, mat2, r2, dist, pos, frame, n)
    else:  # an end of capsule 1 against its projection on capsule 2
      x2 = _clip((v - mb * end1) / mc, -1.0, 1.0)
      n += _sphere_sphere_raw(margin, pos1[0] + e0 * end1, pos1[1] + e1 * end1,
                              pos1[2] + e2 * end1, mat1, r1, f0 * x2 + pos2[0],
                              f1 * x2 + pos2[1], f2 * x2 + pos2[2], mat2, r2, dist, pos,
                              frame, n)
  return n


@jit
def sphere_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Sphere : box (mjc_SphereBox)."""
  return _sphere_box_raw(margin, pos1[0], pos1[1], pos1[2], size1[0], pos2, mat2, size2,
                         dist, pos, frame, 0)


@_inline
def _clamp_count(x, s, c1, c2, j):
  """Clamp x to [-s, s]; count a clamp in c1 and remember its axis j in c2."""
  if x < -s:
    return -s, c1 + 1, j
  if x > s:
    return s, c1 + 1, j
  return x, c1, c2


@_inline
def _capsule_box_second(cltype, clface, clcorner, cledge, axisdir, bestsegmentpos, bestboxpos,
                        p0, p1, p2, x0, x1, x2, h0, h1, h2, size2):
  """Segment coordinate of capsule_box's second point, relative to the first (-4: none); from
  where the first point lies (box corner, edge middle, or a capsule end at a face)."""
  secondpos = -4.0
  if cltype >= 0 and cltype // 3 != 1:
    # a box corner is nearest: a second point along an edge or a face
    c1 = axisdir ^ clcorner
    if c1 != 0 and c1 != 7:
      if c1 == 1 or c1 == 2 or c1 == 4:
        mul = 1.0
        de = 1 - bestsegmentpos
        dp = 1 + bestsegmentpos
      else:
        mul = -1.0
        c1 = 7 - c1
        dp = 1 - bestsegmentpos
        de = 1 + bestsegmentpos
      if c1 == 1:
        ax, ax1, ax2 = 0, 1, 2
      elif c1 == 2:
        ax, ax1, ax2 = 1, 2, 0
      else:
        ax, ax1, ax2 = 2, 0, 1
      xa = _pick(x0, x1, x2, ax)
      if xa * xa > 0.5:  # along the edge
        secondpos = de
        e1 = _div(2 * size2[ax], abs(_pick(h0, h1, h2, ax)))
        if e1 < secondpos:
          secondpos = e1
        secondpos *= mul
      else:  # along a face
        secondpos = dp
        e1 = _div(2 * size2[ax1], abs(_pick(h0, h1, h2, ax1)))
        if e1 < secondpos:
          secondpos = e1
        e1 = _div(2 * size2[ax2], abs(_pick(h0, h1, h2, ax2)))
        if e1 < secondpos:
          secondpos = e1
        secondpos *= -mul

  elif cltype >= 0:
    # the middle of a box edge is nearest: a second point only in a cross configuration
    c1 = (axisdir ^ clcorner) & (7 - (1 << cledge))
    if c1 == 1 or c1 == 2 or c1 == 4:
      ax = cledge
      ax1, ax2 = (ax + 1) % 3, (ax + 2) % 3
      if abs(_pick(x0, x1, x2, ax1)) > abs(_pick(x0, x1, x2, ax2)):
        ax1 = ax2
      ax2 = 3 - ax - ax1
      if c1 & (1 << ax2):
        mul = 1.0
        secondpos = 1 - bestsegmentpos
      else:
        mul = -1.0
        secondpos = 1 + bestsegmentpos
      e1 = _div(2 * size2[ax2], abs(_pick(h0, h1, h2, ax2)))
      if e1 < secondpos:
        secondpos = e1
      if ((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0):
        e2 = 1 - bestboxpos
      else:
        e2 = 1 + bestboxpos
      e1 = _div(size2[ax] * e2, abs(_pick(h0, h1, h2, ax)))
      if e1 < secondpos:
        secondpos = e1
      secondpos *= mul

  elif clface != -1:
    # a capsule end is nearest to a face: second point as far as the segment stays above it
    mul = 1.0 if cltype == -3 else -1.0
    secondpos = 2.0
    t0, t1, t2 = p0 + h0 * -mul, p1 + h1 * -mul, p2 + h2 * -mul
    for i in range(3):
      if i == clface:
        continue
      ti = _pick(t0, t1, t2, i)
      hi = _pick(h0, h1, h2, i)
      e1 = _div(size2[i] - ti, hi) * mul
      if e1 > 0 and e1 < secondpos:
        secondpos = e1
      e1 = _div(-size2[i] - ti, hi) * mul
      if e1 > 0 and e1 < secondpos:
        secondpos = e1
    secondpos *= mul

  return secondpos


@jit
def capsule_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Capsule : box (mjc_CapsuleBox): closest segment point, plus a second point along the
  segment when the capsule lies along a box face or edge; each is a sphere : box test."""
  halflength = size1[1]

  # capsule center, axis and half-axis in the box frame
  p0, p1, p2 = mm.mat_t_vec(mat2, pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2])
  x0, x1, x2 = mm.mat_t_vec(mat2, mat1[2], mat1[5], mat1[8])
  h0, h1, h2 = x0 * halflength, x1 * halflength, x2 * halflength
  axisdir = (1 if h0 > 0 else 0) + (2 if h1 > 0 else 0) + (4 if h2 > 0 else 0)

  bestdistmax = margin + 2 * (size1[0] + halflength + size2[0] + size2[1] + size2[2])
  bestdist = bestdistmax
  bestsegmentpos = 0.0
  bestboxpos = 0.0
  cltype = -4   # -3, -1: a capsule end nearest to a face; 0..8: an edge (clamp codes)
  clface = -1
  clcorner = 0
  cledge = 0

  # capsule ends against the faces
  for i in (-1, 1):
    e0, e1, e2 = p0 + h0 * i, p1 + h1 * i, p2 + h2 * i
    c1, c2 = 0, -1
    t0, c1, c2 = _clamp_count(e0, size2[0], c1, c2, 0)
    t1, c1, c2 = _clamp_count(e1, size2[1], c1, c2, 1)
    t2, c1, c2 = _clamp_count(e2, size2[2], c1, c2, 2)
    if c1 > 1:
      continue
    t0 -= e0
    t1 -= e1
    t2 -= e2
    d = t0 * t0 + t1 * t1 + t2 * t2
    if d < bestdist:
      bestdist = d
      bestsegmentpos = float(i)
      cltype = -2 + i
      clface = c2

  # capsule segment against the 12 edges
  for j in range(3):
    sj = size2[j]
    hj = _pick(h0, h1, h2, j)
    for i in range(8):
      if i & (1 << j):
        continue
      b0 = 0.0 if j == 0 else (size2[0] if i & 1 else -size2[0])
      b1 = 0.0 if j == 1 else (size2[1] if i & 2 else -size2[1])
      b2 = 0.0 if j == 2 else (size2[2] if i & 4 else -size2[2])
      f0, f1, f2 = b0 - p0, b1 - p1, b2 - p2
      ma = sj * sj
      mb = -sj * hj
      mc = size1[1] * size1[1]
      u = -sj * _pick(f0, f1, f2, j)
      v = h0 * f0 + h1 * f1 + h2 * f2
      det = ma * mc - mb * mb
      if abs(det) < _MINVAL:
        continue
      idet = 1 / det
      y1 = (mc * u - mb * v) * idet
      y2 = (ma * v - mb * u) * idet
      s1 = s2 = 1  # 1: interior; 0, 2: clamped to the lower, upper end
      if y1 > 1:
        y1, s1 = 1.0, 2
        y2 = (v - mb) * (1 / mc)
      elif y1 < -1:
        y1, s1 = -1.0, 0
        y2 = (v + mb) * (1 / mc)
      if y2 > 1:
        y2, s2 = 1.0, 2
        y1 = (u - mb) * (1 / ma)
        if y1 > 1:
          y1, s1 = 1.0, 2
        elif y1 < -1:
          y1, s1 = -1.0, 0
      elif y2 < -1:
        y2, s2 = -1.0, 0
        y1 = (u + mb) * (1 / ma)
        if y1 > 1:
          y1, s1 = 1.0, 2
        elif y1 < -1:
          y1, s1 = -1.0, 0
      f0 += h0 * -y2
      f1 += h1 * -y2
      f2 += h2 * -y2
      if j == 0:
        f0 += sj * y1
      elif j == 1:
        f1 += sj * y1
      else:
        f2 += sj * y1
      d = f0 * f0 + f1 * f1 + f2 * f2
      code = s1 * 3 + s2
      # the -MINVAL guards against an axis numerically parallel to the box (as MuJoCo)
      if d < bestdist - _MINVAL:
        bestdist = d
        bestsegmentpos = y2
        bestboxpos = y1
        clcorner = i + (1 << j) * (code // 6)
        cledge = j
        cltype = code

  if cltype == -4:
    return 0
  secondpos = _capsule_box_second(cltype, clface, clcorner, cledge, axisdir, bestsegmentpos,
                                  bestboxpos, p0, p1, p2, x0, x1, x2, h0, h1, h2, size2)

  # sphere : box at the first point, then at the second one
  t0, t1, t2 = (p0 + h0 * bestsegmentpos, p1 + h1 * bestsegmentpos,
                p2 + h2 * bestsegmentpos)
  w0, w1, w2 = mm.mat_vec(mat2, t0, t1, t2)
  n = _sphere_box_raw(margin, w0 + pos2[0], w1 + pos2[1], w2 + pos2[2], size1[0], pos2, mat2,
                      size2, dist, pos, frame, 0)
  if secondpos > -3:
    s = secondpos + bestsegmentpos
    t0, t1, t2 = p0 + h0 * s, p1 + h1 * s, p2 + h2 * s
    w0, w1, w2 = mm.mat_vec(mat2, t0, t1, t2)
    n += _sphere_box_raw(margin, w0 + pos2[0], w1 + pos2[1], w2 + pos2[2], size1[0], pos2,
                         mat2, size2, dist, pos, frame, n)
  return n


#------------------------------------ box : box -------------------------------------------------

@_inline
def _clip_half_plane(pos, dist, nin, cur, spare, coord, sign, limit):
  """Clip the polygon in pos rows cur.. (nin vertices) to sign * v[coord] <= limit, writing to
  rows spare.. unless every vertex is inside; returns (nout, cur, spare) after the swap."""
  all_inside = True
  for k in range(nin):
    dk = sign * pos[cur + k, coord] - limit
    dist[_S_DIST + k] = dk
    all_inside &= dk <= 0
  if all_inside:
    return nin, cur, spare
  nout = 0
  for k in range(nin):
    k1 = 0 if k + 1 == nin else k + 1
    dp = dist[_S_DIST + k]
    dq = dist[_S_DIST + k1]
    if dp <= 0 and nout < _BB_MAXVERT:
      for c in range(3):
        pos[spare + nout, c] = pos[cur + k, c]
      nout += 1
    if ((dp < 0 and dq > 0) or (dp > 0 and dq < 0)) and nout < _BB_MAXVERT:
      t = dp / (dp - dq)
      for c in range(3):
        pos[spare + nout, c] = pos[cur + k, c] + t * (pos[cur + k1, c] - pos[cur + k, c])
      nout += 1
  return nout, spare, cur


@_inline
def _box_box_edge(code, size1, pos1, mat1, size2, septol, dist, pos, frame):
  """Edge-edge stage of box_box: one contact at the midpoint of the closest edge points."""
  rot = frame[_S_ROT]
  rel = frame[_S_REL]       # pos21 in 0:3
  ev = frame[_S_EDGE0]      # axis 0:3, a2 3:6, d2 6:9
  cv = frame[_S_EDGE1]      # c1 0:3, cc 3:6
  i = (code - 6) // 3
  j = (code - 6) % 3
  i1, i2 = (i + 1) % 3, (i + 2) % 3
  j1, j2 = (j + 1) % 3, (j + 2) % 3

  # unit separating axis in box1 frame, from box1 towards box2
  ev[i] = 0.0
  ev[i1] = -rot[3 * i2 + j]
  ev[i2] = rot[3 * i1 + j]
  a0, a1, a2, _ = _normalize3(ev[0], ev[1], ev[2])
  if a0 * rel[0] + a1 * rel[1] + a2 * rel[2] < 0:
    a0, a1, a2 = -a0, -a1, -a2
  ev[0], ev[1], ev[2] = a0, a1, a2
  for c in range(3):
    ev[3 + c] = a0 * rot[c] + a1 * rot[3 + c] + a2 * rot[6 + c]
    ev[6 + c] = rot[3 * c + j]

  # near-zero axis components make the supporting edge ambiguous: try both
  amb1 = -1
  amb2 = -1
  if abs(ev[i1]) < _BB_SGNEPS:
    amb1 = i1
  elif abs(ev[i2]) < _BB_SGNEPS:
    amb1 = i2
  if abs(ev[3 + j1]) < _BB_SGNEPS:
    amb2 = j1
  elif abs(ev[3 + j2]) < _BB_SGNEPS:
    amb2 = j2

  b = ev[6 + i]  # d1 . d2 with d1 = e_i
  denom = 1 - b * b
  best = _MAXVAL
  w10 = w11 = w12 = w20 = w21 = w22 = 0.0
  for v1 in range(2 if amb1 >= 0 else 1):
    for v2 in range(2 if amb2 >= 0 else 1):
      # box1 edge corner: support along +axis
      cv[i] = 0.0
      cv[i1] = size1[i1] if ev[i1] >= 0 else -size1[i1]
      cv[i2] = size1[i2] if ev[i2] >= 0 else -size1[i2]
      if amb1 >= 0 and v1:
        cv[amb1] = -cv[amb1]
      # box2 edge corner: support along -axis, in box2 coordinates
      cv[3 + j] = 0.0
      cv[3 + j1] = -size2[j1] if ev[3 + j1] >= 0 else size2[j1]
      cv[3 + j2] = -size2[j2] if ev[3 + j2] >= 0 else size2[j2]
      if amb2 >= 0 and v2:
        cv[3 + amb2] = -cv[3 + amb2]
      q0, q1, q2 = mm.mat_vec(rot, cv[3], cv[4], cv[5])
      q0 += rel[0]
      q1 += rel[1]
      q2 += rel[2]

      # closest points of the two segments (unit directions), clamped
      g0, g1, g2 = q0 - cv[0], q1 - cv[1], q2 - cv[2]
      d1e = _pick(g0, g1, g2, i)
      d2e = ev[6] * g0 + ev[7] * g1 + ev[8] * g2
      s = 0.0 if denom < _MINVAL else (d1e - b * d2e) / denom
      s = _clip(s, -size1[i], size1[i])
      t = _clip(b * s - d2e, -size2[j], size2[j])
      s = _clip(d1e + b * t, -size1[i], size1[i])

      r0, r1, r2 = cv[0], cv[1], cv[2]
      if i == 0:
        r0 += s
      elif i == 1:
        r1 += s
      else:
        r2 += s
      u0, u1, u2 = q0 + ev[6] * t, q1 + ev[7] * t, q2 + ev[8] * t
      gap0, gap1, gap2 = u0 - r0, u1 - r1, u2 - r2
      gap2sq = gap0 * gap0 + gap1 * gap1 + gap2 * gap2
      if gap2sq < best:
        best = gap2sq
        w10, w11, w12 = r0, r1, r2
        w20, w21, w22 = u0, u1, u2

  d = (w20 - w10) * a0 + (w21 - w11) * a1 + (w22 - w12) * a2
  if d > septol:
    return 0
  m0, m1, m2 = mm.mat_vec(mat1, 0.5 * (w10 + w20), 0.5 * (w11 + w21), 0.5 * (w12 + w22))
  n0, n1, n2 = mm.mat_vec(mat1, a0, a1, a2)
  put_contact(dist, pos, frame, 0, d, m0 + pos1[0], m1 + pos1[1], m2 + pos1[2], n0, n1, n2)
  return 1


@_inline
def _box_box_face(code, size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Face stage of box_box: clip the incident face against the reference face."""
  rot = frame[_S_ROT]
  rel = frame[_S_REL]
  rinc = frame[_S_FACE0]   # incident box axes (columns) in the reference frame
  fv = frame[_S_FACE1]     # face center 0:3, half edges 3:6, 6:9
  ref1 = code < 3
  a = code if ref1 else code - 3
  if ref1:
    sizeref, sizeinc, posref, matref, off = size1, size2, pos1, mat1, 0
    for c in range(9):
      rinc[c] = rot[c]
  else:
    sizeref, sizeinc, posref, matref, off = size2, size1, pos2, mat2, 3
    for r in range(3):
      for c in range(3):
        rinc[3 * r + c] = rot[3 * c + r]

  sgn = 1.0 if rel[off + a] >= 0 else -1.0

  # incident face: the incident axis most aligned with the reference normal, facing it
  binc = 0
  for k in range(1, 3):
    if abs(rinc[3 * a + k]) > abs(rinc[3 * a + binc]):
      binc = k
  tinc = -1.0 if sgn * rinc[3 * a + binc] > 0 else 1.0

  # incident face corners as (x, y, z): x, y along the other reference axes, z the height
  # above the reference face
  ax, ay = (a + 1) % 3, (a + 2) % 3
  bu, bv = (binc + 1) % 3, (binc + 2) % 3
  for r in range(3):
    c = ax if r == 0 else (ay if r == 1 else a)
    fv[r] = rel[off + c] + tinc * sizeinc[binc] * rinc[3 * c + binc]
    fv[3 + r] = sizeinc[bu] * rinc[3 * c + bu]
    fv[6 + r] = sizeinc[bv] * rinc[3 * c + bv]
  fv[2] = sgn * fv[2] - sizeref[a]
  fv[5] *= sgn
  fv[8] *= sgn
  for k in range(4):
    su = 1.0 if k == 0 or k == 3 else -1.0
    sv = 1.0 if k < 2 else -1.0
    for c in range(3):
      pos[_S_POLY0 + k, c] = fv[c] + su * fv[3 + c] + sv * fv[6 + c]

  nvert, cur, spare = 4, _S_POLY0, _S_POLY1
  nvert, cur, spare = _clip_half_plane(pos, dist, nvert, cur, spare, 0, 1.0, sizeref[ax])
  nvert, cur, spare = _clip_half_plane(pos, dist, nvert, cur, spare, 0, -1.0, sizeref[ax])
  nvert, cur, spare = _clip_half_plane(pos, dist, nvert, cur, spare, 1, 1.0, sizeref[ay])
  nvert, cur, spare = _clip_half_plane(pos, dist, nvert, cur, spare, 1, -1.0, sizeref[ay])

  # keep vertices within margin, dropping near-duplicates; accepted go to rows 0.. (local)
  naccept = 0
  dupe2 = _BB_DUPEPS * (sizeref[ax] * sizeref[ax] + sizeref[ay] * sizeref[ay])
  for k in range(nvert):
    vx, vy, vz = pos[cur + k, 0], pos[cur + k, 1], pos[cur + k, 2]
    if vz > margin:
      continue
    dupe = False
    for q in range(naccept):
      dx = pos[q, 0] - vx
      dy = pos[q, 1] - vy
      if dx * dx + dy * dy < dupe2:
        dupe = True
        break
    if not dupe:
      pos[naccept, 0], pos[naccept, 1], pos[naccept, 2] = vx, vy, vz
      naccept += 1
  if naccept == 0:
    return 0

  nsign = sgn if ref1 else -sgn
  n0, n1, n2 = nsign * matref[a], nsign * matref[3 + a], nsign * matref[6 + a]
  pc = fv  # reuse as the contact position in the reference frame
  for k in range(naccept):
    vx, vy, vz = pos[k, 0], pos[k, 1], pos[k, 2]
    pc[ax] = vx
    pc[ay] = vy
    pc[a] = sgn * (sizeref[a] + 0.5 * vz)
    w0, w1, w2 = mm.mat_vec(matref, pc[0], pc[1], pc[2])
    put_contact(dist, pos, frame, k, vz, w0 + posref[0], w1 + posref[1], w2 + posref[2], n0, n1, n2)
  return naccept


@jit
def box_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """Box : box (mjc_BoxBox, MuJoCo 4): separating-axis test over 15 axes, then either one
  edge-edge contact or the incident face clipped against the reference face (up to 8)."""
  rot = frame[_S_ROT]
  rel = frame[_S_REL]
  d0, d1, d2 = pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]
  rel[0], rel[1], rel[2] = mm.mat_t_vec(mat1, d0, d1, d2)
  rel[3], rel[4], rel[5] = mm.mat_t_vec(mat2, -d0, -d1, -d2)
  for i in range(3):
    for j in range(3):
      rot[3 * i + j] = mat1[i] * mat2[j] + mat1[3 + i] * mat2[3 + j] + mat1[6 + i] * mat2[6 + j]

  # stage 1: separating axes, with rounding slack on the no-contact decisions
  septol = margin + _BB_SEPEPS * (size1[0] + size1[1] + size1[2] +
                                  size2[0] + size2[1] + size2[2])
  sep_best = -_MAXVAL
  code = -1
  for i in range(3):
    radius2 = (abs(rot[3 * i]) * size2[0] + abs(rot[3 * i + 1]) * size2[1] +
               abs(rot[3 * i + 2]) * size2[2])
    sep = abs(rel[i]) - size1[i] - radius2
    if sep > septol:
      return 0
    if sep > sep_best:
      sep_best = sep
      code = i
  for j in range(3):
    radius1 = abs(rot[j]) * size1[0] + abs(rot[3 + j]) * size1[1] + abs(rot[6 + j]) * size1[2]
    sep = abs(rel[3 + j]) - size2[j] - radius1
    if sep > septol:
      return 0
    if sep > sep_best:
      sep_best = sep
      code = 3 + j
  sep_face = sep_best
  code_face = code

  for i in range(3):
    for j in range(3):
      i1, i2 = (i + 1) % 3, (i + 2) % 3
      ax1 = -rot[3 * i2 + j]
      ax2 = rot[3 * i1 + j]
      norm2 = ax1 * ax1 + ax2 * ax2
      if norm2 < _BB_PAREPS:  # nearly parallel edges: covered by the face axes
        continue
      inv = 1 / math.sqrt(norm2)
      ax1 *= inv
      ax2 *= inv
      radius1 = size1[i1] * abs(ax1) + size1[i2] * abs(ax2)
      j1, j2 = (j + 1) % 3, (j + 2) % 3
      b1 = ax1 * rot[3 * i1 + j1] + ax2 * rot[3 * i2 + j1]
      b2 = ax1 * rot[3 * i1 + j2] + ax2 * rot[3 * i2 + j2]
      radius2 = size2[j1] * abs(b1) + size2[j2] * abs(b2)
      sep = abs(ax1 * rel[i1] + ax2 * rel[i2]) - radius1 - radius2
      if sep > septol:
        return 0
      # an edge axis must beat the best face axis by a relative bias
      if sep - _BB_EDGEBIAS * abs(sep) > sep_best and sep > sep_face:
        sep_best = sep
        code = 6 + 3 * i + j

  if code < 0:
    return 0

  # an edge axis within ~8 degrees of the best face axis gives way to it unless clearly deeper
  if code >= 6:
    i = (code - 6) // 3
    j = (code - 6) % 3
    i1, i2 = (i + 1) % 3, (i + 2) % 3
    e0 = 0.0 if i == 0 else (-rot[3 * i2 + j] if i1 == 0 else rot[3 * i1 + j])
    e1 = 0.0 if i == 1 else (-rot[3 * i2 + j] if i1 == 1 else rot[3 * i1 + j])
    e2 = 0.0 if i == 2 else (-rot[3 * i2 + j] if i1 == 2 else rot[3 * i1 + j])
    e0, e1, e2, _ = _normalize3(e0, e1, e2)
    if code_face < 3:
      face_dot = abs(_pick(e0, e1, e2, code_face))
    else:
      f = code_face - 3
      face_dot = abs(e0 * rot[f] + e1 * rot[3 + f] + e2 * rot[6 + f])
    if face_dot > 0.99 and sep_best < sep_face + 0.05 * abs(sep_face) + _MINVAL:
      code = code_face
      sep_best = sep_face

  if code >= 6:
    return _box_box_edge(code, size1, pos1, mat1, size2, septol, dist, pos, frame)
  return _box_box_face(code, size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)


#------------------------------------ dispatch --------------------------------------------------

@unit((i4, i4, f8v, f8v, f8v, f8v, f8v, f8v, f8, f8v, f8m, f8m), i8)
def collide_primitive(type1, type2, size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos,
                      frame):
  """Analytic collision of geom types (type1 <= type2); -1 when the pair is not analytic.
  The arrays are passed on borrowed (engine/_borrow.py: the caller holds them for the call),
  so that the pair functions do not reference count them at every call."""
  return _dispatch(type1, type2, _b(size1), _b(pos1), _b(mat1), _b(size2), _b(pos2), _b(mat2),
                   margin, _b(dist), _b(pos), _b(frame))


@_inline
def _dispatch(type1, type2, size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame):
  """collide_primitive's dispatch on the type pair."""
  if type1 == _PLANE:
    if type2 == _SPHERE:
      return plane_sphere(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _CAPSULE:
      return plane_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _CYLINDER:
      return plane_cylinder(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _BOX:
      return plane_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
  elif type1 == _SPHERE:
    if type2 == _SPHERE:
      return sphere_sphere(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _CAPSULE:
      return sphere_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _CYLINDER:
      return sphere_cylinder(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _BOX:
      return sphere_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
  elif type1 == _CAPSULE:
    if type2 == _CAPSULE:
      return capsule_capsule(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
    if type2 == _BOX:
      return capsule_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
  elif type1 == _BOX:
    if type2 == _BOX:
      return box_box(size1, pos1, mat1, size2, pos2, mat2, margin, dist, pos, frame)
  return -1
