"""General convex narrowphase, as MuJoCo's engine_collision_convex.c (GJK and EPA themselves are
engine/gjk.py).

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
from numjoco.engine.collision_work import (  # noqa: F401 (the object row layout)
    FLEX as _FLEX, GADR as _GADR, GHINT as _GHINT, MARGIN as _MARGIN, MAT as _MAT,
    MODE_GEOM as _MODE_GEOM, MODE_LINE as _MODE_LINE, MODE_POINT as _MODE_POINT, POS as _POS,
    SIZE as _SIZE, VADR as _VADR, VNUM as _VNUM)
from numjoco.engine.gjk import (cross3 as _cross, dot3 as _dot, epa as _epa, gjk as _gjk,
                                normalize3 as _normalize, polytope as _polytope)

_PLANE, _SPHERE, _CAPSULE = int(mjtGeom.PLANE), int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE)
_ELLIPSOID, _CYLINDER, _BOX = int(mjtGeom.ELLIPSOID), int(mjtGeom.CYLINDER), int(mjtGeom.BOX)
_MESH = int(mjtGeom.MESH)
_SDF = int(mjtGeom.SDF)
_HFIELD = int(mjtGeom.HFIELD)   # a height-field prism: six vertices searched like a small mesh

_MINVAL2 = _MINVAL * _MINVAL
_MAXVAL2 = 1e10 * 1e10
_MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
_MINEPATOL = _MINVAL

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
