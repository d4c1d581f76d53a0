"""Signed distance field (SDF) geoms: MuJoCo's SDF plugins and the SDF collider.

The five first-party plugins (plugin/sdf/*.cc: torus, bowl, gear, nut, bolt) as numba
functions selected by `plugin_kind` with the attributes `plugin_param`; the primitive
geoms' distances and gradients as engine_collision_sdf.c's geomDistance/geomGradient; and
mjc_SDF: starting points from a Halton sequence over the intersection of the two geoms'
bounding boxes, gradient descent with backtracking line search on a function of both SDFs
(`sdf_iterations` steps), one step on their intersection, a contact on the mid-surface. It is
deterministic, so contacts equal MuJoCo's point for point. An sdf geom without a plugin uses the
octree of its mesh (oct_*: trilinear interpolation of distances stored at the leaves'
corners). mjc_MeshSDF (mesh vs SDF) samples each mesh triangle (Halton barycentric points) and
runs Frank-Wolfe steps on the SDF.
"""
import math

import numpy as np

from numjoco.engine.collision.support import normalize3 as _normalize3
from numjoco.engine import math as mm
from numjoco.engine._jit import jit
from numjoco.engine import types as t
from numjoco.engine._sig import unit, M, D, i8, f8v, f8m, NEEDS_SDF
from numjoco.engine.types import MINVAL as _MINVAL
from numjoco.engine.types import MAXVAL as _MAXVAL

TORUS, BOWL, GEAR, NUT, BOLT = 0, 1, 2, 3, 4   # engine/mjcf/_plugin.py's kinds
# an sdf geom without a plugin: the octree SDF of its mesh (mesh_octadr); a kind past those of
# engine/mjcf/_plugin.py (its plugin kinds end with TOUCH_GRID = 5 and PID = 6)
OCTREE = 7
_PLANE = int(t.mjtGeom.PLANE)
_SPHERE = int(t.mjtGeom.SPHERE)
_CAPSULE = int(t.mjtGeom.CAPSULE)
_ELLIPSOID = int(t.mjtGeom.ELLIPSOID)
_CYLINDER = int(t.mjtGeom.CYLINDER)
_BOX = int(t.mjtGeom.BOX)
_SDF = int(t.mjtGeom.SDF)
from numjoco.engine.types import MAXCONPAIR as _MAXCONPAIR
# objective of the descent (mjtSDFType)
_SINGLE, _INTERSECTION, _MIDSURFACE, _COLLISION = 0, 1, 2, 3


# ------------------------------------------------------------------------------ plugins

@jit
def _smooth_union(a, b, k):
  h = min(max(0.5 + 0.5 * (b - a) / k, 0.0), 1.0)
  return b * (1. - h) + a * h - k * h * (1. - h)


@jit
def _gear(a, x, y, z):
  """gear.cc: an involute gear profile extruded along z."""
  alpha, D, N = a[0], a[1], a[2]
  psi = 3.096e-5 * N * N - 6.557e-3 * N + 0.551
  R = D / 2.0
  rho = math.sqrt(x * x + y * y)
  Pd = N / D
  P = math.pi / Pd
  Ro = (D + 2.0 * (1.0 / Pd)) / 2.0
  h = 2.2 / Pd
  inner = Ro - h - 0.14 * D
  if a[4] >= 0.0:
    inner = a[4] / 2.0
  if inner - rho > 0.0:
    d2 = inner - rho
  elif Ro - rho < -0.2:
    d2 = rho - Ro
  else:
    Rb = D * math.cos(psi) / 2.0
    fi = math.atan2(y, x) + alpha
    stride = P / R
    inv_alpha = math.acos(Rb / R)
    shift = stride / 2.0 - 2.0 * (math.tan(inv_alpha) - inv_alpha)
    u = fi + shift / 2.0
    fia = u - stride * math.floor(u / stride) - shift / 2.0
    u = -fi - shift + shift / 2.0
    fib = u - stride * math.floor(u / stride) - shift / 2.0
    dista = -1.0e6
    distb = -1.0e6
    if Rb < rho:
      acs = math.acos(Rb / rho)
      ta = math.sqrt(rho * rho - Rb * Rb)
      dista = ta - Rb * (fia + acs)
      distb = ta - Rb * (fib + acs)
    outer = rho - Ro
    cogs = max(max(fia - (stride - shift), fib - (stride - shift)), max(dista, distb))
    cogs = max(max(outer, cogs),
               -_smooth_union(max(outer, -cogs), max(cogs, -outer), 0.0035 * D))
    cogs = _smooth_union(rho - (Ro - h), cogs, Rb - Ro + h)
    d2 = max(cogs, -(rho - inner))
  w1 = abs(z) - a[3] / 2.0
  m0 = max(d2, 0.0)
  m1 = max(w1, 0.0)
  return min(max(d2, w1), 0.0) + math.sqrt(m0 * m0 + m1 * m1)


@jit
def _screw(kind, a, x, y, z):
  """nut.cc / bolt.cc: a threaded hole or rod with a hexagonal head."""
  screw = 12.0
  s12 = math.sqrt(2.0) / 2.0
  radius = math.sqrt(x * x + y * y) - a[0]
  u = z * screw - math.atan2(y, x) / math.pi / 2.0
  thread = (radius - abs((u - math.floor(u)) - 0.5) / screw) * s12
  cone = (z - radius) * s12
  k = 6.0 / math.pi / 2.0
  angle = -math.floor(math.atan2(y, x) * k + 0.5) / k
  head = math.sin(angle + math.pi * 0.5) * x + -math.sin(angle) * y - 0.5
  head = max(head, abs(z + 0.25) - 0.25)
  head = max(head, (z + radius - 0.22) * s12)
  if kind == NUT:
    hole = max(thread, -(cone + 0.5 * s12))
    hole = min(hole, -cone - 0.05 * s12)
    return max(head, -hole)
  bolt = max(thread, -(0.5 - abs(z + 0.5)))
  bolt = max(bolt, -(cone + 1.0 * s12))
  return min(bolt, head)


@jit
def plugin_distance(kind, a, x, y, z):
  """Signed distance of point (x, y, z) to the SDF plugin `kind` with attributes a."""
  if kind == TORUS:
    q = math.sqrt(x * x + y * y) - a[0]
    return math.sqrt(q * q + z * z) - a[1]
  if kind == BOWL:
    height, radius, thick = a[0], a[1], a[2]
    width = math.sqrt(radius * radius - height * height)
    q0 = math.sqrt(x * x + y * y)
    if height * q0 < width * z:
      d0 = q0 - width
      d1 = z - height
      return math.sqrt(d0 * d0 + d1 * d1) - thick
    return abs(math.sqrt(q0 * q0 + z * z) - radius) - thick
  if kind == GEAR:
    return _gear(a, x, y, z)
  return _screw(kind, a, x, y, z)


@jit
def plugin_gradient(kind, a, x, y, z):
  """Gradient of the plugin's distance: the torus's analytic one, forward differences
  (step 1e-8) for the others, as the plugins compute them."""
  if kind == TORUS:
    len_xy = math.sqrt(x * x + y * y)
    q = len_xy - a[0]
    len_qz = max(math.sqrt(q * q + z * z), _MINVAL)
    return q * (x / len_xy) / len_qz, q * (y / len_xy) / len_qz, z / len_qz
  eps = 1e-8
  d0 = plugin_distance(kind, a, x, y, z)
  return ((plugin_distance(kind, a, x + eps, y, z) - d0) / eps,
          (plugin_distance(kind, a, x, y + eps, z) - d0) / eps,
          (plugin_distance(kind, a, x, y, z + eps) - d0) / eps)


# ------------------------------------------------------------------------------- octree

@jit
def _box_projection(r, x, y, z):
  """boxProjection: (point, distance) of (x, y, z) and the box r (center, half sizes): inside,
  the point unchanged and the largest (non-positive) face distance; outside, the point moved
  1e-6 inside the box on every axis it lies beyond, and its distance to the box."""
  q0, q1, q2 = abs(x - r[0]) - r[3], abs(y - r[1]) - r[4], abs(z - r[2]) - r[5]
  if q0 <= 0 and q1 <= 0 and q2 <= 0:
    return x, y, z, max(q0, max(q1, q2))
  eps = 1e-6
  dist_sqr = 0.0
  if q0 >= 0:
    dist_sqr += q0 * q0
    x -= (q0 + eps) if x - r[0] > 0 else -(q0 + eps)
  if q1 >= 0:
    dist_sqr += q1 * q1
    y -= (q1 + eps) if y - r[1] > 0 else -(q1 + eps)
  if q2 >= 0:
    dist_sqr += q2 * q2
    z -= (q2 + eps) if z - r[2] > 0 else -(q2 + eps)
  return x, y, z, math.sqrt(dist_sqr)


@jit
def _oct_leaf(m, adr, x, y, z):
  """findOct: (leaf node, coordinates of the point in the leaf scaled to [0, 1], the leaf's
  edge lengths) of a point in the root box of the octree at adr, descending to the child whose
  octant holds it."""
  node = adr
  while True:
    r = m.oct_aabb[node]
    lo0, lo1, lo2 = r[0] - r[3], r[1] - r[4], r[2] - r[5]
    s0, s1, s2 = r[0] + r[3] - lo0, r[1] + r[4] - lo1, r[2] + r[5] - lo2
    c0, c1, c2 = (x - lo0) / s0, (y - lo1) / s1, (z - lo2) / s2
    child = m.oct_child[node]
    leaf = True
    for j in range(8):
      if child[j] != -1:
        leaf = False
    if leaf:
      return node, c0, c1, c2, s0, s1, s2
    k = (0 if c0 < .5 else 1) + (0 if c1 < .5 else 2) + (0 if c2 < .5 else 4)
    node = adr + child[k]


@jit
def oct_distance(m, mid, x, y, z):
  """oct_distance: the octree SDF of mesh mid, trilinear in the leaf holding the point
  (projected into the root box), plus the distance to the box outside it."""
  adr = m.mesh_octadr[mid]
  x, y, z, box = _box_projection(m.oct_aabb[adr], x, y, z)
  node, c0, c1, c2, _, _, _ = _oct_leaf(m, adr, x, y, z)
  sdf = 0.0
  for j in range(8):
    w = ((c0 if j & 1 else 1 - c0) * (c1 if j & 2 else 1 - c1)) * (c2 if j & 4 else 1 - c2)
    sdf += w * m.oct_coeff[node, j]
  return sdf + box if box > 0 else sdf


@jit
def oct_gradient(m, mid, x, y, z):
  """oct_gradient: inside the root box the derivative of the trilinear interpolant (4.0 divides
  by the leaf's edge lengths, the published source does not; 4.0's SDF contacts agree with
  the derivative in space), outside forward differences (step 1e-8) of
  oct_distance."""
  adr = m.mesh_octadr[mid]
  _, _, _, box = _box_projection(m.oct_aabb[adr], x, y, z)
  if box <= 0:
    node, c0, c1, c2, s0, s1, s2 = _oct_leaf(m, adr, x, y, z)
    g0 = g1 = g2 = 0.0
    for j in range(8):
      c = m.oct_coeff[node, j]
      a0 = c0 if j & 1 else 1 - c0
      a1 = c1 if j & 2 else 1 - c1
      a2 = c2 if j & 4 else 1 - c2
      g0 += ((1.0 if j & 1 else -1.0) * a1) * a2 / s0 * c
      g1 += (a0 * (1.0 if j & 2 else -1.0)) * a2 / s1 * c
      g2 += (a0 * a1) * (1.0 if j & 4 else -1.0) / s2 * c
    return g0, g1, g2
  eps = 1e-8
  d0 = oct_distance(m, mid, x, y, z)
  return ((oct_distance(m, mid, x + eps, y, z) - d0) / eps,
          (oct_distance(m, mid, x, y + eps, z) - d0) / eps,
          (oct_distance(m, mid, x, y, z + eps) - d0) / eps)


@jit
def sdf_distance(m, kind, a, mid, x, y, z):
  """Distance of an sdf geom: its plugin's, or (kind OCTREE) its mesh mid's octree."""
  if kind == OCTREE:
    return oct_distance(m, mid, x, y, z)
  return plugin_distance(kind, a, x, y, z)


@jit
def sdf_gradient(m, kind, a, mid, x, y, z):
  """Gradient of sdf_distance."""
  if kind == OCTREE:
    return oct_gradient(m, mid, x, y, z)
  return plugin_gradient(kind, a, x, y, z)


# ------------------------------------------------------------------------ geom distances

@jit
def _norm3(x, y, z):
  return math.sqrt(x * x + y * y + z * z)




@jit
def _radial_field(a0, a1, a2, x, y, z, s):
  f0, f1, f2, _ = _normalize3(-s[0] / a0, -s[1] / a1, -s[2] / a2)
  if x < 0:
    f0 = -f0
  if y < 0:
    f1 = -f1
  if z < 0:
    f2 = -f2
  return f0, f1, f2


@jit
def geom_distance(m, gtype, s, kind, a, mid, x, y, z):
  """Signed distance in the geom's frame (geomDistance): plugin or octree for sdf geoms."""
  if gtype == _PLANE:
    return z
  if gtype == _SPHERE:
    return _norm3(x, y, z) - s[0]
  if gtype == _BOX:
    a0, a1, a2 = abs(x) - s[0], abs(y) - s[1], abs(z) - s[2]
    if a0 >= 0 or a1 >= 0 or a2 >= 0:
      return (_norm3(max(a0, 0.0), max(a1, 0.0), max(a2, 0.0))
              + min(max(a0, max(a1, a2)), 0.0))
    b0, b1, b2 = _radial_field(a0, a1, a2, x, y, z, s)
    t0, t1, t2 = -a0 / abs(b0), -a1 / abs(b1), -a2 / abs(b2)
    return -min(t0, min(t1, t2)) * _norm3(b0, b1, b2)
  if gtype == _CAPSULE:
    return _norm3(x, y, z - min(max(z, -s[1]), s[1])) - s[0]
  if gtype == _ELLIPSOID:
    a0, a1, a2 = x / s[0], y / s[1], z / s[2]
    k0 = _norm3(a0, a1, a2)
    k1 = _norm3(a0 / s[0], a1 / s[1], a2 / s[2])
    return k0 * (k0 - 1.0) / k1
  if gtype == _CYLINDER:
    a0 = math.sqrt(x * x + y * y) - s[0]
    a1 = abs(z) - s[1]
    b0, b1 = max(a0, 0.0), max(a1, 0.0)
    return min(max(a0, a1), 0.0) + math.sqrt(b0 * b0 + b1 * b1)
  return sdf_distance(m, kind, a, mid, x, y, z)


@jit
def geom_gradient(m, gtype, s, kind, a, mid, x, y, z):
  """Gradient of geom_distance (geomGradient)."""
  if gtype == _PLANE:
    return 0.0, 0.0, 1.0
  if gtype == _SPHERE:
    c = _norm3(x, y, z)
    return x * (1. / c), y * (1. / c), z * (1. / c)
  if gtype == _BOX:
    a0, a1, a2 = abs(x) - s[0], abs(y) - s[1], abs(z) - s[2]
    k = 0 if a0 > a1 else 1
    ak = a0 if k == 0 else a1
    al = a2 if a2 > ak else ak
    if al < 0:
      return _radial_field(a0, a1, a2, x, y, z, s)
    b0, b1, b2 = max(a0, 0.0), max(a1, 0.0), max(a2, 0.0)
    c = b0 * b0 + b1 * b1 + b2 * b2
    if c == 0:
      # on the surface (4.0; not in the published source): the normals of the faces the point lies
      # on, signed as its coordinates (+1 at 0), normalized
      f0 = (-1.0 if x < 0 else 1.0) if a0 == 0 else 0.0
      f1 = (-1.0 if y < 0 else 1.0) if a1 == 0 else 0.0
      f2 = (-1.0 if z < 0 else 1.0) if a2 == 0 else 0.0
      f0, f1, f2, _ = _normalize3(f0, f1, f2)
      return f0, f1, f2
    c = math.sqrt(c)
    return (b0 / c * x / abs(x) if a0 > 0 else 0.0, b1 / c * y / abs(y) if a1 > 0 else 0.0,
            b2 / c * z / abs(z) if a2 > 0 else 0.0)
  if gtype == _CAPSULE:
    a2 = z - min(max(z, -s[1]), s[1])
    c = _norm3(x, y, a2)
    return x / c, y / c, a2 / c
  if gtype == _ELLIPSOID:
    a0, a1, a2 = x / s[0], y / s[1], z / s[2]
    b0, b1, b2 = a0 / s[0], a1 / s[1], a2 / s[2]
    k0 = _norm3(a0, a1, a2)
    k1 = _norm3(b0, b1, b2)
    ik0, ik1 = 1. / k0, 1. / k1
    df0 = (2. * k0 - 1.) * ik1
    df1 = k0 * (k0 - 1.) * ik1 * ik1
    g0 = b0 * ik0 * df0 - b0 * ik1 / (s[0] * s[0]) * df1
    g1 = b1 * ik0 * df0 - b1 * ik1 / (s[1] * s[1]) * df1
    g2 = b2 * ik0 * df0 - b2 * ik1 / (s[2] * s[2]) * df1
    g0, g1, g2, _ = _normalize3(g0, g1, g2)
    return g0, g1, g2
  if gtype == _CYLINDER:
    c = math.sqrt(x * x + y * y)
    e = abs(z)
    a0, a1 = c - s[0], e - s[1]
    ga0 = x / max(c, 1. / _MAXVAL)
    ga1 = y / max(c, 1. / _MAXVAL)
    ga2 = z / max(e, 1. / _MAXVAL)
    j0 = a0 > a1
    if (a0 if j0 else a1) < 0:
      if j0:
        return ga0, ga1, 0.0
      return 0.0, 0.0, ga2
    b0, b1 = max(a0, 0.0), max(a1, 0.0)
    bn = max(math.sqrt(b0 * b0 + b1 * b1), 1. / _MAXVAL)
    return ga0 * b0 / bn, ga1 * b0 / bn, ga2 * b1 / bn
  return sdf_gradient(m, kind, a, mid, x, y, z)


# ------------------------------------------------------------------ the pair's objective

@jit
def geom_side(m, g):
  """(type, size, sdf kind, plugin attributes, mesh id) of geom g for the distance
  functions: an sdf geom without a plugin is its mesh's octree."""
  p = m.geom_plugin[g]
  if p < 0:
    kind = OCTREE if m.geom_type[g] == _SDF else -1
    return m.geom_type[g], m.geom_size[g], kind, m.geom_size[g], m.geom_dataid[g]
  return (m.geom_type[g], m.geom_size[g], m.plugin_kind[p], m.plugin_param[p],
          m.geom_dataid[g])


@jit
def _to_other(rel, x, y, z):
  """Point in the other geom's frame: relmat x + relpos (rel = mat[9], pos[3])."""
  return (rel[0] * x + rel[1] * y + rel[2] * z + rel[9],
          rel[3] * x + rel[4] * y + rel[5] * z + rel[10],
          rel[6] * x + rel[7] * y + rel[8] * z + rel[11])


@jit
def _back(rel, x, y, z):
  """relmat^T v: a gradient of the other geom back into this one's frame."""
  return (rel[0] * x + rel[3] * y + rel[6] * z, rel[1] * x + rel[4] * y + rel[7] * z,
          rel[2] * x + rel[5] * y + rel[8] * z)


@jit
def pair_distance(m, ga, gb, rel, mode, x, y, z):
  """mjc_distance of the two-geom objective `mode` (geom ga at x, geom gb at rel(x))."""
  ta, sa, ka, aa, ma = geom_side(m, ga)
  da = geom_distance(m, ta, sa, ka, aa, ma, x, y, z)
  if mode == _SINGLE:
    return da
  tb, sb, kb, ab, mb = geom_side(m, gb)
  y0, y1, y2 = _to_other(rel, x, y, z)
  db = geom_distance(m, tb, sb, kb, ab, mb, y0, y1, y2)
  if mode == _INTERSECTION:
    return max(da, db)
  if mode == _MIDSURFACE:
    return da - db
  return da + db + abs(max(da, db))


@jit
def pair_gradient(m, ga, gb, rel, mode, x, y, z):
  """mjc_gradient of the objective `mode`."""
  ta, sa, ka, aa, ma = geom_side(m, ga)
  if mode == _SINGLE:
    return geom_gradient(m, ta, sa, ka, aa, ma, x, y, z)
  tb, sb, kb, ab, mb = geom_side(m, gb)
  y0, y1, y2 = _to_other(rel, x, y, z)
  if mode == _INTERSECTION:
    if (geom_distance(m, ta, sa, ka, aa, ma, x, y, z)
        > geom_distance(m, tb, sb, kb, ab, mb, y0, y1, y2)):
      return geom_gradient(m, ta, sa, ka, aa, ma, x, y, z)
    g0, g1, g2 = geom_gradient(m, tb, sb, kb, ab, mb, y0, y1, y2)
    return _back(rel, g0, g1, g2)
  if mode == _MIDSURFACE:
    a0, a1, a2 = geom_gradient(m, ta, sa, ka, aa, ma, x, y, z)
    a0, a1, a2, _ = _normalize3(a0, a1, a2)
    b0, b1, b2 = geom_gradient(m, tb, sb, kb, ab, mb, y0, y1, y2)
    b0, b1, b2 = _back(rel, b0, b1, b2)
    b0, b1, b2, _ = _normalize3(b0, b1, b2)
    g0, g1, g2, _ = _normalize3(a0 - b0, a1 - b1, a2 - b2)
    return g0, g1, g2
  da = geom_distance(m, ta, sa, ka, aa, ma, x, y, z)
  db = geom_distance(m, tb, sb, kb, ab, mb, y0, y1, y2)
  a0, a1, a2 = geom_gradient(m, ta, sa, ka, aa, ma, x, y, z)
  b0, b1, b2 = geom_gradient(m, tb, sb, kb, ab, mb, y0, y1, y2)
  b0, b1, b2 = _back(rel, b0, b1, b2)
  sgn = 1.0 if max(da, db) > 0 else -1.0
  if da > db:
    return a0 + b0 + sgn * a0, a1 + b1 + sgn * a1, a2 + b2 + sgn * a2
  return a0 + b0 + sgn * b0, a1 + b1 + sgn * b1, a2 + b2 + sgn * b2


# ---------------------------------------------------------------------------- poses

@jit
def _normalize4(q0, q1, q2, q3):
  """mju_normalize4 (left alone when already unit within mjMINVAL)."""
  n = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
  if n < _MINVAL:
    return 1.0, 0.0, 0.0, 0.0
  if abs(n - 1) > _MINVAL:
    inv = 1 / n
    return q0 * inv, q1 * inv, q2 * inv, q3 * inv
  return q0, q1, q2, q3


@jit
def map_pose(p1, q1, p2, q2, out):
  """mapPose: (pose2)^-1 * pose1 into out = [mat (9), pos (3)]."""
  n0, n1, n2, n3 = q2[0], -q2[1], -q2[2], -q2[3]
  r0, r1, r2 = mm.quat_rot(n0, n1, n2, n3, p2[0], p2[1], p2[2])
  r0, r1, r2 = -r0, -r1, -r2
  c0, c1, c2, c3 = mm.quat_mul(n0, n1, n2, n3, q1[0], q1[1], q1[2], q1[3])
  c0, c1, c2, c3 = _normalize4(c0, c1, c2, c3)
  s0, s1, s2 = mm.quat_rot(n0, n1, n2, n3, p1[0], p1[1], p1[2])
  mm.quat2mat(out, c0, c1, c2, c3)
  out[9] = s0 + r0
  out[10] = s1 + r1
  out[11] = s2 + r2


@jit
def halton(index, base):
  """mju_Halton: element `index` of the Halton sequence in `base`."""
  n0 = index
  b = float(base)
  f = 1 / b
  hn = 0.0
  while n0 > 0:
    n1 = n0 // base
    r = n0 - n1 * base
    hn += f * r
    f /= b
    n0 = n1
  return hn


# ------------------------------------------------------------------------- the collider

@jit
def _step_gradient(m, ga, gb, rel, mode, x, niter):
  """stepGradient: gradient descent with backtracking line search from x (updated in place);
  returns the distance at x (mjMAXVAL on a bad gradient)."""
  dist = _MAXVAL
  for _ in range(niter):
    alpha = 2.
    g0, g1, g2 = pair_gradient(m, ga, gb, rel, mode, x[0], x[1], x[2])
    if (math.isnan(g0) or g0 > _MAXVAL or g0 < -_MAXVAL or math.isnan(g1) or g1 > _MAXVAL
        or g1 < -_MAXVAL or math.isnan(g2) or g2 > _MAXVAL or g2 < -_MAXVAL):
      return _MAXVAL
    x0, x1, x2 = x[0], x[1], x[2]
    dist0 = pair_distance(m, ga, gb, rel, mode, x0, x1, x2)
    wolfe = -0.1 * alpha * (g0 * g0 + g1 * g1 + g2 * g2)
    while True:
      alpha *= 0.5
      wolfe *= 0.5
      x[0] = x0 - alpha * g0
      x[1] = x1 - alpha * g1
      x[2] = x2 - alpha * g2
      dist = pair_distance(m, ga, gb, rel, mode, x[0], x[1], x[2])
      if not (alpha > 1e-4 and dist - dist0 > wolfe):
        break
    if dist0 < dist:   # no improvement: back to the last point (MuJoCo 4.0)
      x[0], x[1], x[2] = x0, x1, x2
      return dist0
  return dist


@jit
def _add_contact(m, ga, gb, rel, mode, x, dist, pos2, q2, points, cnt, out_dist, out_pos,
                 out_frame):
  """addPreContact (normal into the SDF geom ga): returns the new count."""
  if dist > 0:
    return cnt
  for i in range(cnt):
    if _norm3(x[0] - points[i, 0], x[1] - points[i, 1], x[2] - points[i, 2]) < _MINVAL:
      return cnt
  points[cnt, 0], points[cnt, 1], points[cnt, 2] = x[0], x[1], x[2]
  g0, g1, g2 = pair_gradient(m, ga, gb, rel, mode, x[0], x[1], x[2])
  g0, g1, g2, n = _normalize3(g0, g1, g2)
  if n < _MINVAL:
    return cnt
  n0, n1, n2 = mm.quat_rot(q2[0], q2[1], q2[2], q2[3], -g0, -g1, -g2)
  p0, p1, p2 = mm.quat_rot(q2[0], q2[1], q2[2], q2[3], x[0], x[1], x[2])
  out_dist[cnt] = dist
  # the point moves half the distance along the normal (MuJoCo 4.0)
  out_pos[cnt, 0] = p0 + pos2[0] + n0 * (0.5 * dist)
  out_pos[cnt, 1] = p1 + pos2[1] + n1 * (0.5 * dist)
  out_pos[cnt, 2] = p2 + pos2[2] + n2 * (0.5 * dist)
  out_frame[cnt, 0], out_frame[cnt, 1], out_frame[cnt, 2] = n0, n1, n2
  return cnt + 1


@unit((M, D, i8, i8, f8v, f8m, f8m), i8, needs=NEEDS_SDF)
def collide_sdf(m, d, g1, g2, out_dist, out_pos, out_frame):
  """mjc_SDF: contacts of geom g1 (a primitive or an sdf) with sdf geom g2 into out_*;
  returns their number (at most sdf_initpoints)."""
  pos1, pos2 = d.geom_xpos[g1], d.geom_xpos[g2]
  a1, a2 = m.geom_aabb[g1], m.geom_aabb[g2]
  # 4.0 reads the geoms' orientations from d->geom_xquat (not mju_mat2Quat of geom_xmat)
  q1 = d.geom_xquat[g1]
  q2 = d.geom_xquat[g2]
  pose2 = np.empty(12)
  pose21 = np.empty(12)
  pose12 = np.empty(12)
  map_pose(pos1, q1, pos1, q1, pose2)
  map_pose(pos2, q2, pos1, q1, pose21)
  map_pose(pos1, q1, pos2, q2, pose12)
  lo = np.full(3, _MAXVAL)
  hi = np.full(3, -_MAXVAL)
  lo2 = np.full(3, _MAXVAL)
  hi2 = np.full(3, -_MAXVAL)
  for i in range(8):
    v0 = a1[0] + a1[3] if i & 1 else a1[0] - a1[3]
    v1 = a1[1] + a1[4] if i & 2 else a1[1] - a1[4]
    v2 = a1[2] + a1[5] if i & 4 else a1[2] - a1[5]
    w0 = a2[0] + a2[3] if i & 1 else a2[0] - a2[3]
    w1 = a2[1] + a2[4] if i & 2 else a2[1] - a2[4]
    w2 = a2[2] + a2[5] if i & 4 else a2[2] - a2[5]
    w0, w1, w2 = _to_other(pose21, w0, w1, w2)
    lo[0], lo[1], lo[2] = min(lo[0], v0), min(lo[1], v1), min(lo[2], v2)
    hi[0], hi[1], hi[2] = max(hi[0], v0), max(hi[1], v1), max(hi[2], v2)
    lo2[0], lo2[1], lo2[2] = min(lo2[0], w0), min(lo2[1], w1), min(lo2[2], w2)
    hi2[0], hi2[1], hi2[2] = max(hi2[0], w0), max(hi2[1], w1), max(hi2[2], w2)
  for k in range(3):
    lo[k] = max(lo[k], lo2[k])
    hi[k] = min(hi[k], hi2[k])
  if hi[0] < lo[0] or hi[1] < lo[1] or hi[2] < lo[2]:
    return 0
  x = np.empty(3)
  points = np.empty((_MAXCONPAIR, 3))
  cnt = 0
  for j in range(m.opt_sdf_initpoints[0]):
    x0 = lo[0] + (hi[0] - lo[0]) * halton(j, 2)
    x1 = lo[1] + (hi[1] - lo[1]) * halton(j, 3)
    x2 = lo[2] + (hi[2] - lo[2]) * halton(j, 5)
    y0, y1, y2 = _to_other(pose2, x0, x1, x2)
    x[0], x[1], x[2] = _to_other(pose12, y0, y1, y2)
    _step_gradient(m, g2, g1, pose21, _COLLISION, x, m.opt_sdf_iterations[0])
    dist = _step_gradient(m, g2, g1, pose21, _INTERSECTION, x, 1)
    cnt = _add_contact(m, g2, g1, pose21, _MIDSURFACE, x, dist, pos2, q2, points, cnt,
                       out_dist, out_pos, out_frame)
  return cnt


# --------------------------------------------------------------------------- mesh vs sdf

@jit
def _frank_wolfe(m, g, rel, c, x):
  """stepFrankWolfe: sdf_iterations Frank-Wolfe steps for the sdf geom g over the triangle
  c (3x3 rows) from x (updated in place); returns the distance at the end (rel: unused
  pose, the objective is the sdf's own distance)."""
  for step in range(m.opt_sdf_iterations[0]):
    g0, g1, g2 = pair_gradient(m, g, g, rel, _SINGLE, x[0], x[1], x[2])
    best = _MAXVAL
    k = 0
    for i in range(3):
      f = c[i, 0] * g0 + c[i, 1] * g1 + c[i, 2] * g2
      if f < best:
        best = f
        k = i
    w = 2. / (step + 2.)
    s0, s1, s2 = c[k, 0] - x[0], c[k, 1] - x[1], c[k, 2] - x[2]
    x[0] += s0 * w
    x[1] += s1 * w
    x[2] += s2 * w
  return pair_distance(m, g, g, rel, _SINGLE, x[0], x[1], x[2])


@jit
def _triangle_intersect(m, g, rel, c):
  """triangleIntersect: False when the triangle c surely misses the sdf geom g (the
  circumsphere of the triangle and a point pushed off it along its normal)."""
  e0, e1, e2 = c[1, 0] - c[0, 0], c[1, 1] - c[0, 1], c[1, 2] - c[0, 2]
  f0, f1, f2 = c[2, 0] - c[0, 0], c[2, 1] - c[0, 1], c[2, 2] - c[0, 2]
  n0, n1, n2 = mm.cross(e0, e1, e2, f0, f1, f2)
  n0, n1, n2, _ = _normalize3(n0, n1, n2)
  p0 = c[0, 0] * (1. / 3.) + c[1, 0] * (1. / 3.) + c[2, 0] * (1. / 3.)
  p1 = c[0, 1] * (1. / 3.) + c[1, 1] * (1. / 3.) + c[2, 1] * (1. / 3.)
  p2 = c[0, 2] * (1. / 3.) + c[1, 2] * (1. / 3.) + c[2, 2] * (1. / 3.)
  dc = pair_distance(m, g, g, rel, _SINGLE, p0, p1, p2)
  h = -dc / 10.
  if abs(h) < 0.1:
    a = _norm3(c[0, 0] - c[1, 0], c[0, 1] - c[1, 1], c[0, 2] - c[1, 2])
    b = _norm3(c[1, 0] - c[2, 0], c[1, 1] - c[2, 1], c[1, 2] - c[2, 2])
    cc = _norm3(c[2, 0] - c[0, 0], c[2, 1] - c[0, 1], c[2, 2] - c[0, 2])
    s = (a + b + cc) / 2.0
    area = math.sqrt(s * (s - a) * (s - b) * (s - cc))
    return dc < (a * b * cc) / (4.0 * max(area, _MINVAL))
  p0 += n0 * -h
  p1 += n1 * -h
  p2 += n2 * -h
  v = np.empty((3, 3))
  for i in range(3):
    v[i, 0], v[i, 1], v[i, 2] = c[i, 0] - p0, c[i, 1] - p1, c[i, 2] - p2
  x0, x1, x2 = mm.cross(v[1, 0], v[1, 1], v[1, 2], v[2, 0], v[2, 1], v[2, 2])
  y0, y1, y2 = mm.cross(v[2, 0], v[2, 1], v[2, 2], v[0, 0], v[0, 1], v[0, 2])
  z0, z1, z2 = mm.cross(v[0, 0], v[0, 1], v[0, 2], v[1, 0], v[1, 1], v[1, 2])
  d0 = v[0, 0] * v[0, 0] + v[0, 1] * v[0, 1] + v[0, 2] * v[0, 2]
  d1 = v[1, 0] * v[1, 0] + v[1, 1] * v[1, 1] + v[1, 2] * v[1, 2]
  d2 = v[2, 0] * v[2, 0] + v[2, 1] * v[2, 1] + v[2, 2] * v[2, 2]
  q0 = x0 * d0 + y0 * d1 + z0 * d2
  q1 = x1 * d0 + y1 * d1 + z1 * d2
  q2 = x2 * d0 + y2 * d1 + z2 * d2
  denom = 2. * (v[0, 0] * x0 + v[0, 1] * x1 + v[0, 2] * x2)
  if abs(denom) < _MINVAL:
    return dc < _norm3(e0, e1, e2)
  q0, q1, q2 = q0 * (1. / denom), q1 * (1. / denom), q2 * (1. / denom)
  r = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2)
  return pair_distance(m, g, g, rel, _SINGLE, q0 + p0, q1 + p1, q2 + p2) < r


@unit((M, D, i8, i8, f8v, f8m, f8m), i8, needs=NEEDS_SDF)
def collide_mesh_sdf(m, d, g1, g2, out_dist, out_pos, out_frame):
  """mjc_MeshSDF: contacts of mesh geom g1 with sdf geom g2. Each mesh triangle whose
  bounding box's circumsphere reaches the SDF is sampled at sdf_initpoints Halton points and
  Frank-Wolfe steps find the deepest point; at most 50 candidates are kept. MuJoCo visits the
  triangles in its BVH order; we have no BVH and visit them in face order, so when more than
  50 candidates exist the kept ones may differ (and the contacts come in another order)."""
  mid = m.geom_dataid[g1]
  pos1, pos2 = d.geom_xpos[g1], d.geom_xpos[g2]
  q1 = d.geom_xquat[g1]   # (as mjc_SDF, 4.0 reads d->geom_xquat)
  q2 = d.geom_xquat[g2]
  pose = np.empty(12)
  map_pose(pos1, q1, pos2, q2, pose)
  nstart = max(1, m.opt_sdf_initpoints[0])
  cand = np.empty((_MAXCONPAIR, 3))
  cdist = np.empty(_MAXCONPAIR)
  nc = 0
  c = np.empty((3, 3))
  x = np.empty(3)
  vadr, fadr = m.mesh_vertadr[mid], m.mesh_faceadr[mid]
  for f in range(m.mesh_facenum[mid]):
    lo0 = lo1 = lo2 = _MAXVAL
    hi0 = hi1 = hi2 = -_MAXVAL
    for i in range(3):
      v = m.mesh_vert[vadr + m.mesh_face[fadr + f, i]]
      v0, v1, v2 = float(v[0]), float(v[1]), float(v[2])
      lo0, lo1, lo2 = min(lo0, v0), min(lo1, v1), min(lo2, v2)
      hi0, hi1, hi2 = max(hi0, v0), max(hi1, v1), max(hi2, v2)
      c[i, 0], c[i, 1], c[i, 2] = _to_other(pose, v0, v1, v2)
    # boxIntersect of the triangle's bounding box (its BVH leaf)
    h0, h1, h2 = .5 * (hi0 - lo0), .5 * (hi1 - lo1), .5 * (hi2 - lo2)
    b0, b1, b2 = _to_other(pose, .5 * (lo0 + hi0), .5 * (lo1 + hi1), .5 * (lo2 + hi2))
    if not pair_distance(m, g2, g2, pose, _SINGLE, b0, b1, b2) < _norm3(h0, h1, h2):
      continue
    if not _triangle_intersect(m, g2, pose, c):
      continue
    for sp in range(nstart):
      if nc >= _MAXCONPAIR:
        break
      u = halton(sp + 1, 2)
      w = halton(sp + 1, 3)
      if u + w > 1:
        u = 1 - u
        w = 1 - w
      b = 1 - u - w
      for k in range(3):
        x[k] = b * c[0, k] + u * c[1, k] + w * c[2, k]
      depth = _frank_wolfe(m, g2, pose, c, x)
      if depth < 0:
        cand[nc, 0], cand[nc, 1], cand[nc, 2] = x[0], x[1], x[2]
        cdist[nc] = depth
        nc += 1
  points = np.empty((_MAXCONPAIR, 3))
  cnt = 0
  for i in range(nc):
    x[0], x[1], x[2] = cand[i, 0], cand[i, 1], cand[i, 2]
    cnt = _add_contact(m, g2, g2, pose, _SINGLE, x, cdist[i], pos2, q2, points, cnt,
                       out_dist, out_pos, out_frame)
  return cnt
