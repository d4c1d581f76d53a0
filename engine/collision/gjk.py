"""GJK and EPA (MuJoCo's engine_collision_gjk.c): `gjk` (the distance, or a simplex enclosing the
origin), `polytope` (the EPA start: polytope2/3/4 and their hand-offs) and `epa` (the
penetration depth and witness points), on objects of collision/work.py's layout whose support
points collision/support.py gives. collision/convex.py drives these for every pair.

They follow MuJoCo 4.0's compiled library, which differs from the last published source in
many small ways (tests/conformance/mjinternal.py calls its static functions, and
tests/test_collision_convex.py checks ours against them bit for bit).
"""
import math

from numjoco.engine import math as mm
from numjoco.engine._jit import inline as _inline
from numjoco.engine._jit import jit
from numjoco.engine.collision.support import cross3, det3, dot3, is_discrete, row3, support_pair
from numjoco.engine.types import MINVAL as _MINVAL

_MINVAL2 = _MINVAL * _MINVAL
_MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
_MINEPATOL = _MINVAL


# ------------------------------------ GJK sub-distance ------------------------------------------

@_inline
def _same_sign(a, b):
  """1 if both positive, -1 if both negative, else 0."""
  if a > 0 and b > 0:
    return 1
  if a < 0 and b < 0:
    return -1
  return 0


@jit
def _project_origin_plane(a, b, c):
  """Origin projected on the plane through a, b, c; (1, ...) when degenerate."""
  d21 = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
  d31 = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
  d32 = (c[0] - b[0], c[1] - b[1], c[2] - b[2])

  # the normal of one pair of edges after another, in MuJoCo's order, until one is well
  # conditioned (n.p nonzero, n.n above mjMINVAL); the third is taken as it is; a zero normal
  # gives up
  for k in range(3):
    if k == 0:
      e, f, p = d32, d21, b
    elif k == 1:
      e, f, p = d21, d31, a
    else:
      e, f, p = d31, d32, c
    n = cross3(e[0], e[1], e[2], f[0], f[1], f[2])
    nv = dot3(n[0], n[1], n[2], p[0], p[1], p[2])
    nn = dot3(n[0], n[1], n[2], n[0], n[1], n[2])
    if nn == 0:
      return 1, 0.0, 0.0, 0.0
    if k == 2 or (nv != 0 and nn > _MINVAL):
      s = nv / nn
      return 0, n[0] * s, n[1] * s, n[2] * s
  return 1, 0.0, 0.0, 0.0


@jit
def s1d(s1, s2):
  """Barycentric coordinates of the point of segment s1s2 closest to the origin (MuJoCo 4.0's
  S1D, checked against it bit for bit through ctypes): (0, 1) for
  a segment shorter than 1e-15 or when the projection is beyond s2, (1, 0) beyond s1."""
  d0, d1, d2 = s2[0] - s1[0], s2[1] - s1[1], s2[2] - s1[2]
  nn = d0 * d0 + d1 * d1 + d2 * d2
  if nn < _MINVAL2:
    return 0.0, 1.0
  scl = -dot3(s2[0], s2[1], s2[2], d0, d1, d2) / nn
  p = (s2[0] + scl * d0, s2[1] + scl * d1, s2[2] + scl * d2)

  # axis with the largest projection of the segment
  mu_max = s1[0] - s2[0]
  index = 0
  mu = s1[1] - s2[1]
  if abs(mu) >= abs(mu_max):
    mu_max = mu
    index = 1
  mu = s1[2] - s2[2]
  if abs(mu) >= abs(mu_max):
    mu_max = mu
    index = 2

  c1 = p[index] - s2[index]
  c2 = s1[index] - p[index]
  ok1 = _same_sign(mu_max, c1) != 0
  if ok1 and _same_sign(mu_max, c2) != 0:
    return c1 / mu_max, c2 / mu_max
  if not ok1:
    return 0.0, 1.0
  return 1.0, 0.0


@_inline
def _norm2_comb2(l0, l1, a, b):
  """Squared norm of l0*a + l1*b."""
  x0 = l0 * a[0] + l1 * b[0]
  x1 = l0 * a[1] + l1 * b[1]
  x2 = l0 * a[2] + l1 * b[2]
  return x0 * x0 + x1 * x1 + x2 * x2


@_inline
def _norm2_comb3(l0, l1, l2, a, b, c):
  """Squared norm of l0*a + l1*b + l2*c."""
  x0 = l0 * a[0] + l1 * b[0] + l2 * c[0]
  x1 = l0 * a[1] + l1 * b[1] + l2 * c[1]
  x2 = l0 * a[2] + l1 * b[2] + l2 * c[2]
  return x0 * x0 + x1 * x1 + x2 * x2


@_inline
def _shadow_areas(a, b, c, p):
  """Triangle abc and point p in its plane, projected on the coordinate plane (x, y) where the
  triangle's shadow is largest (the largest |component| of (b - a) x (c - a)): (that signed
  component, then the signed double areas of the shadows of (p, b, c), (p, c, a), (p, a, b)),
  as MuJoCo 4.0's S2D and triPointIntersect compute them."""
  e0, e1, e2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
  g0, g1, g2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
  m0 = e1 * g2 - e2 * g1
  m1 = e0 * g2 - e2 * g0
  m2 = e0 * g1 - e1 * g0
  u0, u1, u2 = abs(m0), abs(m1), abs(m2)
  if u1 <= u0 and u2 <= u0:
    m, x, y = m0, 1, 2
  elif u1 >= u2:
    m, x, y = m1, 0, 2
  else:
    m, x, y = m2, 0, 1
  ax, ay = a[x] - p[x], a[y] - p[y]
  bx, by = b[x] - p[x], b[y] - p[y]
  cx, cy = c[x] - p[x], c[y] - p[y]
  return m, bx * cy - by * cx, cx * ay - cy * ax, ax * by - ay * bx


@jit
def s2d(s1, s2, s3):
  """Barycentric coordinates of the point of triangle s1s2s3 closest to the origin (MuJoCo
  4.0's S2D, checked against it bit for bit through ctypes). The
  origin projected on the plane, in the coordinate plane where the triangle's shadow is
  largest (its edge cross product's largest component M); inside when the three signed areas
  have M's sign, and then normalized by their sum; else the closest of the edges whose area
  has not (all three when the projection is degenerate)."""
  ret, p0, p1, p2 = _project_origin_plane(s1, s2, s3)
  comp1 = comp2 = comp3 = False
  if not ret:
    m_max, c31, c32, c33 = _shadow_areas(s1, s2, s3, (p0, p1, p2))
    comp1 = _same_sign(m_max, c31) != 0
    comp2 = _same_sign(m_max, c32) != 0
    comp3 = _same_sign(m_max, c33) != 0
    if comp1 and comp2 and comp3:
      total = c31 + c32 + c33
      return c31 / total, c32 / total, c33 / total

  l0 = l1 = l2 = 0.0
  dmin = _MAX_LIMIT
  if not comp1:
    a, b = s1d(s2, s3)
    dmin = _norm2_comb2(a, b, s2, s3)
    l0, l1, l2 = 0.0, a, b
  if not comp2:
    a, b = s1d(s1, s3)
    d = _norm2_comb2(a, b, s1, s3)
    if d < dmin:
      l0, l1, l2 = a, 0.0, b
      dmin = d
  if not comp3:
    a, b = s1d(s1, s2)
    d = _norm2_comb2(a, b, s1, s2)
    if d < dmin:
      l0, l1, l2 = a, b, 0.0
  return l0, l1, l2


@jit
def _s3d(s1, s2, s3, s4):
  """Barycentric coordinates of the point of tetrahedron s1..s4 closest to the origin."""
  c41 = -det3(s2[0], s2[1], s2[2], s3[0], s3[1], s3[2], s4[0], s4[1], s4[2])
  c42 = det3(s1[0], s1[1], s1[2], s3[0], s3[1], s3[2], s4[0], s4[1], s4[2])
  c43 = -det3(s1[0], s1[1], s1[2], s2[0], s2[1], s2[2], s4[0], s4[1], s4[2])
  c44 = det3(s1[0], s1[1], s1[2], s2[0], s2[1], s2[2], s3[0], s3[1], s3[2])
  m_det = c41 + c42 + c43 + c44

  comp1 = _same_sign(m_det, c41)
  comp2 = _same_sign(m_det, c42)
  comp3 = _same_sign(m_det, c43)
  comp4 = _same_sign(m_det, c44)
  if comp1 and comp2 and comp3 and comp4:
    return c41 / m_det, c42 / m_det, c43 / m_det, c44 / m_det

  l0 = l1 = l2 = l3 = 0.0
  dmin = _MAX_LIMIT
  if not comp1:
    a, b, c = s2d(s2, s3, s4)
    dmin = _norm2_comb3(a, b, c, s2, s3, s4)
    l0, l1, l2, l3 = 0.0, a, b, c
  if not comp2:
    a, b, c = s2d(s1, s3, s4)
    d = _norm2_comb3(a, b, c, s1, s3, s4)
    if d < dmin:
      l0, l1, l2, l3 = a, 0.0, b, c
      dmin = d
  if not comp3:
    a, b, c = s2d(s1, s2, s4)
    d = _norm2_comb3(a, b, c, s1, s2, s4)
    if d < dmin:
      l0, l1, l2, l3 = a, b, 0.0, c
      dmin = d
  if not comp4:
    a, b, c = s2d(s1, s2, s3)
    d = _norm2_comb3(a, b, c, s1, s2, s3)
    if d < dmin:
      l0, l1, l2, l3 = a, b, c, 0.0
  return l0, l1, l2, l3


@jit
def _subdistance(sx, n):
  """Barycentric coordinates (4) of the point of the n-simplex sx closest to the origin."""
  if n == 4:
    return _s3d(row3(sx, 0), row3(sx, 1), row3(sx, 2), row3(sx, 3))
  if n == 3:
    a, b, c = s2d(row3(sx, 0), row3(sx, 1), row3(sx, 2))
    return a, b, c, 0.0
  if n == 2:
    a, b = s1d(row3(sx, 0), row3(sx, 1))
    return a, b, 0.0, 0.0
  return 1.0, 0.0, 0.0, 0.0


@_inline
def _lincomb(sx, col, n, l0, l1, l2, l3):
  """Sum of lam_i * sx[i, col:col+3] over the first n rows (MuJoCo's lincomb)."""
  if n == 1:
    return l0 * sx[0, col], l0 * sx[0, col + 1], l0 * sx[0, col + 2]
  if n == 2:
    return (l0 * sx[0, col] + l1 * sx[1, col],
            l0 * sx[0, col + 1] + l1 * sx[1, col + 1],
            l0 * sx[0, col + 2] + l1 * sx[1, col + 2])
  if n == 3:
    return (l0 * sx[0, col] + l1 * sx[1, col] + l2 * sx[2, col],
            l0 * sx[0, col + 1] + l1 * sx[1, col + 1] + l2 * sx[2, col + 1],
            l0 * sx[0, col + 2] + l1 * sx[1, col + 2] + l2 * sx[2, col + 2])
  if n == 4:
    return (l0 * sx[0, col] + l1 * sx[1, col] + l2 * sx[2, col] + l3 * sx[3, col],
            l0 * sx[0, col + 1] + l1 * sx[1, col + 1] + l2 * sx[2, col + 1]
            + l3 * sx[3, col + 1],
            l0 * sx[0, col + 2] + l1 * sx[1, col + 2] + l2 * sx[2, col + 2]
            + l3 * sx[3, col + 2])
  return 0.0, 0.0, 0.0


# ------------------------------------------ GJK -------------------------------------------------

@jit
def _closest_point(sx, n, l0, l1, l2, l3):
  """The simplex's point closest to the origin, x_k, as MuJoCo 4.0 computes it: for a segment or a triangle the origin projected on its line or plane (the
  barycentric combination only where that projection is degenerate), else the combination."""
  if n == 2:
    d0, d1, d2 = sx[1, 0] - sx[0, 0], sx[1, 1] - sx[0, 1], sx[1, 2] - sx[0, 2]
    nn = d0 * d0 + d1 * d1 + d2 * d2
    if not nn < _MINVAL2:
      t = -dot3(sx[1, 0], sx[1, 1], sx[1, 2], d0, d1, d2) / nn
      return t * d0 + sx[1, 0], t * d1 + sx[1, 1], t * d2 + sx[1, 2]
  elif n == 3:
    ret, p0, p1, p2 = _project_origin_plane(row3(sx, 0), row3(sx, 1), row3(sx, 2))
    if not ret:
      return p0, p1, p2
  return _lincomb(sx, 0, n, l0, l1, l2, l3)


@jit
def _gjk_support(sx, si, row, objs, objt, x0, x1, x2, x_norm):
  """Support vertex in direction -x_k (MuJoCo's gjkSupport)."""
  inv = 1 / x_norm
  n0, n1, n2 = x0 * inv, x1 * inv, x2 * inv
  support_pair(sx, si, row, objs, objt, -n0, -n1, -n2, n0, n1, n2)


@jit
def gjk(sx, si, tx, ti, xw, objs, objt, tolerance, kmax, dist_cutoff):
  """MuJoCo 4.0's gjk (its control flow differs from the published source): returns (dist, nsimplex, separated, nx).

  xw[0:3], xw[3:6] hold the initial and then the witness points of geom 1 and 2; the
  final simplex is in sx/si."""
  get_dist = dist_cutoff > 0
  n = 0
  k = 0
  tol2 = tolerance * tolerance
  discrete = is_discrete(objs, objt)
  epsilon = 0.0 if discrete else 0.5 * tol2
  min_norm = _MINVAL if discrete else tolerance
  separated = 0

  x0, x1, x2 = xw[0] - xw[3], xw[1] - xw[4], xw[2] - xw[5]
  x_norm = math.sqrt(dot3(x0, x1, x2, x0, x1, x2))
  if x_norm < _MINVAL:  # (nearly) coincident centers: start along +x
    x0, x1, x2 = 1.0, 0.0, 0.0
    x_norm = 1.0
  l0, l1, l2, l3 = 0.0, 0.0, 0.0, 0.0

  while k < kmax:
    _gjk_support(sx, si, n, objs, objt, x0, x1, x2, x_norm)
    s0, s1, s2 = sx[n, 0], sx[n, 1], sx[n, 2]

    # lower bound on the distance: separated when positive
    lower = dot3(x0, x1, x2, s0, s1, s2)
    if get_dist:
      if lower > 0:
        separated = 1
        if dist_cutoff < _MAX_LIMIT and lower >= dist_cutoff * x_norm:
          return _MAX_LIMIT, 0, 1, 0
    elif lower > 0:
      return _MAX_LIMIT, 0, 1, 0

    # Frank-Wolfe duality gap (not on the first iteration, whose x is no simplex point)
    if k != 0 and dot3(x0, x1, x2, x0 - s0, x1 - s1, x2 - s2) < epsilon:
      break

    l0, l1, l2, l3 = _subdistance(sx, n + 1)

    # drop vertices with zero weight
    lam = (l0, l1, l2, l3)
    l0 = l1 = l2 = l3 = 0.0
    n = 0
    for i in range(4):
      if lam[i] == 0:
        continue
      if n != i:
        for c in range(9):
          sx[n, c] = sx[i, c]
        si[n, 0] = si[i, 0]
        si[n, 1] = si[i, 1]
      if n == 0:
        l0 = lam[i]
      elif n == 1:
        l1 = lam[i]
      elif n == 2:
        l2 = lam[i]
      else:
        l3 = lam[i]
      n += 1

    if n < 1:  # should not occur
      return _MAX_LIMIT, 0, 1, 0
    if n == 4:  # a tetrahedron holding the origin
      if not separated:
        x_norm = 0.0
      break

    x0, x1, x2 = _closest_point(sx, n, l0, l1, l2, l3)
    x_norm_prev = x_norm
    x_norm = math.sqrt(dot3(x0, x1, x2, x0, x1, x2))
    if x_norm < (_MINVAL if n == 1 else min_norm):
      break
    if k != 0 and abs(x_norm - x_norm_prev) < _MINVAL:
      break
    k += 1

  # approximate witness points
  if n > 0:
    xw[0], xw[1], xw[2] = _lincomb(sx, 3, n, l0, l1, l2, l3)
    xw[3], xw[4], xw[5] = _lincomb(sx, 6, n, l0, l1, l2, l3)

  # final separation check (uses a spare simplex row)
  if n < 4 and not separated and not x_norm < _MINVAL:
    _gjk_support(tx, ti, 0, objs, objt, x0, x1, x2, x_norm)
    if dot3(x0, x1, x2, tx[0, 0], tx[0, 1], tx[0, 2]) > 0:
      separated = 1
  return x_norm, n, separated, 1


# ------------------------------------------ EPA -------------------------------------------------
# Polytope storage (indices instead of MuJoCo's pointers):
#   pv (nvmax, 9) vertices (vert, vert1, vert2); pvi (nvmax, 2) vertex indices
#   fv (nfmax, 3) origin projected on each face; fd2 (nfmax,) its squared norm
#   fvert (nfmax, 3), fadj (nfmax, 3), findex (nfmax,) (-1 not in map, -2 deleted)
#   fmap (nfmax,) faces in the map; hz_idx, hz_edge (nfmax,) horizon; stk (nfmax, 3) DFS stack
#   cnt int[8]: nverts, nfaces, nmap, nhorizon, final EPA face (-1: none) (3 spare);
#   ctr (3,) polytope center


@jit
def _epa_support(pv, pvi, cnt, objs, objt, d0, d1, d2, dnorm):
  """New polytope vertex from the support in direction d; returns its index."""
  u0, u1, u2 = 1.0, 0.0, 0.0
  if dnorm > _MINVAL:
    u0, u1, u2 = d0 / dnorm, d1 / dnorm, d2 / dnorm
  n = cnt[0]
  cnt[0] += 1
  support_pair(pv, pvi, n, objs, objt, u0, u1, u2, -u0, -u1, -u2)
  return n


@jit
def _insert_vertex(pv, pvi, cnt, sx, si, r):
  """Copy simplex vertex r into the polytope; returns its index."""
  n = cnt[0]
  cnt[0] += 1
  for c in range(9):
    pv[n, c] = sx[r, c]
  pvi[n, 0] = si[r, 0]
  pvi[n, 1] = si[r, 1]
  return n


@jit
def _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, v1, v2, v3, a1, a2, a3):
  """Add face (v1, v2, v3) with adjacent faces (a1, a2, a3); returns its squared distance
  to the origin, 0 when degenerate."""
  f = cnt[1]
  cnt[1] += 1
  fvert[f, 0], fvert[f, 1], fvert[f, 2] = v1, v2, v3
  fadj[f, 0], fadj[f, 1], fadj[f, 2] = a1, a2, a3
  ret, p0, p1, p2 = _project_origin_plane(row3(pv, v3), row3(pv, v2), row3(pv, v1))
  if ret:
    return 0.0

  # point the projection away from the polytope
  o0, o1, o2 = pv[v1, 0] - ctr[0], pv[v1, 1] - ctr[1], pv[v1, 2] - ctr[2]
  if dot3(p0, p1, p2, o0, o1, o2) < 0:
    p0, p1, p2 = -p0, -p1, -p2
  fv[f, 0], fv[f, 1], fv[f, 2] = p0, p1, p2
  fd2[f] = dot3(p0, p1, p2, p0, p1, p2)
  findex[f] = -1
  return fd2[f]


@jit
def _fill_map(fmap, findex, cnt, nf):
  """Put the first nf faces in the map."""
  for i in range(nf):
    fmap[i] = i
    findex[i] = i
  cnt[2] = nf


@jit
def _replace_simplex(pv, pvi, cnt, sx, si, ns, v1, v2, v3):
  """Replace the simplex with polytope vertices v1, v2 (and v3 when ns is 3) and reset the
  polytope (MuJoCo's replaceSimplex2/3)."""
  vs = (v1, v2, v3)
  for r in range(ns):
    for c in range(9):
      sx[r, c] = pv[vs[r], c]
    si[r, 0] = pvi[vs[r], 0]
    si[r, 1] = pvi[vs[r], 1]
  cnt[0] = 0
  cnt[1] = 0
  cnt[2] = 0


@jit
def _same_side(p0, p1, p2, p3):
  """True when the origin and p3 lie strictly on the same side of plane p0p1p2."""
  n0, n1, n2 = cross3(p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2],
                      p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2])
  dot1 = dot3(n0, n1, n2, p3[0] - p0[0], p3[1] - p0[1], p3[2] - p0[2])
  dot2 = dot3(n0, n1, n2, -p0[0], -p0[1], -p0[2])
  return (dot1 > 0 and dot2 > 0) or (dot1 < 0 and dot2 < 0)


@jit
def _test_tetra(p0, p1, p2, p3):
  """True when the origin is inside tetrahedron p0..p3."""
  return (_same_side(p0, p1, p2, p3) and _same_side(p1, p2, p3, p0)
          and _same_side(p2, p3, p0, p1) and _same_side(p3, p0, p1, p2))


@jit
def _tri_coords(a, b, c, p):
  """Barycentric coordinates of point p (in the plane of triangle abc) as MuJoCo 4.0 takes
  them (triPointIntersect, EPA's witness points): the three sub-areas
  about p in the coordinate plane where the triangle's shadow is largest, over their sum."""
  _, s0, s1, s2 = _shadow_areas(a, b, c, p)
  det = (s0 + s1) + s2
  return s0 / det, s1 / det, s2 / det


@jit
def _tri_point_intersect(a, b, c, p):
  """True when point p lies on triangle abc (MuJoCo 4.0's triPointIntersect): its
  coordinates (`_tri_coords`) not negative and |projection - p| < 1e-15."""
  l0, l1, l2 = _tri_coords(a, b, c, p)
  if l2 < 0 or l0 < 0 or l1 < 0:
    return False
  d0 = (a[0] * l0 + b[0] * l1) + c[0] * l2 - p[0]
  d1 = (a[1] * l0 + b[1] * l1) + c[1] * l2 - p[1]
  d2 = (a[2] * l0 + b[2] * l1) + c[2] * l2 - p[2]
  return math.sqrt(dot3(d0, d1, d2, d0, d1, d2)) < _MINVAL


@jit
def _ray_volumes(v1, v2, v3, v4, v5):
  """The three signed volumes of the ray v1v2 against the edges of triangle v3v4v5."""
  d12 = (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2])
  d13 = (v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2])
  d14 = (v4[0] - v1[0], v4[1] - v1[1], v4[2] - v1[2])
  d15 = (v5[0] - v1[0], v5[1] - v1[1], v5[2] - v1[2])
  return (det3(d13[0], d13[1], d13[2], d14[0], d14[1], d14[2], d12[0], d12[1], d12[2]),
          det3(d14[0], d14[1], d14[2], d15[0], d15[1], d15[2], d12[0], d12[1], d12[2]),
          det3(d15[0], d15[1], d15[2], d13[0], d13[1], d13[2], d12[0], d12[1], d12[2]))


@jit
def _ray_triangle(v1, v2, v3, v4, v5):
  """Nonzero when the ray v1v2 crosses triangle v3v4v5."""
  vol1, vol2, vol3 = _ray_volumes(v1, v2, v3, v4, v5)
  if vol1 >= 0 and vol2 >= 0 and vol3 >= 0:
    return 1
  if vol1 <= 0 and vol2 <= 0 and vol3 <= 0:
    return -1
  return 0


@_inline
def _crossed(vol1, vol2, vol3, tol):
  """The ray volumes all at least tol, or all at most -tol."""
  return ((vol1 >= tol and vol2 >= tol and vol3 >= tol)
          or (-tol >= vol1 and -tol >= vol2 and -tol >= vol3))


@jit
def _recover_hexa(r0, r1, r2, a, b, c, d, e):
  """MuJoCo 4.0's recoverHexa: when the segment d-e between the two support points misses
  triangle abc (r0, r1, r2: the ray's volumes against edges ab, bc, ca), relabel the
  hexahedron around the edge whose volume has the other sign (1, the new a..e); failing that,
  the tetrahedron that drops the vertex opposite the smallest volume (0, its vertices then in
  a, b, d, e)."""
  if r0 > 0 and -_MINVAL > r1 and -_MINVAL > r2:
    return 1, c, e, d, a, b
  if r1 > 0 and -_MINVAL > r0 and -_MINVAL > r2:
    return 1, a, e, d, b, c
  if -_MINVAL > r1 and -_MINVAL > r0 and r2 > 0:
    return 1, b, e, d, c, a
  nan = r0 != r0 or r1 != r1 or r2 != r2
  if not (r1 < r0 or r2 < r0 or nan):
    return 0, a, b, c, d, e
  if not (r0 < r1 or r2 < r1 or nan):
    return 0, b, c, c, d, e
  return 0, c, a, c, d, e


@jit
def _origin_on_edge(a, b):
  """MuJoCo 4.0's originOnEdge: the origin within 1e-15 of segment ab (a, b on either side)."""
  if not dot3(a[0], a[1], a[2], b[0], b[1], b[2]) < 0:
    return False
  e0, e1, e2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
  nn = dot3(e0, e1, e2, e0, e1, e2)
  if nn < _MINVAL2:
    return False
  t = -dot3(b[0], b[1], b[2], e0, e1, e2) / nn
  p0, p1, p2 = t * e0 + b[0], t * e1 + b[1], t * e2 + b[2]
  return dot3(p0, p1, p2, p0, p1, p2) < _MINVAL2


@_inline
def _normal2(p, q, r):
  """|(q - p) x (r - p)|^2."""
  n0, n1, n2 = cross3(q[0] - p[0], q[1] - p[1], q[2] - p[2], r[0] - p[0], r[1] - p[1],
                      r[2] - p[2])
  return dot3(n0, n1, n2, n0, n1, n2)


@jit
def _replace_best_simplex3(pv, pvi, cnt, sx, si, a, b, c, d):
  """MuJoCo 4.0's replaceBestSimplex3: after face (a or b, c, d) of the segment's hexahedron
  came out degenerate, restart from triangle (a, c, d) or (b, d, c): the non-degenerate one,
  else the one nearer the origin (ties: (a, c, d))."""
  pa, pb, pc, pd = row3(pv, a), row3(pv, b), row3(pv, c), row3(pv, d)
  nnb = _normal2(pb, pd, pc)
  nna = _normal2(pa, pc, pd)
  if nna < _MINVAL and nnb >= _MINVAL:
    _replace_simplex(pv, pvi, cnt, sx, si, 3, b, d, c)
    return
  if nna >= _MINVAL and nnb < _MINVAL:
    _replace_simplex(pv, pvi, cnt, sx, si, 3, a, c, d)
    return
  k0, k1, k2 = s2d(pa, pc, pd)
  j0, j1, j2 = s2d(pb, pd, pc)
  p0 = (k0 * pa[0] + k1 * pc[0]) + k2 * pd[0]
  p1 = (k0 * pa[1] + k1 * pc[1]) + k2 * pd[1]
  p2 = (k0 * pa[2] + k1 * pc[2]) + k2 * pd[2]
  q0 = (j0 * pb[0] + j1 * pd[0]) + j2 * pc[0]
  q1 = (j0 * pb[1] + j1 * pd[1]) + j2 * pc[1]
  q2 = (j0 * pb[2] + j1 * pd[2]) + j2 * pc[2]
  if dot3(p0, p1, p2, p0, p1, p2) > dot3(q0, q1, q2, q0, q1, q2):
    _replace_simplex(pv, pvi, cnt, sx, si, 3, b, d, c)
  else:
    _replace_simplex(pv, pvi, cnt, sx, si, 3, a, c, d)


# polytope construction hand-offs (MuJoCo 4.0's polytopeN call each other after replacing the
# simplex; numba cannot recurse, so `polytope` runs the chain)
_TO_P2 = -1       # polytope3 reduced the simplex to an edge: polytope2 next
_TO_P3 = -2       # polytope2 reduced it to a triangle: polytope3 next, without the edge fallback
_TO_P3_EDGE = -3  # polytope4 reduced it to a triangle: polytope3 next, with the edge fallback


@jit
def _polytope3(pt, cnt, ctr, sx, si, objs, objt, tolerance, allow_edge):
  """Initial polytope from a triangle simplex, as MuJoCo 4.0's polytope3 (checked
  against it bit for bit): the triangle with the supports along both normals; when
  the segment between those misses the triangle, the hexahedron relabelled around an edge
  (`_recover_hexa`) or a tetrahedron; a degenerate face with the origin on an edge of the
  triangle hands over to polytope2 (`_TO_P2`, when allow_edge). 0 on success."""
  pv, pvi, fv, fd2, fvert, fadj, findex, fmap = pt[:8]
  n = cnt[0]
  v1i = _insert_vertex(pv, pvi, cnt, sx, si, 0)
  v2i = _insert_vertex(pv, pvi, cnt, sx, si, 1)
  v3i = _insert_vertex(pv, pvi, cnt, sx, si, 2)
  v1, v2, v3 = row3(pv, v1i), row3(pv, v2i), row3(pv, v3i)
  n0, n1, n2 = cross3(v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2],
                      v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2])
  n_norm = math.sqrt(dot3(n0, n1, n2, n0, n1, n2))
  if n_norm < _MINVAL:
    return 4  # mjEPA_P3_BAD_NORMAL
  v5i = _epa_support(pv, pvi, cnt, objs, objt, -n0, -n1, -n2, n_norm)
  v4i = _epa_support(pv, pvi, cnt, objs, objt, n0, n1, n2, n_norm)
  v4, v5 = row3(pv, v4i), row3(pv, v5i)
  if _tri_point_intersect(v1, v2, v3, v4):
    return 5  # mjEPA_P3_INVALID_V4
  if _tri_point_intersect(v1, v2, v3, v5):
    return 6  # mjEPA_P3_INVALID_V5
  # both supports strictly off the triangle's plane
  t = n_norm * _MINVAL
  if t > dot3(n0, n1, n2, v4[0] - v1[0], v4[1] - v1[1], v4[2] - v1[2]):
    return 8
  if t > dot3(-n0, -n1, -n2, v5[0] - v1[0], v5[1] - v1[1], v5[2] - v1[2]):
    return 8

  a, b, c, d, e = v1i, v2i, v3i, v4i, v5i
  hexa = 1
  r0, r1, r2 = _ray_volumes(v4, v5, v1, v2, v3)
  if not ((r0 >= 0 and r1 >= 0 and r2 >= 0) or (r0 <= 0 and r1 <= 0 and r2 <= 0)):
    hexa, a, b, c, d, e = _recover_hexa(r0, r1, r2, a, b, c, d, e)
  f4 = f5 = _MAX_LIMIT
  if hexa:
    for j in range(3):
      ctr[j] = ((((pv[a, j] + pv[b, j]) + pv[c, j]) + pv[d, j]) + pv[e, j]) * 0.2
    f0 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, d, a, b, 1, 3, 2)
    f1 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, d, c, a, 2, 4, 0)
    f2 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, d, b, c, 0, 5, 1)
    f3 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, e, b, a, 5, 0, 4)
    f4 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, e, a, c, 3, 1, 5)
    f5 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, e, c, b, 4, 2, 3)
  else:  # tetrahedron (a, b, d, e)
    for j in range(3):
      ctr[j] = (((pv[a, j] + pv[b, j]) + pv[d, j]) + pv[e, j]) * 0.25
    f0 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, a, b, d, 1, 3, 2)
    f1 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, a, e, b, 2, 3, 0)
    f2 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, a, d, e, 0, 3, 1)
    f3 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, e, d, b, 2, 0, 1)
  if (f0 < _MINVAL2 or f1 < _MINVAL2 or f2 < _MINVAL2 or f3 < _MINVAL2 or f4 < _MINVAL2
      or f5 < _MINVAL2):
    if not allow_edge:
      return 8  # mjEPA_P3_ORIGIN_ON_FACE
    if _origin_on_edge(row3(pv, n), row3(pv, n + 1)):
      _replace_simplex(pv, pvi, cnt, sx, si, 2, n, n + 1, 0)
    elif _origin_on_edge(row3(pv, n + 1), row3(pv, n + 2)):
      _replace_simplex(pv, pvi, cnt, sx, si, 2, n + 1, n + 2, 0)
    elif _origin_on_edge(row3(pv, n + 2), row3(pv, n)):
      _replace_simplex(pv, pvi, cnt, sx, si, 2, n + 2, n, 0)
    else:
      return 8
    return _TO_P2

  # each face: the origin on the inner side, or the face within the tolerance
  tol2 = tolerance * tolerance
  pa, pb, pc, pd, pe = row3(pv, a), row3(pv, b), row3(pv, c), row3(pv, d), row3(pv, e)
  if hexa:
    if ((not _same_side(pd, pa, pb, pc) and f0 >= tol2)
        or (not _same_side(pd, pc, pa, pb) and f1 >= tol2)
        or (not _same_side(pd, pb, pc, pa) and f2 >= tol2)
        or (not _same_side(pe, pb, pa, pc) and f3 >= tol2)
        or (not _same_side(pe, pa, pc, pb) and f4 >= tol2)
        or (not _same_side(pe, pc, pb, pa) and f5 >= tol2)):
      return 7  # mjEPA_P3_MISSING_ORIGIN
  elif ((not _same_side(pa, pb, pd, pe) and f0 >= tol2)
        or (not _same_side(pa, pe, pb, pd) and f1 >= tol2)
        or (not _same_side(pa, pd, pe, pb) and f2 >= tol2)
        or (not _same_side(pe, pd, pb, pa) and f3 >= tol2)):
    return 7
  _fill_map(fmap, findex, cnt, cnt[1])
  return 0


@jit
def _rotmat120(a0, a1, a2):
  """Rotation by 120 degrees about axis a (row-major)."""
  n = math.sqrt(dot3(a0, a1, a2, a0, a1, a2))
  u1, u2, u3 = a0 / n, a1 / n, a2 / n
  s = 0.86602540378
  c = -0.5
  return (c + u1 * u1 * (1 - c), u1 * u2 * (1 - c) - u3 * s, u1 * u3 * (1 - c) + u2 * s,
          u2 * u1 * (1 - c) + u3 * s, c + u2 * u2 * (1 - c), u2 * u3 * (1 - c) - u1 * s,
          u1 * u3 * (1 - c) - u2 * s, u2 * u3 * (1 - c) + u1 * s, c + u3 * u3 * (1 - c))


@jit
def _polytope2(pt, cnt, ctr, sx, si, objs, objt):
  """Initial hexahedron from a segment simplex, as MuJoCo 4.0's polytope2 (checked
  against it bit for bit): the segment's ends and three supports at 120 degrees
  about it; when the segment misses their triangle by more than a tolerance, one support is
  swapped for one in a tilted direction; a degenerate face hands over to polytope3 on the
  better of its two triangles (`_TO_P3`). 0 on success."""
  pv, pvi, fv, fd2, fvert, fadj, findex, fmap = pt[:8]
  v1i = _insert_vertex(pv, pvi, cnt, sx, si, 0)
  v2i = _insert_vertex(pv, pvi, cnt, sx, si, 1)
  v1, v2 = row3(pv, v1i), row3(pv, v2i)
  diff = (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2])

  # coordinate axis most orthogonal to the segment
  value = _MAX_LIMIT
  index = 0
  for i in range(3):
    if abs(diff[i]) < value:
      value = abs(diff[i])
      index = i
  e = (1.0 if index == 0 else 0.0, 1.0 if index == 1 else 0.0, 1.0 if index == 2 else 0.0)
  d1 = cross3(e[0], e[1], e[2], diff[0], diff[1], diff[2])

  # two more directions at 120 degrees about the segment
  rot = _rotmat120(diff[0], diff[1], diff[2])
  d2 = mm.mat_vec(rot, d1[0], d1[1], d1[2])
  d3 = mm.mat_vec(rot, d2[0], d2[1], d2[2])
  v3i = _epa_support(pv, pvi, cnt, objs, objt, d1[0], d1[1], d1[2],
                     math.sqrt(dot3(d1[0], d1[1], d1[2], d1[0], d1[1], d1[2])))
  v4i = _epa_support(pv, pvi, cnt, objs, objt, d2[0], d2[1], d2[2],
                     math.sqrt(dot3(d2[0], d2[1], d2[2], d2[0], d2[1], d2[2])))
  v5i = _epa_support(pv, pvi, cnt, objs, objt, d3[0], d3[1], d3[2],
                     math.sqrt(dot3(d3[0], d3[1], d3[2], d3[0], d3[1], d3[2])))

  # the segment through the supports' triangle, within a tolerance; else swap one support
  dd = dot3(diff[0], diff[1], diff[2], diff[0], diff[1], diff[2])
  dn = math.sqrt(dd)
  tol = (dd * _MINVAL) * dn
  r0, r1, r2 = _ray_volumes(v1, v2, row3(pv, v3i), row3(pv, v4i), row3(pv, v5i))
  if not _crossed(r0, r1, r2, tol):
    if r0 <= r1 and r0 <= r2:
      vs, vt, vu = v3i, v4i, v5i
    elif r1 <= r0 and r1 <= r2:
      vs, vt, vu = v4i, v5i, v3i
    else:
      vs, vt, vu = v5i, v3i, v4i
    ps, pt_, pu = row3(pv, vs), row3(pv, vt), row3(pv, vu)
    g0, g1, g2 = pt_[0] - ps[0], pt_[1] - ps[1], pt_[2] - ps[2]
    dot_u = dot3(diff[0], diff[1], diff[2], pu[0] - v1[0], pu[1] - v1[1], pu[2] - v1[2])
    sgn = 0.001 if dd * 0.5 <= dot_u else -0.001
    k = math.sqrt(dot3(g0, g1, g2, g0, g1, g2)) * sgn
    c0, c1, c2 = cross3(g0, g1, g2, diff[0], diff[1], diff[2])
    c0, c1, c2 = c0 + diff[0] * k, c1 + diff[1] * k, c2 + diff[2] * k
    w = _epa_support(pv, pvi, cnt, objs, objt, c0, c1, c2,
                     math.sqrt(dot3(c0, c1, c2, c0, c1, c2)))
    cnt[0] -= 1   # the tilted support is only a candidate
    pw = row3(pv, w)
    target = -1
    q0, q1, q2 = _ray_volumes(v1, v2, pw, pt_, pu)
    if _crossed(q0, q1, q2, tol):
      target = vs
    else:
      q0, q1, q2 = _ray_volumes(v1, v2, ps, pw, pu)
      if _crossed(q0, q1, q2, tol):
        target = vt
      else:
        q0, q1, q2 = _ray_volumes(v1, v2, ps, pt_, pw)
        if _crossed(q0, q1, q2, tol):
          target = vu
    if target >= 0:
      for c in range(9):
        pv[target, c] = pv[w, c]
      pvi[target, 0], pvi[target, 1] = pvi[w, 0], pvi[w, 1]

  for j in range(3):
    ctr[j] = ((((pv[v1i, j] + pv[v2i, j]) + pv[v3i, j]) + pv[v4i, j]) + pv[v5i, j]) * 0.2
  faces = ((v1i, v3i, v4i, 1, 3, 2, v3i, v4i), (v1i, v5i, v3i, 2, 4, 0, v5i, v3i),
           (v1i, v4i, v5i, 0, 5, 1, v4i, v5i), (v2i, v4i, v3i, 5, 0, 4, v3i, v4i),
           (v2i, v3i, v5i, 3, 1, 5, v5i, v3i), (v2i, v5i, v4i, 4, 2, 3, v4i, v5i))
  for f in faces:
    if _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr,
                    f[0], f[1], f[2], f[3], f[4], f[5]) < _MINVAL2:
      _replace_best_simplex3(pv, pvi, cnt, sx, si, v1i, v2i, f[6], f[7])
      return _TO_P3

  if not _ray_triangle(v1, v2, row3(pv, v3i), row3(pv, v4i), row3(pv, v5i)):
    return 2  # mjEPA_P2_NONCONVEX
  _fill_map(fmap, findex, cnt, 6)
  return 0


@jit
def _polytope4(pt, cnt, ctr, sx, si, objs, objt):
  """Initial polytope from a tetrahedron simplex; 0 on success."""
  pv, pvi, fv, fd2, fvert, fadj, findex, fmap = pt[:8]
  v1 = _insert_vertex(pv, pvi, cnt, sx, si, 0)
  v2 = _insert_vertex(pv, pvi, cnt, sx, si, 1)
  v3 = _insert_vertex(pv, pvi, cnt, sx, si, 2)
  v4 = _insert_vertex(pv, pvi, cnt, sx, si, 3)
  for j in range(3):
    c = pv[v1, j] + pv[v2, j]
    c = c + pv[v3, j]
    c = c + pv[v4, j]
    ctr[j] = c * 0.25

  faces = ((v1, v2, v3, 1, 3, 2), (v1, v4, v2, 2, 3, 0), (v1, v3, v4, 0, 3, 1),
           (v4, v3, v2, 2, 0, 1))
  for f in faces:
    if _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr,
                    f[0], f[1], f[2], f[3], f[4], f[5]) < _MINVAL2:
      _replace_simplex(pv, pvi, cnt, sx, si, 3, f[0], f[1], f[2])
      return _TO_P3_EDGE

  if not _test_tetra(row3(pv, v1), row3(pv, v2), row3(pv, v3), row3(pv, v4)):
    return 9  # mjEPA_P4_MISSING_ORIGIN
  _fill_map(fmap, findex, cnt, 4)
  return 0


@jit
def polytope(pt, cnt, ctr, sx, si, objs, objt, tolerance, nsimplex):
  """EPA's initial polytope from GJK's simplex of nsimplex (2..4) vertices, running the
  hand-offs between polytopeN as MuJoCo 4.0 does; 0 on success, else MuJoCo's status code."""
  cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0
  if nsimplex == 2:
    ret = _polytope2(pt, cnt, ctr, sx, si, objs, objt)
  elif nsimplex == 3:
    ret = _polytope3(pt, cnt, ctr, sx, si, objs, objt, tolerance, True)
  else:
    ret = _polytope4(pt, cnt, ctr, sx, si, objs, objt)
    if ret == _TO_P3_EDGE:
      ret = _polytope3(pt, cnt, ctr, sx, si, objs, objt, tolerance, True)
  if ret == _TO_P2:
    ret = _polytope2(pt, cnt, ctr, sx, si, objs, objt)
  if ret == _TO_P3:
    ret = _polytope3(pt, cnt, ctr, sx, si, objs, objt, tolerance, False)
  return ret


@_inline
def _delete_face(fmap, findex, cnt, f):
  """Remove face f from the map and mark it deleted."""
  if findex[f] >= 0:
    cnt[2] -= 1
    fmap[findex[f]] = fmap[cnt[2]]
    findex[fmap[findex[f]]] = findex[f]
  findex[f] = -2


@_inline
def _get_edge(fvert, f, vertex):
  """Edge of face f that starts at vertex."""
  if fvert[f, 0] == vertex:
    return 0
  if fvert[f, 1] == vertex:
    return 1
  return 2


@_inline
def _visible(fv, fd2, f, w0, w1, w2):
  """True when face f is visible from point w: w beyond its plane by more than
  max(1e-15 |v|, 1e-15) (MuJoCo 4.0; the published source: 1e-15)."""
  thr = math.sqrt(fd2[f]) * _MINVAL
  if not thr > _MINVAL:
    thr = _MINVAL
  return dot3(fv[f, 0], fv[f, 1], fv[f, 2], w0, w1, w2) - fd2[f] > thr


@_inline
def _add_edge(hz_idx, hz_edge, cnt, f, e):
  """Append (face, edge) to the horizon (counted beyond the room, not stored: EPA then stops)."""
  if cnt[3] < hz_idx.shape[0]:
    hz_edge[cnt[3]] = e
    hz_idx[cnt[3]] = f
  cnt[3] += 1


@jit
def _horizon_rec(pt, cnt, f, e, w0, w1, w2):
  """MuJoCo's horizonRec as an explicit depth-first stack; True when f is visible."""
  fv, fd2, fvert, fadj, findex, fmap = pt[2], pt[3], pt[4], pt[5], pt[6], pt[7]
  hz_idx, hz_edge, stk = pt[8], pt[9], pt[10]
  if not _visible(fv, fd2, f, w0, w1, w2):
    return False
  _delete_face(fmap, findex, cnt, f)
  sp = 0
  stk[0, 0], stk[0, 1], stk[0, 2] = f, e, 1
  while sp >= 0:
    cur = stk[sp, 0]
    kk = stk[sp, 2]
    if kk == 3:
      sp -= 1
      continue
    stk[sp, 2] = kk + 1
    i = (stk[sp, 1] + kk) % 3
    adj = fadj[cur, i]
    if findex[adj] > -2:
      adj_edge = _get_edge(fvert, adj, fvert[cur, (i + 1) % 3])
      if _visible(fv, fd2, adj, w0, w1, w2):
        _delete_face(fmap, findex, cnt, adj)
        sp += 1
        stk[sp, 0], stk[sp, 1], stk[sp, 2] = adj, adj_edge, 1
      else:
        _add_edge(hz_idx, hz_edge, cnt, adj, adj_edge)
  return True


@jit
def _horizon(pt, cnt, f, w0, w1, w2):
  """Delete the faces visible from w (starting at f) and collect the horizon edges."""
  fvert, fadj, findex, fmap = pt[4], pt[5], pt[6], pt[7]
  hz_idx, hz_edge = pt[8], pt[9]
  _delete_face(fmap, findex, cnt, f)
  vs = (fvert[f, 0], fvert[f, 1], fvert[f, 2])
  for j in range(3):
    adj = fadj[f, j]
    adj_edge = _get_edge(fvert, adj, vs[(j + 1) % 3])
    if findex[adj] <= -2:
      continue
    if not _horizon_rec(pt, cnt, adj, adj_edge, w0, w1, w2):
      _add_edge(hz_idx, hz_edge, cnt, adj, adj_edge)


@jit
def epa(pt, cnt, ctr, xw, objs, objt, tolerance, max_iterations):
  """Expand the polytope towards the penetration depth, as MuJoCo 4.0's epa (checked against
  it bit for bit); returns (dist, nx, nocontact): nocontact when the
  first support already shows the geoms apart (4.0's epa_status -1)."""
  pv, pvi, fv, fd2, fvert, fadj, findex, fmap = pt[:8]
  hz_idx, hz_edge = pt[8], pt[9]
  nfmax = fd2.shape[0]
  maxedges = max(max_iterations, 35) - 11   # 4.0's horizon room
  if maxedges > hz_idx.shape[0]:
    maxedges = hz_idx.shape[0]
  upper = _MAX_LIMIT
  upper2 = _MAX_LIMIT
  face = -1
  discrete = is_discrete(objs, objt)
  tol = _MINEPATOL if discrete else tolerance
  kmax = max_iterations if max_iterations < 1000 else 1000
  k = 0
  while k < kmax:
    pface = face

    # face closest to the origin: lower bound on the depth
    lower2 = _MAX_LIMIT
    for i in range(cnt[2]):
      if fd2[fmap[i]] < lower2:
        face = fmap[i]
        lower2 = fd2[face]
    if lower2 > upper2 or face < 0:
      face = pface
      break
    if lower2 <= 0:  # origin on the affine hull of a face
      break

    # support point along the face normal: upper bound on the depth
    lower = math.sqrt(lower2)
    wi = _epa_support(pv, pvi, cnt, objs, objt, fv[face, 0], fv[face, 1], fv[face, 2], lower)
    w0, w1, w2 = pv[wi, 0], pv[wi, 1], pv[wi, 2]
    upper_k = dot3(fv[face, 0], fv[face, 1], fv[face, 2], w0, w1, w2) / lower
    if upper_k < upper:
      upper = upper_k
      upper2 = upper * upper
    # MuJoCo 4.0 stops on this iteration's bound, not on the running minimum
    if upper_k - lower < tol:
      if k == 0 and lower - tol > upper:
        return 0.0, 0, True
      break

    # repeated support vertex (polytopes only)
    if discrete:
      nv = cnt[0] - 1
      i = 0
      while i < nv:
        if pvi[wi, 0] == pvi[i, 0] and pvi[wi, 1] == pvi[i, 1]:
          break
        i += 1
      if i != nv:
        break

    _horizon(pt, cnt, face, w0, w1, w2)
    if cnt[3] > maxedges or cnt[3] < 3:   # (4.0 warns of the first: raise ccd_iterations)
      face = -1
      break
    nfaces = cnt[1]
    nedges = cnt[3]
    if nedges > nfmax - nfaces:  # out of face memory
      break

    # attach a fan of faces from w to the horizon
    attached = True
    for i in range(nedges):
      cur = nfaces + i
      nxt = nfaces + (i + 1) % nedges
      prev = nfaces + nedges - 1 if i == 0 else cur - 1
      hf = hz_idx[i]
      he = hz_edge[i]
      hv1 = fvert[hf, he]
      hv2 = fvert[hf, (he + 1) % 3]
      fadj[hf, he] = cur
      dist2 = _attach_face(pv, fv, fd2, fvert, fadj, findex, cnt, ctr, wi, hv2, hv1, prev, hf,
                           nxt)
      if dist2 == 0:   # (4.0: the contact from the current face; the source gave none)
        attached = False
        break
      if dist2 >= lower2 and dist2 <= upper2:
        fmap[cnt[2]] = cnt[1] - 1
        findex[cnt[1] - 1] = cnt[2]
        cnt[2] += 1
    if not attached:
      break
    cnt[3] = 0
    if cnt[2] == 0:
      break
    k += 1

  if face < 0:
    return 0.0, 0, False
  cnt[4] = face

  # witness points from the face's barycentric coordinates of the origin's projection
  a, b, c = fvert[face, 0], fvert[face, 1], fvert[face, 2]
  l0, l1, l2 = _tri_coords(row3(pv, a), row3(pv, b), row3(pv, c), row3(fv, face))
  for j in range(3):
    xw[j] = l0 * pv[a, 3 + j] + l1 * pv[b, 3 + j] + l2 * pv[c, 3 + j]
    xw[3 + j] = l0 * pv[a, 6 + j] + l1 * pv[b, 6 + j] + l2 * pv[c, 6 + j]
  return -math.sqrt(fd2[face]), 1, False
