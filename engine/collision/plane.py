"""mjc_PlaneConvex: a plane against an ellipsoid, a cylinder (native CCD path) or a mesh: the
deepest support point of the convex geom, and for meshes up to four contacts from the hull
vertices below the plane (`plane_mesh`, MuJoCo's choice of the deepest and the widest
quadrilateral).
"""
import math

import numpy as np

from numjoco.engine._jit import jit
from numjoco.engine._jit import inline as _inline
from numjoco.engine.collision.support import cross3 as _cross, dot3 as _dot, normalize3 as _normalize

_MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
_HILLCLIMB_MIN = 10   # mjMESH_HILLCLIMB_MIN: smaller meshes use the exhaustive support

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


@_inline
def _hull_step(vert, path, a, b, c, d, m, k):
  """One step of hull4f's search: vertex k (1: b, 2: c, 3: d) moved to the next one of the
  cycle `path`; (True, area, b, c, d) when that grows the area m, else (False, m, b, c, d)."""
  npath = path.shape[0]
  bn, cn, dn = b, c, d
  if k == 1:
    bn = (b + 1) % npath
  elif k == 2:
    cn = (c + 1) % npath
  else:
    dn = (d + 1) % npath
  mn = _area4_local(vert, path, a, bn, cn, dn)
  if mn <= m:
    return False, m, b, c, d
  return True, mn, bn, cn, dn


@_inline
def _hull_grow(vert, path, a, b, c, d, m, k):
  """Vertex k (1: b, 2: c) moved on while the area grows; (area, b, c, d)."""
  while True:
    grown, m, b, c, d = _hull_step(vert, path, a, b, c, d, m, k)
    if not grown:
      return m, b, c, d


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
  while True:
    grown, m, b, c, d = _hull_step(vert, path, a, b, c, d, m, 3)
    if not grown:
      break
    m, b, c, d = _hull_grow(vert, path, a, b, c, d, m, 2)
    m, b, c, d = _hull_grow(vert, path, a, b, c, d, m, 1)
  return 4, a, b, c, d


@jit
def plane_mesh(pos1, mat1, pos2, mat2, vert, ext, graph, poly, margin, dist, pos, frame):
  """Plane-mesh contacts as MuJoCo 4.0.1's mjc_PlaneConvex gives them (up
  to 4): the deepest vertex (`_deepest_vertex`), then of the mesh polygons at that vertex
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


