"""General convex narrowphase with native CCD disabled: MuJoCo's libccd path.

With `<flag nativeccd="disable"/>` MuJoCo 4.0's mjc_Convex collides convex pairs with libccd
(v2.1) instead of its own GJK/EPA: MPR (Minkowski Portal Refinement) finds the intersection
and its penetration depth, direction and point (ccdMPRPenetration), then mjc_fixNormal
replaces the normal by the analytic one of spheres, capsules, ellipsoids and cylinder walls,
and multiccd adds up to four contacts found by re-running MPR with both geoms turned by
+-1e-3 rad about the contact point (mjc_Convex's perturbation loop). Height fields
(mjc_ConvexHField, driven by collision.hfield) use the same MPR per prism.

MPR's result is not continuous in the poses: where its path changes, the penetration it
stops at jumps (MuJoCo's own contact depth moves by 1e-5 in some poses when qpos moves by
1e-15; in the jaco arm's folded qpos0 its qacc moves by 4% when qpos moves by 1e-12).
Contacts equal MuJoCo's (to 1e-14 in the tests) only because the same operations run in the
same order on the same inputs.

Written from libccd's src/mpr.c and vec3.c and MuJoCo's engine_collision_convex.c
(mjccd_support, mjc_center, _libccd_wrapper, mjc_fixNormal, mjc_Convex, mjc_ConvexHField);
Height-field prisms take MuJoCo 4.0's margin rule (see collision.hfield).

Geoms are rows 0 and 1 of `ob` (float64, 4 x 16 columns: size[0:3], pos[3:6], mat[6:15],
margin[15]; rows 2 and 3 keep their unturned world poses for the normal fix), their types
and the warm-start hull vertex of mesh hill-climbing in `oi` (int, 2 x 2). The
portal is `P` (5 x 9: rows 0-3 the portal's support points, row 4 the candidate; columns
0:3 the Minkowski point, 3:6 and 6:9 the two geoms' support points, as ccd_support_t).
"""
import math


from numjoco.engine.collision.support import cross3 as _cross, dot3 as _dot   # ccdVec3Cross/Dot
from numjoco.engine.collision.support import put_geom
from numjoco.engine.collision.work import MARGIN as _MARGIN, MAT as _MAT, POS as _POS, SIZE as _SIZE
from numjoco.engine.math import axis_angle_quat, mat_vec, normalize3, quat2mat
from numjoco.engine.types import mjtGeom

from numjoco.engine._jit import jit
from numjoco.engine._jit import inline as _inline
from numjoco.engine._sig import unit, M, D, i8, f8, NEEDS_LIBCCD
from numjoco.engine.types import MINVAL as _MINVAL

_SPHERE, _CAPSULE = int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE)
_ELLIPSOID, _CYLINDER = int(mjtGeom.ELLIPSOID), int(mjtGeom.CYLINDER)
_BOX, _MESH, _HFIELD = int(mjtGeom.BOX), int(mjtGeom.MESH), int(mjtGeom.HFIELD)

_EPS = 2.220446049250313e-16   # CCD_EPS: DBL_EPSILON (libccd built in double precision)
_HILLCLIMB_MIN = 10            # mjMESH_HILLCLIMB_MIN
_DSBL_MULTICCD = 1 << 19
_MAX_REFINE = 100000           # libccd's refinement loop has no bound; ours stops far beyond


# --------------------------------------- libccd numerics ----------------------------------------

@_inline
def _is_zero(x):
  """ccdIsZero."""
  return abs(x) < _EPS


@_inline
def _eq(a, b):
  """ccdEq: equal within CCD_EPS, absolute near zero, relative otherwise."""
  ab = abs(a - b)
  if ab < _EPS:
    return True
  a, b = abs(a), abs(b)
  return ab < _EPS * (b if b > a else a)


@_inline
def _ccd_normalize(v0, v1, v2):
  """ccdVec3Normalize: scale by the reciprocal norm (no zero guard, as libccd)."""
  k = 1.0 / math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
  return v0 * k, v1 * k, v2 * k


@_inline
def _sign(x):
  """mju_sign: 1, -1 or 0."""
  return float((x > 0.0) - (x < 0.0))


@_inline
def _vec(P, i, c):
  """Columns c:c+3 of portal row i."""
  return P[i, c], P[i, c + 1], P[i, c + 2]


@jit
def _copy_row(P, dst, src):
  for k in range(9):
    P[dst, k] = P[src, k]


@_inline
def _origin_outside(P, i, j):
  """True when the origin is strictly outside the portal face (v_i, v0, v_j) of the rows of P:
  (v_i x v_j) . v0 < 0 and not zero (libccd's discoverPortal)."""
  x0, x1, x2 = _cross(P[i, 0], P[i, 1], P[i, 2], P[j, 0], P[j, 1], P[j, 2])
  dot = _dot(x0, x1, x2, P[0, 0], P[0, 1], P[0, 2])
  return dot < 0.0 and not _is_zero(dot)


# ------------------------------------- support functions ----------------------------------------

@jit
def _mesh_local(vert, graph, oi, k, l0, l1, l2):
  """Best mesh vertex for local direction l: hill-climbing on the hull graph from the last
  result (the first hull vertex at first), or an exhaustive search (mjccd_support)."""
  if graph.shape[0] == 0 or vert.shape[0] < _HILLCLIMB_MIN:
    best = -1e10
    ibest = -1
    for i in range(vert.shape[0]):
      vdot = l0 * float(vert[i, 0]) + l1 * float(vert[i, 1]) + l2 * float(vert[i, 2])
      if vdot > best:
        best = vdot
        ibest = i
    oi[k, 1] = ibest
  else:
    nv = graph[0]
    ibest = oi[k, 1] if oi[k, 1] >= 0 else 0
    g = graph[2 + nv + ibest]
    best = l0 * float(vert[g, 0]) + l1 * float(vert[g, 1]) + l2 * float(vert[g, 2])
    change = True
    while change:
      change = False
      i = graph[2 + ibest]
      while True:
        loc = graph[2 + 2 * nv + i]
        if loc < 0:
          break
        g = graph[2 + nv + loc]
        vdot = l0 * float(vert[g, 0]) + l1 * float(vert[g, 1]) + l2 * float(vert[g, 2])
        if vdot > best:
          best = vdot
          ibest = loc
          change = True
        i += 1
    oi[k, 1] = ibest
    ibest = graph[2 + nv + ibest]
  if ibest < 0:
    return 0.0, 0.0, 0.0
  return float(vert[ibest, 0]), float(vert[ibest, 1]), float(vert[ibest, 2])


@jit
def _support(ob, oi, k, vert, graph, d0, d1, d2):
  """mjccd_support of object k in direction d: the geom's support point pushed out by half
  the margin along d, in the world frame (the height field's frame for prisms)."""
  typ = oi[k, 0]
  if typ == _HFIELD:
    # mjc_prism_support: best of the bottom or top triangle; MuJoCo 4.0 inflates the prism
    # by half the margin as well (a sphere at gap g < margin gets dist g)
    start = 0 if d2 < 0 else 3
    ibest = start
    best = vert[start, 0] * d0 + vert[start, 1] * d1 + vert[start, 2] * d2
    for i in range(1, 3):
      tmp = vert[start + i, 0] * d0 + vert[start + i, 1] * d1 + vert[start + i, 2] * d2
      if tmp > best:
        ibest = start + i
        best = tmp
    margin = ob[k, _MARGIN]
    return (vert[ibest, 0] + d0 * margin / 2, vert[ibest, 1] + d1 * margin / 2,
            vert[ibest, 2] + d2 * margin / 2)
  m = _MAT
  l0 = ob[k, m + 0] * d0 + ob[k, m + 3] * d1 + ob[k, m + 6] * d2
  l1 = ob[k, m + 1] * d0 + ob[k, m + 4] * d1 + ob[k, m + 7] * d2
  l2 = ob[k, m + 2] * d0 + ob[k, m + 5] * d1 + ob[k, m + 8] * d2
  s0, s1, s2 = ob[k, _SIZE], ob[k, _SIZE + 1], ob[k, _SIZE + 2]
  if typ == _SPHERE:
    r0, r1, r2 = l0 * s0, l1 * s0, l2 * s0
  elif typ == _CAPSULE:
    r0, r1, r2 = l0 * s0, l1 * s0, l2 * s0
    r2 += _sign(l2) * s1
  elif typ == _ELLIPSOID:
    r0, r1, r2 = normalize3(l0 * s0, l1 * s1, l2 * s2)
    r0 *= s0
    r1 *= s1
    r2 *= s2
  elif typ == _CYLINDER:
    tmp = math.sqrt(l0 * l0 + l1 * l1)
    if tmp > _MINVAL:
      r0 = l0 / tmp * s0
      r1 = l1 / tmp * s0
    else:
      r0 = r1 = 0.0
    r2 = _sign(l2) * s1
  elif typ == _BOX:
    r0, r1, r2 = _sign(l0) * s0, _sign(l1) * s1, _sign(l2) * s2
  else:
    r0, r1, r2 = _mesh_local(vert, graph, oi, k, l0, l1, l2)
  margin = ob[k, _MARGIN]
  r0 += l0 * margin / 2
  r1 += l1 * margin / 2
  r2 += l2 * margin / 2
  w0 = ob[k, m + 0] * r0 + ob[k, m + 1] * r1 + ob[k, m + 2] * r2
  w1 = ob[k, m + 3] * r0 + ob[k, m + 4] * r1 + ob[k, m + 5] * r2
  w2 = ob[k, m + 6] * r0 + ob[k, m + 7] * r1 + ob[k, m + 8] * r2
  return w0 + ob[k, _POS], w1 + ob[k, _POS + 1], w2 + ob[k, _POS + 2]


@jit
def _mink(P, row, ob, oi, vert1, graph1, vert2, graph2, d0, d1, d2):
  """__ccdSupport: support of object 0 along d minus object 1's along -d, into P[row]."""
  a0, a1, a2 = _support(ob, oi, 0, vert1, graph1, d0, d1, d2)
  b0, b1, b2 = _support(ob, oi, 1, vert2, graph2, -d0, -d1, -d2)
  P[row, 0], P[row, 1], P[row, 2] = a0 - b0, a1 - b1, a2 - b2
  P[row, 3], P[row, 4], P[row, 5] = a0, a1, a2
  P[row, 6], P[row, 7], P[row, 8] = b0, b1, b2


@jit
def _center(ob, oi, k, vert):
  """mjc_center: the geom's position, the mean of a prism's six vertices."""
  if oi[k, 0] == _HFIELD:
    c0 = c1 = c2 = 0.0
    for i in range(6):
      c0 += vert[i, 0]
      c1 += vert[i, 1]
      c2 += vert[i, 2]
    return c0 * (1.0 / 6.0), c1 * (1.0 / 6.0), c2 * (1.0 / 6.0)
  return ob[k, _POS], ob[k, _POS + 1], ob[k, _POS + 2]


# -------------------------------------------- MPR -----------------------------------------------

@jit
def _portal_dir(P):
  """Unit normal of the portal face v1-v2-v3, pointing away from v0."""
  a0, a1, a2 = P[2, 0] - P[1, 0], P[2, 1] - P[1, 1], P[2, 2] - P[1, 2]
  b0, b1, b2 = P[3, 0] - P[1, 0], P[3, 1] - P[1, 1], P[3, 2] - P[1, 2]
  c0, c1, c2 = _cross(a0, a1, a2, b0, b1, b2)
  return _ccd_normalize(c0, c1, c2)


@jit
def _reach_tolerance(P, d0, d1, d2, tolerance):
  """True when the candidate (row 4) cannot move the portal by more than the tolerance."""
  dv1 = _dot(P[1, 0], P[1, 1], P[1, 2], d0, d1, d2)
  dv2 = _dot(P[2, 0], P[2, 1], P[2, 2], d0, d1, d2)
  dv3 = _dot(P[3, 0], P[3, 1], P[3, 2], d0, d1, d2)
  dv4 = _dot(P[4, 0], P[4, 1], P[4, 2], d0, d1, d2)
  dot1 = min(min(dv4 - dv1, dv4 - dv2), dv4 - dv3)
  return _eq(dot1, tolerance) or dot1 < tolerance


@jit
def _expand(P):
  """Replace one of v1, v2, v3 by the candidate so the portal still faces the origin ray."""
  x0, x1, x2 = _cross(P[4, 0], P[4, 1], P[4, 2], P[0, 0], P[0, 1], P[0, 2])
  if _dot(P[1, 0], P[1, 1], P[1, 2], x0, x1, x2) > 0.0:
    if _dot(P[2, 0], P[2, 1], P[2, 2], x0, x1, x2) > 0.0:
      _copy_row(P, 1, 4)
    else:
      _copy_row(P, 3, 4)
  else:
    if _dot(P[3, 0], P[3, 1], P[3, 2], x0, x1, x2) > 0.0:
      _copy_row(P, 2, 4)
    else:
      _copy_row(P, 1, 4)


@jit
def _discover(P, ob, oi, vert1, graph1, vert2, graph2):
  """discoverPortal: -1 no intersection, 1 origin on v1, 2 origin on segment v0-v1, 0 a
  portal v0..v3 through which the origin ray passes."""
  a0, a1, a2 = _center(ob, oi, 0, vert1)
  b0, b1, b2 = _center(ob, oi, 1, vert2)
  P[0, 0], P[0, 1], P[0, 2] = a0 - b0, a1 - b1, a2 - b2
  P[0, 3], P[0, 4], P[0, 5] = a0, a1, a2
  P[0, 6], P[0, 7], P[0, 8] = b0, b1, b2
  if _eq(P[0, 0], 0.0) and _eq(P[0, 1], 0.0) and _eq(P[0, 2], 0.0):
    P[0, 0] += _EPS * 10.0

  d0, d1, d2 = _ccd_normalize(-P[0, 0], -P[0, 1], -P[0, 2])
  _mink(P, 1, ob, oi, vert1, graph1, vert2, graph2, d0, d1, d2)
  dot = _dot(P[1, 0], P[1, 1], P[1, 2], d0, d1, d2)
  if _is_zero(dot) or dot < 0.0:
    return -1

  d0, d1, d2 = _cross(P[0, 0], P[0, 1], P[0, 2], P[1, 0], P[1, 1], P[1, 2])
  if _is_zero(_dot(d0, d1, d2, d0, d1, d2)):
    if _eq(P[1, 0], 0.0) and _eq(P[1, 1], 0.0) and _eq(P[1, 2], 0.0):
      return 1
    return 2

  d0, d1, d2 = _ccd_normalize(d0, d1, d2)
  _mink(P, 2, ob, oi, vert1, graph1, vert2, graph2, d0, d1, d2)
  dot = _dot(P[2, 0], P[2, 1], P[2, 2], d0, d1, d2)
  if _is_zero(dot) or dot < 0.0:
    return -1

  d0, d1, d2 = _cross(P[1, 0] - P[0, 0], P[1, 1] - P[0, 1], P[1, 2] - P[0, 2],
                      P[2, 0] - P[0, 0], P[2, 1] - P[0, 1], P[2, 2] - P[0, 2])
  d0, d1, d2 = _ccd_normalize(d0, d1, d2)
  if _dot(d0, d1, d2, P[0, 0], P[0, 1], P[0, 2]) > 0.0:
    for k in range(9):
      P[1, k], P[2, k] = P[2, k], P[1, k]
    d0, d1, d2 = -d0, -d1, -d2

  while True:
    _mink(P, 3, ob, oi, vert1, graph1, vert2, graph2, d0, d1, d2)
    dot = _dot(P[3, 0], P[3, 1], P[3, 2], d0, d1, d2)
    if _is_zero(dot) or dot < 0.0:
      return -1
    if _origin_outside(P, 1, 3):     # outside (v1, v0, v3): v3 replaces v2
      _copy_row(P, 2, 3)
    elif _origin_outside(P, 3, 2):   # outside (v3, v0, v2): v3 replaces v1
      _copy_row(P, 1, 3)
    else:
      return 0
    d0, d1, d2 = _cross(P[1, 0] - P[0, 0], P[1, 1] - P[0, 1], P[1, 2] - P[0, 2],
                        P[2, 0] - P[0, 0], P[2, 1] - P[0, 1], P[2, 2] - P[0, 2])
    d0, d1, d2 = _ccd_normalize(d0, d1, d2)


@jit
def _refine(P, ob, oi, vert1, graph1, vert2, graph2, tolerance):
  """refinePortal: 0 when the portal encloses the origin, -1 when the origin is outside."""
  for _ in range(_MAX_REFINE):
    d0, d1, d2 = _portal_dir(P)
    dot = _dot(d0, d1, d2, P[1, 0], P[1, 1], P[1, 2])
    if _is_zero(dot) or dot > 0.0:
      return 0
    _mink(P, 4, ob, oi, vert1, graph1, vert2, graph2, d0, d1, d2)
    dot = _dot(P[4, 0], P[4, 1], P[4, 2], d0, d1, d2)
    if not (_is_zero(dot) or dot > 0.0) or _reach_tolerance(P, d0, d1, d2, tolerance):
      return -1
    _expand(P)
  return -1


@jit
def _segment_dist2(x0, x1, x2, b0, b1, b2):
  """__ccdVec3PointSegmentDist2 from the origin: squared distance and witness point."""
  e0, e1, e2 = b0 - x0, b1 - x1, b2 - x2
  t = -1.0 * _dot(x0, x1, x2, e0, e1, e2)
  t /= _dot(e0, e1, e2, e0, e1, e2)
  if t < 0.0 or _is_zero(t):
    return _dot(x0, x1, x2, x0, x1, x2), x0, x1, x2
  if t > 1.0 or _eq(t, 1.0):
    return _dot(b0, b1, b2, b0, b1, b2), b0, b1, b2
  w0, w1, w2 = e0 * t + x0, e1 * t + x1, e2 * t + x2
  return _dot(w0, w1, w2, w0, w1, w2), w0, w1, w2


@jit
def _tri_dist2(P):
  """ccdVec3PointTriDist2 of the origin and triangle v1-v2-v3: squared distance, witness."""
  x0, x1, x2 = P[1, 0], P[1, 1], P[1, 2]
  B0, B1, B2 = P[2, 0], P[2, 1], P[2, 2]
  C0, C1, C2 = P[3, 0], P[3, 1], P[3, 2]
  e0, e1, e2 = B0 - x0, B1 - x1, B2 - x2
  f0, f1, f2 = C0 - x0, C1 - x1, C2 - x2
  v = _dot(e0, e1, e2, e0, e1, e2)
  w = _dot(f0, f1, f2, f0, f1, f2)
  p = _dot(x0, x1, x2, e0, e1, e2)
  q = _dot(x0, x1, x2, f0, f1, f2)
  r = _dot(e0, e1, e2, f0, f1, f2)
  d = w * v - r * r
  if _is_zero(d):
    s = t = -1.0
  else:
    s = (q * r - w * p) / d
    t = (-s * r - q) / w
  if ((_is_zero(s) or s > 0.0) and (_eq(s, 1.0) or s < 1.0)
      and (_is_zero(t) or t > 0.0) and (_eq(t, 1.0) or t < 1.0)
      and (_eq(t + s, 1.0) or t + s < 1.0)):
    w0 = (x0 + e0 * s) + f0 * t
    w1 = (x1 + e1 * s) + f1 * t
    w2 = (x2 + e2 * s) + f2 * t
    return _dot(w0, w1, w2, w0, w1, w2), w0, w1, w2
  dist, w0, w1, w2 = _segment_dist2(x0, x1, x2, B0, B1, B2)
  dist2, y0, y1, y2 = _segment_dist2(x0, x1, x2, C0, C1, C2)
  if dist2 < dist:
    dist, w0, w1, w2 = dist2, y0, y1, y2
  dist2, y0, y1, y2 = _segment_dist2(B0, B1, B2, C0, C1, C2)
  if dist2 < dist:
    dist, w0, w1, w2 = dist2, y0, y1, y2
  return dist, w0, w1, w2


@_inline
def _bary(P, j, b0, b1, b2, b3, inv):
  """Coordinate j of the midpoint of the two geoms' barycentric points (findPos)."""
  p1 = 0.0 + P[0, 3 + j] * b0
  p2 = 0.0 + P[0, 6 + j] * b0
  p1 += P[1, 3 + j] * b1
  p2 += P[1, 6 + j] * b1
  p1 += P[2, 3 + j] * b2
  p2 += P[2, 6 + j] * b2
  p1 += P[3, 3 + j] * b3
  p2 += P[3, 6 + j] * b3
  return (p1 * inv + p2 * inv) * 0.5


@jit
def _find_pos(P):
  """findPos: the origin's barycentric coordinates in the portal tetrahedron, applied to both
  geoms' support points; returns the midpoint."""
  d0, d1, d2 = _portal_dir(P)
  x = _cross(P[1, 0], P[1, 1], P[1, 2], P[2, 0], P[2, 1], P[2, 2])
  b0 = _dot(x[0], x[1], x[2], P[3, 0], P[3, 1], P[3, 2])
  x = _cross(P[3, 0], P[3, 1], P[3, 2], P[2, 0], P[2, 1], P[2, 2])
  b1 = _dot(x[0], x[1], x[2], P[0, 0], P[0, 1], P[0, 2])
  x = _cross(P[0, 0], P[0, 1], P[0, 2], P[1, 0], P[1, 1], P[1, 2])
  b2 = _dot(x[0], x[1], x[2], P[3, 0], P[3, 1], P[3, 2])
  x = _cross(P[2, 0], P[2, 1], P[2, 2], P[1, 0], P[1, 1], P[1, 2])
  b3 = _dot(x[0], x[1], x[2], P[0, 0], P[0, 1], P[0, 2])
  total = b0 + b1 + b2 + b3
  if _is_zero(total) or total < 0.0:
    b0 = 0.0
    x = _cross(P[2, 0], P[2, 1], P[2, 2], P[3, 0], P[3, 1], P[3, 2])
    b1 = _dot(x[0], x[1], x[2], d0, d1, d2)
    x = _cross(P[3, 0], P[3, 1], P[3, 2], P[1, 0], P[1, 1], P[1, 2])
    b2 = _dot(x[0], x[1], x[2], d0, d1, d2)
    x = _cross(P[1, 0], P[1, 1], P[1, 2], P[2, 0], P[2, 1], P[2, 2])
    b3 = _dot(x[0], x[1], x[2], d0, d1, d2)
    total = b1 + b2 + b3
  inv = 1.0 / total
  return (_bary(P, 0, b0, b1, b2, b3, inv), _bary(P, 1, b0, b1, b2, b3, inv),
          _bary(P, 2, b0, b1, b2, b3, inv))


@jit
def mpr_penetration(P, ob, oi, vert1, graph1, vert2, graph2, tolerance, max_iterations):
  """ccdMPRPenetration: (hit, depth, direction, position); direction zero for a touching
  contact."""
  res = _discover(P, ob, oi, vert1, graph1, vert2, graph2)
  if res < 0:
    return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
  if res == 1:   # touching at v1
    return (True, 0.0, 0.0, 0.0, 0.0, (P[1, 3] + P[1, 6]) * 0.5, (P[1, 4] + P[1, 7]) * 0.5,
            (P[1, 5] + P[1, 8]) * 0.5)
  if res == 2:   # origin on segment v0-v1
    q0, q1, q2 = (P[1, 3] + P[1, 6]) * 0.5, (P[1, 4] + P[1, 7]) * 0.5, (P[1, 5] + P[1, 8]) * 0.5
    depth = math.sqrt(_dot(P[1, 0], P[1, 1], P[1, 2], P[1, 0], P[1, 1], P[1, 2]))
    n0, n1, n2 = _ccd_normalize(P[1, 0], P[1, 1], P[1, 2])
    return True, depth, n0, n1, n2, q0, q1, q2
  if _refine(P, ob, oi, vert1, graph1, vert2, graph2, tolerance) < 0:
    return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
  iterations = 0
  while True:
    d0, d1, d2 = _portal_dir(P)
    _mink(P, 4, ob, oi, vert1, graph1, vert2, graph2, d0, d1, d2)
    if _reach_tolerance(P, d0, d1, d2, tolerance) or iterations > max_iterations:
      depth2, n0, n1, n2 = _tri_dist2(P)
      depth = math.sqrt(depth2)
      if _is_zero(depth):
        n0 = n1 = n2 = 0.0
      else:
        n0, n1, n2 = _ccd_normalize(n0, n1, n2)
      q0, q1, q2 = _find_pos(P)
      return True, depth, n0, n1, n2, q0, q1, q2
    _expand(P)
    iterations += 1


# ------------------------------------------ normals ---------------------------------------------

@jit
def _ellipsoid_inside(n0, n1, n2, p0, p1, p2, s0, s1, s2):
  """mjc_ellipsoidInside: the normal at the ellipsoid point hit by the ray from p (inside)
  along the normal, iterated; (ok, normal)."""
  i0, i1, i2 = 1 / (s0 * s0), 1 / (s1 * s1), 1 / (s2 * s2)
  C = p0 * p0 * i0 + p1 * p1 * i1 + p2 * p2 * i2 - 1
  if C > 0:
    return False, n0, n1, n2
  n0, n1, n2 = normalize3(n0, n1, n2)
  for it in range(30):
    A = n0 * n0 * i0 + n1 * n1 * i1 + n2 * n2 * i2
    B = p0 * n0 * i0 + p1 * n1 * i1 + p2 * n2 * i2
    det = B * B - A * C
    if det < _MINVAL or A < _MINVAL:
      return it > 0, n0, n1, n2
    x = (-B + math.sqrt(det)) / A
    if x < 0:
      return it > 0, n0, n1, n2
    q0, q1, q2 = normalize3((p0 + n0 * x) * i0, (p1 + n1 * x) * i1, (p2 + n2 * x) * i2)
    e0, e1, e2 = n0 - q0, n1 - q1, n2 - q2
    change = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    n0, n1, n2 = q0, q1, q2
    if change < 1e-6:
      break
  return True, n0, n1, n2


@jit
def _ellipsoid_outside(p0, p1, p2, s0, s1, s2):
  """mjc_ellipsoidOutside: the normal at the ellipsoid point nearest to p (outside), by
  Newton's method on the Lagrange multiplier."""
  S0, S1, S2 = s0 * s0, s1 * s1, s2 * s2
  P0, P1, P2 = p0 * p0 * S0, p1 * p1 * S1, p2 * p2 * S2
  la = 0.0
  for _ in range(30):
    R0, R1, R2 = 1 / (S0 + la), 1 / (S1 + la), 1 / (S2 + la)
    val = P0 * R0 * R0 + P1 * R1 * R1 + P2 * R2 * R2 - 1
    if val < 1e-6:
      break
    deriv = -2 * (P0 * R0 * R0 * R0 + P1 * R1 * R1 * R1 + P2 * R2 * R2 * R2)
    if deriv > -_MINVAL:
      break
    delta = -val / deriv
    if delta < 1e-6:
      break
    la += delta
  return p0 / (S0 + la), p1 / (S1 + la), p2 / (S2 + la)


@jit
def _geom_normal(ob, typ, k, c0, c1, c2, n0, n1, n2):
  """The analytic outward normal of geom row k near contact point c (mjc_fixNormal's cases),
  given normal n as the initial guess: (processed, world normal)."""
  m = _MAT
  e0, e1, e2 = c0 - ob[k, _POS], c1 - ob[k, _POS + 1], c2 - ob[k, _POS + 2]
  p0 = ob[k, m + 0] * e0 + ob[k, m + 3] * e1 + ob[k, m + 6] * e2
  p1 = ob[k, m + 1] * e0 + ob[k, m + 4] * e1 + ob[k, m + 7] * e2
  p2 = ob[k, m + 2] * e0 + ob[k, m + 5] * e1 + ob[k, m + 8] * e2
  r0 = ob[k, m + 0] * n0 + ob[k, m + 3] * n1 + ob[k, m + 6] * n2
  r1 = ob[k, m + 1] * n0 + ob[k, m + 4] * n1 + ob[k, m + 7] * n2
  r2 = ob[k, m + 2] * n0 + ob[k, m + 5] * n1 + ob[k, m + 8] * n2
  s0, s1, s2 = ob[k, _SIZE], ob[k, _SIZE + 1], ob[k, _SIZE + 2]
  done = False
  if typ == _SPHERE:
    r0, r1, r2 = p0, p1, p2
    done = True
  elif typ == _CAPSULE:
    if p2 < -s1:
      r2 = p2 + s1
    elif p2 > s1:
      r2 = p2 - s1
    else:
      r2 = 0.0
    r0, r1 = p0, p1
    done = True
  elif typ == _ELLIPSOID:
    if s0 >= _MINVAL and s1 >= _MINVAL and s2 >= _MINVAL:
      dst = p0 * p0 / (s0 * s0) + p1 * p1 / (s1 * s1) + p2 * p2 / (s2 * s2)
      if dst <= 1:
        done, r0, r1, r2 = _ellipsoid_inside(r0, r1, r2, p0, p1, p2, s0, s1, s2)
      else:
        r0, r1, r2 = _ellipsoid_outside(p0, p1, p2, s0, s1, s2)
        done = True
  elif typ == _CYLINDER:
    if abs(p2) <= 0.95 * s1:
      dst1 = abs(s1 - abs(p2))
      dst2 = abs(s0 - math.sqrt(p0 * p0 + p1 * p1))
      if not dst1 < 0.25 * dst2:
        r0, r1, r2 = p0, p1, 0.0
        done = True
  if not done:
    return False, n0, n1, n2
  r0, r1, r2 = normalize3(r0, r1, r2)
  return (True, ob[k, m + 0] * r0 + ob[k, m + 1] * r1 + ob[k, m + 2] * r2,
          ob[k, m + 3] * r0 + ob[k, m + 4] * r1 + ob[k, m + 5] * r2,
          ob[k, m + 6] * r0 + ob[k, m + 7] * r1 + ob[k, m + 8] * r2)


@jit
def fix_normal(ob, type1, row1, type2, row2, frame, pos, i):
  """mjc_fixNormal: contact i's normal from the analytic normals of spheres, capsules,
  ellipsoids and cylinder walls (averaged when both geoms have one); geom poses in ob's rows
  row1 and row2 (world frame), type -1 for a geom without one."""
  c0, c1, c2 = pos[i, 0], pos[i, 1], pos[i, 2]
  n0, n1, n2 = frame[i, 0], frame[i, 1], frame[i, 2]
  ok1 = ok2 = False
  a0 = a1 = a2 = b0 = b1 = b2 = 0.0
  if type1 >= 0:
    ok1, a0, a1, a2 = _geom_normal(ob, type1, row1, c0, c1, c2, n0, n1, n2)
  if type2 >= 0:
    ok2, b0, b1, b2 = _geom_normal(ob, type2, row2, c0, c1, c2, -n0, -n1, -n2)
  if ok1 and ok2:
    n0, n1, n2 = normalize3(a0 - b0, a1 - b1, a2 - b2)
  elif ok1:
    n0, n1, n2 = a0, a1, a2
  elif ok2:
    n0, n1, n2 = -b0, -b1, -b2
  frame[i, 0], frame[i, 1], frame[i, 2] = n0, n1, n2


# ----------------------------------------- mjc_Convex -------------------------------------------

@jit
def _penetration(P, ob, oi, vert1, graph1, vert2, graph2, margin, tolerance, max_iterations,
                 i, dist, pos, frame):
  """MuJoCo's _libccd_wrapper: contact i from MPR (none for a touching contact); 0 or 1."""
  hit, depth, n0, n1, n2, q0, q1, q2 = mpr_penetration(P, ob, oi, vert1, graph1, vert2,
                                                       graph2, tolerance, max_iterations)
  if not hit or (_eq(n0, 0.0) and _eq(n1, 0.0) and _eq(n2, 0.0)):
    return 0
  dist[i] = margin - depth
  frame[i, 0], frame[i, 1], frame[i, 2] = n0, n1, n2
  frame[i, 3] = frame[i, 4] = frame[i, 5] = 0.0
  pos[i, 0], pos[i, 1], pos[i, 2] = q0, q1, q2
  return 1


@jit
def _set_geom(ob, oi, k, typ, size, pos, mat, margin):
  """Rows k (working copy) and k + 2 (kept) of ob := the geom's size, pose and margin."""
  oi[k, 0] = typ
  oi[k, 1] = -1
  put_geom(ob, k, size, pos, mat, margin)
  put_geom(ob, k + 2, size, pos, mat, margin)


@jit
def _rotate_frame(ob, k, o0, o1, o2, R):
  """mju_rotateFrame: turn row k's pose by rotation R (9,) about point o."""
  m = _MAT
  x = ob[k]
  mat = (R[0] * x[m + 0] + R[1] * x[m + 3] + R[2] * x[m + 6],
         R[0] * x[m + 1] + R[1] * x[m + 4] + R[2] * x[m + 7],
         R[0] * x[m + 2] + R[1] * x[m + 5] + R[2] * x[m + 8],
         R[3] * x[m + 0] + R[4] * x[m + 3] + R[5] * x[m + 6],
         R[3] * x[m + 1] + R[4] * x[m + 4] + R[5] * x[m + 7],
         R[3] * x[m + 2] + R[4] * x[m + 5] + R[5] * x[m + 8],
         R[6] * x[m + 0] + R[7] * x[m + 3] + R[8] * x[m + 6],
         R[6] * x[m + 1] + R[7] * x[m + 4] + R[8] * x[m + 7],
         R[6] * x[m + 2] + R[7] * x[m + 5] + R[8] * x[m + 8])
  for j in range(9):
    x[m + j] = mat[j]
  e0, e1, e2 = o0 - x[_POS], o1 - x[_POS + 1], o2 - x[_POS + 2]
  v0 = R[0] * e0 + R[1] * e1 + R[2] * e2
  v1 = R[3] * e0 + R[4] * e1 + R[5] * e2
  v2 = R[6] * e0 + R[7] * e1 + R[8] * e2
  x[_POS] -= v0 - e0
  x[_POS + 1] -= v1 - e1
  x[_POS + 2] -= v2 - e2


@jit
def _restore(ob):
  """Working rows 0, 1 := the kept poses in rows 2, 3."""
  for k in range(2):
    for j in range(16):
      ob[k, j] = ob[k + 2, j]


@jit
def _make_frame(n0, n1, n2):
  """mju_makeFrame's tangents for normal n and no tangent: (y axis, z axis)."""
  x0, x1, x2 = normalize3(n0, n1, n2)
  y0, y1, y2 = (0.0, 1.0, 0.0) if (x1 < 0.5 and x1 > -0.5) else (0.0, 0.0, 1.0)
  dot = _dot(x0, x1, x2, y0, y1, y2)
  y0, y1, y2 = normalize3(y0 - x0 * dot, y1 - x1 * dot, y2 - x2 * dot)
  z0, z1, z2 = _cross(x0, x1, x2, y0, y1, y2)
  return y0, y1, y2, z0, z1, z2


@jit
def _multiccd(P, ob, oi, vert1, graph1, vert2, graph2, tol_distinct, margin, tolerance,
              max_iterations, dist, pos, frame, R):
  """mjc_Convex's perturbation loop: MPR again with geom 1 turned by +-1e-3 rad about each
  tangent axis through the first contact and geom 2 turned back; keeps the contacts farther
  than tol_distinct from all others, at the first contact's depth. Returns the count."""
  ncon = 1
  o0, o1, o2 = pos[0, 0], pos[0, 1], pos[0, 2]
  y0, y1, y2, z0, z1, z2 = _make_frame(frame[0, 0], frame[0, 1], frame[0, 2])
  for axis in range(2):
    a0, a1, a2 = (y0, y1, y2) if axis == 0 else (z0, z1, z2)
    for side in range(2):
      angle = -1e-3 if side == 0 else 1e-3
      q0, q1, q2, q3 = axis_angle_quat(a0, a1, a2, angle)
      quat2mat(R, q0, q1, q2, q3)
      _rotate_frame(ob, 0, o0, o1, o2, R)
      for a in range(3):   # the inverse rotation
        for b in range(a + 1, 3):
          R[3 * a + b], R[3 * b + a] = R[3 * b + a], R[3 * a + b]
      _rotate_frame(ob, 1, o0, o1, o2, R)
      if _penetration(P, ob, oi, vert1, graph1, vert2, graph2, margin, tolerance,
                      max_iterations, ncon, dist, pos, frame):
        fix_normal(ob, _fixable(oi[0, 0]), 2, _fixable(oi[1, 0]), 3, frame, pos, ncon)
        distinct = True
        for i in range(ncon):
          e0 = pos[i, 0] - pos[ncon, 0]
          e1 = pos[i, 1] - pos[ncon, 1]
          e2 = pos[i, 2] - pos[ncon, 2]
          if math.sqrt(e0 * e0 + e1 * e1 + e2 * e2) <= tol_distinct:
            distinct = False
            break
        if distinct:
          dist[ncon] = dist[0]
          ncon += 1
      _restore(ob)
  return ncon


@_inline
def _fixable(typ):
  """The geom type when mjc_fixNormal has an analytic normal for it, else -1."""
  if typ == _SPHERE or typ == _CAPSULE or typ == _ELLIPSOID or typ == _CYLINDER:
    return typ
  return -1


@jit
def collide_libccd(type1, size1, pos1, mat1, vert1, graph1, rbound1, type2, size2, pos2, mat2,
                   vert2, graph2, rbound2, margin, ccd_iterations, ccd_tolerance, flags, dist,
                   pos, frame, fbuf, ibuf):
  """MuJoCo 4.0's mjc_Convex with native CCD disabled, for two convex geoms (not planes or
  height fields); returns the contact count (at most 5).

  vert/graph: a mesh geom's float32 vertices (n, 3) and mesh_graph block (empty without a
  hull), empty arrays for primitives; rbound: the geoms' bounding radii (multiccd's distinct-
  contact tolerance); flags: m.opt.disableflags (MULTICCD). Writes dist, pos and the normal
  in frame[i, 0:3] (zero tangents) as `collision.convex.collide_convex`; uses fbuf[0:118]
  and ibuf[0:4] as scratch."""
  P = fbuf[0:45].reshape((5, 9))
  ob = fbuf[45:109].reshape((4, 16))
  R = fbuf[109:118]
  oi = ibuf[0:4].reshape((2, 2))
  _set_geom(ob, oi, 0, type1, size1, pos1, mat1, margin)
  _set_geom(ob, oi, 1, type2, size2, pos2, mat2, margin)
  n = _penetration(P, ob, oi, vert1, graph1, vert2, graph2, margin, ccd_tolerance,
                   ccd_iterations, 0, dist, pos, frame)
  if n == 0:
    return 0
  fix_normal(ob, _fixable(type1), 2, _fixable(type2), 3, frame, pos, 0)
  if (flags & _DSBL_MULTICCD or type1 == _SPHERE or type1 == _ELLIPSOID
      or type2 == _SPHERE or type2 == _ELLIPSOID):
    return 1
  return _multiccd(P, ob, oi, vert1, graph1, vert2, graph2, 1e-3 * min(rbound1, rbound2),
                   margin, ccd_tolerance, ccd_iterations, dist, pos, frame, R)


@jit
def _mesh_block(m, g):
  """(float32 vertices, mesh_graph block) of geom g's mesh; empty for other geoms and for
  the graph of a mesh without a hull."""
  mid = m.geom_dataid[g]
  if m.geom_type[g] != _MESH or mid < 0:
    return m.mesh_vert[0:0], m.mesh_graph[0:0]
  vert = m.mesh_vert[m.mesh_vertadr[mid]:m.mesh_vertadr[mid] + m.mesh_vertnum[mid]]
  adr = m.mesh_graphadr[mid]
  if adr < 0:
    return vert, m.mesh_graph[0:0]
  nh, nf = m.mesh_graph[adr], m.mesh_graph[adr + 1]
  return vert, m.mesh_graph[adr:adr + 2 + 3 * nh + 6 * nf]


@unit((M, D, i8, i8, f8), i8, needs=NEEDS_LIBCCD)
def collide(m, d, g1, g2, margin):
  """The driver's entry: contacts of geoms g1, g2 (convex, type1 <= type2, not plane or
  height field) into d.col_dist/col_pos/col_frame; returns the count."""
  vert1, graph1 = _mesh_block(m, g1)
  vert2, graph2 = _mesh_block(m, g2)
  return collide_libccd(
      m.geom_type[g1], m.geom_size[g1], d.geom_xpos[g1], d.geom_xmat[g1], vert1, graph1,
      m.geom_rbound[g1], m.geom_type[g2], m.geom_size[g2], d.geom_xpos[g2], d.geom_xmat[g2],
      vert2, graph2, m.geom_rbound[g2], margin, m.opt_ccd_iterations[0],
      m.opt_ccd_tolerance[0], m.opt_disableflags[0], d.col_dist, d.col_pos, d.col_frame,
      d.col_fbuf, d.col_ibuf)


# -------------------------------------- height fields -------------------------------------------

@jit
def hfield_begin(geom, type2, pos2, mat2, margin, fbuf, ibuf):
  """Set up mjc_ConvexHField's libccd objects: the prism (object 0, inflated by half the
  margin), geom 2 in the height field's frame (object 1: size, pos, mat as the first 15
  columns of `geom`) and in the world (row 3, for the normal fix)."""
  ob = fbuf[45:109].reshape((4, 16))
  oi = ibuf[0:4].reshape((2, 2))
  oi[0, 0] = _HFIELD
  oi[0, 1] = -1
  for j in range(16):
    ob[0, j] = 0.0
  ob[0, _MARGIN] = margin
  oi[1, 0] = type2
  oi[1, 1] = -1
  for j in range(15):
    ob[1, j] = geom[j]
    ob[3, j] = geom[j]
  ob[1, _MARGIN] = ob[3, _MARGIN] = margin
  for j in range(3):
    ob[3, _POS + j] = pos2[j]
  for j in range(9):
    ob[3, _MAT + j] = mat2[j]


@_inline
def contact_to_world(frame, pos, i, mat, off):
  """Contact i's normal and point from a frame (rotation mat, origin off) to the world."""
  frame[i, 0], frame[i, 1], frame[i, 2] = mat_vec(mat, frame[i, 0], frame[i, 1], frame[i, 2])
  p0, p1, p2 = mat_vec(mat, pos[i, 0], pos[i, 1], pos[i, 2])
  pos[i, 0], pos[i, 1], pos[i, 2] = p0 + off[0], p1 + off[1], p2 + off[2]


@jit
def hfield_prism(prism, vert2, graph2, pos1, mat1, margin, tolerance, max_iterations, i, dist,
                 pos, frame, fbuf, ibuf):
  """One prism of mjc_ConvexHField with native CCD disabled (after `hfield_begin`): MPR of the
  prism (6, 3: bottom then top vertices, height field frame) and geom 2; writes contact i in
  the world frame with mjc_fixNormal applied; returns 0 or 1."""
  P = fbuf[0:45].reshape((5, 9))
  ob = fbuf[45:109].reshape((4, 16))
  oi = ibuf[0:4].reshape((2, 2))
  if not _penetration(P, ob, oi, prism, graph2[0:0], vert2, graph2, margin, tolerance,
                      max_iterations, i, dist, pos, frame):
    return 0
  contact_to_world(frame, pos, i, mat1, pos1)
  fix_normal(ob, -1, 2, _fixable(oi[1, 0]), 3, frame, pos, i)
  return 1
