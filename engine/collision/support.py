"""The support functions of the convex geoms, as MuJoCo's engine_collision_gjk.c and
engine_collision_convex.c: sphere, capsule, ellipsoid, cylinder, box, mesh hulls (MuJoCo's hill
climbing over the hull graph, or every vertex for small meshes), height-field prisms and flex
elements, each an object row of collision/work.py's layout; the support point of the Minkowski
difference of two objects (`support_pair`); and the small vector helpers of the collision code
(dot3, cross3, normalize3 as mju_normalize3).
"""
import math

import numpy as np

from numjoco.engine._jit import inline as _inline
from numjoco.engine._jit import jit
from numjoco.engine.collision.work import (
    FLEX as _FLEX, GADR as _GADR, GHINT as _GHINT, MARGIN as _MARGIN, MAT as _MAT,
    MODE_GEOM as _MODE_GEOM, MODE_LINE as _MODE_LINE, MODE_POINT as _MODE_POINT,
    NEXTREMA as _NEXTREMA, POS as _POS, SIZE as _SIZE, VADR as _VADR, VNUM as _VNUM)
from numjoco.engine.types import MINVAL as _MINVAL
from numjoco.engine.types import mjtGeom

_SPHERE, _CAPSULE, _ELLIPSOID = int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE), int(mjtGeom.ELLIPSOID)
_CYLINDER, _BOX, _MESH = int(mjtGeom.CYLINDER), int(mjtGeom.BOX), int(mjtGeom.MESH)
_HFIELD = int(mjtGeom.HFIELD)   # a height-field prism: six vertices searched like a small mesh
_MINVAL2 = _MINVAL * _MINVAL
_MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
_u = np.uintp   # an index known to be >= 0


# ----------------------------------- small vector helpers --------------------------------------

@_inline
def dot3(a0, a1, a2, b0, b1, b2):
  """3D dot product."""
  return a0 * b0 + a1 * b1 + a2 * b2


@_inline
def cross3(a0, a1, a2, b0, b1, b2):
  """3D cross product a x b."""
  return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@_inline
def det3(a0, a1, a2, b0, b1, b2, c0, c1, c2):
  """Determinant of the 3x3 matrix with columns a, b, c: a . (b x c)."""
  return (a0 * (b1 * c2 - b2 * c1)
          + a1 * (b2 * c0 - b0 * c2)
          + a2 * (b0 * c1 - b1 * c0))


@_inline
def normalize3(v0, v1, v2):
  """MuJoCo's mju_normalize3: unit vector and the norm; (1,0,0) below mjMINVAL."""
  norm = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
  if norm < _MINVAL:
    return 1.0, 0.0, 0.0, norm
  inv = 1.0 / norm
  return v0 * inv, v1 * inv, v2 * inv, norm


@_inline
def put3(a, row, col, x, y, z):
  """a[row, col:col + 3] = (x, y, z)."""
  a[row, col] = x
  a[row, col + 1] = y
  a[row, col + 2] = z


@_inline
def put_geom(objs, r, size, pos, mat, margin):
  """Row r of an object array (work.py's columns SIZE, POS, MAT, MARGIN, which libccd's rows
  share) := a geom's size, pose and margin."""
  for j in range(3):
    objs[r, _SIZE + j] = size[j]
    objs[r, _POS + j] = pos[j]
  for j in range(9):
    objs[r, _MAT + j] = mat[j]
  objs[r, _MARGIN] = margin


@_inline
def _vert_dot(objs, base, i, l0, l1, l2):
  """Direction (l0, l1, l2) dotted with vertex i of the vertex rows from `base` (six a row).
  Unsigned indices (i, base >= 0): a division by 6 without the sign fix-up and no wraparound
  test on the loads (shared/DESIGN.md)."""
  u = _u(i)
  r = _u(base) + u // _u(6)
  c = (u % _u(6)) * _u(3)
  return l0 * objs[r, c] + l1 * objs[r, c + _u(1)] + l2 * objs[r, c + _u(2)]


@_inline
def row3(a, i):
  """Row i, columns 0:3, of a 2D array as a tuple."""
  return a[i, 0], a[i, 1], a[i, 2]


# --------------------------------------- support ------------------------------------------------

@_inline
def flat(objt, i):
  """Int i (>= 0) of `objt` read as a flat array."""
  u = _u(i)
  return objt[u >> _u(1), u & _u(1)]


@jit
def support(objs, objt, k, d0, d1, d2):
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
      vindex = flat(objt, gadr - _NEXTREMA + cx * 9 + cy * 3 + cz)
      best = _vert_dot(objs, base, vindex, l0, l1, l2)
      prev = int(objs[k, _GHINT])
      if prev >= 0:
        v = _vert_dot(objs, base, prev, l0, l1, l2)
        if not best > v:
          vindex, best = prev, v
      prev = -1
      while vindex != prev:
        prev = vindex
        e = gadr + nv + flat(objt, gadr + prev)
        while True:
          sub = flat(objt, e)
          if sub < 0:
            break
          v = _vert_dot(objs, base, sub, l0, l1, l2)
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
        best = _vert_dot(objs, base, vindex, l0, l1, l2)
      else:
        best = -3.4028234663852886e38 if typ == _MESH else -_MAX_LIMIT   # -FLT_MAX
        vindex = 0
      for i in range(nv):
        v = _vert_dot(objs, base, i, l0, l1, l2)
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


@_inline
def _support_margin(objs, objt, k, d0, d1, d2):
  """Support point of object k in direction d moved out by half its margin along d, and its
  vertex index."""
  a0, a1, a2, i = support(objs, objt, k, d0, d1, d2)
  if objs[k, _MARGIN] > 0:
    half = 0.5 * objs[k, _MARGIN]
    a0 += d0 * half
    a1 += d1 * half
    a2 += d2 * half
  return a0, a1, a2, i


@jit
def support_pair(verts, vidx, row, objs, objt, d0, d1, d2, n0, n1, n2):
  """Minkowski-difference support vertex S1(d) - S2(dneg), stored in verts[row] as
  (vert, vert1, vert2) with vertex indices in vidx[row]."""
  a0, a1, a2, i1 = _support_margin(objs, objt, 0, d0, d1, d2)
  b0, b1, b2, i2 = _support_margin(objs, objt, 1, n0, n1, n2)
  put3(verts, row, 0, a0 - b0, a1 - b1, a2 - b2)
  put3(verts, row, 3, a0, a1, a2)
  put3(verts, row, 6, b0, b1, b2)
  vidx[row, 0] = i1
  vidx[row, 1] = i2


@jit
def is_discrete(objs, objt):
  """True when both objects are polytopes without margin (finite GJK/EPA convergence): boxes,
  meshes, height fields, and (MuJoCo 4.0) the point and segment that GJK
  shrinks spheres and capsules to."""
  if objs[0, _MARGIN] != 0 or objs[1, _MARGIN] != 0:
    return False
  for k in range(2):
    t = objt[k, 0]
    if objt[k, 1] == _MODE_GEOM and t != _BOX and t != _MESH and t != _HFIELD:
      return False
  return True
