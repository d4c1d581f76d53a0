"""Ray casting against geoms (MuJoCo's engine_ray.c): mju_rayGeom, mj_rayMesh, mj_rayHfield and
mj_ray, each giving the distance along pnt + x vec to the nearest surface (-1 when missed) and,
when asked, the outward surface normal at the hit in the global frame (zeros when missed).

Points, directions, positions and sizes travel as 3-tuples and rotation matrices as 9-arrays,
so nothing here allocates; a normal is computed only for a hit and only when `want` is true.
"""
import math

import numpy as np

from numjoco.engine.collision import sdf as sdf
from numjoco.engine.collision.support import normalize3
from numjoco.engine import math as mm
from numjoco.engine._jit import jit
from numjoco.engine.types import mjtGeom
from numjoco.engine.types import MINVAL as _MINVAL

_PLANE, _HFIELD, _SPHERE, _CAPSULE = (int(mjtGeom.PLANE), int(mjtGeom.HFIELD),
                                      int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE))
_ELLIPSOID, _CYLINDER, _BOX, _MESH = (int(mjtGeom.ELLIPSOID), int(mjtGeom.CYLINDER),
                                      int(mjtGeom.BOX), int(mjtGeom.MESH))
_MISS = (-1.0, 0.0, 0.0, 0.0)
# small helpers called per ray and triangle: inlined into their callers (a call boundary
# passing tuples cost ~40% of a triangle test, measured)
from numjoco.engine._jit import inline as _inline


@_inline
def tuple3(a):
  """A 3-array as a tuple."""
  return a[0], a[1], a[2]


@_inline
def _ray_quad(a, b, c):
  """Smallest non-negative root of a x^2 + 2 b x + c (-1 if none) and both roots (ray_quad)."""
  det = b * b - a * c
  if det < 0 or a < _MINVAL:
    return -1.0, -1.0, -1.0
  det = math.sqrt(det)
  x0, x1 = (-b - det) / a, (-b + det) / a
  if x0 >= 0:
    return x0, x0, x1
  if x1 >= 0:
    return x1, x0, x1
  return -1.0, x0, x1


@_inline
def _local(pos, mat, pnt, vec):
  """The ray in the frame (pos, mat): local point and direction (ray_map)."""
  lp0, lp1, lp2 = mm.mat_t_vec(mat, pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2])
  lv0, lv1, lv2 = mm.mat_t_vec(mat, vec[0], vec[1], vec[2])
  return (lp0, lp1, lp2), (lv0, lv1, lv2)


@_inline
def _ray_sphere(pos, r2, pnt, vec):
  """Distance to the sphere of squared radius r2 around pos."""
  d0, d1, d2 = pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]
  a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2]
  b = vec[0] * d0 + vec[1] * d1 + vec[2] * d2
  c = d0 * d0 + d1 * d1 + d2 * d2 - r2
  x, _, _ = _ray_quad(a, b, c)
  return x


@jit
def _ray_plane(pos, mat, size, pnt, vec):
  """Front face of a plane, within its rendered rectangle when sized."""
  lp, lv = _local(pos, mat, pnt, vec)
  if lv[2] > -_MINVAL:
    return _MISS
  x = -lp[2] / lv[2]
  if x < 0:
    return _MISS
  p0, p1 = lp[0] + x * lv[0], lp[1] + x * lv[1]
  if (size[0] <= 0 or abs(p0) <= size[0]) and (size[1] <= 0 or abs(p1) <= size[1]):
    return x, mat[2], mat[5], mat[8]
  return _MISS


@jit
def _ray_capsule(pos, mat, size, pnt, vec, want):
  """Capsule: bounding sphere, round side, then the top and bottom caps."""
  ssz = size[0] + size[1]
  if _ray_sphere(pos, ssz * ssz, pnt, vec) < 0:
    return _MISS
  lp, lv = _local(pos, mat, pnt, vec)
  x, kind = -1.0, 0   # -1: bottom cap, 0: round side, 1: top cap
  a = lv[0] * lv[0] + lv[1] * lv[1]
  b = lv[0] * lp[0] + lv[1] * lp[1]
  c = lp[0] * lp[0] + lp[1] * lp[1] - size[0] * size[0]
  sol, _, _ = _ray_quad(a, b, c)
  if sol >= 0 and abs(lp[2] + sol * lv[2]) <= size[1]:
    x = sol
  a = lv[0] * lv[0] + lv[1] * lv[1] + lv[2] * lv[2]
  for side in (1, -1):
    q2 = lp[2] - side * size[1]
    b = lv[0] * lp[0] + lv[1] * lp[1] + lv[2] * q2
    c = lp[0] * lp[0] + lp[1] * lp[1] + q2 * q2 - size[0] * size[0]
    _, x0, x1 = _ray_quad(a, b, c)
    for xx in (x0, x1):
      if xx >= 0 and side * (lp[2] + xx * lv[2]) >= size[1] and (x < 0 or xx < x):
        x, kind = xx, side
  if x < 0:
    return _MISS
  if not want:
    return x, 0.0, 0.0, 0.0
  n2 = 0.0 if kind == 0 else lp[2] + lv[2] * x - size[1] * kind
  n0, n1, n2 = mm.normalize3(lp[0] + lv[0] * x, lp[1] + lv[1] * x, n2)
  n0, n1, n2 = mm.mat_vec(mat, n0, n1, n2)
  return x, n0, n1, n2


@jit
def _ray_ellipsoid(pos, mat, size, pnt, vec, want):
  """Ellipsoid: the quadric in its frame; the normal is its gradient."""
  lp, lv = _local(pos, mat, pnt, vec)
  s0, s1, s2 = 1 / (size[0] * size[0]), 1 / (size[1] * size[1]), 1 / (size[2] * size[2])
  a = s0 * lv[0] * lv[0] + s1 * lv[1] * lv[1] + s2 * lv[2] * lv[2]
  b = s0 * lv[0] * lp[0] + s1 * lv[1] * lp[1] + s2 * lv[2] * lp[2]
  c = s0 * lp[0] * lp[0] + s1 * lp[1] * lp[1] + s2 * lp[2] * lp[2] - 1
  x, _, _ = _ray_quad(a, b, c)
  if x < 0:
    return _MISS
  if not want:
    return x, 0.0, 0.0, 0.0
  n0, n1, n2 = mm.normalize3(s0 * (lp[0] + lv[0] * x), s1 * (lp[1] + lv[1] * x),
                           s2 * (lp[2] + lv[2] * x))
  n0, n1, n2 = mm.mat_vec(mat, n0, n1, n2)
  return x, n0, n1, n2


@jit
def _ray_cylinder(pos, mat, size, pnt, vec, want):
  """Cylinder: bounding sphere, the flat sides, then the round side."""
  if _ray_sphere(pos, size[0] * size[0] + size[1] * size[1], pnt, vec) < 0:
    return _MISS
  lp, lv = _local(pos, mat, pnt, vec)
  x, kind = -1.0, 0   # -1: bottom, 0: round side, 1: top
  if abs(lv[2]) > _MINVAL:
    for side in (-1, 1):
      sol = (side * size[1] - lp[2]) / lv[2]
      if sol >= 0:
        p0, p1 = lp[0] + sol * lv[0], lp[1] + sol * lv[1]
        if p0 * p0 + p1 * p1 <= size[0] * size[0] and (x < 0 or sol < x):
          x, kind = sol, side
  a = lv[0] * lv[0] + lv[1] * lv[1]
  b = lv[0] * lp[0] + lv[1] * lp[1]
  c = lp[0] * lp[0] + lp[1] * lp[1] - size[0] * size[0]
  sol, _, _ = _ray_quad(a, b, c)
  if sol >= 0 and abs(lp[2] + sol * lv[2]) <= size[1] and (x < 0 or sol < x):
    x, kind = sol, 0
  if x < 0:
    return _MISS
  if not want:
    return x, 0.0, 0.0, 0.0
  if kind == 0:
    n0, n1, n2 = mm.normalize3(lp[0] + lv[0] * x, lp[1] + lv[1] * x, 0.0)
  else:
    n0, n1, n2 = 0.0, 0.0, float(kind)
  n0, n1, n2 = mm.mat_vec(mat, n0, n1, n2)
  return x, n0, n1, n2


@jit
def _ray_box(pos, mat, size, pnt, vec):
  """Box: (distance, axis and side of the face hit, distance to each face the ray crosses in
  the order -x, +x, -y, +y, -z, +z with -1 where not crossed) (ray_box with `all`)."""
  a0 = a1 = a2 = a3 = a4 = a5 = -1.0
  if _ray_sphere(pos, size[0] * size[0] + size[1] * size[1] + size[2] * size[2], pnt, vec) < 0:
    return -1.0, -1, 0, a0, a1, a2, a3, a4, a5
  lp, lv = _local(pos, mat, pnt, vec)
  x, axis, fside = -1.0, -1, 0
  for i in range(3):
    if abs(lv[i]) > _MINVAL:
      i1 = 1 if i == 0 else 0
      i2 = 1 if i == 2 else 2
      for side in (-1, 1):
        sol = (side * size[i] - lp[i]) / lv[i]
        if sol >= 0:
          p0, p1 = lp[i1] + sol * lv[i1], lp[i2] + sol * lv[i2]
          if abs(p0) <= size[i1] and abs(p1) <= size[i2]:
            if x < 0 or sol < x:
              x, axis, fside = sol, i, side
            k = 2 * i + (side + 1) // 2
            if k == 0:
              a0 = sol
            elif k == 1:
              a1 = sol
            elif k == 2:
              a2 = sol
            elif k == 3:
              a3 = sol
            elif k == 4:
              a4 = sol
            else:
              a5 = sol
  return x, axis, fside, a0, a1, a2, a3, a4, a5


@_inline
def _box_normal(mat, axis, side):
  """Global normal of a box face."""
  return side * mat[axis], side * mat[3 + axis], side * mat[6 + axis]


@jit
def ray_geom_normal(pos, mat, size, pnt, vec, gtype, want):
  """(distance, normal) along the ray to a plane/sphere/capsule/ellipsoid/cylinder/box; pos,
  size, pnt, vec are 3-tuples (mju_rayGeom)."""
  if gtype == _PLANE:
    return _ray_plane(pos, mat, size, pnt, vec)
  if gtype == _SPHERE:
    x = _ray_sphere(pos, size[0] * size[0], pnt, vec)
    if x < 0:
      return _MISS
    if not want:
      return x, 0.0, 0.0, 0.0
    n0, n1, n2 = mm.normalize3(pnt[0] + vec[0] * x - pos[0], pnt[1] + vec[1] * x - pos[1],
                             pnt[2] + vec[2] * x - pos[2])
    return x, n0, n1, n2
  if gtype == _CAPSULE:
    return _ray_capsule(pos, mat, size, pnt, vec, want)
  if gtype == _ELLIPSOID:
    return _ray_ellipsoid(pos, mat, size, pnt, vec, want)
  if gtype == _CYLINDER:
    return _ray_cylinder(pos, mat, size, pnt, vec, want)
  if gtype == _BOX:
    r = _ray_box(pos, mat, size, pnt, vec)
    if r[0] < 0:
      return _MISS
    if not want:
      return r[0], 0.0, 0.0, 0.0
    n0, n1, n2 = _box_normal(mat, r[1], float(r[2]))
    return r[0], n0, n1, n2
  return _MISS


@jit
def ray_geom(pos, mat, size, pnt, vec, gtype):
  """Distance along ray pnt + x vec to a primitive geom (arrays), -1 if missed."""
  return ray_geom_normal(tuple3(pos), mat, tuple3(size), tuple3(pnt), tuple3(vec), gtype, False)[0]


@jit
def _ray_basis(lv):
  """Two unit vectors b0, b1 spanning the plane normal to the ray (MuJoCo's construction)."""
  lv0, lv1, lv2 = lv
  b00, b01, b02 = 1.0, 1.0, 1.0
  if abs(lv0) >= abs(lv1) and abs(lv0) >= abs(lv2):
    b00 = 0.0
  elif abs(lv1) >= abs(lv2):
    b01 = 0.0
  else:
    b02 = 0.0
  s = (lv0 * b00 + lv1 * b01 + lv2 * b02) / (lv0 * lv0 + lv1 * lv1 + lv2 * lv2)
  b10, b11, b12 = mm.normalize3(b00 - s * lv0, b01 - s * lv1, b02 - s * lv2)
  b00, b01, b02 = mm.normalize3(b11 * lv2 - b12 * lv1, b12 * lv0 - b10 * lv2,
                              b10 * lv1 - b11 * lv0)
  return (b00, b01, b02), (b10, b11, b12)


@_inline
def _ray_triangle(v0, v1, v2, lp, lv, b0, b1):
  """(distance, unnormalised normal (v0-v2) x (v1-v2)) of the ray against triangle v0 v1 v2,
  distance -1 if missed (ray_triangle); b0, b1 from `_ray_basis`."""
  e00, e01, e02 = v0[0] - lp[0], v0[1] - lp[1], v0[2] - lp[2]
  e10, e11, e12 = v1[0] - lp[0], v1[1] - lp[1], v1[2] - lp[2]
  e20, e21, e22 = v2[0] - lp[0], v2[1] - lp[1], v2[2] - lp[2]
  p00 = b0[0] * e00 + b0[1] * e01 + b0[2] * e02
  p10 = b0[0] * e10 + b0[1] * e11 + b0[2] * e12
  p20 = b0[0] * e20 + b0[1] * e21 + b0[2] * e22
  if (p00 > 0 and p10 > 0 and p20 > 0) or (p00 < 0 and p10 < 0 and p20 < 0):
    return _MISS
  p01 = b1[0] * e00 + b1[1] * e01 + b1[2] * e02
  p11 = b1[0] * e10 + b1[1] * e11 + b1[2] * e12
  p21 = b1[0] * e20 + b1[1] * e21 + b1[2] * e22
  if (p01 > 0 and p11 > 0 and p21 > 0) or (p01 < 0 and p11 < 0 and p21 < 0):
    return _MISS
  a0, a1 = p00 - p20, p10 - p20
  a2, a3 = p01 - p21, p11 - p21
  r0, r1 = -p20, -p21
  det = a0 * a3 - a1 * a2
  if abs(det) < _MINVAL:
    return _MISS
  t0 = (a3 * r0 - a1 * r1) / det
  t1 = (-a2 * r0 + a0 * r1) / det
  if t0 < 0 or t1 < 0 or t0 + t1 > 1:
    return _MISS
  u0, u1, u2 = v0[0] - v2[0], v0[1] - v2[1], v0[2] - v2[2]
  w0, w1, w2 = v1[0] - v2[0], v1[1] - v2[1], v1[2] - v2[2]
  n0, n1, n2 = u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0
  denom = lv[0] * n0 + lv[1] * n1 + lv[2] * n2
  if abs(denom) < _MINVAL:
    return _MISS
  x = -((lp[0] - v2[0]) * n0 + (lp[1] - v2[1]) * n1 + (lp[2] - v2[2]) * n2) / denom
  return x, n0, n1, n2


@jit
def _finish_triangle(mat, x, n0, n1, n2, want):
  """A triangle hit's local normal, normalised and rotated to the global frame."""
  if x < 0:
    return _MISS
  if not want:
    return x, 0.0, 0.0, 0.0
  n0, n1, n2 = mm.normalize3(n0, n1, n2)
  n0, n1, n2 = mm.mat_vec(mat, n0, n1, n2)
  return x, n0, n1, n2


@_inline
def _vert(m, i):
  """Mesh vertex i in float64 (numba's float() would keep float32, and the arithmetic too)."""
  v = m.mesh_vert[i]
  return np.float64(v[0]), np.float64(v[1]), np.float64(v[2])


@jit
def ray_mesh(m, d, g, pnt, vec, want):
  """(distance, normal) along the ray to mesh geom g: its bounding box, then every face
  (mj_rayMesh; MuJoCo walks a BVH, which selects the same nearest face)."""
  pos, mat = tuple3(d.geom_xpos[g]), d.geom_xmat[g]
  if _ray_box(pos, mat, tuple3(m.geom_size[g]), pnt, vec)[0] < 0:
    return _MISS
  mid = m.geom_dataid[g]
  lp, lv = _local(pos, mat, pnt, vec)
  b0, b1 = _ray_basis(lv)
  va, fa = m.mesh_vertadr[mid], m.mesh_faceadr[mid]
  x, c0, c1, c2 = -1.0, 0.0, 0.0, 0.0
  for f in range(fa, fa + m.mesh_facenum[mid]):
    face = m.mesh_face[f]
    sol, n0, n1, n2 = _ray_triangle(_vert(m, va + face[0]), _vert(m, va + face[1]),
                                    _vert(m, va + face[2]), lp, lv, b0, b1)
    if sol >= 0 and (x < 0 or sol < x):
      x, c0, c1, c2 = sol, n0, n1, n2
  return _finish_triangle(mat, x, c0, c1, c2, want)


@_inline
def _hpoint(data, ncol, size, dx, dy, r, c):
  """Local position of height field vertex (row r, column c)."""
  return dx * c - size[0], dy * r - size[1], np.float64(data[r * ncol + c]) * size[2]


@jit
def ray_hfield(m, d, g, pnt, vec, want):
  """(distance, normal) along the ray to height field geom g: its base box, the triangles
  under the ray's path through the top box, and the top box's sides (mj_rayHfield)."""
  h = m.geom_dataid[g]
  nrow, ncol = m.hfield_nrow[h], m.hfield_ncol[h]
  size = m.hfield_size[h]
  data = m.hfield_data[m.hfield_adr[h]:m.hfield_adr[h] + nrow * ncol]
  xmat, xpos = d.geom_xmat[g], d.geom_xpos[g]
  hb, ht = size[3] * 0.5, size[2] * 0.5
  bpos = (xpos[0] - xmat[2] * hb, xpos[1] - xmat[5] * hb, xpos[2] - xmat[8] * hb)
  tpos = (xpos[0] + xmat[2] * ht, xpos[1] + xmat[5] * ht, xpos[2] + xmat[8] * ht)
  base = _ray_box(bpos, xmat, (size[0], size[1], hb), pnt, vec)
  x = base[0]
  # local normal: the base box's face until something nearer is hit
  c0 = c1 = c2 = 0.0
  if x >= 0:
    if base[1] == 0:
      c0 = float(base[2])
    elif base[1] == 1:
      c1 = float(base[2])
    else:
      c2 = float(base[2])
  top = _ray_box(tpos, xmat, (size[0], size[1], ht), pnt, vec)
  if top[0] < 0:
    if x < 0 or not want:
      return x, 0.0, 0.0, 0.0
    n0, n1, n2 = mm.mat_vec(xmat, c0, c1, c2)
    return x, n0, n1, n2
  allx = top[3:]
  lp, lv = _local(tuple3(xpos), xmat, pnt, vec)
  b0, b1 = _ray_basis(lv)
  seg0, seg1 = 0.0, top[0]
  for i in range(6):
    if allx[i] > seg1:
      seg0, seg1 = top[0], allx[i]
  dx = (2.0 * size[0]) / (ncol - 1)
  dy = (2.0 * size[1]) / (nrow - 1)
  sx0, sx1 = (lp[0] + seg0 * lv[0] + size[0]) / dx, (lp[0] + seg1 * lv[0] + size[0]) / dx
  sy0, sy1 = (lp[1] + seg0 * lv[1] + size[1]) / dy, (lp[1] + seg1 * lv[1] + size[1]) / dy
  cmin = max(0, int(math.floor(min(sx0, sx1))) - 1)
  cmax = min(ncol - 1, int(math.ceil(max(sx0, sx1))) + 1)
  rmin = max(0, int(math.floor(min(sy0, sy1))) - 1)
  rmax = min(nrow - 1, int(math.ceil(max(sy0, sy1))) + 1)
  for r in range(rmin, rmax):
    for c in range(cmin, cmax):
      p00 = _hpoint(data, ncol, size, dx, dy, r, c)
      p11 = _hpoint(data, ncol, size, dx, dy, r + 1, c + 1)
      # (r, c), (r, c+1), (r+1, c+1) and (r, c), (r+1, c+1), (r+1, c): normals point up
      sol, n0, n1, n2 = _ray_triangle(p00, _hpoint(data, ncol, size, dx, dy, r, c + 1), p11,
                                      lp, lv, b0, b1)
      if sol >= 0 and (x < 0 or sol < x):
        x = sol
        c0, c1, c2 = mm.normalize3(n0, n1, n2)
      sol, n0, n1, n2 = _ray_triangle(p00, p11, _hpoint(data, ncol, size, dx, dy, r + 1, c),
                                      lp, lv, b0, b1)
      if sol >= 0 and (x < 0 or sol < x):
        x = sol
        c0, c1, c2 = mm.normalize3(n0, n1, n2)
  for i in range(4):
    if allx[i] >= 0 and (allx[i] < x or x < 0):
      z = (lp[2] + allx[i] * lv[2]) / size[2]
      if i < 2:
        y = (lp[1] + allx[i] * lv[1] + size[1]) / dy
        y0 = max(0.0, min(nrow - 2.0, math.floor(y)))
        col = ncol - 1 if i == 1 else 0
        z0 = np.float64(data[int(round(y0)) * ncol + col])
        z1 = np.float64(data[int(round(y0 + 1)) * ncol + col])
      else:
        y = (lp[0] + allx[i] * lv[0] + size[0]) / dx
        y0 = max(0.0, min(ncol - 2.0, math.floor(y)))
        off = (nrow - 1) * ncol if i == 3 else 0
        z0 = np.float64(data[int(round(y0)) + off])
        z1 = np.float64(data[int(round(y0 + 1)) + off])
      if z < z0 * (y0 + 1 - y) + z1 * (y - y0):
        x = allx[i]
        side = -1.0 if i % 2 == 0 else 1.0
        c0, c1, c2 = (side, 0.0, 0.0) if i < 2 else (0.0, side, 0.0)
  if x < 0 or not want:
    return x, 0.0, 0.0, 0.0
  n0, n1, n2 = mm.mat_vec(xmat, c0, c1, c2)
  return x, n0, n1, n2


@jit
def ray_sdf(m, d, g, pnt, vec, want):
  """(distance, normal) along the ray to sdf geom g (mj_raySdf): up to 40 ray-marching steps
  of the plugin's (or the mesh octree's) distance in the geom frame inside the geom's box; the
  distance scaled by 1 / |vec| as MuJoCo does."""
  pos, mat = tuple3(d.geom_xpos[g]), d.geom_xmat[g]
  if _ray_box(pos, mat, tuple3(m.geom_size[g]), pnt, vec)[0] < 0:
    return _MISS
  _, _, kind, a, mid = sdf.geom_side(m, g)
  lp, lv = _local(pos, mat, pnt, vec)
  v0, v1, v2, norm = normalize3(lv[0], lv[1], lv[2])
  total = 0.0
  for _ in range(40):
    dist = abs(sdf.sdf_distance(m, kind, a, mid, lp[0] + v0 * total, lp[1] + v1 * total,
                                lp[2] + v2 * total))
    total += dist
    if dist < 1e-7:
      if not want:
        return total / norm, 0.0, 0.0, 0.0
      g0, g1, g2 = sdf.sdf_gradient(m, kind, a, mid, lp[0] + v0 * total, lp[1] + v1 * total,
                                    lp[2] + v2 * total)
      g0, g1, g2, _ = normalize3(g0, g1, g2)
      n0, n1, n2 = mm.mat_vec(mat, g0, g1, g2)
      return total / norm, n0, n1, n2
    if dist > 1e6:
      break
  return _MISS


@jit
def ray(m, d, pnt, vec, bodyexclude, want):
  """(distance, geom id, normal) of the nearest visible geom along pnt + x vec (3-tuples),
  static geoms included, geoms of `bodyexclude` skipped; distance and geom id -1, normal zero
  when nothing is hit (mj_ray with all groups)."""
  dist, gid = -1.0, -1
  c0 = c1 = c2 = 0.0
  for g in range(m.ngeom):
    if m.geom_bodyid[g] == bodyexclude:
      continue
    mat = m.geom_matid[g]
    if (mat < 0 and m.geom_rgba[g, 3] == 0) or (mat >= 0 and m.mat_rgba[mat, 3] == 0):
      continue
    gt = m.geom_type[g]
    if gt == _HFIELD:
      x, n0, n1, n2 = ray_hfield(m, d, g, pnt, vec, want)
    elif gt == _MESH:
      x, n0, n1, n2 = ray_mesh(m, d, g, pnt, vec, want)
    elif gt <= _BOX:
      x, n0, n1, n2 = ray_geom_normal(tuple3(d.geom_xpos[g]), d.geom_xmat[g], tuple3(m.geom_size[g]),
                                      pnt, vec, gt, want)
    else:
      x, n0, n1, n2 = ray_sdf(m, d, g, pnt, vec, want)
    if x >= 0 and (x < dist or dist < 0):
      dist, gid, c0, c1, c2 = x, g, n0, n1, n2
  return dist, gid, c0, c1, c2
