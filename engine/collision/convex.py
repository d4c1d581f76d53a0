"""General convex narrowphase, as MuJoCo's mjc_Convex (engine_collision_convex.c): the GJK
objects, `ccd` (mjc_ccd: GJK on the cores of spheres and capsules, EPA on penetration) and
`penetration`, and the pair colliders built on them: primitive pairs (`collide_convex`), pairs
with a mesh (`collide_mesh_work`), flex elements (`collide_flex_elem`). GJK and EPA are in
collision/gjk.py, the multicontact that may replace the EPA contact in collision/multicontact.py,
plane pairs in collision/plane.py.

A geom "object" is one row of `objs` (float64, collision/work.py names the columns: size,
pos, mat, margin, and for meshes the first row and count of its vertices, where its hull
adjacency starts in `objt` and the last support vertex) and one row of `objt` (int: geom type,
support mode). Rows 2 and 3 of `objs` hold the vertices of flex elements and height field
prisms; the mesh cache (collision/work.py, `set_mesh`) holds the meshes' hull vertices (local
frame, six per row, from row 4) and their adjacency as MuJoCo's mesh_graph (vert_edgeadr,
edge_localid; `objt` read flat), for the hill-climbing support of meshes with 10 or more
vertices. `split_work` returns the named views (collision/work.py's Work) of the two flat work
buffers.
"""
import numpy as np

from numjoco.engine._borrow import borrowed as _borrowed, rows as _rows
from numjoco.engine._jit import inline as _inline
from numjoco.engine._jit import jit
from numjoco.engine.collision.support import flat as _flat_get, normalize3 as _normalize, put_geom
from numjoco.engine.collision.gjk import epa as _epa, gjk as _gjk
from numjoco.engine.collision.gjk import polytope as _polytope
from numjoco.engine.collision.multicontact import multicontact
from numjoco.engine.collision.plane import plane_convex
from numjoco.engine.collision.work import Polytope, Work
from numjoco.engine.collision.work import (
    FLEX as _FLEX, GADR as _GADR, GHINT as _GHINT, MARGIN as _MARGIN, MAT as _MAT,
    MC_FLOATS as _MC_FLOATS, MC_ROWS as _MC_ROWS, MESH_CAP as _MESH_CAP,
    MESH_ENTRY as _MESH_ENTRY, MESH_INTS as _MESH_INTS, MESH_ROW as _MESH_ROW,
    MESH_TABLE as _MESH_TABLE, MODE_GEOM as _MODE_GEOM, MODE_LINE as _MODE_LINE,
    MODE_POINT as _MODE_POINT, NEXTREMA as _NEXTREMA, OBJ_COLS as _OBJ_COLS, POS as _POS,
    PS_SIZE as _PS_SIZE, SIZE as _SIZE, VADR as _VADR, VNUM as _VNUM)
from numjoco.engine.types import mjtDisableBit, mjtGeom

_PLANE, _SPHERE, _CAPSULE = int(mjtGeom.PLANE), int(mjtGeom.SPHERE), int(mjtGeom.CAPSULE)
_CYLINDER, _BOX, _MESH = int(mjtGeom.CYLINDER), int(mjtGeom.BOX), int(mjtGeom.MESH)
_SDF = int(mjtGeom.SDF)
_MAX_LIMIT = 1.7976931348623157e308  # DBL_MAX
_HILLCLIMB_MIN = 10   # mjMESH_HILLCLIMB_MIN: smaller meshes use the exhaustive support
_DSBL_NATIVECCD = int(mjtDisableBit.NATIVECCD)
_DSBL_MULTICCD = int(mjtDisableBit.MULTICCD)

# ------------------------------------------ CCD -------------------------------------------------

@_inline
def _polytope_rows(n):
  """(vertex rows, face rows) of the EPA polytope for `n` CCD iterations (at least one)."""
  if n < 1:
    n = 1
  return 5 + n, 6 * n


@jit
def _objt_offset(n):
  """Offset of the object ints (`objt`, read flat) in the int work buffer (`split_work`)."""
  nv, nf = _polytope_rows(n)
  return 24 + nv * 2 + nf * 3 + nf * 3 + nf * 4 + nf * 3


@jit
def _work_sizes(n):
  """Numba twin of `work_sizes` without mesh rows: the ints end with the two objects' rows,
  the multicontact scratch and the (empty) mesh table."""
  nv, nf = _polytope_rows(n)
  nfloat = 2 * _OBJ_COLS + 2 * 4 * 9 + 6 + 3 + nv * 9 + nf * 3 + nf + _MC_FLOATS
  return nfloat, _objt_offset(n) + _MESH_INTS


@jit
def split_work(fbuf, ibuf, n, forget=True):
  """Views into the flat work buffers: objects, simplices, witness points and polytope (about
  1 us: the reshapes; the collision driver makes them once per pass). `forget`: empty the
  mesh cache (`set_mesh`), for buffers that may hold anything, e.g. fresh ones; Data's keep
  their meshes from one step to the next."""
  nv, nf = _polytope_rows(n)
  o = 0
  sx = _rows(fbuf, o, 4, 9); o += 36
  tx = _rows(fbuf, o, 4, 9); o += 36
  xw = fbuf[o:o + 6]; o += 6
  ctr = fbuf[o:o + 3]; o += 3
  pv = _rows(fbuf, o, nv, 9); o += nv * 9
  fv = _rows(fbuf, o, nf, 3); o += nf * 3
  fd2 = fbuf[o:o + nf]; o += nf
  mc = _rows(fbuf, o, _MC_ROWS, 3); o += 3 * _MC_ROWS
  nrow = (fbuf.shape[0] - o) // _OBJ_COLS   # the rest: two objects, then mesh vertices
  objs = _rows(fbuf, o, nrow, _OBJ_COLS)
  o = 0
  si = _rows(ibuf, o, 4, 2); o += 8
  ti = _rows(ibuf, o, 4, 2); o += 8
  cnt = ibuf[o:o + 8]; o += 8
  pvi = _rows(ibuf, o, nv, 2); o += nv * 2
  fvert = _rows(ibuf, o, nf, 3); o += nf * 3
  fadj = _rows(ibuf, o, nf, 3); o += nf * 3
  findex = ibuf[o:o + nf]; o += nf
  fmap = ibuf[o:o + nf]; o += nf
  hz_idx = ibuf[o:o + nf]; o += nf
  hz_edge = ibuf[o:o + nf]; o += nf
  stk = _rows(ibuf, o, nf, 3); o += nf * 3
  nrow = (ibuf.shape[0] - o) // 2   # the rest: two objects, then hull adjacencies
  objt = _rows(ibuf, o, nrow, 2)
  if forget:
    ibuf[o + _MESH_TABLE] = 0
  pt = Polytope(pv, pvi, fv, fd2, fvert, fadj, findex, fmap, hz_idx, hz_edge, stk, mc)
  return Work(objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt)


@jit
def borrow_work(w):
  """`split_work`'s views as borrowed arrays (engine/_borrow.py: never reference counted),
  for work buffers that outlive every use of the views, Data's: GJK, EPA and multicontact
  pass the views down through several calls, and counting each view at each call costs more
  than GJK itself on small pairs such as flex elements."""
  p = w.polytope
  pt = Polytope(_borrowed(p.verts), _borrowed(p.vert_ids), _borrowed(p.face_proj),
                _borrowed(p.face_dist2), _borrowed(p.face_verts), _borrowed(p.face_adj),
                _borrowed(p.face_index), _borrowed(p.face_map), _borrowed(p.horizon_face),
                _borrowed(p.horizon_edge), _borrowed(p.stack), _borrowed(p.multicontact))
  return Work(_borrowed(w.objs), _borrowed(w.objt), _borrowed(w.simplex),
              _borrowed(w.simplex_id), _borrowed(w.trial), _borrowed(w.trial_id),
              _borrowed(w.witness), _borrowed(w.center), _borrowed(w.counts), pt)


@jit
def work_views(m, d):
  """The narrowphase's views of d's work buffers (`split_work`, borrowed: `borrow_work`),
  keeping its mesh cache; callers make them once per collision pass and pass them down:
  making them costs as much as a quarter of a mesh pair's GJK/EPA."""
  return borrow_work(split_work(d.col_fbuf, d.col_ibuf, min(m.opt_ccd_iterations[0], m.nccd),
                                False))


@_inline
def _shrink_to_core(objs, objt, k, core, t, margin):
  """Object k made its core for GJK (a sphere a point, a capsule a segment; `core`: it is
  either) without margin; returns how far the core lies inside the object (radius and half
  the margin)."""
  full = 0.0
  if core:
    full = objs[k, _SIZE] + 0.5 * margin
    objt[k, 1] = _MODE_POINT if t == _SPHERE else _MODE_LINE
  elif margin > 0:
    full = 0.5 * margin
  objs[k, _MARGIN] = 0.0
  return full


@jit
def ccd(w, tolerance, max_iterations, cutoff):
  """MuJoCo's mjc_ccd for one contact between objects 0 and 1 of the work `w` (`split_work`)
  with distances up to `cutoff` (0 for contacts, the sensors' cutoff for distance sensors):
  returns (dist, nx), _MAX_LIMIT beyond the cutoff; witness points in w.witness (geom 1 at
  0:3, geom 2 at 3:6)."""
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = w
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
    full1 = _shrink_to_core(objs, objt, 0, core1, t1, margin1)
    full2 = _shrink_to_core(objs, objt, 1, core2, t2, margin2)
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
def penetration(w, tolerance, max_iterations, margin, icon, dist_out, pos_out, frame_out):
  """MuJoCo's mjc_penetration (native CCD) of objects 0 and 1 of the work `w`: writes at most
  one contact at row icon."""
  dist, nx = ccd(w, tolerance, max_iterations, 0.0)
  xw = w.witness
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
def set_obj(objs, objt, k, typ, size, pos, mat, margin):
  """Load geom k's type, size, pose and margin into the object arrays."""
  objt[k, 0] = typ
  objt[k, 1] = _MODE_GEOM
  put_geom(objs, k, size, pos, mat, margin)
  objs[k, _VADR] = 0.0
  objs[k, _VNUM] = 0.0
  objs[k, _GADR] = -1.0
  objs[k, _GHINT] = 0.0


@_inline
def _flat_set(objt, i, value):
  objt[i >> 1, i & 1] = value


@jit
def set_mesh(objs, objt, k, vert, ext, graph):
  """Object k's mesh: with a hull graph and at least _HILLCLIMB_MIN vertices, its hull's
  vertices (in hull order; support ids hull-local) and adjacency, for the hill climb; else
  every vertex in mesh order (support ids are mesh ids, objs[k, _GADR] -1), as MuJoCo 4.0
  picks mjc_hillclimbSupport or mjc_meshSupport. `ext`: the mesh's mesh_extrema row, stored
  just before the adjacency (the hill climb's seeds).

  The mesh is looked up in the mesh cache (collision/work.py) by the address of its vertices
  and their count, and copied in when missing: copying a hull of a few thousand vertices with
  its graph costs several times GJK on it, and the driver's pairs meet the same meshes again
  and again. An entry whose first vertex no longer equals the mesh's (the vertices were
  changed) empties the cache. Returns True when the cache was emptied to make room (an
  object set before may then point at rows now reused: `set_meshes` sets it again)."""
  nh = graph[0] if graph.shape[0] > 0 else 0
  if vert.shape[0] < _HILLCLIMB_MIN:
    nh = 0
  n = nh if nh > 0 else vert.shape[0]
  first = graph[2 + nh] if nh > 0 else 0
  key = vert.ctypes.data
  count = _flat_get(objt, _MESH_TABLE)
  if count < 0 or count > _MESH_CAP:   # not a table (buffers never emptied): start one
    count = 0
  emptied = False
  for s in range(count):
    e = _MESH_TABLE + 3 + _MESH_ENTRY * s
    if _flat_get(objt, e) == key and _flat_get(objt, e + 1) == vert.shape[0]:
      row = _flat_get(objt, e + 2)
      if (n == 0 or _MESH_ROW <= row < objs.shape[0] - (n - 1) // 6
              and objs[row, 0] == vert[first, 0] and objs[row, 1] == vert[first, 1]
              and objs[row, 2] == vert[first, 2]):
        _mesh_header(objs, k, row, n, _flat_get(objt, e + 3))
        return False
      count = 0   # changed vertices: every entry may be stale
      emptied = True
      break
  nedge = nh + 3 * graph[1] if nh > 0 else 0
  nint = _NEXTREMA + nh + nedge if nh > 0 else 0
  row, iadr = _MESH_ROW, _MESH_INTS
  if count > 0:
    row, iadr = _flat_get(objt, _MESH_TABLE + 1), _flat_get(objt, _MESH_TABLE + 2)
  if (count == _MESH_CAP or row < _MESH_ROW or iadr < _MESH_INTS
          or row + (n + 5) // 6 > objs.shape[0] or iadr + nint > 2 * objt.shape[0]):
    count, row, iadr = 0, _MESH_ROW, _MESH_INTS
    emptied = True
  for i in range(n):
    v = graph[2 + nh + i] if nh > 0 else i
    r = row + i // 6
    c = (i % 6) * 3
    objs[r, c] = vert[v, 0]
    objs[r, c + 1] = vert[v, 1]
    objs[r, c + 2] = vert[v, 2]
  gadr = -1
  if nh > 0:
    for i in range(_NEXTREMA):
      _flat_set(objt, iadr + i, ext[i])
    gadr = iadr + _NEXTREMA
    for i in range(nh):        # vert_edgeadr
      _flat_set(objt, gadr + i, graph[2 + i])
    for i in range(nedge):     # edge_localid
      _flat_set(objt, gadr + nh + i, graph[2 + 2 * nh + i])
  e = _MESH_TABLE + 3 + _MESH_ENTRY * count
  _flat_set(objt, e, key)
  _flat_set(objt, e + 1, vert.shape[0])
  _flat_set(objt, e + 2, row)
  _flat_set(objt, e + 3, gadr)
  _flat_set(objt, _MESH_TABLE, count + 1)
  _flat_set(objt, _MESH_TABLE + 1, row + (n + 5) // 6)
  _flat_set(objt, _MESH_TABLE + 2, iadr + nint)
  _mesh_header(objs, k, row, n, gadr)
  return emptied


@_inline
def _mesh_header(objs, k, row, n, gadr):
  """Object k's vertices at objs rows from `row` on (n of them), its adjacency at flat int
  `gadr` (-1: none), no previous support vertex yet."""
  objs[k, _VADR] = row
  objs[k, _VNUM] = n
  objs[k, _GADR] = gadr
  objs[k, _GHINT] = -1.0


@jit
def set_meshes(objs, objt, type1, vert1, ext1, graph1, vert2, ext2, graph2):
  """Object 1's mesh, and object 0's when type1 is a mesh (`set_mesh`), both in the cache
  at once."""
  if type1 == _MESH:
    set_mesh(objs, objt, 0, vert1, ext1, graph1)
    if set_mesh(objs, objt, 1, vert2, ext2, graph2):
      set_mesh(objs, objt, 0, vert1, ext1, graph1)
  else:
    set_mesh(objs, objt, 1, vert2, ext2, graph2)


# a primitive's (empty) mesh arrays for `multicontact` (numba freezes global arrays into the
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
                              split_work(fbuf, ibuf, ccd_iterations), ibuf)


@jit
def collide_convex_views(type1, size1, pos1, mat1, type2, size2, pos2, mat2, margin,
                         ccd_iterations, ccd_tolerance, flags, dist, pos, frame, w, ibuf):
  """`collide_convex_work` on `split_work`'s views `w` of the work buffers (ibuf the int
  buffer they view)."""
  if type1 == _PLANE:
    return plane_convex(size1, pos1, mat1, type2, size2, pos2, mat2, margin, dist, pos, frame)
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = w
  set_obj(objs, objt, 0, type1, size1, pos1, mat1, margin)
  set_obj(objs, objt, 1, type2, size2, pos2, mat2, margin)

  # one contact from GJK/EPA
  n = penetration(w, ccd_tolerance, ccd_iterations, margin, 0, dist, pos, frame)

  # MuJoCo 4.0's single-shot multicontact replaces it where a face or an edge lies on a face
  # (cylinders on boxes and cylinders, capsules on cylinders)
  if (n == 1 and not flags & (_DSBL_MULTICCD | _DSBL_NATIVECCD)
          and ((type1 == _CYLINDER and (type2 == _BOX or type2 == _CYLINDER))
               or (type1 == _CAPSULE and type2 == _CYLINDER))):
    o = _objt_offset(ccd_iterations) + 4
    if ibuf.shape[0] - o >= _PS_SIZE:
      nmulti = multicontact(objs, objt, _NO_VERT, _NO_GRAPH, _NO_POLY, _NO_VERT, _NO_GRAPH,
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
  `collision.libccd` instead.
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
def set_flex_obj(objs, objt, k, row, x, vid, n, radius, margin):
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


@_inline
def collide_flex_elem(type1, size1, pos1, mat1, x, vid1, n1, r1, vid2, n2, r2, margin,
                      ccd_iterations, ccd_tolerance, dist, pos, frame, w):
  """MuJoCo's mjc_ConvexElem (native CCD, one contact): geom 1 (type1 >= 0, size/pos/mat) or
  flex element 1 (type1 < 0: rows vid1[0:n1] of the flex vertex positions x, radius r1)
  against flex element 2 (rows vid2[0:n2] of x, radius r2); margin is the pair margin plus
  gap. Normal from object 1 to 2 into frame[0, 0:3]; returns 0 or 1. w: `split_work`'s
  views of the work buffers (the elements' vertices go to rows 2 and 3), made once for
  all the pairs of a pass."""
  objs, objt = w.objs, w.objt
  if type1 >= 0:
    set_obj(objs, objt, 0, type1, size1, pos1, mat1, margin)
  else:
    set_flex_obj(objs, objt, 0, 2, x, vid1, n1, r1, margin)
  set_flex_obj(objs, objt, 1, 3, x, vid2, n2, r2, margin)
  return penetration(w, ccd_tolerance, ccd_iterations, margin, 0, dist, pos, frame)


@jit
def collide_mesh_flex_elem(size1, pos1, mat1, vert1, ext1, graph1, x, vid2, n2, r2, margin,
                           ccd_iterations, ccd_tolerance, dist, pos, frame, w):
  """mjc_ConvexElem for mesh geom 1 (vert1/ext1/graph1 as `collide_mesh_work`'s) against flex
  element 2 (rows vid2[0:n2] of x, radius r2): one GJK/EPA contact, normal from the mesh to
  the element, 0 or 1 returned. w: views of work buffers with room for the mesh in their
  mesh cache (Data's, `work_sizes`)."""
  objs, objt = w.objs, w.objt
  set_obj(objs, objt, 0, _MESH, size1, pos1, mat1, margin)
  set_mesh(objs, objt, 0, vert1, ext1, graph1)
  set_flex_obj(objs, objt, 1, 2, x, vid2, n2, r2, margin)
  return penetration(w, ccd_tolerance, ccd_iterations, margin, 0, dist, pos, frame)


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



@jit
def collide_mesh_work(type1, size1, pos1, mat1, vert1, ext1, graph1, poly1, type2, size2, pos2,
                      mat2, vert2, ext2, graph2, poly2, margin, ccd_iterations, ccd_tolerance,
                      flags, dist, pos, frame, fbuf, ibuf):
  """MuJoCo's mjc_Convex for a pair with a mesh (type1 <= type2, so geom 2 is a mesh):
  one contact from GJK/EPA over the hull vertices. vert/graph: the mesh's float32 vertices
  and its mesh_graph block (empty for a primitive geom, or a mesh without a hull graph:
  then every vertex is searched).
  Box-, cylinder- and mesh-mesh pairs get up to four contacts, capsule-mesh two, where flat
  features meet (MuJoCo 4.0's multicontact, `multicontact`), unless MULTICCD or NATIVECCD is
  disabled in flags."""
  return collide_mesh_views(type1, size1, pos1, mat1, vert1, ext1, graph1, poly1, type2, size2,
                            pos2, mat2, vert2, ext2, graph2, poly2, margin, ccd_iterations,
                            ccd_tolerance, flags, dist, pos, frame,
                            split_work(fbuf, ibuf, ccd_iterations, False), ibuf)


@jit
def collide_mesh_views(type1, size1, pos1, mat1, vert1, ext1, graph1, poly1, type2, size2, pos2,
                       mat2, vert2, ext2, graph2, poly2, margin, ccd_iterations, ccd_tolerance,
                       flags, dist, pos, frame, w, ibuf):
  """`collide_mesh_work` on `split_work`'s views `w` of the work buffers (ibuf the int buffer
  they view)."""
  objs, objt, sx, si, tx, ti, xw, ctr, cnt, pt = w
  set_obj(objs, objt, 0, type1, size1, pos1, mat1, margin)
  set_obj(objs, objt, 1, type2, size2, pos2, mat2, margin)
  set_meshes(objs, objt, type1, vert1, ext1, graph1, vert2, ext2, graph2)
  n = penetration(w, ccd_tolerance, ccd_iterations, margin, 0, dist, pos, frame)
  o = _objt_offset(ccd_iterations) + 4
  if (n == 1 and not flags & (_DSBL_MULTICCD | _DSBL_NATIVECCD) and type2 == _MESH
      and ibuf.shape[0] - o >= _PS_SIZE):
    isc = ibuf[o:o + _PS_SIZE]
    nmulti = 0
    if type1 == _BOX or type1 == _MESH or type1 == _CAPSULE or type1 == _CYLINDER:
      nmulti = multicontact(objs, objt, vert1, graph1, poly1, vert2, graph2, poly2, xw, si,
                             cnt, pt, isc, margin, dist, pos, frame)
    if nmulti > 0:
      n = nmulti
  return n

