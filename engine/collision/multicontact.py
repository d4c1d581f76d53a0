"""MuJoCo's single-shot multicontact (mjc_multicontact): where the faces or an edge and a face of
two convex geoms meet flat, the EPA contact is replaced by up to four contacts from clipping one
face against the other. The helpers come first: box faces and corners, the side planes of a
clipping face, polygonClip and polygonQuad's choice of four vertices; then the features of
meshes, cylinders and capsules, and `multicontact` itself.
"""
import math

import numpy as np

# as engine.smooth's jit (IEEE division: degenerate simplices behave as in MuJoCo's C code)
from numjoco.engine._jit import jit
from numjoco.engine._jit import inline as _inline
from numjoco.engine.collision.support import cross3 as _cross, dot3 as _dot, normalize3 as _normalize
from numjoco.engine.collision.work import (
    GADR as _GADR, MAT as _MAT, MC_EDGE as _MC_EDGE, MC_END as _MC_END, MC_FACE as _MC_FACE,
    MC_FACEMAX as _MC_FACEMAX, MC_NORM1 as _MC_NORM1, MC_NORM2 as _MC_NORM2, MC_PN as _MC_PN,
    MC_POLY as _MC_POLY, MC_POLYMAX as _MC_POLYMAX, MC_START as _MC_START, POS as _POS,
    PS_IDX1 as _PS_IDX1, PS_IDX2 as _PS_IDX2, PS_TMP as _PS_TMP, SIZE as _SIZE)
from numjoco.engine.types import MINVAL as _MINVAL, mjtGeom

_CAPSULE, _CYLINDER = int(mjtGeom.CAPSULE), int(mjtGeom.CYLINDER)
_BOX, _MESH = int(mjtGeom.BOX), int(mjtGeom.MESH)

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

# --------------------------------------- multicontact -------------------------------------------
# Helpers of MuJoCo 4.0's single-shot multicontact (`multicontact`, in the multicontact
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


@_inline
def _grow_step(mc, poly, npoly, a, b, c, d, m, k):
  """One step of polygonQuad's search: vertex k (1: b, 2: c, 3: d) moved to the next polygon
  vertex; (True, area, b, c, d) when that grows the area m, else (False, m, b, c, d)."""
  bn, cn, dn = b, c, d
  if k == 1:
    bn = b + 1 if b < npoly - 1 else 0
  elif k == 2:
    cn = c + 1 if c < npoly - 1 else 0
  else:
    dn = d + 1 if d < npoly - 1 else 0
  mn = _area4(mc, poly + a, poly + bn, poly + cn, poly + dn)
  if mn <= m:
    return False, m, b, c, d
  return True, mn, bn, cn, dn


@_inline
def _grow(mc, poly, npoly, a, b, c, d, m, k):
  """Vertex k (1: b, 2: c) moved on while the area grows; (area, b, c, d)."""
  while True:
    grown, m, b, c, d = _grow_step(mc, poly, npoly, a, b, c, d, m, k)
    if not grown:
      return m, b, c, d


@jit
def _polygon_quad(mc, poly, npoly):
  """Four vertices (offsets from row poly) of a polygon spanning a large quadrilateral:
  MuJoCo's polygonQuad local search (grow d, then c, then b while the area grows, for each
  start a), with the area of the quadrilateral taken in polygon order, as MuJoCo 4.0's."""
  a, b, c, d = 0, 1, 2, 3
  r0, r1, r2, r3 = a, b, c, d
  m = _area4(mc, poly + a, poly + b, poly + c, poly + d)
  for a in range(npoly):
    while True:
      grown, m, b, c, d = _grow_step(mc, poly, npoly, a, b, c, d, m, 3)
      if not grown:
        break
      m, b, c, d = _grow(mc, poly, npoly, a, b, c, d, m, 2)
      m, b, c, d = _grow(mc, poly, npoly, a, b, c, d, m, 1)
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
      # the crossing, from the two half-space values (MuJoCo 4.0's polygonClip)
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


# ------------------------------------ multicontact ----------------------------------------------
# MuJoCo 4.0's mjc_multicontact (its published source differs and has no cylinder or capsule
# branch), checked against it bit for bit through ctypes
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
  """MuJoCo 4.0.1's geomEdgeNormals for a capsule or cylinder k (not in the published
  source): the one edge of the shape, its direction into mc row _MC_EDGE. A
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
  at the cylinder), as MuJoCo 4.0.1's mjc_multicontact places it:
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
  on one cap has that cap (MuJoCo 4.0), a capsule's and a sphere's none."""
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
  (MuJoCo 4.0) of the other geom's edges; (-1, -1, 0) when none
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
def multicontact(objs, objt, vert1, graph1, poly1, vert2, graph2, poly2, xw, si, cnt, pt,
                  isc, margin, dist_out, pos_out, frame_out):
  """MuJoCo 4.0's multicontact (checked against it bit for bit) of two geoms among
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

