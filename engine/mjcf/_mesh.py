"""Mesh assets at load time: STL/OBJ/MSH/inline vertices -> MuJoCo's compiled mesh.

Follows MuJoCo's mjCMesh (src/user/user_mesh.cc): vertices are read as float32 (an STL's
repeated corners merged in first occurrence order, as its decoder does), the convex hull
computed with Qhull (engine/mjcf/_qhull.py) into MuJoCo's `mesh_graph` layout,
refpos/refquat/scale applied, then the mesh is moved to its centre of mass (volume, shell or
hull, per `inertia`) and rotated to its principal axes;
`pos`/`quat` keep that offset for the geom frame. `compile_normals` makes the drawing normals
(`mesh_normal`, `mesh_facenormal`): given ones (OBJ `vn`, MSH, the `normal` attribute) or
mjCMesh::MakeNormal's, in float32 as MuJoCo rounds them. Plain numpy, load time only.
"""
import math
import os
import struct

import numpy as np

from numjoco.engine import rotation
from numjoco.engine.mjcf import _inertia
from numjoco.engine.mjcf import _qhull
from numjoco.engine.rotation import EPS
from numjoco.engine.types import MINVAL

INERTIA = {"convex": 0, "exact": 1, "legacy": 2, "shell": 3}
_CONVEX, _EXACT, _LEGACY, _SHELL = 0, 1, 2, 3


class MeshError(ValueError):
  """A mesh that cannot be compiled; the compiler adds the element's file and line."""


# ------------------------------------------------------------------------------------ files

def read_file(path, data):
  """(vert float32 (n,3), face int32 (m,3) or None, texcoord float32 (k,2) or None,
  facetexcoord int32 (m,3) or None, normal float32 (j,3) or None, facenormal int32 (m,3) or
  None) from STL, OBJ or MSH bytes; `path` names it. Texture coordinates come from an OBJ's
  `vt` lines, v flipped (1 - v) as MuJoCo's OBJ decoder does; normals from its `vn` lines (with
  the faces' normal indices) or an MSH's normal block; an STL has none."""
  ext = os.path.splitext(path)[1].lower()
  if ext == ".stl":
    return (*_read_stl(path, data), None, None, None, None)
  if ext == ".obj":
    return _read_obj(path, data)
  if ext == ".msh":
    return _read_msh(path, data)
  raise MeshError(f"mesh file '{path}': unknown format (expected .stl, .obj or .msh)")


def _read_msh(path, data):
  """MuJoCo's legacy binary MSH: int32 counts (nvertex, nnormal, ntexcoord, nface), then
  float32 positions, normals, texture coordinates and int32 face corners (mjCMesh::LoadMSH).
  Vertices are kept as given (no merging); the normals are per vertex (face indices shared)."""
  if len(data) < 16:
    raise MeshError(f"MSH file '{path}': missing header" if data else
                    f"MSH file '{path}' is empty")
  nv, nn, nt, nf = struct.unpack("<4i", data[:16])
  if nv < 4 or nf < 0 or nn < 0 or nt < 0 or nn not in (0, nv) or nt not in (0, nv):
    raise MeshError(f"MSH file '{path}': invalid sizes (nvertex {nv}, nnormal {nn}, "
                    f"ntexcoord {nt}, nface {nf})")
  size = 16 + 12 * (nv + nn + nf) + 8 * nt
  if len(data) != size:
    raise MeshError(f"MSH file '{path}': unexpected file size {len(data)} (header says "
                    f"{size})")
  vert = np.frombuffer(data, "<f4", 3 * nv, 16).reshape(-1, 3).astype(np.float32)
  normal = (np.frombuffer(data, "<f4", 3 * nn, 16 + 12 * nv).reshape(-1, 3).astype(np.float32)
            if nn else None)
  off = 16 + 12 * (nv + nn)
  uv = np.frombuffer(data, "<f4", 2 * nt, off).reshape(-1, 2).astype(np.float32) if nt else None
  off += 8 * nt
  face = (np.frombuffer(data, "<i4", 3 * nf, off).reshape(-1, 3).astype(np.int32) if nf
          else None)
  faceuv = face.copy() if face is not None and uv is not None else None
  facenormal = face.copy() if face is not None and normal is not None else None
  return vert, face, uv, faceuv, normal, facenormal


def _read_stl(path, data):
  n = struct.unpack("<I", data[80:84])[0] if len(data) >= 84 else -1
  if n >= 0 and len(data) == 84 + 50 * n:
    if n == 0:
      raise MeshError(f"STL file '{path}' has no triangles")
    rec = np.frombuffer(data, np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                        count=n, offset=84)
    vert = rec["v"].reshape(-1, 3).astype(np.float32)
  elif data.lstrip()[:5].lower() == b"solid":
    vals = []
    for lineno, line in enumerate(data.decode("latin-1").splitlines(), 1):
      parts = line.split()
      if parts and parts[0] == "vertex":
        try:
          vals.append([float(p) for p in parts[1:4]])
        except ValueError:
          raise MeshError(f"STL file '{path}' line {lineno}: bad vertex") from None
        if len(parts) != 4:
          raise MeshError(f"STL file '{path}' line {lineno}: bad vertex")
    if not vals or len(vals) % 3:
      raise MeshError(f"STL file '{path}': ASCII STL without whole triangles")
    vert = np.array(vals, np.float32)
  else:
    raise MeshError(f"STL file '{path}': not a binary STL (size {len(data)} does not match "
                    f"its triangle count) nor an ASCII STL")
  face = np.arange(len(vert), dtype=np.int32).reshape(-1, 3)
  return dedup(vert, face)   # MuJoCo's STL decoder merges the repeated corners


def _read_obj(path, data):
  verts, faces, uvs, faceuvs, nrms, facenrms, polys = [], [], [], [], [], [], []
  for lineno, line in enumerate(data.decode("latin-1").splitlines(), 1):
    parts = line.split()
    if not parts:
      continue
    try:
      if parts[0] == "v":
        verts.append([float(p) for p in parts[1:4]])
        if len(parts) < 4:
          raise ValueError
      elif parts[0] == "vt":
        uvs.append([float(parts[1]), float(parts[2]) if len(parts) > 2 else 0.0])
      elif parts[0] == "vn":
        nrms.append([float(p) for p in parts[1:4]])
        if len(parts) < 4:
          raise ValueError
      elif parts[0] == "f":
        idx, tdx, ndx = [], [], []
        for p in parts[1:]:
          fields = p.split("/")
          i = int(fields[0])
          idx.append(i - 1 if i > 0 else len(verts) + i)
          j = int(fields[1]) if len(fields) > 1 and fields[1] else 0
          tdx.append(j - 1 if j > 0 else len(uvs) + j if j < 0 else -1)
          k = int(fields[2]) if len(fields) > 2 and fields[2] else 0
          ndx.append(k - 1 if k > 0 else len(nrms) + k if k < 0 else -1)
        if len(idx) < 3:
          raise ValueError
        polys.append((idx, tdx, ndx))
    except (ValueError, IndexError):
      raise MeshError(f"OBJ file '{path}' line {lineno}: cannot read '{line.strip()}'") from None
  if not verts:
    raise MeshError(f"OBJ file '{path}' has no vertices")
  if any(i < 0 or i >= len(verts) for p in polys for i in p[0]):
    raise MeshError(f"OBJ file '{path}': a face refers to a vertex it does not have")
  for (idx, tdx, ndx), corners in zip(polys, _split_polygons(verts, polys)):
    for c in corners:
      faces.append([idx[k] for k in c])
      faceuvs.append([tdx[k] for k in c])
      facenrms.append([ndx[k] for k in c])
  face = np.array(faces, np.int32).reshape(-1, 3) if faces else None
  uv = faceuv = None
  if uvs and faces:
    uv = np.array(uvs, np.float32)
    uv[:, 1] = 1 - uv[:, 1]
    faceuv = np.array(faceuvs, np.int32)
    if faceuv.min() < 0 or faceuv.max() >= len(uv):   # faces without (valid) vt: no texture
      uv = faceuv = None
  normal = np.array(nrms, np.float32).reshape(-1, 3) if nrms else None
  facenormal = None
  if nrms and faces:
    facenormal = np.array(facenrms, np.int32)
    if facenormal.min() < 0 or facenormal.max() >= len(nrms):
      raise MeshError(f"OBJ file '{path}' has normals (vn) but a face corner without a valid "
                      f"normal index (write faces as v//vn or v/vt/vn)")
  return np.array(verts, np.float32), face, uv, faceuv, normal, facenormal


_OBJ_MAXPOLY = 100   # MuJoCo 4.0.1 keeps no triangle of an OBJ face with more corners (100
                     # corners are triangulated, 101 and more dropped)


def _split_polygons(verts, polys):
  """Corner triples of each OBJ polygon as tinyobjloader (MuJoCo's OBJ reader; the version in
  MuJoCo 4.0.1, 2023, with ObjReaderConfig's triangulate=true and without mapbox earcut)
  triangulates it, in float32 as tinyobjloader's real_t: a quad along its shorter diagonal
  (0-2 only when strictly shorter than 1-3; near-square quads of a sphere tie in double
  precision), a larger polygon by tinyobjloader's ear clipping (_ear_clip), one with more than
  _OBJ_MAXPOLY corners not at all."""
  quads = [p[0] for p in polys if len(p[0]) == 4]
  if quads:
    v = np.asarray(verts, np.float32)[np.asarray(quads)]     # (nquad, 4, 3)
    e02, e13 = v[:, 2] - v[:, 0], v[:, 3] - v[:, 1]
    d02 = (e02[:, 0] * e02[:, 0] + e02[:, 1] * e02[:, 1]) + e02[:, 2] * e02[:, 2]
    d13 = (e13[:, 0] * e13[:, 0] + e13[:, 1] * e13[:, 1]) + e13[:, 2] * e13[:, 2]
    first = iter((d02 < d13).tolist())
  v32 = None
  out = []
  for idx, _, _ in polys:
    if len(idx) == 3:
      out.append([(0, 1, 2)])
    elif len(idx) == 4:
      out.append([(0, 1, 2), (0, 2, 3)] if next(first) else [(0, 1, 3), (1, 2, 3)])
    elif len(idx) > _OBJ_MAXPOLY:
      out.append([])
    else:
      if v32 is None:
        v32 = np.asarray(verts, np.float32)
      out.append(_ear_clip(v32[np.asarray(idx)]))
  return out


def _ear_clip(p):
  """tinyobjloader's built-in triangulation of a polygon with more than 4 corners p ((n,3)
  float32), as corner triples (positions in the polygon), every operation in float32.
  Projection plane: the first corner triple k, k+1, k+2 whose edge cross product has a
  component above FLT_EPSILON picks the two axes (y,z if |cx| is the strict largest, else x,y
  if |cz| is, else x,z; y,z when there is none). Then, from guess = 0: the triple guess,
  guess+1, guess+2 of the remaining corners is an ear unless its turn `cross` times its
  `area` (tinyobjloader's: (x0 y1 - y0 x1) / 2 of the triple alone, not of the polygon) is
  negative or another remaining corner is inside it (pnpoly, its tie rules); an ear is output
  and its middle corner removed (guess kept), else guess advances. When as many tries as
  corners remain fail, the rest of the polygon is dropped; a last 3 corners are output."""
  f32 = np.float32
  n = len(p)
  eps = f32(np.finfo(np.float32).eps)
  ax0, ax1 = 1, 2
  for k in range(n):
    a, b, c = p[k], p[(k + 1) % n], p[(k + 2) % n]
    e0, e1 = b - a, c - b
    cx = abs(e0[1] * e1[2] - e0[2] * e1[1])
    cy = abs(e0[2] * e1[0] - e0[0] * e1[2])
    cz = abs(e0[0] * e1[1] - e0[1] * e1[0])
    if cx > eps or cy > eps or cz > eps:
      if not (cx > cy and cx > cz):
        ax0 = 0
        if cz > cx and cz > cy:
          ax1 = 1
      break
  X = [f32(q) for q in p[:, ax0]]
  Y = [f32(q) for q in p[:, ax1]]
  half = f32(0.5)
  zero = f32(0.0)
  rem = list(range(n))
  out = []
  guess = 0
  tries = n
  prev = n
  while len(rem) > 3 and tries > 0:
    m = len(rem)
    if guess >= m:
      guess -= m
    if prev != m:
      prev = m
      tries = m
    else:
      tries -= 1
    ind = [rem[(guess + k) % m] for k in range(3)]
    vx = [X[i] for i in ind]
    vy = [Y[i] for i in ind]
    cross = (vx[1] - vx[0]) * (vy[2] - vy[1]) - (vy[1] - vy[0]) * (vx[2] - vx[1])
    area = (vx[0] * vy[1] - vy[0] * vx[1]) * half
    if cross * area < zero:
      guess += 1
      continue
    if any(_pnpoly3(vx, vy, X[rem[(guess + o) % m]], Y[rem[(guess + o) % m]])
           for o in range(3, m)):
      guess += 1
      continue
    out.append(tuple(ind))
    del rem[(guess + 1) % m]
  if len(rem) == 3:
    out.append(tuple(rem))
  return out


def _pnpoly3(vx, vy, tx, ty):
  """W. R. Franklin's point-in-polygon test on a triangle, as tinyobjloader's pnpoly (float32
  values in, float32 arithmetic)."""
  c = False
  j = 2
  for i in range(3):
    if (vy[i] > ty) != (vy[j] > ty) and \
        tx < (vx[j] - vx[i]) * (ty - vy[i]) / (vy[j] - vy[i]) + vx[i]:
      c = not c
    j = i
  return c


# ----------------------------------------------------------------------------------- compile

def dedup(vert, face):
  """Merge bit-identical float32 vertices, first occurrence order."""
  _, first, inv = np.unique(vert, axis=0, return_index=True, return_inverse=True)
  inv = inv.ravel()
  if len(first) == len(vert):
    return vert, face
  order = np.argsort(first)
  rank = np.empty(len(order), np.int64)
  rank[order] = np.arange(len(order))
  new = vert[first[order]]
  if face is not None:
    face = rank[inv[face]].astype(np.int32)
  return new, face


def _triangles(v, face):
  """(area, unit normal, centre) of each triangle (rows), with the operations of MuJoCo's
  triangle() in its order, so that sums of them round as MuJoCo's do."""
  a, b, c = v[face[:, 0]], v[face[:, 1]], v[face[:, 2]]
  cen = (a + b + c) / 3
  e, f = b - a, c - a
  n0 = e[:, 1] * f[:, 2] - e[:, 2] * f[:, 1]
  n1 = e[:, 2] * f[:, 0] - e[:, 0] * f[:, 2]
  n2 = e[:, 0] * f[:, 1] - e[:, 1] * f[:, 0]
  length = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
  small = length < MINVAL
  safe = np.where(small, 1.0, length)
  unit = np.stack([n0 / safe, n1 / safe, n2 / safe], axis=1)
  area = np.where(small, 0.0, 0.5 * length)
  return area, unit, cen


def _dot3(a, b):
  """Row-wise dot products, summed left to right as mjuu_dot3."""
  return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]


def _seqsum(x):
  """Sum in sequence (as a C loop accumulates), not numpy's pairwise summation."""
  return float(np.cumsum(x)[-1]) if len(x) else 0.0


def _rotate_rows(v, mat, transpose):
  """M v (or M^T v) for every row v, as mjuu_mulvecmat (mjuu_mulvecmatT) computes it."""
  m = np.asarray(mat, np.float64).reshape(3, 3)
  if transpose:
    m = m.T
  return np.stack([m[i, 0] * v[:, 0] + m[i, 1] * v[:, 1] + m[i, 2] * v[:, 2]
                   for i in range(3)], axis=1)


def make_graph(v, maxhullvert, righthand=True):
  """MuJoCo's mesh_graph of the convex hull of v (float64 (n,3), the vertices as read):
  [numvert, numface, vert_edgeadr, vert_globalid, edge_localid (-1 separated), face_globalid].
  A mirroring scale (`righthand` False) turns each hull face round (its last two corners
  swapped), as MuJoCo writes the graph of a mirrored mesh.

  As mjCMesh::MakeGraph: with libqhull_r (engine/mjcf/_qhull.py) the vertices, edges and
  faces come in Qhull's internal orders, as MuJoCo writes them; without it, from scipy's hull
  with the vertices in point-id order (the same hull, ties between equal vertices broken
  differently)."""
  n = len(v)
  d1 = np.linalg.norm(v - v[0], axis=1)
  if not np.any(d1[1:] > MINVAL):
    raise MeshError("mesh has colocated vertices, cannot compute convex hull")
  if np.linalg.matrix_rank(v - v[0], tol=1e-12 * max(1.0, d1.max())) < 3:
    raise MeshError("mesh has collinear or coplanar vertices, cannot compute convex hull")
  opts = "Qt"
  if maxhullvert > -1:
    opts += f" Q9 TA{maxhullvert - 4}"
  try:
    records = _qhull.hull_records(v, opts)
  except _qhull.QhullError as e:
    raise MeshError(f"qhull error: {e}") from None
  if records is None:
    gid, nbrs, tri = _scipy_hull(v, opts)
  else:
    gid, nbrs, tri = _qhull_graph(*records)
  edgeadr, edges = [], []
  for lst in nbrs:
    edgeadr.append(len(edges))
    edges.extend(lst + [-1])
  numvert, numface = len(gid), len(tri)
  if len(edges) != numvert + 3 * numface:
    raise MeshError("convex hull is not a closed triangulated surface")
  tri = np.asarray(tri, np.int64).reshape(-1, 3)
  if not righthand:
    tri = tri[:, [0, 2, 1]]
  return np.concatenate([[numvert, numface], edgeadr, gid, edges,
                         tri.ravel()]).astype(np.int32)


def _qhull_graph(vertices, neighbors, faces):
  """(vert_globalid, per-vertex local neighbour ids, faces) from Qhull's records, in the
  orders mjCMesh::MakeGraph writes: a vertex's neighbours as first met over its neighbour
  facets' vertex sets; a face's first two corners swapped on a `toporient` facet."""
  local = {p: i for i, p in enumerate(vertices)}
  nbrs = []
  for p, facets in zip(vertices, neighbors):
    lst = []
    for f in facets:
      if len(f) != 3:
        raise MeshError("qhull did not return triangles")
      for q in f:
        if q != p and local[q] not in lst:
          lst.append(local[q])
    nbrs.append(lst)
  tri = [[f[1], f[0], f[2]] if top else list(f) for f, top in faces]
  return np.asarray(vertices, np.int64), nbrs, tri


def _scipy_hull(v, opts):
  """(vert_globalid in point-id order, neighbour lists, outward faces) from scipy's Qhull."""
  from scipy.spatial import ConvexHull, QhullError
  try:
    hull = ConvexHull(v, qhull_options=opts)
  except QhullError as e:
    raise MeshError(f"qhull error: {str(e).splitlines()[0]}") from None
  tri = hull.simplices.astype(np.int64)
  area, nrm, cen = _triangles(v, tri)
  inside = v[np.unique(tri)].mean(axis=0)
  flip = np.einsum("ij,ij->i", nrm, cen - inside) < 0
  tri[flip] = tri[flip][:, [1, 0, 2]]
  gid = np.unique(tri)
  local = -np.ones(len(v), np.int64)
  local[gid] = np.arange(len(gid))
  nbrs = [[] for _ in gid]
  for f in tri:
    for i in range(3):
      li = local[f[i]]
      for j in range(3):
        if j != i and local[f[j]] not in nbrs[li]:
          nbrs[li].append(local[f[j]])
  return gid, nbrs, tri


def graph_faces(graph):
  """The hull's triangles (global vertex ids) from a mesh_graph."""
  nv, nf = graph[0], graph[1]
  return graph[2 + 3 * nv + 3 * nf:].reshape(nf, 3).astype(np.int64)


def compile_mesh(vert, face, scale, refpos, refquat, inertia, maxhullvert, needhull,
                 reorient=True):
  """Compile one mesh as MuJoCo's mjCMesh::Process.

  reorient=False (a mesh made from an SDF, as MuJoCo's needreorient_): the vertices stay
  where they are (pos 0, quat identity) while volume and boxsz are still those about the
  centre of mass and principal axes.

  Returns a dict: vert (float32 (n,3), centred and principal), dvert (the same in float64, as
  MuJoCo's octree reads them before narrowing), face (int32 (m,3)), graph
  (int32 or None), pos, quat (the removed offset), volume (volume or surface area, per
  `inertia`), boxsz (half sizes of the equivalent inertia box), aamm (vertex bounds).
  """
  vert = np.asarray(vert, np.float32).reshape(-1, 3)
  if not np.all(np.isfinite(vert)):
    raise MeshError("vertex coordinates are not finite")
  if len(vert) < 4:
    raise MeshError("at least 4 vertices required")
  if face is not None and len(face) and (face.min() < 0 or face.max() >= len(vert)):
    raise MeshError("face refers to a vertex that does not exist")
  dv = vert.astype(np.float64)
  if face is not None and len(face) and inertia == _EXACT:
    area, _, _ = _triangles(dv, face.astype(np.int64))
    good = face[area > math.sqrt(MINVAL)]
    half = np.concatenate([good[:, [0, 1]], good[:, [1, 2]], good[:, [2, 0]]])
    if len(np.unique(half, axis=0)) < len(half):
      raise MeshError("faces have inconsistent orientation (inertia='exact' needs a "
                      "well-oriented, watertight mesh)")
  righthand = scale[0] * scale[1] * scale[2] > 0
  graph = None
  if needhull or inertia == _CONVEX or face is None or not len(face):
    graph = make_graph(dv, maxhullvert, righthand)
  if face is None or not len(face):
    face = graph_faces(graph).astype(np.int32)   # turned round with the graph if mirrored
  else:
    face = np.asarray(face, np.int32)
    if not righthand:   # a mirroring scale turns every face round
      face = face[:, [0, 2, 1]]
  # user offset, rotation, scaling
  if any(x != 0 for x in refpos):
    dv = dv - np.asarray(refpos, np.float64)
  q = [float(x) for x in refquat]
  if q != [1, 0, 0, 0]:
    rotation.normvec(q)
    dv = _rotate_rows(dv, rotation.quat2mat(q), transpose=True)
  if any(x != 1 for x in scale):
    dv = dv * np.asarray(scale, np.float64)
  f64 = face.astype(np.int64)
  area, nrm, cen = _triangles(dv, f64)
  total = _seqsum(area)
  if total < MINVAL:
    raise MeshError("mesh surface area is too small")
  facecen = np.array([_seqsum(area * cen[:, k]) / total for k in range(3)])
  # centre of mass and volume (or area)
  if inertia == _SHELL:
    w = area
  else:
    fi = graph_faces(graph) if inertia == _CONVEX else f64
    area, nrm, cen = _triangles(dv, fi)
    w = _dot3(cen - facecen, nrm) * area / 3
    if inertia == _LEGACY:
      w = np.abs(w)
  vol = _seqsum(w)
  com = (np.array([_seqsum(w * (cen[:, k] * 3.0 / 4.0 + facecen[k] / 4.0)) for k in range(3)])
         / vol if vol >= MINVAL else np.zeros(3))
  if vol < MINVAL:
    if inertia == _SHELL:
      raise MeshError("mesh surface area is too small")
    if vol < 0:
      raise MeshError("mesh volume is negative (misoriented triangles)")
    raise MeshError("mesh volume is too small. Try setting inertia to shell")
  # inertia about the centre of mass
  vc = dv - com
  fi = graph_faces(graph) if inertia == _CONVEX else f64
  D, E, F = vc[fi[:, 0]], vc[fi[:, 1]], vc[fi[:, 2]]
  area, nrm, cen = _triangles(vc, fi)
  if inertia == _SHELL:
    w = area
  else:
    w = _dot3(cen, nrm) * area / 3
    if inertia == _LEGACY:
      w = np.abs(w)
  vol = _seqsum(w)
  C = 12.0 if inertia == _SHELL else 20.0
  P = []
  for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
    s = (2 * (D[:, a] * D[:, b] + E[:, a] * E[:, b] + F[:, a] * F[:, b])
         + D[:, a] * E[:, b] + D[:, b] * E[:, a] + D[:, a] * F[:, b] + D[:, b] * F[:, a]
         + E[:, a] * F[:, b] + E[:, b] * F[:, a])
    P.append(_seqsum(w / C * s))
  full = [P[1] + P[2], P[0] + P[2], P[0] + P[1], -P[3], -P[4], -P[5]]
  m9 = [full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]]
  eigval, quat = _inertia.eig3(m9, 1e-7)   # MuJoCo's mesh compiler's tolerance
  if eigval[2] <= 0:
    raise MeshError("eigenvalue of mesh inertia must be positive")
  tol = lambda x: x * (1.0 - 1e-6) - 1e-9
  if (eigval[0] + eigval[1] < tol(eigval[2]) or eigval[0] + eigval[2] < tol(eigval[1])
      or eigval[1] + eigval[2] < tol(eigval[0])):
    raise MeshError("eigenvalues of mesh inertia violate A + B >= C")
  # a flat mesh's thin side can come out a rounding below zero (within the A + B >= C
  # tolerance above): its box is flat there, as MuJoCo's
  boxsz = [0.5 * math.sqrt(max(0.0, 6 * (eigval[1] + eigval[2] - eigval[0]) / vol)),
           0.5 * math.sqrt(max(0.0, 6 * (eigval[0] + eigval[2] - eigval[1]) / vol)),
           0.5 * math.sqrt(max(0.0, 6 * (eigval[0] + eigval[1] - eigval[2]) / vol))]
  if reorient:
    # R^T (v - com): coordinates in the principal frame (mjCMesh::Rotate)
    inv = rotation.quat2mat([quat[0], -quat[1], -quat[2], -quat[3]])
    dv = _rotate_rows(vc, inv, transpose=False)
  else:
    com, quat = np.zeros(3), [1.0, 0.0, 0.0, 0.0]
  aamm = np.concatenate([dv.min(axis=0), dv.max(axis=0)])
  return {"vert": dv.astype(np.float32), "dvert": dv, "face": face, "graph": graph,
          "pos": [float(x) for x in com], "quat": [float(x) for x in quat],
          "volume": float(vol), "boxsz": boxsz, "aamm": [float(x) for x in aamm]}


def fit_geom(cm, gtype, size, fitaabb, fitscale):
  """(size, centre offset in the mesh frame) of a primitive geom fitted to the compiled mesh
  `cm`, as mjCMesh::FitGeom: from the mesh's equivalent inertia box, or (fitaabb) the
  smallest geom whose bounding box contains the mesh's; then scaled by fitscale. Size entries
  the type does not use keep their given values (scaled too)."""
  size, center = list(size), [0.0, 0.0, 0.0]
  if not fitaabb:
    b = cm["boxsz"]
    if gtype == 2:      # sphere
      size[0] = (b[0] + b[1] + b[2]) / 3
    elif gtype == 3:    # capsule
      size[0] = (b[0] + b[1]) / 2
      size[1] = max(0.0, b[2] - size[0] / 2)
    elif gtype == 5:    # cylinder
      size[0] = (b[0] + b[1]) / 2
      size[1] = b[2]
    else:               # ellipsoid, box
      size[:3] = b
  else:
    a = cm["aamm"]
    center = [(a[k] + a[k + 3]) / 2 for k in range(3)]
    half = [a[k + 3] - center[k] for k in range(3)]
    if gtype == 2:
      size[0] = max(max(half[0], half[1]), half[2])
    elif gtype in (3, 5):
      size[0] = max(half[0], half[1])
      size[1] = half[2] - size[0] if gtype == 3 else half[2]
    else:
      size[:3] = half
  return [x * fitscale for x in size], center


# ----------------------------------------------------------------------------------- normals
# mjCMesh keeps normals in float: every accumulation, subtraction and normalisation below
# rounds to float32 where MuJoCo's does, in MuJoCo's order, so that the cancellations of
# MakeNormal's sharp-edge rule (a cube corner loses all its faces) come out as in MuJoCo.

SHARP_COS = 0.8      # MakeNormal drops faces whose normal is further than this from the vertex's

F32 = np.float32


def _normal_area(dv, face):
  """(normal, area) of each face as MakeNormal computes them: the edge cross product, then
  mjuu_normvec (which leaves a vector whose squared length is below mjEPS as it is and returns
  0, and skips the division within mjEPS of unit length)."""
  a = dv[face[:, 0]]
  e, f = dv[face[:, 1]] - a, dv[face[:, 2]] - a
  n = np.stack([e[:, 1] * f[:, 2] - e[:, 2] * f[:, 1],
                e[:, 2] * f[:, 0] - e[:, 0] * f[:, 2],
                e[:, 0] * f[:, 1] - e[:, 1] * f[:, 0]], axis=1)
  return _normvec_rows(n)


def _normvec_rows(n):
  """mjuu_normvec on each row: (the rows, normalised where MuJoCo normalises, and the norms,
  0 where the squared norm is below mjEPS)."""
  sq = n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2]
  nrm = np.sqrt(sq)
  scale = (sq >= EPS) & (np.abs(nrm - 1) > EPS)
  out = np.where(scale[:, None], n / np.where(scale, nrm, 1.0)[:, None], n)
  return out, np.where(sq < EPS, 0.0, nrm)


def _accumulate(nvert, idx, vals):
  """float32 (nvert, 3) sums of the float64 rows `vals` at vertices `idx`, each vertex's
  terms added one at a time in the given order with the float += double of C (the sum is
  rounded to float32 after every term). Vectorised over the k-th term of every vertex."""
  out = np.zeros((nvert, 3), F32)
  if not len(idx):
    return out
  order = np.argsort(idx, kind="stable")
  sidx = idx[order]
  start = np.r_[0, np.flatnonzero(np.diff(sidx)) + 1]
  rank = np.arange(len(sidx)) - np.repeat(start, np.diff(np.r_[start, len(sidx)]))
  byrank = np.argsort(rank, kind="stable")
  bounds = np.searchsorted(rank[byrank], np.arange(rank.max() + 2))
  for r in range(rank.max() + 1):
    sel = order[byrank[bounds[r]:bounds[r + 1]]]
    v = idx[sel]
    out[v] = (out[v].astype(np.float64) + vals[sel]).astype(F32)
  return out


def make_normal(vert, face, smooth):
  """mjCMesh::MakeNormal: per vertex, the area-weighted sum of its faces' normals; unless
  `smooth`, minus the faces further than SHARP_COS from that sum's direction (so a cube's
  corners keep the faces they mostly belong to, or none); normalised in float32, (0, 0, 1)
  where nothing is left. `vert` float32 (n,3) before any transformation, `face` (m,3)."""
  dv = np.asarray(vert, np.float64).reshape(-1, 3)
  face = np.asarray(face, np.int64).reshape(-1, 3)
  nv = len(dv)
  nrm, area = _normal_area(dv, face)
  idx = face.ravel()                                    # corners in MuJoCo's loop order
  contrib = np.repeat(nrm * area[:, None], 3, axis=0)   # nrm[k] * area
  normal = _accumulate(nv, idx, contrib)
  if not smooth:
    vnrm, _ = _normvec_rows(normal[idx].astype(np.float64))
    fn = np.repeat(nrm, 3, axis=0)
    dot = fn[:, 0] * vnrm[:, 0] + fn[:, 1] * vnrm[:, 1] + fn[:, 2] * vnrm[:, 2]
    drop = dot < SHARP_COS
    normal = normal - _accumulate(nv, idx[drop], contrib[drop])
  length = np.sqrt(normal[:, 0] * normal[:, 0] + normal[:, 1] * normal[:, 1]
                   + normal[:, 2] * normal[:, 2])
  ok = length.astype(np.float64) > MINVAL     # C compares the float as a double
  normal = np.where(ok[:, None], normal / np.where(ok, length, F32(1))[:, None],
                    np.array([0, 0, 1], F32)).astype(F32)
  return normal


def compile_normals(vert, face, normal, facenormal, smooth, scale, refquat, quat):
  """mesh_normal float32 (k,3) and mesh_facenormal int32 (m,3) of one mesh, as mjCMesh::Process.

  `vert`, `face`: the mesh's vertices as read (float32) and its faces before the winding swap
  of a negative scale (the hull's for a mesh without faces); `normal`, `facenormal`: given
  normals (None: MakeNormal's, one per vertex) and their face indices (None: the faces' vertex
  indices times the number of normals per vertex); `quat`: the principal frame compile_mesh
  found. Normals are rotated by refquat, divided by scale (covectors) and renormalised in
  float32, then rotated into the principal frame.
  """
  face = np.asarray(face, np.int64).reshape(-1, 3)
  nvert = len(np.asarray(vert).reshape(-1, 3))
  if normal is None:
    normal = make_normal(vert, face, smooth)
    facenormal = face
  else:
    normal = np.asarray(normal, F32).reshape(-1, 3)
    if facenormal is None:
      facenormal = (len(normal) // nvert) * face
  facenormal = np.asarray(facenormal, np.int64).reshape(-1, 3)
  if len(facenormal) != len(face):
    raise MeshError("face data must have the same size as face normal data")
  if len(facenormal) and (facenormal.min() < 0 or facenormal.max() >= len(normal)):
    raise MeshError(f"face normal index out of range (the mesh has {len(normal)} normals)")
  if scale[0] * scale[1] * scale[2] < 0:     # left-handed: the faces' winding was swapped
    facenormal = facenormal[:, [0, 2, 1]]
  n = normal
  q = [float(x) for x in refquat]
  if q != [1, 0, 0, 0]:
    rotation.normvec(q)
    n = _rotate_rows(n.astype(np.float64), rotation.quat2mat(q), transpose=True).astype(F32)
  if any(x != 1 for x in scale):
    n = (n.astype(np.float64) / np.asarray(scale, np.float64)).astype(F32)
  sq = n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2]
  ok = sq.astype(np.float64) > MINVAL
  scl = F32(1) / np.sqrt(np.where(ok, sq, F32(1)))
  n = np.where(ok[:, None], n * scl[:, None], np.array([0, 0, 1], F32)).astype(F32)
  mat = rotation.quat2mat([quat[0], -quat[1], -quat[2], -quat[3]])
  n = _rotate_rows(n.astype(np.float64), mat, transpose=False).astype(F32)
  return n, facenormal.astype(np.int32)


# ---------------------------------------------------------------------- mesh from an SDF

# MarchingCubeCpp's triangle table (github.com/aparis69/MarchingCubeCpp, MIT license, the
# version MuJoCo pins): per cube configuration, the triangle count in the low 4 bits, then
# 4 bits per corner naming one of the cube's 12 edges.
_MC_TRIS = np.array([
    0, 33793, 36945, 159668546,
    18961, 144771090, 5851666, 595283255635,
    20913, 67640146, 193993474, 655980856339,
    88782242, 736732689667, 797430812739, 194554754,
    26657, 104867330, 136709522, 298069416227,
    109224258, 8877909667, 318136408323, 1567994331701604,
    189884450, 350847647843, 559958167731, 3256298596865604,
    447393122899, 651646838401572, 2538311371089956, 737032694307,
    29329, 43484162, 91358498, 374810899075,
    158485010, 178117478419, 88675058979, 433581536604804,
    158486962, 649105605635, 4866906995, 3220959471609924,
    649165714851, 3184943915608436, 570691368417972, 595804498035,
    124295042, 431498018963, 508238522371, 91518530,
    318240155763, 291789778348404, 1830001131721892, 375363605923,
    777781811075, 1136111028516116, 3097834205243396, 508001629971,
    2663607373704004, 680242583802939237, 333380770766129845, 179746658,
    42545, 138437538, 93365810, 713842853011,
    73602098, 69575510115, 23964357683, 868078761575828,
    28681778, 713778574611, 250912709379, 2323825233181284,
    302080811955, 3184439127991172, 1694042660682596, 796909779811,
    176306722, 150327278147, 619854856867, 1005252473234484,
    211025400963, 36712706, 360743481544788, 150627258963,
    117482600995, 1024968212107700, 2535169275963444, 4734473194086550421,
    628107696687956, 9399128243, 5198438490361643573, 194220594,
    104474994, 566996932387, 427920028243, 2014821863433780,
    492093858627, 147361150235284, 2005882975110676, 9671606099636618005,
    777701008947, 3185463219618820, 482784926917540, 2900953068249785909,
    1754182023747364, 4274848857537943333, 13198752741767688709, 2015093490989156,
    591272318771, 2659758091419812, 1531044293118596, 298306479155,
    408509245114388, 210504348563, 9248164405801223541, 91321106,
    2660352816454484, 680170263324308757, 8333659837799955077, 482966828984116,
    4274926723105633605, 3184439197724820, 192104450, 15217,
    45937, 129205250, 129208402, 529245952323,
    169097138, 770695537027, 382310500883, 2838550742137652,
    122763026, 277045793139, 81608128403, 1991870397907988,
    362778151475, 2059003085103236, 2132572377842852, 655681091891,
    58419234, 239280858627, 529092143139, 1568257451898804,
    447235128115, 679678845236084, 2167161349491220, 1554184567314086709,
    165479003923, 1428768988226596, 977710670185060, 10550024711307499077,
    1305410032576132, 11779770265620358997, 333446212255967269, 978168444447012,
    162736434, 35596216627, 138295313843, 891861543990356,
    692616541075, 3151866750863876, 100103641866564, 6572336607016932133,
    215036012883, 726936420696196, 52433666, 82160664963,
    2588613720361524, 5802089162353039525, 214799000387, 144876322,
    668013605731, 110616894681956, 1601657732871812, 430945547955,
    3156382366321172, 7644494644932993285, 3928124806469601813, 3155990846772900,
    339991010498708, 10743689387941597493, 5103845475, 105070898,
    3928064910068824213, 156265010, 1305138421793636, 27185,
    195459938, 567044449971, 382447549283, 2175279159592324,
    443529919251, 195059004769796, 2165424908404116, 1554158691063110021,
    504228368803, 1436350466655236, 27584723588724, 1900945754488837749,
    122971970, 443829749251, 302601798803, 108558722,
    724700725875, 43570095105972, 2295263717447940, 2860446751369014181,
    2165106202149444, 69275726195, 2860543885641537797, 2165106320445780,
    2280890014640004, 11820349930268368933, 8721082628082003989, 127050770,
    503707084675, 122834978, 2538193642857604, 10129,
    801441490467, 2923200302876740, 1443359556281892, 2901063790822564949,
    2728339631923524, 7103874718248233397, 12775311047932294245, 95520290,
    2623783208098404, 1900908618382410757, 137742672547, 2323440239468964,
    362478212387, 727199575803140, 73425410, 34337,
    163101314, 668566030659, 801204361987, 73030562,
    591509145619, 162574594, 100608342969108, 5553,
    724147968595, 1436604830452292, 176259090, 42001,
    143955266, 2385, 18433, 0,
], dtype=np.uint64)


def marching_cubes(field):
  """(vertices float32 (n,3) in grid units, faces int32 (m,3), normals float32 (n,3)) of the
  zero level set of `field` (float32, indexed [x, y, z]), with MarchingCubeCpp's vertex and
  triangle order (MuJoCo's mjCMesh::LoadSDF uses it): cells are visited z, then y, then x;
  a cell makes the vertices of its edges no earlier cell has made (in its 12-edge order) and
  its triangles from the table. Vectorised: each crossing edge is sorted by the cell that makes
  it. Normals are the normalised sums of the triangles' cross products, in float32."""
  nx, ny, nz = field.shape
  neg = field < 0
  config = np.zeros((nx - 1, ny - 1, nz - 1), np.int64)
  corners = ((0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1),
             (1, 1, 1))
  for bit, (dx, dy, dz) in enumerate(corners):
    config |= neg[dx:nx - 1 + dx, dy:ny - 1 + dy, dz:nz - 1 + dz].astype(np.int64) << bit
  keys, verts, edges = [], [], []
  for axis in range(3):
    lo = [slice(None)] * 3
    hi = [slice(None)] * 3
    lo[axis], hi[axis] = slice(0, field.shape[axis] - 1), slice(1, field.shape[axis])
    lo, hi = tuple(lo), tuple(hi)
    cross = neg[lo] != neg[hi]
    ijk = np.argwhere(cross)
    va, vb = field[lo][cross], field[hi][cross]
    u, w = [k for k in range(3) if k != axis]
    # the cell that makes this edge: one lower along the other two axes where it can be
    cell = ijk.copy()
    cell[:, u] = np.maximum(ijk[:, u] - 1, 0)
    cell[:, w] = np.maximum(ijk[:, w] - 1, 0)
    slot = 4 * axis + (ijk[:, u] >= 1) + 2 * (ijk[:, w] >= 1)
    lin = (cell[:, 2] * (ny - 1) + cell[:, 1]) * (nx - 1) + cell[:, 0]
    v = ijk.astype(np.float32)
    v[:, axis] += (va / (va - vb)).astype(np.float32)
    keys.append(lin * 12 + slot)
    verts.append(v)
    edges.append(ijk)
  order = np.argsort(np.concatenate(keys), kind="stable")
  rank = np.empty(len(order), np.int64)
  rank[order] = np.arange(len(order))
  vert = np.concatenate(verts)[order]
  index, start = [], 0
  for axis, ijk in enumerate(edges):
    shape = list(field.shape)
    shape[axis] -= 1
    g = -np.ones(shape, np.int64)
    g[ijk[:, 0], ijk[:, 1], ijk[:, 2]] = rank[start:start + len(ijk)]
    start += len(ijk)
    index.append(g)
  cz, cy, cx = np.nonzero(np.transpose((config != 0) & (config != 255), (2, 1, 0)))
  cfg = config[cx, cy, cz]
  gx, gy, gz = index
  e = np.stack([gx[cx, cy, cz], gx[cx, cy + 1, cz], gx[cx, cy, cz + 1], gx[cx, cy + 1, cz + 1],
                gy[cx, cy, cz], gy[cx + 1, cy, cz], gy[cx, cy, cz + 1], gy[cx + 1, cy, cz + 1],
                gz[cx, cy, cz], gz[cx + 1, cy, cz], gz[cx, cy + 1, cz], gz[cx + 1, cy + 1, cz]],
               axis=1)
  table = _MC_TRIS[cfg]
  ntri = (table & np.uint64(0xF)).astype(np.int64)
  width = 3 * int(ntri.max(initial=0))
  shift = np.arange(width, dtype=np.uint64) * np.uint64(4) + np.uint64(4)
  which = ((table[:, None] >> shift[None, :]) & np.uint64(0xF)).astype(np.int64)
  valid = np.arange(width)[None, :] < 3 * ntri[:, None]
  face = np.take_along_axis(e, which, axis=1)[valid].reshape(-1, 3)
  a, b, c = vert[face[:, 0]], vert[face[:, 1]], vert[face[:, 2]]
  ab, cb = a - b, c - b
  n = np.stack([cb[:, 1] * ab[:, 2] - cb[:, 2] * ab[:, 1], cb[:, 2] * ab[:, 0] - cb[:, 0] * ab[:, 2],
                cb[:, 0] * ab[:, 1] - cb[:, 1] * ab[:, 0]], axis=1).astype(np.float32)
  normal = np.zeros_like(vert)
  np.add.at(normal, face.ravel(), np.repeat(n, 3, axis=0))   # in triangle order, as MC.h
  with np.errstate(invalid="ignore", divide="ignore"):
    length = np.sqrt(normal[:, 0] * normal[:, 0] + normal[:, 1] * normal[:, 1]
                     + normal[:, 2] * normal[:, 2])
    normal = normal / length[:, None]
  return vert, face.astype(np.int32), normal


def sdf_mesh(distance, box):
  """(vert float32 (n,3), face int32 (m,3), normal float32 (n,3)) of the mesh MuJoCo makes
  from an SDF plugin (mjCMesh::LoadSDF): `distance` (points (...,3) -> values) sampled in
  float32 on a grid of about 300 cells along the sum of the box's (center, half sizes)
  extents, then marching cubes, the vertices mapped back into the box."""
  total = box[3] + box[4] + box[5]
  n = [int(math.floor(300.0 / total * box[3 + k])) + 1 for k in range(3)]
  if min(n) < 2:
    raise MeshError("SDF bounding box too thin to make a mesh")
  axes = [(box[k] - box[3 + k]) + 2 * box[3 + k] * np.arange(n[k], dtype=np.float64) / (n[k] - 1)
          for k in range(3)]
  points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
  field = np.asarray(distance(points), np.float64).astype(np.float32)
  vert, face, normal = marching_cubes(field)
  out = np.empty(vert.shape, np.float64)
  for k in range(3):
    out[:, k] = (2 * box[3 + k] * vert[:, k].astype(np.float64) / (n[k] - 1) + box[k]
                 - box[3 + k])
  return out.astype(np.float32), face, normal


# ------------------------------------------------------------------------- hull polygons

_POLY_ANGLE_TOL = 0.01   # kAngleTol of mjCMesh::MakePolygons


def _round_half_away(x):
  """std::round."""
  return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _polygon_key(a, b, c):
  """MeshPolygonKey: the rounded azimuth and polar angle of triangle abc's normal (a pair of
  floats, as MuJoCo's map key), or None for a degenerate triangle."""
  e = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
  g = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
  n = (e[1] * g[2] - e[2] * g[1], e[2] * g[0] - e[0] * g[2], e[0] * g[1] - e[1] * g[0])
  norm = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
  if norm < MINVAL:
    return None
  x, y, z = n[0] / norm + 0.0, n[1] / norm + 0.0, n[2] / norm + 0.0
  if abs(z) > 1.0 - 1e-7:
    return 0.0, (float(_round_half_away(math.pi / _POLY_ANGLE_TOL)) if z < 0 else 0.0)
  return (float(_round_half_away(math.atan2(y, x) / _POLY_ANGLE_TOL)),
          float(_round_half_away(math.acos(z) / _POLY_ANGLE_TOL)))


class _Polygon:
  """MuJoCo's MeshPolygon: the boundary edges of coplanar triangles, in islands until a
  triangle joins them."""

  def __init__(self, a, b, c):
    self.edges = [(a, b), (b, c), (c, a)]
    self.islands = [0, 0, 0]
    self.nisland = 1

  def insert(self, tri):
    """MeshPolygon::InsertFace: a shared (reversed) edge is removed, the others added."""
    add = [True, True, True]
    island = -1
    for s in range(3):
      p, q = tri[s], tri[(s + 1) % 3]
      for i, e in enumerate(self.edges):
        if e != (q, p):
          continue
        isl = self.islands[i]
        if island == -1:
          island = isl
        elif isl != island:
          # CombineIslands: the smaller number stays, the rest renumbered
          self.nisland -= 1
          lo, hi = min(island, isl), max(island, isl)
          self.islands = [lo if k == hi else (k - 1 if k > hi else k) for k in self.islands]
          island = lo
        add[s] = False
        del self.edges[i]
        del self.islands[i]
        break
    if island == -1:
      island = self.nisland
      self.nisland += 1
    for s in range(3):
      if add[s]:
        self.edges.append((tri[s], tri[(s + 1) % 3]))
        self.islands.append(island)

  def paths(self):
    """MeshPolygon::Paths: one vertex cycle per island (MuJoCo 4.0 traces a polygon of three
    edges as any other; MuJoCo 3's shortcut lists its edges' first vertices, which reverses a
    triangle merged from three)."""
    out = []
    for i in range(self.nisland):
      start = next((j for j, k in enumerate(self.islands) if k == i), None)
      if start is None:
        continue
      path = [self.edges[start][0], self.edges[start][1]]
      nxt = path[-1]
      for _ in range(len(self.edges)):
        step = next((k for k in range(1, len(self.edges))
                     if self.islands[k] == i and self.edges[k][0] == nxt), None)
        if step is None:
          continue
        nxt = self.edges[step][1]
        if nxt == path[0]:
          out.append(path)
          break
        path.append(nxt)
    return out


def _double_hash(x):
  """libc++'s std::hash<double> on 64-bit: the bit pattern (0 for both zeros)."""
  return 0 if x == 0.0 else struct.unpack("<Q", struct.pack("<d", x))[0]


_U64 = (1 << 64) - 1


def _key_hash(key):
  """The hash of an angle key in MuJoCo 4.0's MakePolygons map: boost's hash_combine of the
  two doubles' hashes (it gives MuJoCo 4.0's polygon order on all 116 hull meshes of MuJoCo's
  test models; the XOR of the two in its published source gives it on 8)."""
  seed = _double_hash(key[0])
  return seed ^ ((_double_hash(key[1]) + 0x9e3779b9 + ((seed << 6) & _U64) + (seed >> 2)) & _U64)


def _next_prime(n):
  """Smallest prime >= n (libc++'s __next_prime)."""
  def prime(k):
    if k < 2:
      return False
    i = 2
    while i * i <= k:
      if k % i == 0:
        return False
      i += 1
    return True
  while not prime(n):
    n += 1
  return n


def _bucket(h, nb):
  """libc++'s __constrain_hash."""
  return h & (nb - 1) if not nb & (nb - 1) else h % nb


def _unordered_order(keys, hashf):
  """Iteration order of distinct `keys`, inserted in the given order into a libc++
  std::unordered_map (LLVM's; MuJoCo links libc++): a singly linked list where a key opening
  an empty bucket goes to the front and one joining a bucket goes before that bucket's
  first; buckets grow to the next prime over twice their count at load factor 1, the list
  regrouped by bucket (__do_rehash)."""
  head = object()
  nxt = {head: None}
  before = {}             # bucket -> node before its first
  hashes = {}
  nb = 0
  size = 0
  for key in keys:
    h = hashes[key] = hashf(key)
    if nb == 0 or size + 1 > nb:
      n = max(2 * nb + (0 if nb > 2 and not nb & (nb - 1) else 1), size + 1)
      n = 2 if n == 1 else (_next_prime(n) if n & (n - 1) else n)
      if n > nb:
        nb = n
        before = {}
        pp, cp = head, nxt[head]
        if cp is not None:
          ph = _bucket(hashes[cp], nb)
          before[ph] = pp
          pp, cp = cp, nxt[cp]
          while cp is not None:
            ch = _bucket(hashes[cp], nb)
            if ch == ph:
              pp = cp
            elif ch not in before:
              before[ch] = pp
              pp, ph = cp, ch
            else:       # splice cp to the front of its bucket
              nxt[pp] = nxt[cp]
              nxt[cp] = nxt[before[ch]]
              nxt[before[ch]] = cp
            cp = nxt[pp]
    b = _bucket(h, nb)
    if b not in before:
      nxt[key] = nxt[head]
      nxt[head] = key
      before[b] = head
      if nxt[key] is not None:
        before[_bucket(hashes[nxt[key]], nb)] = key
    else:
      nxt[key] = nxt[before[b]]
      nxt[before[b]] = key
    size += 1
  out = []
  node = nxt[head]
  while node is not None:
    out.append(node)
    node = nxt[node]
  return out


def make_polygons(raw, graph, dvert, righthand=True):
  """MuJoCo's mesh polygons (mjCMesh::MakePolygons): the hull's triangles grouped by
  their normal's azimuth and polar angle rounded to 0.01 rad in the mesh file's frame (`raw`:
  the float32 vertices as read, before refpos/refquat/scale, as float64), merged edge by edge
  in hull order; each connected group is one polygon, its vertices (mesh vertex ids) in
  MuJoCo's cycle order, the polygons numbered in the iteration order of MuJoCo's hash map
  of the angle keys (`_unordered_order`). Normals by Newell's method on `dvert` (the compiled
  float64 vertices), as MuJoCo's mesh_polynormal. A mirroring scale (`righthand` False) turns
  each cycle round after its first vertex, as MuJoCo does (e.g. flipped_torus.xml). A normal
  shorter than 1e-14 (user code's mjEPS, as mjuu_makenormal; a sliver hull triangle) is
  written (1, 0, 0) (MuJoCo 4.0.1 switches between 9.94e-15 and 1.007e-14). Returns (list of
  vertex-id lists, float64 (n, 3) normals).
  """
  raw = np.asarray(raw, np.float64).tolist()
  faces = graph_faces(graph)
  if not righthand:   # the graph's faces of a mirrored mesh are turned round: as made
    faces = faces[:, [0, 2, 1]]
  groups = {}
  for tri in faces.tolist():
    k = _polygon_key(raw[tri[0]], raw[tri[1]], raw[tri[2]])
    if k is None:
      continue
    if k in groups:
      groups[k].insert(tri)
    else:
      groups[k] = _Polygon(*tri)
  polys = []
  for k in _unordered_order(list(groups), _key_hash):
    polys.extend(p if righthand else p[:1] + p[:0:-1] for p in groups[k].paths() if len(p) >= 3)
  normals = np.zeros((len(polys), 3))
  for i, p in enumerate(polys):
    a = dvert[p]
    b = np.roll(a, -1, axis=0)
    n = np.array([_seqsum((a[:, 1] - b[:, 1]) * (a[:, 2] + b[:, 2])),
                  _seqsum((a[:, 2] - b[:, 2]) * (a[:, 0] + b[:, 0])),
                  _seqsum((a[:, 0] - b[:, 0]) * (a[:, 1] + b[:, 1]))])
    norm = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    normals[i] = n / norm if norm >= EPS else (1.0, 0.0, 0.0)
  return polys, normals
