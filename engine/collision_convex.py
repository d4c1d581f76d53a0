"""General convex narrowphase, as MuJoCo's engine_collision_convex.c and engine_collision_gjk.c.

mjc_Convex (GJK, then EPA on penetration, then MuJoCo 4.0's single-shot multicontact for
cylinders and capsules, see the multicontact section) and mjc_PlaneConvex for primitive
geoms: sphere, capsule, ellipsoid, cylinder, box, and meshes (`collide_mesh_work`: the support
of a mesh is its best hull vertex; multicontact on mesh polygons for box-, capsule-,
cylinder-mesh and mesh-mesh pairs, see the mesh multicontact section; `plane_mesh`).

Every routine works on plain arrays and scalars. A geom "object" is one row of `objs`
(float64, 20 columns: size[0:3], pos[3:6], mat[6:15], margin[15], and for meshes the first
row and count of its vertices[16:18], where its hull adjacency starts in `objt`[18] and the
last support vertex[19]) and one row of `objt` (int, 2 columns: geom type, support mode).
Rows 2.. of `objs` hold mesh hull vertices (local frame), six per row; ints 4.. of `objt`
(read flat) hold each hull's adjacency as MuJoCo's mesh_graph (vert_edgeadr, edge_localid),
for the hill-climbing support of meshes with 10 or more vertices. The EPA polytope lives in
two flat work buffers, laid out and sized by engine/collision_work.py.

GJK, the EPA start (polytope2/3/4 and their hand-offs) and EPA itself follow MuJoCo 4.0's
compiled library, which differs from the last published source in many small ways (read from
its disassembly; tests/conformance/mjinternal.py calls its static functions, and
tests/test_collision_convex.py checks ours against them bit for bit).
"""
import math

import numpy as np

from numjoco.engine import math as mm
from numjoco.engine.types import mjtGeom

# as engine.smooth's jit (IEEE division: degenerate simplices behave as in MuJoCo's C code)
from numjoco.engine._jit import jit
from numjoco.engine._jit import inline as _inline
from numjoco.engine.types import MINVAL as _MINVAL
from numjoco.engine.collision_work import (  # noqa: F401 (layout constants the kernels read)
    OBJ_COLS as _OBJ_COLS, NEXTREMA as _NEXTREMA, MC_FACEMAX as _MC_FACEMAX, MC_FACE as _MC_FACE,
    MC_PN as _MC_PN, MC_POLY as _MC_POLY, MC_POLYMAX as _MC_POLYMAX, MC_NORM1 as _MC_NORM1,
    MC_NORM2 as _MC_NORM2, MC_EDGE as _MC_EDGE, MC_END as _MC_END, MC_START as _MC_START,
    MC_ROWS as _MC_ROWS, MC_FLOATS as _MC_FLOATS, PS_IDX1 as _PS_IDX1, PS_IDX2 as _PS_IDX2,
    PS_TMP as _PS_TMP, PS_SIZE as _PS_SIZE)

_PLANE, _SPHERE, _CAPSULE = int(mjtGeom.PLANE), int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE)
_ELLIPSOID, _CYLINDER, _BOX = int(mjtGeom.ELLIPSOID), int(mjtGeom.CYLINDER), int(mjtGeom.BOX)
_MESH = int(mjtGeom.MESH)
_SDF = int(mjtGeom.SDF)
_HFIELD = int(mjtGeom.HFIELD)   # a height-field prism: six vertices searched like a small mesh
_FLEX = 105   # mjGEOM_FLEX: a flex element, its vertices (global, six per row like a mesh's)
#               swept by the flex radius size[0]; pos is its box center (GJK's first point)

_MINVAL2 = _MINVAL * _MINVAL
_MAXVAL2 = 1e10 * 1e10
_MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
_MINEPATOL = _MINVAL

# support modes: the geom itself, its center point (sphere core), its segment (capsule core)
_MODE_GEOM, _MODE_POINT, _MODE_LINE = 0, 1, 2

# objs columns
_SIZE, _POS, _MAT, _MARGIN, _VADR, _VNUM, _GADR, _GHINT = 0, 3, 6, 15, 16, 17, 18, 19
_HILLCLIMB_MIN = 10   # mjMESH_HILLCLIMB_MIN: smaller meshes use the exhaustive support

_FACE_TOL = 0.996
_EDGE_TOL = 0.0888
# a cylinder's cap as MuJoCo 4.0's 16-gon: its tables cylinderFace.cos_16 / sin_16, literals
# of 15 significant digits (not the correctly rounded cos and sin), copied bit for bit
_COS16 = np.array([float.fromhex(h) for h in (
    "0x1p+0", "0x1.d906bcf328d48p-1", "0x1.6a09e667f3bd1p-1", "0x1.87de2a6aea967p-2", "0x0p+0",
    "-0x1.87de2a6aea967p-2", "-0x1.6a09e667f3bc8p-1", "-0x1.d906bcf328d48p-1", "-0x1p+0",
    "-0x1.d906bcf328d48p-1", "-0x1.6a09e667f3bd1p-1", "-0x1.87de2a6aea967p-2", "0x0p+0",
    "0x1.87de2a6aea967p-2", "0x1.6a09e667f3bc8p-1", "0x1.d906bcf328d48p-1")])
_SIN16 = np.array([float.fromhex(h) for h in (
    "0x0p+0", "0x1.87de2a6aea967p-2", "0x1.6a09e667f3bc8p-1", "0x1.d906bcf328d48p-1", "0x1p+0",
    "0x1.d906bcf328d48p-1", "0x1.6a09e667f3bd1p-1", "0x1.87de2a6aea967p-2", "0x0p+0",
    "-0x1.87de2a6aea967p-2", "-0x1.6a09e667f3bc8p-1", "-0x1.d906bcf328d48p-1", "-0x1p+0",
    "-0x1.d906bcf328d48p-1", "-0x1.6a09e667f3bd1p-1", "-0x1.87de2a6aea967p-2")])
_DSBL_NATIVECCD = 1 << 17
_DSBL_MULTICCD = 1 << 19

# ----------------------------------- small vector helpers --------------------------------------

@_inline
def _dot(a0, a1, a2, b0, b1, b2):
  """3D dot product."""
  return a0 * b0 + a1 * b1 + a2 * b2


@_inline
def _cross(a0, a1, a2, b0, b1, b2):
  """3D cross product a x b."""
  return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@_inline
def _det3(a0, a1, a2, b0, b1, b2, c0, c1, c2):
  """Determinant of the 3x3 matrix with columns a, b, c: a . (b x c)."""
  return (a0 * (b1 * c2 - b2 * c1)
          + a1 * (b2 * c0 - b0 * c2)
          + a2 * (b0 * c1 - b1 * c0))


@_inline
def _normalize(v0, v1, v2):
  """MuJoCo's mju_normalize3: unit vector and the norm; (1,0,0) below mjMINVAL."""
  norm = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
  if norm < _MINVAL:
    return 1.0, 0.0, 0.0, norm
  inv = 1.0 / norm
  return v0 * inv, v1 * inv, v2 * inv, norm


@_inline
def _row(a, i):
  """Row i, columns 0:3, of a 2D array as a tuple."""
  return a[i, 0], a[i, 1], a[i, 2]


# --------------------------------------- support ------------------------------------------------

@_inline
def _flat(objt, i):
  """Int i of `objt` read as a flat array."""
  return objt[i >> 1, i & 1]


@jit
def _support(objs, objt, k, d0, d1, d2):
  """Support point of object k in unit direction d (MuJoCo's mjc_*Support), and its vertex
  index: a box's corner, a mesh's vertex, a cylinder's cap (0 the top, 1 the bottom, as 4.0's
  mjc_cylinderSupport), else -1."""
  typ = objt[k, 0]
  mode = objt[k, 1]
  p0, p1, p2 = objs[k, _POS], objs[k, _POS + 1], objs[k, _POS + 2]
  m = _MAT
  if mode == _MODE_POINT:
    return p0, p1, p2, -1
  if mode == _MODE_LINE:
    length = objs[k, _SIZE + 1]
    dot = objs[k, m + 2] * d0 + objs[k, m + 5] * d1 + objs[k, m + 8] * d2
    scl = length if dot >= 0 else -length
    return (objs[k, m + 2] * scl + p0, objs[k, m + 5] * scl + p1,
            objs[k, m + 8] * scl + p2, -1)
  s0, s1, s2 = objs[k, _SIZE], objs[k, _SIZE + 1], objs[k, _SIZE + 2]
  if typ == _SPHERE:
    return s0 * d0 + p0, s0 * d1 + p1, s0 * d2 + p2, -1
  if typ == _FLEX:
    # farthest element vertex, first on ties, plus the radius (mjc_flexSupport)
    base = int(objs[k, _VADR])
    best = objs[base, 0] * d0 + objs[base, 1] * d1 + objs[base, 2] * d2
    q0, q1, q2 = objs[base, 0], objs[base, 1], objs[base, 2]
    for i in range(1, int(objs[k, _VNUM])):
      r = base + i // 6
      c = (i % 6) * 3
      v = objs[r, c] * d0 + objs[r, c + 1] * d1 + objs[r, c + 2] * d2
      if v > best:
        best = v
        q0, q1, q2 = objs[r, c], objs[r, c + 1], objs[r, c + 2]
    return q0 + s0 * d0, q1 + s0 * d1, q2 + s0 * d2, -1

  # direction in the geom frame
  l0 = objs[k, m + 0] * d0 + objs[k, m + 3] * d1 + objs[k, m + 6] * d2
  l1 = objs[k, m + 1] * d0 + objs[k, m + 4] * d1 + objs[k, m + 7] * d2
  l2 = objs[k, m + 2] * d0 + objs[k, m + 5] * d1 + objs[k, m + 8] * d2
  vindex = -1
  if typ == _CAPSULE:
    q0 = l0 * s0
    q1 = l1 * s0
    q2 = l2 * s0
    q2 += s1 if l2 >= 0 else -s1
  elif typ == _ELLIPSOID:
    q0 = l0 * s0
    q1 = l1 * s1
    q2 = l2 * s2
    norm2 = q0 * q0 + q1 * q1 + q2 * q2
    if norm2 < _MINVAL2:
      return (objs[k, m + 0] * s0 + p0, objs[k, m + 3] * s0 + p1,
              objs[k, m + 6] * s0 + p2, -1)
    inv = 1 / math.sqrt(norm2)
    q0 *= inv * s0
    q1 *= inv * s1
    q2 *= inv * s2
  elif typ == _CYLINDER:
    n2 = l0 * l0 + l1 * l1
    scl = s0 / math.sqrt(n2) if n2 >= _MINVAL2 else 0.0
    q0 = scl * l0
    q1 = scl * l1
    q2 = s1 if l2 >= 0 else -s1
    vindex = 0 if l2 >= 0 else 1
  elif typ == _MESH or typ == _HFIELD:
    base = int(objs[k, _VADR])
    nv = int(objs[k, _VNUM])
    gadr = int(objs[k, _GADR])
    if gadr >= 0:
      # hill climbing over the hull graph (mjc_hillclimbSupport): from the mesh_extrema seed
      # of the direction's cell in the 3x3x3 grid, or the last support vertex if not worse
      cx = (1 if l0 > 0.4 else 0) - (1 if l0 < -0.4 else 0) + 1
      cy = (1 if l1 > 0.4 else 0) - (1 if l1 < -0.4 else 0) + 1
      cz = (1 if l2 > 0.4 else 0) - (1 if l2 < -0.4 else 0) + 1
      vindex = _flat(objt, gadr - _NEXTREMA + cx * 9 + cy * 3 + cz)
      r = base + vindex // 6
      c = (vindex % 6) * 3
      best = l0 * objs[r, c] + l1 * objs[r, c + 1] + l2 * objs[r, c + 2]
      prev = int(objs[k, _GHINT])
      if prev >= 0:
        r = base + prev // 6
        c = (prev % 6) * 3
        v = l0 * objs[r, c] + l1 * objs[r, c + 1] + l2 * objs[r, c + 2]
        if not best > v:
          vindex, best = prev, v
      prev = -1
      while vindex != prev:
        prev = vindex
        e = gadr + nv + _flat(objt, gadr + prev)
        while True:
          sub = _flat(objt, e)
          if sub < 0:
            break
          r = base + sub // 6
          c = (sub % 6) * 3
          v = l0 * objs[r, c] + l1 * objs[r, c + 1] + l2 * objs[r, c + 2]
          if v > best:
            best = v
            vindex = sub
          e += 1
      objs[k, _GHINT] = vindex
    else:
      # best vertex (MuJoCo 4.0's exhaustive mjc_meshSupport: every mesh vertex in mesh order,
      # starting from the previous support vertex, which keeps it on ties)
      vindex = int(objs[k, _GHINT]) if typ == _MESH else -1
      if vindex >= 0:
        r = base + vindex // 6
        c = (vindex % 6) * 3
        best = l0 * objs[r, c] + l1 * objs[r, c + 1] + l2 * objs[r, c + 2]
      else:
        best = -3.4028234663852886e38 if typ == _MESH else -_MAX_LIMIT   # -FLT_MAX
        vindex = 0
      for i in range(nv):
        r = base + i // 6
        c = (i % 6) * 3
        v = l0 * objs[r, c] + l1 * objs[r, c + 1] + l2 * objs[r, c + 2]
        if v > best:
          best = v
          vindex = i
      if typ == _MESH:
        objs[k, _GHINT] = vindex
    r = base + vindex // 6
    c = (vindex % 6) * 3
    q0, q1, q2 = objs[r, c], objs[r, c + 1], objs[r, c + 2]
    if typ == _HFIELD:
      vindex = -1   # MuJoCo's prism support leaves the vertex index unset (-1)
  else:  # box
    q0 = s0 if l0 >= 0 else -s0
    q1 = s1 if l1 >= 0 else -s1
    q2 = s2 if l2 >= 0 else -s2
    vindex = (1 if q0 > 0 else 0) | (2 if q1 > 0 else 0) | (4 if q2 > 0 else 0)

  r0 = objs[k, m + 0] * q0 + objs[k, m + 1] * q1 + objs[k, m + 2] * q2
  r1 = objs[k, m + 3] * q0 + objs[k, m + 4] * q1 + objs[k, m + 5] * q2
  r2 = objs[k, m + 6] * q0 + objs[k, m + 7] * q1 + objs[k, m + 8] * q2
  return r0 + p0, r1 + p1, r2 + p2, vindex


@jit
def _support_pair(verts, vidx, row, objs, objt, d0, d1, d2, n0, n1, n2):
  """Minkowski-difference support vertex S1(d) - S2(dneg), stored in verts[row] as
  (vert, vert1, vert2) with vertex indices in vidx[row]."""
  a0, a1, a2, i1 = _support(objs, objt, 0, d0, d1, d2)
  if objs[0, _MARGIN] > 0:
    half = 0.5 * objs[0, _MARGIN]
    a0 += d0 * half
    a1 += d1 * half
    a2 += d2 * half
  b0, b1, b2, i2 = _support(objs, objt, 1, n0, n1, n2)
  if objs[1, _MARGIN] > 0:
    half = 0.5 * objs[1, _MARGIN]
    b0 += n0 * half
    b1 += n1 * half
    b2 += n2 * half
  verts[row, 0] = a0 - b0
  verts[row, 1] = a1 - b1
  verts[row, 2] = a2 - b2
  verts[row, 3] = a0
  verts[row, 4] = a1
  verts[row, 5] = a2
  verts[row, 6] = b0
  verts[row, 7] = b1
  verts[row, 8] = b2
  vidx[row, 0] = i1
  vidx[row, 1] = i2


@jit
def _discrete(objs, objt):
  """True when both objects are polytopes without margin (finite GJK/EPA convergence): boxes,
  meshes, height fields, and (MuJoCo 4.0, read from its binary) the point and segment that GJK
  shrinks spheres and capsules to."""
  if objs[0, _MARGIN] != 0 or objs[1, _MARGIN] != 0:
    return False
  for k in range(2):
    t = objt[k, 0]
    if objt[k, 1] == _MODE_GEOM and t != _BOX and t != _MESH and t != _HFIELD:
      return False
  return True


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

  n = _cross(d32[0], d32[1], d32[2], d21[0], d21[1], d21[2])
  nv = _dot(n[0], n[1], n[2], b[0], b[1], b[2])
  nn = _dot(n[0], n[1], n[2], n[0], n[1], n[2])
  if nn == 0:
    return 1, 0.0, 0.0, 0.0
  if nv != 0 and nn > _MINVAL:
    s = nv / nn
    return 0, n[0] * s, n[1] * s, n[2] * s

  n = _cross(d21[0], d21[1], d21[2], d31[0], d31[1], d31[2])
  nv = _dot(n[0], n[1], n[2], a[0], a[1], a[2])
  nn = _dot(n[0], n[1], n[2], n[0], n[1], n[2])
  if nn == 0:
    return 1, 0.0, 0.0, 0.0
  if nv != 0 and nn > _MINVAL:
    s = nv / nn
    return 0, n[0] * s, n[1] * s, n[2] * s

  n = _cross(d31[0], d31[1], d31[2], d32[0], d32[1], d32[2])
  nv = _dot(n[0], n[1], n[2], c[0], c[1], c[2])
  nn = _dot(n[0], n[1], n[2], n[0], n[1], n[2])
  if nn == 0:   # (MuJoCo 4.0; the reference source divided by zero here)
    return 1, 0.0, 0.0, 0.0
  s = nv / nn
  return 0, n[0] * s, n[1] * s, n[2] * s


@jit
def _s1d(s1, s2):
  """Barycentric coordinates of the point of segment s1s2 closest to the origin (MuJoCo 4.0's
  S1D, bit for bit: read from its binary and checked against it through ctypes): (0, 1) for
  a segment shorter than 1e-15 or when the projection is beyond s2, (1, 0) beyond s1."""
  d0, d1, d2 = s2[0] - s1[0], s2[1] - s1[1], s2[2] - s1[2]
  nn = d0 * d0 + d1 * d1 + d2 * d2
  if nn < _MINVAL2:
    return 0.0, 1.0
  scl = -_dot(s2[0], s2[1], s2[2], d0, d1, d2) / nn
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


@jit
def _s2d(s1, s2, s3):
  """Barycentric coordinates of the point of triangle s1s2s3 closest to the origin (MuJoCo
  4.0's S2D, bit for bit: read from its binary and checked against it through ctypes). The
  origin projected on the plane, in the coordinate plane where the triangle's shadow is
  largest (its edge cross product's largest component M); inside when the three signed areas
  have M's sign, and then normalized by their sum; else the closest of the edges whose area
  has not (all three when the projection is degenerate)."""
  ret, p0, p1, p2 = _project_origin_plane(s1, s2, s3)
  comp1 = comp2 = comp3 = False
  if not ret:
    e0, e1, e2 = s2[0] - s1[0], s2[1] - s1[1], s2[2] - s1[2]
    f0, f1, f2 = s3[0] - s1[0], s3[1] - s1[1], s3[2] - s1[2]
    m14 = f2 * e1 - e2 * f1
    m24 = f2 * e0 - e2 * f0
    m34 = f1 * e0 - e1 * f0
    mu1, mu2, mu3 = abs(m14), abs(m24), abs(m34)
    if mu1 >= mu2 and mu1 >= mu3:
      m_max, x, y = m14, 1, 2
    elif mu2 >= mu3:
      m_max, x, y = m24, 0, 2
    else:
      m_max, x, y = m34, 0, 1
    p = (p0, p1, p2)
    ax, ay = s1[x] - p[x], s1[y] - p[y]
    bx, by = s2[x] - p[x], s2[y] - p[y]
    cx, cy = s3[x] - p[x], s3[y] - p[y]
    c31 = cy * bx - cx * by
    c32 = cx * ay - ax * cy
    c33 = ax * by - bx * ay
    comp1 = _same_sign(m_max, c31) != 0
    comp2 = _same_sign(m_max, c32) != 0
    comp3 = _same_sign(m_max, c33) != 0
    if comp1 and comp2 and comp3:
      total = c31 + c32 + c33
      return c31 / total, c32 / total, c33 / total

  l0 = l1 = l2 = 0.0
  dmin = _MAX_LIMIT
  if not comp1:
    a, b = _s1d(s2, s3)
    dmin = _norm2_comb2(a, b, s2, s3)
    l0, l1, l2 = 0.0, a, b
  if not comp2:
    a, b = _s1d(s1, s3)
    d = _norm2_comb2(a, b, s1, s3)
    if d < dmin:
      l0, l1, l2 = a, 0.0, b
      dmin = d
  if not comp3:
    a, b = _s1d(s1, s2)
    d = _norm2_comb2(a, b, s1, s2)
    if d < dmin:
      l0, l1, l2 = a, b, 0.0
  return l0, l1, l2


@jit
def _s3d(s1, s2, s3, s4):
  """Barycentric coordinates of the point of tetrahedron s1..s4 closest to the origin."""
  c41 = -_det3(s2[0], s2[1], s2[2], s3[0], s3[1], s3[2], s4[0], s4[1], s4[2])
  c42 = _det3(s1[0], s1[1], s1[2], s3[0], s3[1], s3[2], s4[0], s4[1], s4[2])
  c43 = -_det3(s1[0], s1[1], s1[2], s2[0], s2[1], s2[2], s4[0], s4[1], s4[2])
  c44 = _det3(s1[0], s1[1], s1[2], s2[0], s2[1], s2[2], s3[0], s3[1], s3[2])
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
    a, b, c = _s2d(s2, s3, s4)
    dmin = _norm2_comb3(a, b, c, s2, s3, s4)
    l0, l1, l2, l3 = 0.0, a, b, c
  if not comp2:
    a, b, c = _s2d(s1, s3, s4)
    d = _norm2_comb3(a, b, c, s1, s3, s4)
    if d < dmin:
      l0, l1, l2, l3 = a, 0.0, b, c
      dmin = d
  if not comp3:
    a, b, c = _s2d(s1, s2, s4)
    d = _norm2_comb3(a, b, c, s1, s2, s4)
    if d < dmin:
      l0, l1, l2, l3 = a, b, 0.0, c
      dmin = d
  if not comp4:
    a, b, c = _s2d(s1, s2, s3)
    d = _norm2_comb3(a, b, c, s1, s2, s3)
    if d < dmin:
      l0, l1, l2, l3 = a, b, c, 0.0
  return l0, l1, l2, l3


@jit
def _subdistance(sx, n):
  """Barycentric coordinates (4) of the point of the n-simplex sx closest to the origin."""
  if n == 4:
    return _s3d(_row(sx, 0), _row(sx, 1), _row(sx, 2), _row(sx, 3))
  if n == 3:
    a, b, c = _s2d(_row(sx, 0), _row(sx, 1), _row(sx, 2))
    return a, b, c, 0.0
  if n == 2:
    a, b = _s1d(_row(sx, 0), _row(sx, 1))
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
  """The simplex's point closest to the origin, x_k, as MuJoCo 4.0 computes it (read from its
  binary): for a segment or a triangle the origin projected on its line or plane (the
  barycentric combination only where that projection is degenerate), else the combination."""
  if n == 2:
    d0, d1, d2 = sx[1, 0] - sx[0, 0], sx[1, 1] - sx[0, 1], sx[1, 2] - sx[0, 2]
    nn = d0 * d0 + d1 * d1 + d2 * d2
    if not nn < _MINVAL2:
      t = -_dot(sx[1, 0], sx[1, 1], sx[1, 2], d0, d1, d2) / nn
      return t * d0 + sx[1, 0], t * d1 + sx[1, 1], t * d2 + sx[1, 2]
  elif n == 3:
    ret, p0, p1, p2 = _project_origin_plane(_row(sx, 0), _row(sx, 1), _row(sx, 2))
    if not ret:
      return p0, p1, p2
  return _lincomb(sx, 0, n, l0, l1, l2, l3)


@jit
def _gjk_support(sx, si, row, objs, objt, x0, x1, x2, x_norm):
  """Support vertex in direction -x_k (MuJoCo's gjkSupport)."""
  inv = 1 / x_norm
  n0, n1, n2 = x0 * inv, x1 * inv, x2 * inv
  _support_pair(sx, si, row, objs, objt, -n0, -n1, -n2, n0, n1, n2)


@jit
def _gjk(sx, si, tx, ti, xw, objs, objt, tolerance, kmax, dist_cutoff):
  """MuJoCo 4.0's gjk (its control flow read from the binary, which differs from our
  reference source): returns (dist, nsimplex, separated, nx).

  xw[0:3], xw[3:6] hold the initial and then the witness points of geom 1 and 2; the
  final simplex is in sx/si."""
  get_dist = dist_cutoff > 0
  n = 0
  k = 0
  tol2 = tolerance * tolerance
  discrete = _discrete(objs, objt)
  epsilon = 0.0 if discrete else 0.5 * tol2
  min_norm = _MINVAL if discrete else tolerance
  separated = 0

  x0, x1, x2 = xw[0] - xw[3], xw[1] - xw[4], xw[2] - xw[5]
  x_norm = math.sqrt(_dot(x0, x1, x2, x0, x1, x2))
  if x_norm < _MINVAL:  # (nearly) coincident centers: start along +x
    x0, x1, x2 = 1.0, 0.0, 0.0
    x_norm = 1.0
  l0, l1, l2, l3 = 0.0, 0.0, 0.0, 0.0

  while k < kmax:
    _gjk_support(sx, si, n, objs, objt, x0, x1, x2, x_norm)
    s0, s1, s2 = sx[n, 0], sx[n, 1], sx[n, 2]

    # lower bound on the distance: separated when positive
    lower = _dot(x0, x1, x2, s0, s1, s2)
    if get_dist:
      if lower > 0:
        separated = 1
        if dist_cutoff < _MAX_LIMIT and lower >= dist_cutoff * x_norm:
          return _MAX_LIMIT, 0, 1, 0
    elif lower > 0:
      return _MAX_LIMIT, 0, 1, 0

    # Frank-Wolfe duality gap (not on the first iteration, whose x is no simplex point)
    if k != 0 and _dot(x0, x1, x2, x0 - s0, x1 - s1, x2 - s2) < epsilon:
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
    x_norm = math.sqrt(_dot(x0, x1, x2, x0, x1, x2))
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
    if _dot(x0, x1, x2, tx[0, 0], tx[0, 1], tx[0, 2]) > 0:
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
  _support_pair(pv, pvi, n, objs, objt, u0, u1, u2, -u0, -u1, -u2)
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
  ret, p0, p1, p2 = _project_origin_plane(_row(pv, v3), _row(pv, v2), _row(pv, v1))
  if ret:
    return 0.0

  # point the projection away from the polytope
  o0, o1, o2 = pv[v1, 0] - ctr[0], pv[v1, 1] - ctr[1], pv[v1, 2] - ctr[2]
  if _dot(p0, p1, p2, o0, o1, o2) < 0:
    p0, p1, p2 = -p0, -p1, -p2
  fv[f, 0], fv[f, 1], fv[f, 2] = p0, p1, p2
  fd2[f] = _dot(p0, p1, p2, p0, p1, p2)
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
  n0, n1, n2 = _cross(p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2],
                      p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2])
  dot1 = _dot(n0, n1, n2, p3[0] - p0[0], p3[1] - p0[1], p3[2] - p0[2])
  dot2 = _dot(n0, n1, n2, -p0[0], -p0[1], -p0[2])
  return (dot1 > 0 and dot2 > 0) or (dot1 < 0 and dot2 < 0)


@jit
def _test_tetra(p0, p1, p2, p3):
  """True when the origin is inside tetrahedron p0..p3."""
  return (_same_side(p0, p1, p2, p3) and _same_side(p1, p2, p3, p0)
          and _same_side(p2, p3, p0, p1) and _same_side(p3, p0, p1, p2))


@jit
def _tri_coords(a, b, c, p):
  """Barycentric coordinates of point p (in the plane of triangle abc) as MuJoCo 4.0 takes
  them (triPointIntersect, EPA's witness points; read from its binary): the three sub-areas
  about p in the coordinate plane where the triangle's shadow is largest, over their sum."""
  e0, e1, e2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
  g0, g1, g2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
  m0 = abs(e1 * g2 - e2 * g1)
  m1 = abs(e0 * g2 - e2 * g0)
  m2 = abs(e0 * g1 - e1 * g0)
  if m1 <= m0 and m2 <= m0:
    x, y = 1, 2
  elif m1 >= m2:
    x, y = 0, 2
  else:
    x, y = 0, 1
  ax, ay = a[x] - p[x], a[y] - p[y]
  bx, by = b[x] - p[x], b[y] - p[y]
  cx, cy = c[x] - p[x], c[y] - p[y]
  s0 = bx * cy - by * cx
  s1 = cx * ay - cy * ax
  s2 = ax * by - ay * bx
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
  return math.sqrt(_dot(d0, d1, d2, d0, d1, d2)) < _MINVAL


@jit
def _ray_volumes(v1, v2, v3, v4, v5):
  """The three signed volumes of the ray v1v2 against the edges of triangle v3v4v5."""
  d12 = (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2])
  d13 = (v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2])
  d14 = (v4[0] - v1[0], v4[1] - v1[1], v4[2] - v1[2])
  d15 = (v5[0] - v1[0], v5[1] - v1[1], v5[2] - v1[2])
  return (_det3(d13[0], d13[1], d13[2], d14[0], d14[1], d14[2], d12[0], d12[1], d12[2]),
          _det3(d14[0], d14[1], d14[2], d15[0], d15[1], d15[2], d12[0], d12[1], d12[2]),
          _det3(d15[0], d15[1], d15[2], d13[0], d13[1], d13[2], d12[0], d12[1], d12[2]))


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
  if not _dot(a[0], a[1], a[2], b[0], b[1], b[2]) < 0:
    return False
  e0, e1, e2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
  nn = _dot(e0, e1, e2, e0, e1, e2)
  if nn < _MINVAL2:
    return False
  t = -_dot(b[0], b[1], b[2], e0, e1, e2) / nn
  p0, p1, p2 = t * e0 + b[0], t * e1 + b[1], t * e2 + b[2]
  return _dot(p0, p1, p2, p0, p1, p2) < _MINVAL2


@_inline
def _normal2(p, q, r):
  """|(q - p) x (r - p)|^2."""
  n0, n1, n2 = _cross(q[0] - p[0], q[1] - p[1], q[2] - p[2], r[0] - p[0], r[1] - p[1],
                      r[2] - p[2])
  return _dot(n0, n1, n2, n0, n1, n2)


@jit
def _replace_best_simplex3(pv, pvi, cnt, sx, si, a, b, c, d):
  """MuJoCo 4.0's replaceBestSimplex3: after face (a or b, c, d) of the segment's hexahedron
  came out degenerate, restart from triangle (a, c, d) or (b, d, c): the non-degenerate one,
  else the one nearer the origin (ties: (a, c, d))."""
  pa, pb, pc, pd = _row(pv, a), _row(pv, b), _row(pv, c), _row(pv, d)
  nnb = _normal2(pb, pd, pc)
  nna = _normal2(pa, pc, pd)
  if nna < _MINVAL and nnb >= _MINVAL:
    _replace_simplex(pv, pvi, cnt, sx, si, 3, b, d, c)
    return
  if nna >= _MINVAL and nnb < _MINVAL:
    _replace_simplex(pv, pvi, cnt, sx, si, 3, a, c, d)
    return
  k0, k1, k2 = _s2d(pa, pc, pd)
  j0, j1, j2 = _s2d(pb, pd, pc)
  p0 = (k0 * pa[0] + k1 * pc[0]) + k2 * pd[0]
  p1 = (k0 * pa[1] + k1 * pc[1]) + k2 * pd[1]
  p2 = (k0 * pa[2] + k1 * pc[2]) + k2 * pd[2]
  q0 = (j0 * pb[0] + j1 * pd[0]) + j2 * pc[0]
  q1 = (j0 * pb[1] + j1 * pd[1]) + j2 * pc[1]
  q2 = (j0 * pb[2] + j1 * pd[2]) + j2 * pc[2]
  if _dot(p0, p1, p2, p0, p1, p2) > _dot(q0, q1, q2, q0, q1, q2):
    _replace_simplex(pv, pvi, cnt, sx, si, 3, b, d, c)
  else:
    _replace_simplex(pv, pvi, cnt, sx, si, 3, a, c, d)


# polytope construction hand-offs (MuJoCo 4.0's polytopeN call each other after replacing the
# simplex; numba cannot recurse, so `_polytope` runs the chain)
_TO_P2 = -1       # polytope3 reduced the simplex to an edge: polytope2 next
_TO_P3 = -2       # polytope2 reduced it to a triangle: polytope3 next, without the edge fallback
_TO_P3_EDGE = -3  # polytope4 reduced it to a triangle: polytope3 next, with the edge fallback


@jit
def _polytope3(pt, cnt, ctr, sx, si, objs, objt, tolerance, allow_edge):
  """Initial polytope from a triangle simplex, as MuJoCo 4.0's polytope3 (read from its binary
  and checked against it bit for bit): the triangle with the supports along both normals; when
  the segment between those misses the triangle, the hexahedron relabelled around an edge
  (`_recover_hexa`) or a tetrahedron; a degenerate face with the origin on an edge of the
  triangle hands over to polytope2 (`_TO_P2`, when allow_edge). 0 on success."""
  pv, pvi, fv, fd2, fvert, fadj, findex, fmap = pt[:8]
  n = cnt[0]
  v1i = _insert_vertex(pv, pvi, cnt, sx, si, 0)
  v2i = _insert_vertex(pv, pvi, cnt, sx, si, 1)
  v3i = _insert_vertex(pv, pvi, cnt, sx, si, 2)
  v1, v2, v3 = _row(pv, v1i), _row(pv, v2i), _row(pv, v3i)
  n0, n1, n2 = _cross(v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2],
                      v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2])
  n_norm = math.sqrt(_dot(n0, n1, n2, n0, n1, n2))
  if n_norm < _MINVAL:
    return 4  # mjEPA_P3_BAD_NORMAL
  v5i = _epa_support(pv, pvi, cnt, objs, objt, -n0, -n1, -n2, n_norm)
  v4i = _epa_support(pv, pvi, cnt, objs, objt, n0, n1, n2, n_norm)
  v4, v5 = _row(pv, v4i), _row(pv, v5i)
  if _tri_point_intersect(v1, v2, v3, v4):
    return 5  # mjEPA_P3_INVALID_V4
  if _tri_point_intersect(v1, v2, v3, v5):
    return 6  # mjEPA_P3_INVALID_V5
  # both supports strictly off the triangle's plane
  t = n_norm * _MINVAL
  if t > _dot(n0, n1, n2, v4[0] - v1[0], v4[1] - v1[1], v4[2] - v1[2]):
    return 8
  if t > _dot(-n0, -n1, -n2, v5[0] - v1[0], v5[1] - v1[1], v5[2] - v1[2]):
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
    if _origin_on_edge(_row(pv, n), _row(pv, n + 1)):
      _replace_simplex(pv, pvi, cnt, sx, si, 2, n, n + 1, 0)
    elif _origin_on_edge(_row(pv, n + 1), _row(pv, n + 2)):
      _replace_simplex(pv, pvi, cnt, sx, si, 2, n + 1, n + 2, 0)
    elif _origin_on_edge(_row(pv, n + 2), _row(pv, n)):
      _replace_simplex(pv, pvi, cnt, sx, si, 2, n + 2, n, 0)
    else:
      return 8
    return _TO_P2

  # each face: the origin on the inner side, or the face within the tolerance
  tol2 = tolerance * tolerance
  pa, pb, pc, pd, pe = _row(pv, a), _row(pv, b), _row(pv, c), _row(pv, d), _row(pv, e)
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
  n = math.sqrt(_dot(a0, a1, a2, a0, a1, a2))
  u1, u2, u3 = a0 / n, a1 / n, a2 / n
  s = 0.86602540378
  c = -0.5
  return (c + u1 * u1 * (1 - c), u1 * u2 * (1 - c) - u3 * s, u1 * u3 * (1 - c) + u2 * s,
          u2 * u1 * (1 - c) + u3 * s, c + u2 * u2 * (1 - c), u2 * u3 * (1 - c) - u1 * s,
          u1 * u3 * (1 - c) - u2 * s, u2 * u3 * (1 - c) + u1 * s, c + u3 * u3 * (1 - c))


@jit
def _polytope2(pt, cnt, ctr, sx, si, objs, objt):
  """Initial hexahedron from a segment simplex, as MuJoCo 4.0's polytope2 (read from its binary
  and checked against it bit for bit): the segment's ends and three supports at 120 degrees
  about it; when the segment misses their triangle by more than a tolerance, one support is
  swapped for one in a tilted direction; a degenerate face hands over to polytope3 on the
  better of its two triangles (`_TO_P3`). 0 on success."""
  pv, pvi, fv, fd2, fvert, fadj, findex, fmap = pt[:8]
  v1i = _insert_vertex(pv, pvi, cnt, sx, si, 0)
  v2i = _insert_vertex(pv, pvi, cnt, sx, si, 1)
  v1, v2 = _row(pv, v1i), _row(pv, v2i)
  diff = (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2])

  # coordinate axis most orthogonal to the segment
  value = _MAX_LIMIT
  index = 0
  for i in range(3):
    if abs(diff[i]) < value:
      value = abs(diff[i])
      index = i
  e = (1.0 if index == 0 else 0.0, 1.0 if index == 1 else 0.0, 1.0 if index == 2 else 0.0)
  d1 = _cross(e[0], e[1], e[2], diff[0], diff[1], diff[2])

  # two more directions at 120 degrees about the segment
  rot = _rotmat120(diff[0], diff[1], diff[2])
  d2 = mm.mat_vec(rot, d1[0], d1[1], d1[2])
  d3 = mm.mat_vec(rot, d2[0], d2[1], d2[2])
  v3i = _epa_support(pv, pvi, cnt, objs, objt, d1[0], d1[1], d1[2],
                     math.sqrt(_dot(d1[0], d1[1], d1[2], d1[0], d1[1], d1[2])))
  v4i = _epa_support(pv, pvi, cnt, objs, objt, d2[0], d2[1], d2[2],
                     math.sqrt(_dot(d2[0], d2[1], d2[2], d2[0], d2[1], d2[2])))
  v5i = _epa_support(pv, pvi, cnt, objs, objt, d3[0], d3[1], d3[2],
                     math.sqrt(_dot(d3[0], d3[1], d3[2], d3[0], d3[1], d3[2])))

  # the segment through the supports' triangle, within a tolerance; else swap one support
  dd = _dot(diff[0], diff[1], diff[2], diff[0], diff[1], diff[2])
  dn = math.sqrt(dd)
  tol = (dd * _MINVAL) * dn
  r0, r1, r2 = _ray_volumes(v1, v2, _row(pv, v3i), _row(pv, v4i), _row(pv, v5i))
  if not _crossed(r0, r1, r2, tol):
    if r0 <= r1 and r0 <= r2:
      vs, vt, vu = v3i, v4i, v5i
    elif r1 <= r0 and r1 <= r2:
      vs, vt, vu = v4i, v5i, v3i
    else:
      vs, vt, vu = v5i, v3i, v4i
    ps, pt_, pu = _row(pv, vs), _row(pv, vt), _row(pv, vu)
    g0, g1, g2 = pt_[0] - ps[0], pt_[1] - ps[1], pt_[2] - ps[2]
    dot_u = _dot(diff[0], diff[1], diff[2], pu[0] - v1[0], pu[1] - v1[1], pu[2] - v1[2])
    sgn = 0.001 if dd * 0.5 <= dot_u else -0.001
    k = math.sqrt(_dot(g0, g1, g2, g0, g1, g2)) * sgn
    c0, c1, c2 = _cross(g0, g1, g2, diff[0], diff[1], diff[2])
    c0, c1, c2 = c0 + diff[0] * k, c1 + diff[1] * k, c2 + diff[2] * k
    w = _epa_support(pv, pvi, cnt, objs, objt, c0, c1, c2,
                     math.sqrt(_dot(c0, c1, c2, c0, c1, c2)))
    cnt[0] -= 1   # the tilted support is only a candidate
    pw = _row(pv, w)
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

  if not _ray_triangle(v1, v2, _row(pv, v3i), _row(pv, v4i), _row(pv, v5i)):
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

  if not _test_tetra(_row(pv, v1), _row(pv, v2), _row(pv, v3), _row(pv, v4)):
    return 9  # mjEPA_P4_MISSING_ORIGIN
  _fill_map(fmap, findex, cnt, 4)
  return 0


@jit
def _polytope(pt, cnt, ctr, sx, si, objs, objt, tolerance, nsimplex):
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
  max(1e-15 |v|, 1e-15) (MuJoCo 4.0; the reference source: 1e-15)."""
  thr = math.sqrt(fd2[f]) * _MINVAL
  if not thr > _MINVAL:
    thr = _MINVAL
  return _dot(fv[f, 0], fv[f, 1], fv[f, 2], w0, w1, w2) - fd2[f] > thr


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
def _epa(pt, cnt, ctr, xw, objs, objt, tolerance, max_iterations):
  """Expand the polytope towards the penetration depth, as MuJoCo 4.0's epa (read from its
  binary, checked against it bit for bit); returns (dist, nx, nocontact): nocontact when the
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
  discrete = _discrete(objs, objt)
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
    upper_k = _dot(fv[face, 0], fv[face, 1], fv[face, 2], w0, w1, w2) / lower
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
  l0, l1, l2 = _tri_coords(_row(pv, a), _row(pv, b), _row(pv, c), _row(fv, face))
  for j in range(3):
    xw[j] = l0 * pv[a, 3 + j] + l1 * pv[b, 3 + j] + l2 * pv[c, 3 + j]
    xw[3 + j] = l0 * pv[a, 6 + j] + l1 * pv[b, 6 + j] + l2 * pv[c, 6 + j]
  return -math.sqrt(fd2[face]), 1, False


# --------------------------------------- multicontact -------------------------------------------
# Helpers of MuJoCo 4.0's single-shot multicontact (`_multicontact`, in the multicontact
# section below): box faces and corners, the side planes of a clipping face, and its
# polygonClip with polygonQuad's choice of four vertices. The scratch `mc` holds the clipping
# face (rows _MC_FACE..), its side planes' normals (_MC_PN..) and two polygon buffers
# (_MC_POLY..).


@jit
def _box_normals2(mat, d0, d1, d2):
  """Box face (0..5: +x, -x, +y, -y, +z, -z) whose normal is within the face tolerance of
  direction d, or -1 (MuJoCo's boxNormals2)."""
  l0 = mat[0] * d0 + mat[3] * d1 + mat[6] * d2
  l1 = mat[1] * d0 + mat[4] * d1 + mat[7] * d2
  l2 = mat[2] * d0 + mat[5] * d1 + mat[8] * d2
  inv = 1 / math.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
  l0, l1, l2 = l0 * inv, l1 * inv, l2 * inv
  loc = (l0, -l0, l1, -l1, l2, -l2)
  for i in range(6):
    if loc[i] > _FACE_TOL:
      return i
  return -1


@_inline
def _axis_sign(v1, v2, v3, bit):
  """+1 when all vertex indices have the bit, -1 when none has it, else 0."""
  if (v1 & bit) and (v2 & bit) and (v3 & bit):
    return 1
  if not (v1 & bit) and not (v2 & bit) and not (v3 & bit):
    return -1
  return 0


@jit
def _box_faces(mat, dim, v1, v2, v3, d0, d1, d2):
  """Candidate box faces (up to 3, -1 for none) of a simplex feature with dim distinct box
  vertices v1..v3 (MuJoCo's boxNormals); d is the direction used when the feature is no face
  or edge. Returns (count, f0, f1, f2)."""
  if dim == 3 or dim == 2:
    if dim == 2:
      v3 = v2
    x = _axis_sign(v1, v2, v3, 1)
    y = _axis_sign(v1, v2, v3, 2)
    z = _axis_sign(v1, v2, v3, 4)
    f = (-1, -1, -1)
    c = 0
    if x:
      f = (0 if x > 0 else 1, f[1], f[2])
      c += 1
    if y:
      if c == 0:
        f = (2 if y > 0 else 3, f[1], f[2])
      else:
        f = (f[0], 2 if y > 0 else 3, f[2])
      c += 1
    if z:
      if c == 0:
        f = (4 if z > 0 else 5, f[1], f[2])
      elif c == 1:
        f = (f[0], 4 if z > 0 else 5, f[2])
      else:
        f = (f[0], f[1], 4 if z > 0 else 5)
      c += 1
    if (dim == 3 and c == 1) or (dim == 2 and c >= 1):   # (4.0: one face of an edge will do)
      return c, f[0], f[1], -1
    i = _box_normals2(mat, d0, d1, d2)
    return (1 if i >= 0 else 0), i, -1, -1
  if dim == 1:
    return (3, 0 if v1 & 1 else 1, 2 if v1 & 2 else 3, 4 if v1 & 4 else 5)
  return 0, -1, -1, -1


@_inline
def _global(objs, k, l0, l1, l2, r):
  """Coordinate r of the point l of object k's frame in the world (rotation, then position)."""
  return ((objs[k, _MAT + 3 * r] * l0 + objs[k, _MAT + 3 * r + 1] * l1)
          + objs[k, _MAT + 3 * r + 2] * l2) + objs[k, _POS + r]


@_inline
def _face_normal(mat, f):
  """World normal of box face f."""
  k = f // 2
  s = 1.0 if f % 2 == 0 else -1.0
  return s * mat[k], s * mat[3 + k], s * mat[6 + k]


@jit
def _box_face(mc, objs, k, f):
  """Corners of face f of box k, in MuJoCo's order, into mc rows _MC_FACE..+4."""
  s0, s1, s2 = objs[k, _SIZE], objs[k, _SIZE + 1], objs[k, _SIZE + 2]
  if f == 0:
    c = ((s0, s1, s2), (s0, s1, -s2), (s0, -s1, -s2), (s0, -s1, s2))
  elif f == 1:
    c = ((-s0, s1, -s2), (-s0, s1, s2), (-s0, -s1, s2), (-s0, -s1, -s2))
  elif f == 2:
    c = ((-s0, s1, -s2), (s0, s1, -s2), (s0, s1, s2), (-s0, s1, s2))
  elif f == 3:
    c = ((-s0, -s1, s2), (s0, -s1, s2), (s0, -s1, -s2), (-s0, -s1, -s2))
  elif f == 4:
    c = ((-s0, s1, s2), (s0, s1, s2), (s0, -s1, s2), (-s0, -s1, s2))
  else:
    c = ((s0, s1, -s2), (-s0, s1, -s2), (-s0, -s1, -s2), (s0, -s1, -s2))
  for i in range(4):
    l0, l1, l2 = c[i]
    for r in range(3):
      mc[_MC_FACE + i, r] = _global(objs, k, l0, l1, l2, r)
  return 4


@_inline
def _side(mc, a, pn, p):
  """Signed distance of row p from the plane through row a with (unit) normal row pn."""
  return _dot(mc[p, 0] - mc[a, 0], mc[p, 1] - mc[a, 1], mc[p, 2] - mc[a, 2],
              mc[pn, 0], mc[pn, 1], mc[pn, 2])


@_inline
def _halfspace(mc, a, pn, p):
  """True when row p is on the inner side of the plane through row a with normal row pn."""
  return _side(mc, a, pn, p) > -_MINVAL


@_inline
def _area4(mc, a, b, c, d):
  """Area of the quadrilateral of rows a, b, c, d (in this order): |(c - a) x (d - b)| / 2."""
  x0, x1, x2 = _cross(mc[c, 0] - mc[a, 0], mc[c, 1] - mc[a, 1], mc[c, 2] - mc[a, 2],
                      mc[d, 0] - mc[b, 0], mc[d, 1] - mc[b, 1], mc[d, 2] - mc[b, 2])
  return 0.5 * math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


@jit
def _polygon_quad(mc, poly, npoly):
  """Four vertices (offsets from row poly) of a polygon spanning a large quadrilateral:
  MuJoCo's polygonQuad local search (grow d, then c, then b while the area grows, for each
  start a), with the area of the quadrilateral taken in polygon order (as MuJoCo 4.0's
  choices show; 3.x's area4 took another vertex order)."""
  a, b, c, d = 0, 1, 2, 3
  r0, r1, r2, r3 = a, b, c, d
  m = _area4(mc, poly + a, poly + b, poly + c, poly + d)
  for a in range(npoly):
    while True:
      dn = d + 1 if d < npoly - 1 else 0
      mn = _area4(mc, poly + a, poly + b, poly + c, poly + dn)
      if mn <= m:
        break
      m = mn
      d = dn
      r0, r1, r2, r3 = a, b, c, d
      while True:
        cn = c + 1 if c < npoly - 1 else 0
        mn = _area4(mc, poly + a, poly + b, poly + cn, poly + d)
        if mn <= m:
          break
        m = mn
        c = cn
        r0, r1, r2, r3 = a, b, c, d
      while True:
        bn = b + 1 if b < npoly - 1 else 0
        mn = _area4(mc, poly + a, poly + bn, poly + c, poly + d)
        if mn <= m:
          break
        m = mn
        b = bn
        r0, r1, r2, r3 = a, b, c, d
    if b == a:
      b = b + 1 if b < npoly - 1 else 0
      if c == b:
        c = c + 1 if c < npoly - 1 else 0
        if d == c:
          d = d + 1 if d < npoly - 1 else 0
  return r0, r1, r2, r3


@jit
def _clip_polygon(mc, nface1, nface2, n0, n1, n2, q0, q1, q2, m0, m1, m2, keep):
  """MuJoCo's polygonClip without its output: clip the polygon in the first polygon buffer
  (nface2 rows) by the side planes of the face in the face rows (nface1 corners, normal n),
  drop the vertices more than `keep` above the plane through q with normal m, and pick at
  most four of the rest (`_polygon_quad`; a clipped edge keeps its two most distant
  points). Returns (first row of the polygon, count, the picked offsets)."""
  if nface1 < 3:
    return _MC_POLY, 0, 0, 1, 2, 3
  # side planes of the clipping face
  for i in range(nface1):
    a = _MC_FACE + i
    b = _MC_FACE + (i + 1 if i < nface1 - 1 else 0)
    e0, e1, e2 = mc[b, 0] - mc[a, 0], mc[b, 1] - mc[a, 1], mc[b, 2] - mc[a, 2]
    u0 = (mc[a, 0] + n0) - mc[a, 0]  # (v1 + n) - v1, as MuJoCo computes it
    u1 = (mc[a, 1] + n1) - mc[a, 1]
    u2 = (mc[a, 2] + n2) - mc[a, 2]
    c0, c1, c2 = _cross(e0, e1, e2, u0, u1, u2)
    c0, c1, c2, _ = _normalize(c0, c1, c2)
    mc[_MC_PN + i, 0], mc[_MC_PN + i, 1], mc[_MC_PN + i, 2] = c0, c1, c2

  poly = _MC_POLY
  clip = _MC_POLY + _MC_POLYMAX
  npoly = nface2
  for e in range(nface1):
    ncl = 0
    pn = _MC_PN + e
    fa = _MC_FACE + e
    for i in range(npoly):
      p = poly + i
      q = poly + i + 1 if i < npoly - 1 else poly
      in1 = _halfspace(mc, fa, pn, p)
      in2 = _halfspace(mc, fa, pn, q)
      if not in1 and not in2:
        continue
      if ncl + 2 > _MC_POLYMAX:
        return poly, 0, 0, 1, 2, 3
      if in1 and in2:
        mc[clip + ncl, 0], mc[clip + ncl, 1], mc[clip + ncl, 2] = mc[q, 0], mc[q, 1], mc[q, 2]
        ncl += 1
        continue
      # the crossing, from the two half-space values (MuJoCo 4.0's polygonClip, read from its
      # binary)
      d0, d1, d2 = mc[q, 0] - mc[p, 0], mc[q, 1] - mc[p, 1], mc[q, 2] - mc[p, 2]
      dp = _side(mc, fa, pn, p)
      den = dp - _side(mc, fa, pn, q)
      if den != 0.0 or den != den:
        t = dp / den
        if t >= 0.0 and t <= 1.0:
          mc[clip + ncl, 0] = mc[p, 0] + d0 * t
          mc[clip + ncl, 1] = mc[p, 1] + d1 * t
          mc[clip + ncl, 2] = mc[p, 2] + d2 * t
          ncl += 1
      if in2:
        mc[clip + ncl, 0], mc[clip + ncl, 1], mc[clip + ncl, 2] = mc[q, 0], mc[q, 1], mc[q, 2]
        ncl += 1
    poly, clip = clip, poly
    npoly = ncl

  # drop vertices outside the face
  mpoly = npoly
  npoly = 0
  for i in range(mpoly):
    if _dot(mc[poly + i, 0] - q0, mc[poly + i, 1] - q1, mc[poly + i, 2] - q2,
            m0, m1, m2) <= keep:
      if npoly != i:
        for r in range(3):
          mc[poly + npoly, r] = mc[poly + i, r]
      npoly += 1
  if npoly < 1:
    return poly, 0, 0, 1, 2, 3

  # more than four vertices: a large quadrilateral of them; a clipped edge keeps its two
  # most distant points
  first, second, third, fourth = 0, 1, 2, 3
  if npoly > 4:
    first, second, third, fourth = _polygon_quad(mc, poly, npoly)
    npoly = 4
  elif nface2 == 2 and npoly > 2:
    best1, best2 = 0, 1
    dmax = 0.0
    for i in range(npoly):
      for j in range(i + 1, npoly):
        e0 = mc[poly + j, 0] - mc[poly + i, 0]
        e1 = mc[poly + j, 1] - mc[poly + i, 1]
        e2 = mc[poly + j, 2] - mc[poly + i, 2]
        d2 = _dot(e0, e1, e2, e0, e1, e2)
        if d2 > dmax:
          dmax = d2
          best1, best2 = i, j
    first, second = best1, best2
    npoly = 2
  return poly, npoly, first, second, third, fourth


@jit
def _box_corner(objs, k, idx, r):
  """Coordinate r of corner idx (bit 0: +x, 1: +y, 2: +z) of box k."""
  l0 = objs[k, _SIZE] if idx & 1 else -objs[k, _SIZE]
  l1 = objs[k, _SIZE + 1] if idx & 2 else -objs[k, _SIZE + 1]
  l2 = objs[k, _SIZE + 2] if idx & 4 else -objs[k, _SIZE + 2]
  return _global(objs, k, l0, l1, l2, r)


@_inline
def _feature_dim(i1, i2, i3):
  """Dimension of the feature spanned by three vertex ids of one shape (MuJoCo's simplexDim):
  (1, i1, .., ..) a vertex, (2, i1, i2, ..) an edge with its two distinct ids first, (3, ...)
  a face."""
  if i1 == i2:
    if i1 == i3:
      return 1, i1, i2, i3
    return 2, i1, i3, i3
  if i3 == i1 or i3 == i2:
    return 2, i1, i2, i3
  return 3, i1, i2, i3


# ------------------------------------------ CCD -------------------------------------------------

@jit
def _work_sizes(n):
  """Numba twin of `work_sizes`."""
  if n < 1:
    n = 1
  nv = 5 + n
  nf = 6 * n
  nfloat = 2 * _OBJ_COLS + 2 * 4 * 9 + 6 + 3 + nv * 9 + nf * 3 + nf + _MC_FLOATS
  nint = 4 + 2 * 4 * 2 + 8 + nv * 2 + nf * 3 + nf * 3 + nf + nf + nf + nf + nf * 3
  return nfloat, nint + _PS_SIZE   # (multicontact scratch)


@jit
def _split_work(fbuf, ibuf, n, forget=True):
  """Views into the flat work buffers: objects, simplices, witness points and polytope (about
  1 us: the reshapes; the collision driver makes them once per pass). `forget`: mark the
  buffers as holding no mesh (cnt[6:8], see `collide_mesh_views`), for callers that write
  over the mesh rows."""
  if n < 1:
    n = 1
  nv = 5 + n
  nf = 6 * n
  o = 0
  sx = fbuf[o:o + 36].reshape((4, 9)); o += 36
  tx = fbuf[o:o + 36].reshape((4, 9)); o += 36
  xw = fbuf[o:o + 6]; o += 6
  ctr = fbuf[o:o + 3]; o += 3
  pv = fbuf[o:o + nv * 9].reshape((nv, 9)); o += nv * 9
  fv = fbuf[o:o + nf * 3].reshape((nf, 3)); o += nf * 3
  fd2 = fbuf[o:o + nf]; o += nf
  mc = fbuf[o:o + 3 * _MC_ROWS].reshape((_MC_ROWS, 3)); o += 3 * _MC_ROWS
  nrow = (fbuf.shape[0] - o) // _OBJ_COLS   # the rest: two objects, then mesh vertices
  objs = fbuf[o:o + nrow * _OBJ_COLS].reshape((nrow, _OBJ_COLS))
  o = 0
  si = ibuf[o:o + 8].reshape((4, 2)); o += 8
  ti = ibuf[o:o + 8].reshape((4, 2)); o += 8
  cnt = ibuf[o:o + 8]; o += 8
  if forget:
    cnt[6] = cnt[7] = -1   # the meshes collide_mesh_views left in the buffers: none known
  pvi = ibuf[o:o + nv * 2].reshape((nv, 2)); o += nv * 2
  fvert = ibuf[o:o + nf * 3].reshape((nf, 3)); o += nf * 3
  fadj = ibuf[o:o + nf * 3].reshape((nf, 3)); o += nf * 3
  findex = ibuf[o:o + nf]; o += nf
  fmap = ibuf[o:o + nf]; o += nf
  hz_idx = ibuf[o:o + nf]; o += nf
  hz_edge = ibuf[o:o + nf]; o += nf
  stk = ibuf[o:o + nf * 3].reshape((nf, 3)); o += nf * 3
  nrow = (ibuf.shape[0] - o) // 2   # the rest: two objects, then hull adjacencies
  objt = ibuf[o:o + 2 * nrow].reshape((nrow, 2))
  pt = (pv, pvi, fv, fd2, fvert, fadj, findex, fmap, hz_idx, hz_edge, stk, mc)
  return objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt


@jit
def _ccd(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, tolerance, max_iterations, cutoff):
  """MuJoCo's mjc_ccd for one contact with distances up to `cutoff` (0 for contacts, the
  sensors' cutoff for distance sensors): returns (dist, nx), _MAX_LIMIT beyond the cutoff;
  witness points in xw (geom 1 at 0:3, geom 2 at 3:6)."""
  cnt[4] = -1  # EPA face, for multicontact
  cnt[5] = 0   # size of the GJK simplex of the cores (shallow contacts), for multicontact
  for j in range(3):
    xw[j] = objs[0, _POS + j]
    xw[3 + j] = objs[1, _POS + j]

  t1, t2 = objt[0, 0], objt[1, 0]
  margin1, margin2 = objs[0, _MARGIN], objs[1, _MARGIN]
  core1 = t1 == _SPHERE or t1 == _CAPSULE
  core2 = t2 == _SPHERE or t2 == _CAPSULE
  if core1 or core2 or margin1 > 0 or margin2 > 0:
    # shrink spheres to points, capsules to segments and drop margins: distance of the cores
    full1 = 0.0
    full2 = 0.0
    if core1:
      full1 = objs[0, _SIZE] + 0.5 * margin1
      objt[0, 1] = _MODE_POINT if t1 == _SPHERE else _MODE_LINE
    elif margin1 > 0:
      full1 = 0.5 * margin1
    objs[0, _MARGIN] = 0.0
    if core2:
      full2 = objs[1, _SIZE] + 0.5 * margin2
      objt[1, 1] = _MODE_POINT if t2 == _SPHERE else _MODE_LINE
    elif margin2 > 0:
      full2 = 0.5 * margin2
    objs[1, _MARGIN] = 0.0
    dist, nsimplex, separated, nx = _gjk(sx, si, tx, ti, xw, objs, objt, tolerance,
                                         max_iterations, cutoff + full1 + full2)
    cnt[5] = nsimplex
    objs[0, _MARGIN] = margin1
    objs[1, _MARGIN] = margin2
    objt[0, 1] = _MODE_GEOM
    objt[1, 1] = _MODE_GEOM

    # shallow penetration: inflate the core witness points
    if dist > tolerance:
      n0, n1, n2, _ = _normalize(xw[3] - xw[0], xw[4] - xw[1], xw[5] - xw[2])
      if full1:
        xw[0] += full1 * n0
        xw[1] += full1 * n1
        xw[2] += full1 * n2
      if full2:
        xw[3] -= full2 * n0
        xw[4] -= full2 * n1
        xw[5] -= full2 * n2
      dist -= full1 + full2
      if dist > cutoff:
        dist = _MAX_LIMIT
      return dist, nx

    # deep penetration: rerun on the full geoms (multicontact then goes by the EPA face)
    cnt[5] = 0
    for j in range(3):
      xw[j] = objs[0, _POS + j]
      xw[3 + j] = objs[1, _POS + j]

  dist, nsimplex, separated, nx = _gjk(sx, si, tx, ti, xw, objs, objt, tolerance,
                                       max_iterations, cutoff)
  if dist <= tolerance and nsimplex > 1 and not separated:
    gjk_dist = dist
    dist = 0.0  # assume touching
    ret = _polytope(pt, cnt, ctr, sx, si, objs, objt, tolerance, nsimplex)
    if ret == 0:
      dist, nx, nocontact = _epa(pt, cnt, ctr, xw, objs, objt, tolerance, max_iterations)
      if nocontact and cutoff > 0:   # (4.0: a distance query keeps GJK's distance)
        dist, nx = gjk_dist, 1
  return dist, nx


@jit
def _penetration(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, tolerance, max_iterations,
                 margin, icon, dist_out, pos_out, frame_out):
  """MuJoCo's mjc_penetration (native CCD): writes at most one contact at row icon."""
  dist, nx = _ccd(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, tolerance, max_iterations,
                  0.0)
  if not dist < 0 or nx == 0:
    return 0
  dist_out[icon] = margin + dist
  for j in range(3):
    pos_out[icon, j] = (xw[j] + xw[3 + j]) * 0.5
  n0, n1, n2, _ = _normalize(xw[0] - xw[3], xw[1] - xw[4], xw[2] - xw[5])
  frame_out[icon, 0], frame_out[icon, 1], frame_out[icon, 2] = n0, n1, n2
  frame_out[icon, 3] = frame_out[icon, 4] = frame_out[icon, 5] = 0.0
  return 1


@jit
def _set_obj(objs, objt, k, typ, size, pos, mat, margin):
  """Load geom k's type, size, pose and margin into the object arrays."""
  objt[k, 0] = typ
  objt[k, 1] = _MODE_GEOM
  for j in range(3):
    objs[k, _SIZE + j] = size[j]
    objs[k, _POS + j] = pos[j]
  for j in range(9):
    objs[k, _MAT + j] = mat[j]
  objs[k, _MARGIN] = margin
  objs[k, _VADR] = 0.0
  objs[k, _VNUM] = 0.0
  objs[k, _GADR] = -1.0
  objs[k, _GHINT] = 0.0


@jit
def _set_mesh(objs, objt, k, row, iadr, vert, ext, graph, copy=True):
  """Copy a mesh's support vertices into objs from `row` on, six per row: with a hull graph
  and at least _HILLCLIMB_MIN vertices, the hull's (in hull order; support ids hull-local)
  and its adjacency into flat `objt` from int `iadr` on, for the hill climb; else every
  vertex in mesh order (support ids are mesh ids, objs[k, _GADR] -1), as MuJoCo 4.0 picks
  mjc_hillclimbSupport or mjc_meshSupport. `ext`: the mesh's mesh_extrema row, stored just
  before the adjacency (the hill climb's seeds). `copy` False: the buffers hold this mesh at
  these rows already, only object k's header is set. Returns the next free row and int."""
  nh = graph[0] if graph.shape[0] > 0 else 0
  if vert.shape[0] < _HILLCLIMB_MIN:
    nh = 0
  n = nh if nh > 0 else vert.shape[0]
  objs[k, _VADR] = row
  objs[k, _VNUM] = n
  if nh > 0:
    for i in range(_NEXTREMA):
      j = iadr + i
      objt[j >> 1, j & 1] = ext[i]
    iadr += _NEXTREMA
  objs[k, _GADR] = iadr if nh > 0 else -1
  objs[k, _GHINT] = -1.0   # no previous support vertex yet
  if not copy:
    return row + (n + 5) // 6, (iadr + nh + nh + 3 * graph[1]) if nh > 0 else iadr
  for i in range(n):
    v = graph[2 + nh + i] if nh > 0 else i
    r = row + i // 6
    c = (i % 6) * 3
    objs[r, c] = vert[v, 0]
    objs[r, c + 1] = vert[v, 1]
    objs[r, c + 2] = vert[v, 2]
  if nh > 0:
    nedge = nh + 3 * graph[1]
    for i in range(nh):        # vert_edgeadr
      j = iadr + i
      objt[j >> 1, j & 1] = graph[2 + i]
    for i in range(nedge):     # edge_localid
      j = iadr + nh + i
      objt[j >> 1, j & 1] = graph[2 + 2 * nh + i]
    iadr += nh + nedge
  return row + (n + 5) // 6, iadr


# a primitive's (empty) mesh arrays for `_multicontact` (numba freezes global arrays into the
# compiled code: no allocation per call)
_NO_VERT = np.empty((0, 3), dtype=np.float32)
_NO_GRAPH = np.empty(0, dtype=np.int32)
_NO_POLY = (_NO_GRAPH, _NO_GRAPH, _NO_GRAPH, np.empty((0, 3)), _NO_GRAPH, _NO_GRAPH, _NO_GRAPH)


@jit
def collide_convex_work(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin,
                        ccd_iterations, ccd_tolerance, flags, dist, pos, frame, fbuf, ibuf):
  """`collide_convex` with caller-provided work buffers (sizes from `work_sizes`)."""
  if type1 == _PLANE:
    return plane_convex(size1, pos1, mat1, type2, size2, pos2, mat2, margin, dist, pos, frame)
  return collide_convex_views(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin,
                              ccd_iterations, ccd_tolerance, flags, dist, pos, frame,
                              _split_work(fbuf, ibuf, ccd_iterations), ibuf)


@jit
def collide_convex_views(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin,
                         ccd_iterations, ccd_tolerance, flags, dist, pos, frame, w, ibuf):
  """`collide_convex_work` on `_split_work`'s views `w` of the work buffers (ibuf the int
  buffer they view)."""
  if type1 == _PLANE:
    return plane_convex(size1, pos1, mat1, type2, size2, pos2, mat2, margin, dist, pos, frame)
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = w
  _set_obj(objs, objt, 0, type1, size1, pos1, mat1, margin)
  _set_obj(objs, objt, 1, type2, size2, pos2, mat2, margin)

  # one contact from GJK/EPA
  n = _penetration(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, ccd_tolerance,
                   ccd_iterations, margin, 0, dist, pos, frame)

  # MuJoCo 4.0's single-shot multicontact replaces it where a face or an edge lies on a face
  # (cylinders on boxes and cylinders, capsules on cylinders)
  if (n == 1 and not flags & (_DSBL_MULTICCD | _DSBL_NATIVECCD)
          and ((type1 == _CYLINDER and (type2 == _BOX or type2 == _CYLINDER))
               or (type1 == _CAPSULE and type2 == _CYLINDER))):
    o = _objt_offset(ccd_iterations) + 4
    if ibuf.shape[0] - o >= _PS_SIZE:
      cnt[6] = cnt[7] = -1   # its scratch is where collide_mesh_views keeps mesh adjacencies
      nmulti = _multicontact(objs, objt, _NO_VERT, _NO_GRAPH, _NO_POLY, _NO_VERT, _NO_GRAPH,
                             _NO_POLY, xw, si, cnt, pt, ibuf[o:o + _PS_SIZE], margin, dist,
                             pos, frame)
      if nmulti > 0:
        n = nmulti
  return n


@jit
def collide_convex(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin,
                   ccd_iterations, ccd_tolerance, flags, dist, pos, frame):
  """MuJoCo's mjc_Convex / mjc_PlaneConvex for primitive geoms; returns the contact count.

  type1 <= type2; size/pos (3,), mat (9,) row-major; margin is the pair margin; flags is
  m.opt.disableflags: unless MULTICCD or NATIVECCD is disabled, cylinder-box,
  cylinder-cylinder and capsule-cylinder pairs may get up to four contacts
  (MuJoCo 4.0's single-shot multicontact); with NATIVECCD disabled the driver calls
  `collision_libccd` instead.
  Writes dist (50,), pos (50, 3) and the normal (geom1 to geom2) in frame[i, 0:3], zero
  tangent in frame[i, 3:6]. Allocates its work buffers; the driver can call
  `collide_convex_work` with preallocated ones instead (sizes from `work_sizes`)."""
  nfloat, nint = _work_sizes(ccd_iterations)
  fbuf = np.empty(nfloat)
  ibuf = np.empty(nint, dtype=np.int64)
  return collide_convex_work(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin,
                             ccd_iterations, ccd_tolerance, flags, dist, pos, frame, fbuf,
                             ibuf)


# --------------------------------------- flex elements ------------------------------------------

@jit
def flex_work_sizes(ccd_iterations):
  """(float count, int count) of the work buffers for `collide_flex_elem`."""
  nfloat, nint = _work_sizes(ccd_iterations)
  return nfloat + 2 * _OBJ_COLS, nint


@jit
def _set_flex_obj(objs, objt, k, row, x, vid, n, radius, margin):
  """Load a flex element (rows vid[0:n] of x) with its radius and the pair margin as object
  k, its vertices at objs row `row` (n <= 6)."""
  objt[k, 0] = _FLEX
  objt[k, 1] = _MODE_GEOM
  for j in range(3):
    lo = x[vid[0], j]
    hi = x[vid[0], j]
    for i in range(1, n):
      lo = min(lo, x[vid[i], j])
      hi = max(hi, x[vid[i], j])
    objs[k, _POS + j] = 0.5 * (hi + lo)     # flexelem_aabb's center (mjc_center)
  objs[k, _SIZE] = radius
  objs[k, _SIZE + 1] = 0.0
  objs[k, _SIZE + 2] = 0.0
  for j in range(9):
    objs[k, _MAT + j] = 0.0
  objs[k, _MAT] = objs[k, _MAT + 4] = objs[k, _MAT + 8] = 1.0
  objs[k, _MARGIN] = margin
  objs[k, _VADR] = row
  objs[k, _VNUM] = n
  objs[k, _GADR] = -1.0
  objs[k, _GHINT] = 0.0
  for i in range(n):
    for j in range(3):
      objs[row, 3 * i + j] = x[vid[i], j]


@jit
def collide_flex_elem(type1, size1, pos1, mat1, x, vid1, n1, r1, vid2, n2, r2, margin,
                      ccd_iterations, ccd_tolerance, dist, pos, frame, fbuf, ibuf):
  """MuJoCo's mjc_ConvexElem (native CCD, one contact): geom 1 (type1 >= 0, size/pos/mat) or
  flex element 1 (type1 < 0: rows vid1[0:n1] of the flex vertex positions x, radius r1)
  against flex element 2 (rows vid2[0:n2] of x, radius r2); margin is the pair margin plus
  gap. Normal from object 1 to 2 into frame[0, 0:3]; returns 0 or 1. Work buffers sized by
  `flex_work_sizes`."""
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = _split_work(fbuf, ibuf, ccd_iterations)
  if type1 >= 0:
    _set_obj(objs, objt, 0, type1, size1, pos1, mat1, margin)
  else:
    _set_flex_obj(objs, objt, 0, 2, x, vid1, n1, r1, margin)
  _set_flex_obj(objs, objt, 1, 3, x, vid2, n2, r2, margin)
  return _penetration(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, ccd_tolerance,
                      ccd_iterations, margin, 0, dist, pos, frame)


@jit
def collide_mesh_flex_elem(size1, pos1, mat1, vert1, ext1, graph1, x, vid2, n2, r2, margin,
                           ccd_iterations, ccd_tolerance, dist, pos, frame, fbuf, ibuf):
  """mjc_ConvexElem for mesh geom 1 (vert1/ext1/graph1 as `collide_mesh_work`'s) against flex
  element 2 (rows vid2[0:n2] of x, radius r2): one GJK/EPA contact, normal from the mesh to
  the element, 0 or 1 returned. Work buffers with room for the mesh (`work_sizes`)."""
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = _split_work(fbuf, ibuf, ccd_iterations)
  _set_obj(objs, objt, 0, _MESH, size1, pos1, mat1, margin)
  row, _ = _set_mesh(objs, objt, 0, 2, 4, vert1, ext1, graph1)
  _set_flex_obj(objs, objt, 1, row, x, vid2, n2, r2, margin)
  return _penetration(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, ccd_tolerance,
                      ccd_iterations, margin, 0, dist, pos, frame)


@jit
def mesh_arrays(m, g):
  """(float32 vertices, mesh_extrema row (the hill climb's 27 seeds), mesh_graph block) of
  geom g's mesh; empty blocks for a primitive geom or a mesh without a hull graph."""
  mid = m.geom_dataid[g]
  if (m.geom_type[g] != _MESH and m.geom_type[g] != _SDF) or mid < 0:
    return m.mesh_vert[0:0], m.mesh_graph[0:0], m.mesh_graph[0:0]
  vert = m.mesh_vert[m.mesh_vertadr[mid]:m.mesh_vertadr[mid] + m.mesh_vertnum[mid]]
  adr = m.mesh_graphadr[mid]
  if adr < 0:
    return vert, m.mesh_graph[0:0], m.mesh_graph[0:0]
  nh, nf = m.mesh_graph[adr], m.mesh_graph[adr + 1]
  graph = m.mesh_graph[adr:adr + 2 + 3 * nh + 6 * nf]
  return vert, m.mesh_extrema[mid], graph


@jit
def mesh_polys(m, g):
  """Geom g's mesh polygons (MuJoCo's mesh_poly* of its mesh) as the tuple plane_mesh and
  mesh multicontact take: (vertex address of each polygon into the third entry, its vertex
  count, every polygon's vertices (mesh vertex ids), normals (mesh frame), and per mesh vertex
  the address into the last entry and count of the polygons (ids within the mesh) holding
  it, the polygon map); empty blocks for a primitive geom."""
  mid = m.geom_dataid[g]
  if (m.geom_type[g] != _MESH and m.geom_type[g] != _SDF) or mid < 0:
    return (m.mesh_polyvertadr[0:0], m.mesh_polyvertnum[0:0], m.mesh_polyvert,
            m.mesh_polynormal[0:0], m.mesh_polymapadr[0:0], m.mesh_polymapnum[0:0],
            m.mesh_polymap)
  a, n = m.mesh_polyadr[mid], m.mesh_polynum[mid]
  va, vn = m.mesh_vertadr[mid], m.mesh_vertnum[mid]
  return (m.mesh_polyvertadr[a:a + n], m.mesh_polyvertnum[a:a + n], m.mesh_polyvert,
          m.mesh_polynormal[a:a + n], m.mesh_polymapadr[va:va + vn],
          m.mesh_polymapnum[va:va + vn], m.mesh_polymap)


# --------------------------------------- plane-convex -------------------------------------------

@jit
def _ccd_support(typ, size, pos, mat, d0, d1, d2):
  """Support point of libccd's support function (mjccd_support) without margin; ellipsoid."""
  l0 = mat[0] * d0 + mat[3] * d1 + mat[6] * d2
  l1 = mat[1] * d0 + mat[4] * d1 + mat[7] * d2
  l2 = mat[2] * d0 + mat[5] * d1 + mat[8] * d2
  # ellipsoid: scale, renormalize, scale
  q0, q1, q2, _ = _normalize(l0 * size[0], l1 * size[1], l2 * size[2])
  q0 *= size[0]
  q1 *= size[1]
  q2 *= size[2]
  r0 = mat[0] * q0 + mat[1] * q1 + mat[2] * q2
  r1 = mat[3] * q0 + mat[4] * q1 + mat[5] * q2
  r2 = mat[6] * q0 + mat[7] * q1 + mat[8] * q2
  return r0 + pos[0], r1 + pos[1], r2 + pos[2]


@jit
def plane_convex(size1, pos1, mat1, type2, size2, pos2, mat2, margin, dist, pos, frame):
  """MuJoCo's mjc_PlaneConvex for a primitive (ellipsoid) geom: at most one contact."""
  n0, n1, n2 = mat1[2], mat1[5], mat1[8]
  s0, s1, s2 = _ccd_support(type2, size2, pos2, mat2, -n0, -n1, -n2)
  d = _dot(n0, n1, n2, s0 - pos1[0], s1 - pos1[1], s2 - pos1[2])
  if d > margin:
    return 0
  dist[0] = d
  h = -0.5 * d
  pos[0, 0], pos[0, 1], pos[0, 2] = s0 + n0 * h, s1 + n1 * h, s2 + n2 * h
  frame[0, 0], frame[0, 1], frame[0, 2] = n0, n1, n2
  frame[0, 3] = frame[0, 4] = frame[0, 5] = 0.0
  return 1


# --------------------------------------------- meshes -------------------------------------------

@jit
def _plane_mesh_contact(v0, v1, v2, pos1, n0, n1, n2, pos2, mat2, i, dist, pos, frame):
  """Plane-mesh contact i at the mesh's local vertex v; returns its distance."""
  p0 = mat2[0] * v0 + mat2[1] * v1 + mat2[2] * v2 + pos2[0]
  p1 = mat2[3] * v0 + mat2[4] * v1 + mat2[5] * v2 + pos2[1]
  p2 = mat2[6] * v0 + mat2[7] * v1 + mat2[8] * v2 + pos2[2]
  d = _dot(n0, n1, n2, p0 - pos1[0], p1 - pos1[1], p2 - pos1[2])
  dist[i] = d
  pos[i, 0], pos[i, 1], pos[i, 2] = p0 - 0.5 * d * n0, p1 - 0.5 * d * n1, p2 - 0.5 * d * n2
  frame[i, 0], frame[i, 1], frame[i, 2] = n0, n1, n2
  frame[i, 3] = frame[i, 4] = frame[i, 5] = 0.0
  return d


@jit
def _deepest_vertex(vert, ext, graph, l0, l1, l2):
  """Mesh vertex farthest along local direction l, as MuJoCo 4.0.1's support functions find
  it: every vertex for a mesh without a hull or with under _HILLCLIMB_MIN vertices (first on
  ties), else a hill climb over the hull graph (mjc_hillclimbSupport, no previous vertex)
  from the seed `ext` (the mesh's mesh_extrema row) holds for l's cell in the 3x3x3 grid (each
  component -1, 0 or 1 beyond -0.4, 0.4), moving to a neighbour only if strictly farther."""
  nh = graph[0] if graph.shape[0] > 0 else 0
  if nh == 0 or vert.shape[0] < _HILLCLIMB_MIN:
    best = -_MAX_LIMIT
    ibest = -1
    for i in range(vert.shape[0]):
      v = l0 * vert[i, 0] + l1 * vert[i, 1] + l2 * vert[i, 2]
      if v > best:
        best, ibest = v, i
    return ibest
  edgeadr, globalid, localid = 2, 2 + nh, 2 + 2 * nh
  cx = (1 if l0 > 0.4 else 0) - (1 if l0 < -0.4 else 0) + 1
  cy = (1 if l1 > 0.4 else 0) - (1 if l1 < -0.4 else 0) + 1
  cz = (1 if l2 > 0.4 else 0) - (1 if l2 < -0.4 else 0) + 1
  imax = ext[cx * 9 + cy * 3 + cz]
  g = graph[globalid + imax]
  best = l0 * vert[g, 0] + l1 * vert[g, 1] + l2 * vert[g, 2]
  prev = -1
  while imax != prev:
    prev = imax
    i = graph[edgeadr + imax]
    while graph[localid + i] >= 0:
      sub = graph[localid + i]
      g = graph[globalid + sub]
      v = l0 * vert[g, 0] + l1 * vert[g, 1] + l2 * vert[g, 2]
      if v > best:
        best, imax = v, sub
      i += 1
  return graph[globalid + imax]


@_inline
def _area4_local(vert, path, a, b, c, d):
  """Area of the quadrilateral of polygon vertices path[a], path[b], path[c], path[d] in the
  mesh frame: |(a - c) x (b - d)| / 2, in double as MuJoCo (np.float64: under numba, float()
  of a float32 stays float32, and the float32 differences picked other quadrilaterals of
  near-tied areas)."""
  va, vb, vc, vd = path[a], path[b], path[c], path[d]
  f = np.float64
  x0, x1, x2 = _cross(f(vert[va, 0]) - f(vert[vc, 0]), f(vert[va, 1]) - f(vert[vc, 1]),
                      f(vert[va, 2]) - f(vert[vc, 2]), f(vert[vb, 0]) - f(vert[vd, 0]),
                      f(vert[vb, 1]) - f(vert[vd, 1]), f(vert[vb, 2]) - f(vert[vd, 2]))
  return 0.5 * math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


@jit
def _hull4(vert, path, a):
  """At most four vertices (offsets into the polygon's vertex cycle `path`) spanning a large
  quadrilateral, the first being `a` (MuJoCo 4.0's hull4f: grow d, then c, then b while the
  area grows); returns (count, offsets)."""
  npath = path.shape[0]
  b = (a + 1) % npath
  c = (a + 2) % npath
  d = (a + 3) % npath
  if npath <= 4:
    return npath, a, b, c, d
  m = _area4_local(vert, path, a, b, c, d)
  r1, r2, r3 = b, c, d
  while True:
    dn = (d + 1) % npath
    mn = _area4_local(vert, path, a, b, c, dn)
    if mn <= m:
      break
    d, m = dn, mn
    r1, r2, r3 = b, c, d
    while True:
      cn = (c + 1) % npath
      mn = _area4_local(vert, path, a, b, cn, d)
      if mn <= m:
        break
      c, m = cn, mn
      r1, r2, r3 = b, c, d
    while True:
      bn = (b + 1) % npath
      mn = _area4_local(vert, path, a, bn, c, d)
      if mn <= m:
        break
      b, m = bn, mn
      r1, r2, r3 = b, c, d
  return 4, a, r1, r2, r3


@jit
def plane_mesh(pos1, mat1, pos2, mat2, vert, ext, graph, poly, margin, dist, pos, frame):
  """Plane-mesh contacts as MuJoCo 4.0.1's mjc_PlaneConvex gives them (read from its binary;
  up to 4): the deepest vertex (`_deepest_vertex`), then of the mesh polygons at that vertex
  the one whose normal points most into the plane, up to three more of its vertices spanning a
  large quadrilateral with it (`_hull4`), skipping those beyond the margin and those above the
  mesh's center along the plane normal. One contact if the deepest vertex is on no polygon
  (hull vertices the compiler's polygons leave out) or the mesh has no hull. `vert` is the
  mesh's float32 (n, 3) block, `ext` its mesh_extrema row, `graph` its mesh_graph block and
  `poly` its polygons (`mesh_polys`)."""
  n0, n1, n2 = mat1[2], mat1[5], mat1[8]
  # the plane normal in the mesh frame, and the direction into the plane
  m0 = mat2[0] * n0 + mat2[3] * n1 + mat2[6] * n2
  m1 = mat2[1] * n0 + mat2[4] * n1 + mat2[7] * n2
  m2 = mat2[2] * n0 + mat2[5] * n1 + mat2[8] * n2
  ibest = _deepest_vertex(vert, ext, graph, -m0, -m1, -m2)
  if ibest < 0:
    return 0
  d = _plane_mesh_contact(float(vert[ibest, 0]), float(vert[ibest, 1]), float(vert[ibest, 2]),
                          pos1, n0, n1, n2, pos2, mat2, 0, dist, pos, frame)
  if d > margin:
    return 0
  if graph.shape[0] == 0:
    return 1
  # the polygon at the deepest vertex facing the plane most
  pvadr, pvnum, pvert, pnrm, pmadr, pmnum, pmap = poly
  fbest = -1
  sbest = 1.0
  for k in range(pmnum[ibest]):
    f = pmap[pmadr[ibest] + k]
    score = _dot(pnrm[f, 0], pnrm[f, 1], pnrm[f, 2], m0, m1, m2)
    if score < sbest:
      sbest, fbest = score, f
  if fbest < 0:
    return 1
  path = pvert[pvadr[fbest]:pvadr[fbest] + pvnum[fbest]]
  a = 0
  for k in range(path.shape[0]):
    if path[k] == ibest:
      a = k
      break
  nq, q0, q1, q2, q3 = _hull4(vert, path, a)
  count = 1
  for k in range(1, nq):
    v = path[(q1, q2, q3)[k - 1]]
    v0, v1, v2 = float(vert[v, 0]), float(vert[v, 1]), float(vert[v, 2])
    p0 = mat2[0] * v0 + mat2[1] * v1 + mat2[2] * v2 + pos2[0]
    p1 = mat2[3] * v0 + mat2[4] * v1 + mat2[5] * v2 + pos2[1]
    p2 = mat2[6] * v0 + mat2[7] * v1 + mat2[8] * v2 + pos2[2]
    if _dot(n0, n1, n2, p0 - pos2[0], p1 - pos2[1], p2 - pos2[2]) > 0:
      continue   # above the mesh's center
    d = _plane_mesh_contact(v0, v1, v2, pos1, n0, n1, n2, pos2, mat2, count, dist, pos, frame)
    if d <= margin:
      count += 1
  return count


# ------------------------------------ multicontact ----------------------------------------------
# MuJoCo 4.0's mjc_multicontact, read from its compiled library (its published source differs
# and has no cylinder or capsule branch) and checked against it bit for bit through ctypes
# (tests/test_collision_convex.py test_multicontact_as_mujoco_bit_for_bit; box, mesh, cylinder,
# capsule, margins 0 and > 0). The final EPA face's vertices on each geom (or, for a shallow
# contact within the margin, the GJK simplex's) give a feature (vertex, edge or face: a box's
# corners, a mesh's vertices, a cylinder's caps; a capsule is always a vertex) and its
# candidate faces (box faces, the mesh polygons at those vertices, a cylinder's cap as the
# 16-gon of 4.0's cos/sin tables). Of the faces turned towards the other geom (beyond
# _EDGE_TOL of the witness direction) the most nearly opposite pair within _FACE_TOL is
# clipped (`_clip_polygon`, the crossing from the two half-space values); else the first edge
# parallel to a face within _EDGE_TOL (a box's or mesh's edges at the feature, a cylinder's
# axis, a capsule's segment through its witness point), geom 1's or geom 2's first as 4.0
# orders them, then the other's. A cylinder's edge is then the whole side line facing that
# face (`_cylinder_side`, as MuJoCo 4.0.1). Each clipped vertex gives a contact:
# its projection on the clipping face, the other witness along the other face's normal, both
# moved out by each geom's half margin (none for a capsule). Up to four contacts (two for a
# capsule) replace the EPA contact.
#
# Mesh polygons are the compiler's (mesh_poly*, engine/mjcf/_mesh.make_polygons: coplanar hull
# triangles merged, numbered, mapped to their vertices and given normals as MuJoCo 4.0's
# compiler does, equal to its fields on every test model), passed as `mesh_polys`' tuple.
# Polygons of more than _MC_FACEMAX vertices are not clipped (plane_mesh takes any).


@jit
def _vertex_polys(poly, v, isc, out):
  """Polygons (ids within the mesh, ascending) holding mesh vertex v into isc[out..], at most
  _MC_FACEMAX; returns their count."""
  pmadr, pmnum, pmap = poly[4], poly[5], poly[6]
  n = min(pmnum[v], _MC_FACEMAX)
  for k in range(n):
    isc[out + k] = pmap[pmadr[v] + k]
  return n


@jit
def _poly_normal(poly, p, mat):
  """World normal of polygon p (mesh_polynormal turned by the geom's frame)."""
  x0, x1, x2 = poly[3][p, 0], poly[3][p, 1], poly[3][p, 2]
  return (mat[0] * x0 + mat[1] * x1 + mat[2] * x2, mat[3] * x0 + mat[4] * x1 + mat[5] * x2,
          mat[6] * x0 + mat[7] * x1 + mat[8] * x2)


@jit
def _mesh_normals(objs, k, poly, dim, v1, v2, v3, isc, idx, nrow, mc):
  """MuJoCo's meshNormals: candidate polygons (ids at isc[idx..]) and world normals (mc rows
  nrow..) of the feature of dim vertices v1..v3 of mesh k; returns their count."""
  mat = objs[k, _MAT:_MAT + 9]
  t1 = _PS_TMP
  t2 = _PS_TMP + _MC_FACEMAX
  n = 0
  if dim == 1:
    n = _vertex_polys(poly, v1, isc, idx)
  else:
    n1 = _vertex_polys(poly, v1, isc, t1)
    n2 = _vertex_polys(poly, v2, isc, t2)
    for i in range(n1):           # intersect: up to two common polygons
      for j in range(n2):
        if isc[t1 + i] == isc[t2 + j] and n < 2:
          isc[idx + n] = isc[t1 + i]
          n += 1
    if dim == 3 and n > 0:
      n3 = _vertex_polys(poly, v3, isc, t1)
      m = 0
      for i in range(n):
        for j in range(n3):
          if isc[idx + i] == isc[t1 + j] and m < 1:
            isc[idx + m] = isc[idx + i]
            m += 1
      n = m
  for i in range(n):
    c0, c1, c2 = _poly_normal(poly, isc[idx + i], mat)
    mc[nrow + i, 0], mc[nrow + i, 1], mc[nrow + i, 2] = c0, c1, c2
  return n


@jit
def _mesh_point(objs, k, vert, v, r):
  """Coordinate r of mesh vertex v of object k in the world."""
  return _global(objs, k, float(vert[v, 0]), float(vert[v, 1]), float(vert[v, 2]), r)


@jit
def _feature_point(objs, objt, k, vert, v, r):
  """Coordinate r of vertex v (box corner or mesh vertex) of object k in the world."""
  if objt[k, 0] == _BOX:
    return _box_corner(objs, k, v, r)
  return _mesh_point(objs, k, vert, v, r)


@jit
def _segment_edge(objs, objt, k, x0, x1, x2, mc):
  """MuJoCo 4.0.1's geomEdgeNormals for a capsule or cylinder k (read from its binary; there is
  no published source): the one edge of the shape, its direction into mc row _MC_EDGE. A
  capsule's is the segment through its witness point x parallel to the axis, between the
  axis' ends: its start into _MC_START, its end into _MC_END. A cylinder's is its axis, with
  no end points: its side line is placed once the face is known (`_cylinder_side`)."""
  a0, a1, a2 = objs[k, _MAT + 2], objs[k, _MAT + 5], objs[k, _MAT + 8]
  mc[_MC_EDGE, 0], mc[_MC_EDGE, 1], mc[_MC_EDGE, 2] = a0, a1, a2
  if objt[k, 0] == _CAPSULE:
    h = objs[k, _SIZE + 1]
    s = ((x0 - objs[k, _POS]) * a0 + (x1 - objs[k, _POS + 1]) * a1) + (x2 - objs[k, _POS + 2]) * a2
    c1 = (-s) - h
    c2 = h - s
    mc[_MC_START, 0], mc[_MC_START, 1], mc[_MC_START, 2] = c1 * a0 + x0, c1 * a1 + x1, c1 * a2 + x2
    mc[_MC_END, 0], mc[_MC_END, 1], mc[_MC_END, 2] = c2 * a0 + x0, c2 * a1 + x1, c2 * a2 + x2
  return 1


@jit
def _cylinder_side(objs, k, n0, n1, n2, mc):
  """The side line of cylinder k that lies on a face of normal n (the other geom's, pointing
  at the cylinder), as MuJoCo 4.0.1's mjc_multicontact places it (read from its binary):
  r = n - (n.a) a, the part of n across the axis a; the line
  through pos - size[0] r/|r|, from -size[1] to +size[1] along a, start into _MC_START and end
  into _MC_END. False (the single contact stands) where |r| < mjMINVAL."""
  a0, a1, a2 = objs[k, _MAT + 2], objs[k, _MAT + 5], objs[k, _MAT + 8]
  t = (n0 * a0 + n1 * a1) + n2 * a2
  r0, r1, r2 = n0 - t * a0, n1 - t * a1, n2 - t * a2
  norm = math.sqrt((r0 * r0 + r1 * r1) + r2 * r2)
  if _MINVAL > norm:
    return False
  s = (-objs[k, _SIZE]) / norm
  c0, c1, c2 = s * r0 + objs[k, _POS], s * r1 + objs[k, _POS + 1], s * r2 + objs[k, _POS + 2]
  h = objs[k, _SIZE + 1]
  mc[_MC_START, 0], mc[_MC_START, 1], mc[_MC_START, 2] = c0 - h * a0, c1 - h * a1, c2 - h * a2
  mc[_MC_END, 0], mc[_MC_END, 1], mc[_MC_END, 2] = h * a0 + c0, h * a1 + c1, h * a2 + c2
  return True


@jit
def _edge_normals(objs, objt, k, vert, poly, dim, v1, v2, nrow, mc):
  """MuJoCo's boxEdgeNormals / meshEdgeNormals: directions (mc rows nrow..) and end points
  (rows _MC_END..) of the candidate edges from vertex v1 of object k (dim 2: the edge v1 v2),
  that vertex into row _MC_START; returns their count."""
  p = (_feature_point(objs, objt, k, vert, v1, 0), _feature_point(objs, objt, k, vert, v1, 1),
       _feature_point(objs, objt, k, vert, v1, 2))
  mc[_MC_START, 0], mc[_MC_START, 1], mc[_MC_START, 2] = p
  n = 0
  for e in range(_MC_FACEMAX):
    w = -1
    if dim == 2:
      if e > 0:
        break
      w = v2
    elif objt[k, 0] == _BOX:
      if e > 2:
        break
      w = v1 ^ (1 << e)
    else:
      pvadr, pvnum, pvert, pmadr, pmnum, pmap = poly[0], poly[1], poly[2], poly[4], poly[5], poly[6]
      if e >= pmnum[v1]:
        break
      f = pmap[pmadr[v1] + e]
      adr, npath = pvadr[f], pvnum[f]
      for j in range(npath):
        if pvert[adr + j] == v1:   # the polygon's edge into v1
          w = pvert[adr + (j - 1 if j > 0 else npath - 1)]
          break
      if w < 0:
        return 0
    for r in range(3):
      mc[_MC_END + n, r] = _feature_point(objs, objt, k, vert, w, r)
    d0, d1, d2, _ = _normalize(mc[_MC_END + n, 0] - p[0], mc[_MC_END + n, 1] - p[1],
                               mc[_MC_END + n, 2] - p[2])
    mc[nrow + n, 0], mc[nrow + n, 1], mc[nrow + n, 2] = d0, d1, d2
    n += 1
  return n


@jit
def _feature_normals(objs, objt, k, poly, dim, v1, v2, v3, d0, d1, d2, isc, idx, nrow, mc):
  """Candidate faces (ids at isc[idx..], world normals at mc rows nrow..) of a feature of
  object k; d: the direction for a box feature that is no face or edge. A cylinder's feature
  on one cap has that cap (MuJoCo 4.0's binary), a capsule's and a sphere's none."""
  typ = objt[k, 0]
  if typ == _CYLINDER:
    if dim != 1:
      return 0
    s = 1.0 if v1 == 0 else -1.0
    isc[idx] = v1
    for r in range(3):
      mc[nrow, r] = (objs[k, _MAT + 3 * r] * 0.0 + objs[k, _MAT + 3 * r + 1] * 0.0
                     ) + objs[k, _MAT + 3 * r + 2] * s
    return 1
  if typ != _BOX and typ != _MESH:
    return 0
  if typ == _BOX:
    nf, f0, f1, f2 = _box_faces(objs[k, _MAT:_MAT + 9], dim, v1, v2, v3, d0, d1, d2)
    fs = (f0, f1, f2)
    for i in range(nf):
      isc[idx + i] = fs[i]
      m0, m1, m2 = _face_normal(objs[k, _MAT:_MAT + 9], fs[i])
      mc[nrow + i, 0], mc[nrow + i, 1], mc[nrow + i, 2] = m0, m1, m2
    return nf
  return _mesh_normals(objs, k, poly, dim, v1, v2, v3, isc, idx, nrow, mc)


@jit
def _feature_face(objs, objt, k, vert, poly, face, row, mc):
  """Corners of face `face` (box face, polygon id or cylinder cap) of object k into mc rows
  row.. in MuJoCo's order (boxFace; meshFace: the polygon reversed; cylinderFace: the cap's
  16-gon from MuJoCo 4.0's tables, clockwise seen from outside on either cap); returns their
  count (none written when over _MC_FACEMAX)."""
  if objt[k, 0] == _CYLINDER:
    s = 1.0 if face == 0 else -1.0
    rad = objs[k, _SIZE]
    z = s * objs[k, _SIZE + 1]
    for i in range(16):
      x = rad * _COS16[i]
      y = s * (rad * (-_SIN16[i]))
      for r in range(3):
        mc[row + i, r] = _global(objs, k, x, y, z, r)
    return 16
  if objt[k, 0] == _BOX:
    nface = _box_face(mc, objs, k, face)
    if row != _MC_FACE:
      for i in range(nface):
        for r in range(3):
          mc[row + i, r] = mc[_MC_FACE + i, r]
    return nface
  adr, npath = poly[0][face], poly[1][face]
  if npath > _MC_FACEMAX:
    return npath
  for i in range(npath):
    v = poly[2][adr + npath - 1 - i]
    for r in range(3):
      mc[row + i, r] = _mesh_point(objs, k, vert, v, r)
  return npath


@_inline
def _simplex_id(objs, objt, k, graph, pvi, fvert, face, si, ns, j):
  """Vertex id (a mesh id for a mesh) of geom k at corner j of the EPA face `face`, or, with
  face < 0, of the GJK simplex's vertex j (its first where j >= ns)."""
  if face >= 0:
    i = pvi[fvert[face, j], k]
  else:
    i = si[j if j < ns else 0, k]
  if objt[k, 0] == _MESH and objs[k, _GADR] >= 0:   # hull-local id to mesh id
    i = graph[2 + graph[0] + i]
  return i


@jit
def _edge_on_face(objs, objt, vert1, poly1, vert2, poly2, xw, mc, dim1, id10, id11, dim2, id20,
                  id21, nn1, nn2, r0, r1, r2):
  """Multicontact's second case: (edge row, face row, 1 + the edge's geom) of the first edge of
  the lower-dimensional feature (geom 1 first) parallel to a face of the other geom, then
  (MuJoCo 4.0; 3.x stopped after one side) of the other geom's edges; (-1, -1, 0) when none
  (or a cylinder's side line does not face the face). The candidate face normals are in mc's
  normal rows, the edges go to its edge rows."""
  fi = fj = -1
  edge2 = dim2 != 3 and nn1 != 0 and (nn2 == 0 or dim2 < dim1)   # geom 2's first
  for attempt in range(2):
    if attempt == 0:
      if not edge2 and dim1 != 3 and nn2 != 0:
        ke = 0
      elif edge2 and dim2 != 3:
        ke = 1
      else:
        continue
    elif dim1 != 3 and edge2 and nn2 != 0:
      ke = 0
    elif dim2 != 3 and not edge2 and nn1 != 0:
      ke = 1
    else:
      break
    frow, nface = (_MC_NORM2, nn2) if ke == 0 else (_MC_NORM1, nn1)
    te = objt[ke, 0]
    if te == _CAPSULE or te == _CYLINDER:
      ne = _segment_edge(objs, objt, ke, xw[3 * ke], xw[3 * ke + 1], xw[3 * ke + 2], mc)
    elif te == _BOX or te == _MESH:
      ne = _edge_normals(objs, objt, ke, vert1 if ke == 0 else vert2,
                         poly1 if ke == 0 else poly2, dim1 if ke == 0 else dim2,
                         id10 if ke == 0 else id20, id11 if ke == 0 else id21, _MC_EDGE, mc)
    else:
      ne = 0
    sg = 1.0 if ke == 0 else -1.0
    for i in range(nface):        # the first face with an edge parallel to it
      if sg * _dot(mc[frow + i, 0], mc[frow + i, 1], mc[frow + i, 2], r0, r1, r2) <= _MINVAL:
        continue                  # a face turned away from the other geom
      for j in range(ne):
        if abs(_dot(mc[_MC_EDGE + j, 0], mc[_MC_EDGE + j, 1], mc[_MC_EDGE + j, 2],
                    mc[frow + i, 0], mc[frow + i, 1], mc[frow + i, 2])) < _EDGE_TOL:
          fi, fj = j, i           # edge j, face i
          break
      if fi >= 0:
        break
    if fi >= 0:
      # a cylinder's side: the line facing the face found (MuJoCo 4.0.1)
      if te == _CYLINDER and not _cylinder_side(objs, ke, mc[frow + fj, 0], mc[frow + fj, 1],
                                                mc[frow + fj, 2], mc):
        return -1, -1, 0
      return fi, fj, 1 + ke
  return -1, -1, 0


@jit
def _multicontact(objs, objt, vert1, graph1, poly1, vert2, graph2, poly2, xw, si, cnt, pt,
                  isc, margin, dist_out, pos_out, frame_out):
  """MuJoCo 4.0's multicontact (read from its binary, checked against it) of two geoms among
  box, mesh, cylinder and capsule, from the features of the EPA face in cnt[4] or, for a
  shallow contact within the margin, of the GJK simplex (cnt[5] vertices in si, sx): faces
  facing each other are clipped by each other, an edge (a capsule's or a cylinder's side
  included) lying on a face by the face. Returns the contact count (0: the single contact
  stands)."""
  pvi, fvert, mc = pt[1], pt[4], pt[11]
  if ((objt[0, 0] == _MESH and graph1.shape[0] == 0)
          or (objt[1, 0] == _MESH and graph2.shape[0] == 0)):
    return 0
  face = cnt[4]
  ns = cnt[5]
  if face < 0 and ns < 1:
    return 0
  # feature vertices (mesh ids) of each geom, as MuJoCo's simplexDim orders them
  dim1, id10, id11, id12 = _feature_dim(
      _simplex_id(objs, objt, 0, graph1, pvi, fvert, face, si, ns, 0),
      _simplex_id(objs, objt, 0, graph1, pvi, fvert, face, si, ns, 1),
      _simplex_id(objs, objt, 0, graph1, pvi, fvert, face, si, ns, 2))
  dim2, id20, id21, id22 = _feature_dim(
      _simplex_id(objs, objt, 1, graph2, pvi, fvert, face, si, ns, 0),
      _simplex_id(objs, objt, 1, graph2, pvi, fvert, face, si, ns, 1),
      _simplex_id(objs, objt, 1, graph2, pvi, fvert, face, si, ns, 2))
  r0, r1, r2 = xw[3] - xw[0], xw[4] - xw[1], xw[5] - xw[2]
  nn1 = _feature_normals(objs, objt, 0, poly1, dim1, id10, id11, id12,
                         -r0, -r1, -r2, isc, _PS_IDX1, _MC_NORM1, mc)
  nn2 = _feature_normals(objs, objt, 1, poly2, dim2, id20, id21, id22,
                         r0, r1, r2, isc, _PS_IDX2, _MC_NORM2, mc)

  # two faces facing each other: of the faces turned towards the other geom, the most
  # nearly opposite pair
  fi = fj = -1
  dir_tol = _EDGE_TOL * math.sqrt(_dot(r0, r1, r2, r0, r1, r2))
  best = -_FACE_TOL
  for i in range(nn1):
    if _dot(mc[_MC_NORM1 + i, 0], mc[_MC_NORM1 + i, 1], mc[_MC_NORM1 + i, 2],
            r0, r1, r2) >= -dir_tol:
      continue
    for j in range(nn2):
      if _dot(mc[_MC_NORM2 + j, 0], mc[_MC_NORM2 + j, 1], mc[_MC_NORM2 + j, 2],
              r0, r1, r2) <= dir_tol:
        continue
      dd = _dot(mc[_MC_NORM1 + i, 0], mc[_MC_NORM1 + i, 1], mc[_MC_NORM1 + i, 2],
                mc[_MC_NORM2 + j, 0], mc[_MC_NORM2 + j, 1], mc[_MC_NORM2 + j, 2])
      if dd < best:
        best = dd
        fi, fj = i, j
  edge = 0   # 1: an edge of geom 1 on a face of geom 2; 2: the reverse
  if fi < 0:
    fi, fj, edge = _edge_on_face(objs, objt, vert1, poly1, vert2, poly2, xw, mc, dim1, id10, id11,
                                 dim2, id20, id21, nn1, nn2, r0, r1, r2)
    if fi < 0:
      return 0

  if edge == 0:
    kc, kp, fc, fp = 0, 1, isc[_PS_IDX1 + fi], isc[_PS_IDX2 + fj]
    nrow_c, nrow_p = _MC_NORM1 + fi, _MC_NORM2 + fj
  elif edge == 1:
    kc, kp, fc, fp = 1, 0, isc[_PS_IDX2 + fj], -1
    nrow_c, nrow_p = _MC_NORM2 + fj, -1
  else:
    kc, kp, fc, fp = 0, 1, isc[_PS_IDX1 + fj], -1
    nrow_c, nrow_p = _MC_NORM1 + fj, -1
  n0, n1, n2 = mc[nrow_c, 0], mc[nrow_c, 1], mc[nrow_c, 2]
  if edge == 0:
    w0, w1, w2 = mc[nrow_p, 0], mc[nrow_p, 1], mc[nrow_p, 2]
  else:
    w0, w1, w2 = -n0, -n1, -n2

  # the clipped polygon (a face, or the edge) into the polygon rows, then the clipping face
  if edge == 0:
    npoly = _feature_face(objs, objt, kp, vert1 if kp == 0 else vert2,
                          poly1 if kp == 0 else poly2, fp, _MC_POLY, mc)
  else:
    for r in range(3):
      mc[_MC_POLY, r] = mc[_MC_START, r]
      mc[_MC_POLY + 1, r] = mc[_MC_END + fi, r]
    npoly = 2
  nclip = _feature_face(objs, objt, kc, vert1 if kc == 0 else vert2,
                        poly1 if kc == 0 else poly2, fc, _MC_FACE, mc)
  if npoly < 2 or nclip < 3 or nclip > _MC_FACEMAX or npoly > _MC_FACEMAX:
    return 0
  # each geom's half margin, none of a capsule's (MuJoCo 4.0)
  hm1 = 0.0 if objt[0, 0] == _CAPSULE else margin * 0.5
  hm2 = 0.0 if objt[1, 0] == _CAPSULE else margin * 0.5
  q0, q1, q2 = mc[_MC_FACE, 0], mc[_MC_FACE, 1], mc[_MC_FACE, 2]
  poly, npoly, first, second, third, fourth = _clip_polygon(
      mc, nclip, npoly, n0, n1, n2, q0, q1, q2, n0, n1, n2, hm1 + hm2)
  # MuJoCo 4.0's polygonClip output: each vertex projected on the clipping face (a), then
  # along `dir` (the other face's normal, or back along the clipping face's) to depth dd (b);
  # the normal, and the margins moved out of the points as its inflate does
  if edge == 0:
    e0, e1, e2 = w0, w1, w2
    g0, g1, g2 = -w0, -w1, -w2
  else:
    e0, e1, e2 = -n0, -n1, -n2
    g0, g1, g2 = (-n0, -n1, -n2) if edge == 1 else (n0, n1, n2)
  for k in range(npoly):
    row = poly + (first, second, third, fourth)[k] if k < 4 else poly + k
    v0, v1, v2 = mc[row, 0], mc[row, 1], mc[row, 2]
    d = _dot(v0 - q0, v1 - q1, v2 - q2, n0, n1, n2)
    a0, a1, a2 = v0 - d * n0, v1 - d * n1, v2 - d * n2
    dd = _dot(a0 - v0, a1 - v1, a2 - v2, e0, e1, e2)
    b0, b1, b2 = a0 - dd * e0, a1 - dd * e1, a2 - dd * e2
    if edge == 1:   # (the clipping face is geom 2's: its points are the second witness)
      a0, a1, a2, b0, b1, b2 = b0, b1, b2, a0, a1, a2
    if hm1 != 0 or hm2 != 0:
      if hm1 != 0:
        a0, a1, a2 = hm1 * g0 + a0, hm1 * g1 + a1, hm1 * g2 + a2
      if hm2 != 0:
        b0, b1, b2 = (-hm2) * g0 + b0, (-hm2) * g1 + b1, (-hm2) * g2 + b2
      dd = dd - (hm1 + hm2)
    dist_out[k] = margin + dd
    pos_out[k, 0] = (a0 + b0) * 0.5
    pos_out[k, 1] = (a1 + b1) * 0.5
    pos_out[k, 2] = (a2 + b2) * 0.5
    frame_out[k, 0], frame_out[k, 1], frame_out[k, 2], _ = _normalize(a0 - b0, a1 - b1, a2 - b2)
    frame_out[k, 3] = frame_out[k, 4] = frame_out[k, 5] = 0.0
  return npoly


@jit
def _objt_offset(n):
  """Offset of the object ints (`objt`, read flat) in the int work buffer."""
  if n < 1:
    n = 1
  nv = 5 + n
  nf = 6 * n
  return 24 + nv * 2 + nf * 3 + nf * 3 + nf * 4 + nf * 3


@jit
def collide_mesh_work(type1, size1, pos1, mat1, vert1, ext1, graph1, poly1, type2, size2, pos2,
                      mat2, vert2, ext2, graph2, poly2, margin, ccd_iterations, ccd_tolerance,
                      flags, dist, pos, frame, fbuf, ibuf):
  """MuJoCo's mjc_Convex for a pair with a mesh (type1 <= type2, so geom 2 is a mesh):
  one contact from GJK/EPA over the hull vertices. vert/graph: the mesh's float32 vertices
  and its mesh_graph block (empty for a primitive geom, or a mesh without a hull graph:
  then every vertex is searched).
  Box-, cylinder- and mesh-mesh pairs get up to four contacts, capsule-mesh two, where flat
  features meet (MuJoCo 4.0's multicontact, `_multicontact`), unless MULTICCD or NATIVECCD is
  disabled in flags."""
  return collide_mesh_views(type1, size1, pos1, mat1, vert1, ext1, graph1, poly1, type2, size2,
                            pos2, mat2, vert2, ext2, graph2, poly2, margin, ccd_iterations,
                            ccd_tolerance, flags, dist, pos, frame,
                            _split_work(fbuf, ibuf, ccd_iterations, False), ibuf)


@jit
def collide_mesh_views(type1, size1, pos1, mat1, vert1, ext1, graph1, poly1, type2, size2, pos2,
                       mat2, vert2, ext2, graph2, poly2, margin, ccd_iterations, ccd_tolerance,
                       flags, dist, pos, frame, w, ibuf):
  """`collide_mesh_work` on `_split_work`'s views `w` of the work buffers (ibuf the int buffer
  they view)."""
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = w
  # the buffers still hold these meshes when the last call that used them was this one with
  # the same meshes (`_split_work` forgets them for any other, and so does the primitives'
  # multicontact, whose scratch is there): copying a 642-vertex hull and its graph twice cost
  # more than GJK on it
  key1 = vert1.ctypes.data if type1 == _MESH else 0
  key2 = vert2.ctypes.data
  copy = cnt[6] != key1 or cnt[7] != key2
  _set_obj(objs, objt, 0, type1, size1, pos1, mat1, margin)
  _set_obj(objs, objt, 1, type2, size2, pos2, mat2, margin)
  row, iadr = 2, 4
  if type1 == _MESH:
    row, iadr = _set_mesh(objs, objt, 0, row, iadr, vert1, ext1, graph1, copy)
  row, iadr = _set_mesh(objs, objt, 1, row, iadr, vert2, ext2, graph2, copy)
  cnt[6], cnt[7] = key1, key2
  n = _penetration(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt, ccd_tolerance,
                   ccd_iterations, margin, 0, dist, pos, frame)
  o = _objt_offset(ccd_iterations) + iadr
  if (n == 1 and not flags & (_DSBL_MULTICCD | _DSBL_NATIVECCD) and type2 == _MESH
      and ibuf.shape[0] - o >= _PS_SIZE):
    isc = ibuf[o:o + _PS_SIZE]
    nmulti = 0
    if type1 == _BOX or type1 == _MESH or type1 == _CAPSULE or type1 == _CYLINDER:
      nmulti = _multicontact(objs, objt, vert1, graph1, poly1, vert2, graph2, poly2, xw, si,
                             cnt, pt, isc, margin, dist, pos, frame)
    if nmulti > 0:
      n = nmulti
  return n
