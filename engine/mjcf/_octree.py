"""The octree SDF of a plain mesh, as MuJoCo's mjCOctree (user_objects.cc) builds it for a mesh
that an sdf geom without a plugin uses: oct_depth, oct_child, oct_aabb and oct_coeff.

The root is the mesh's bounding box grown by 10%; a node whose box a triangle touches
(boxTriangle, Schwarz and Seidel's box-triangle overlap test) is split into 8 children, breadth
first, down to depth 6; then leaves are split until face neighbours differ by at most one level
(BalanceOctree), and a leaf corner in the middle of a coarser neighbour's face or edge
("hanging") takes the mean of that face's or edge's corners. The other corners hold the signed
distance to the mesh (the closest triangle; the side from its normal, or where the triangles
at the closest edge or corner disagree, from the winding number). Nodes are kept in integer
coordinates (cells of 2^-depth of the root per axis), so neighbour queries are array
look-ups; node order, boxes and every floating-point operation follow MuJoCo's, so the fields
equal MuJoCo's.
"""
import numpy as np

MAXDEPTH = 6   # mjsMesh octree_maxdepth default (no MJCF attribute sets it)


def _box_triangle(v, lo, hi):
  """boxTriangle for pairs: does triangle v (P,3,3) touch box [lo, hi] (P,3)?"""
  out = np.ones(len(v), bool)
  for i in range(3):
    out &= ~((v[:, 0, i] < lo[:, i]) & (v[:, 1, i] < lo[:, i]) & (v[:, 2, i] < lo[:, i]))
    out &= ~((v[:, 0, i] > hi[:, i]) & (v[:, 1, i] > hi[:, i]) & (v[:, 2, i] > hi[:, i]))
  e = [v[:, (i + 1) % 3] - v[:, i] for i in range(3)]
  n = np.stack([e[0][:, 1] * e[1][:, 2] - e[0][:, 2] * e[1][:, 1],
                e[0][:, 2] * e[1][:, 0] - e[0][:, 0] * e[1][:, 2],
                e[0][:, 0] * e[1][:, 1] - e[0][:, 1] * e[1][:, 0]], axis=1)
  size = hi - lo
  c = np.where(n > 0, size, 0.0)
  c1 = c - v[:, 0]
  c2 = size - c - v[:, 0]
  dot = lambda a, b: a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]
  nlo = dot(n, lo)
  out &= ~((nlo + dot(n, c1)) * (nlo + dot(n, c2)) > 0)
  for a in range(3):
    b, cc = (a + 1) % 3, (a + 2) % 3
    sign = np.where(n[:, a] >= 0, 1.0, -1.0)
    for i in range(3):
      ne0 = -e[i][:, cc] * sign
      ne1 = e[i][:, b] * sign
      d = (-(ne0 * v[:, i, b] + ne1 * v[:, i, cc]) + np.maximum(0.0, size[:, b] * ne0)
           + np.maximum(0.0, size[:, cc] * ne1))
      out &= ~(ne0 * lo[:, b] + ne1 * lo[:, cc] + d < 0)
  return out


def _bounds(lo, hi, depth):
  """Coordinates of the 2^depth + 1 cell boundaries per axis, each the midpoint MuJoCo's
  TaskToNode computes ((a + b) / 2 of the parent's bounds): shape (3, 2^depth + 1)."""
  b = np.stack([lo, hi], axis=1)
  for _ in range(depth):
    nb = np.empty((3, 2 * b.shape[1] - 1))
    nb[:, 0::2] = b
    nb[:, 1::2] = (b[:, :-1] + b[:, 1:]) / 2
    b = nb
  return b


_BITS = np.array([[j & 1, (j >> 1) & 1, (j >> 2) & 1] for j in range(8)], np.int64)


def _point_tri(p, v0, v1, v2):
  """pointTriDistSqWithUV for rows: (squared distance, u, v) of the closest point
  v0 + u (v1 - v0) + v (v2 - v0), by the first Voronoi region that matches, in MuJoCo's order
  and arithmetic."""
  dot = lambda a, b: a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]
  ab, ac, ap = v1 - v0, v2 - v0, p - v0
  d1, d2 = dot(ab, ap), dot(ac, ap)
  bp = p - v1
  d3, d4 = dot(ab, bp), dot(ac, bp)
  cp = p - v2
  d5, d6 = dot(ab, cp), dot(ac, cp)
  vc = d1 * d4 - d3 * d2
  vb = d5 * d2 - d1 * d6
  va = d3 * d6 - d5 * d4
  n = len(p)
  u, w = np.zeros(n), np.zeros(n)
  closest = np.empty((n, 3))
  todo = np.ones(n, bool)

  def region(mask, uu, ww, pt):
    nonlocal todo
    mask = mask & todo
    u[mask], w[mask] = uu[mask], ww[mask]
    closest[mask] = pt[mask]
    todo = todo & ~mask

  zero, one = np.zeros(n), np.ones(n)
  with np.errstate(divide="ignore", invalid="ignore"):
    region((d1 <= 0) & (d2 <= 0), zero, zero, v0)
    region((d3 >= 0) & (d4 <= d3), one, zero, v1)
    t = d1 / (d1 - d3)
    region((vc <= 0) & (d1 >= 0) & (d3 <= 0), t, zero, v0 + t[:, None] * ab)
    region((d6 >= 0) & (d5 <= d6), zero, one, v2)
    t = d2 / (d2 - d6)
    region((vb <= 0) & (d2 >= 0) & (d6 <= 0), zero, t, v0 + t[:, None] * ac)
    t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    region((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), 1 - t, t, v1 + t[:, None] * (v2 - v1))
    denom = 1.0 / (va + vb + vc)
    uu, ww = vb * denom, vc * denom
    region(todo, uu, ww, v0 + uu[:, None] * ab + ww[:, None] * ac)
  # the vertex regions return |ap|^2 etc. directly: the same value as from the closest point
  r = p - closest
  return r[:, 0] * r[:, 0] + r[:, 1] * r[:, 1] + r[:, 2] * r[:, 2], u, w


def _signed_distance(points, tri):
  """querySignedDistance: distance to the closest triangle, negative unless the point lies on
  the side of that triangle's normal (beyond 1e-12 of |n| times the distance). Candidates per
  point: every triangle whose bounding sphere comes nearer than the nearest triangle centre
  (small triangles from a k-d tree of their centres, the few large ones all)."""
  from scipy.spatial import cKDTree
  cen = tri.mean(axis=1)
  rad = np.sqrt(((tri - cen[:, None]) ** 2).sum(axis=2)).max(axis=1)
  near, _ = cKDTree(cen).query(points)
  r0 = 4 * np.median(rad)
  small, large = np.flatnonzero(rad <= r0), np.flatnonzero(rad > r0)
  kd = cKDTree(cen[small])
  best = np.full(len(points), np.inf)
  above, below = np.zeros(len(points), bool), np.zeros(len(points), bool)
  face = np.zeros(len(points), np.int64)
  bu, bv = np.zeros(len(points)), np.zeros(len(points))
  for start in range(0, len(points), 1024):
    idx = np.arange(start, min(start + 1024, len(points)))
    cand = kd.query_ball_point(points[idx], near[idx] * (1 + 1e-9) + r0)
    pi = np.concatenate([np.repeat(idx, [len(c) for c in cand]), np.repeat(idx, len(large))])
    ti = np.concatenate([small[np.concatenate([np.asarray(c, np.int64) for c in cand])],
                         np.tile(large, len(idx))])
    keep = (np.sqrt(((points[pi] - cen[ti]) ** 2).sum(axis=1)) - rad[ti]
            <= near[pi] * (1 + 1e-9))
    pi, ti = pi[keep], ti[keep]
    order = np.lexsort((ti, pi))
    pi, ti = pi[order], ti[order]
    dsq, u, v = _point_tri(points[pi], tri[ti, 0], tri[ti, 1], tri[ti, 2])
    # per point: the smallest distance (the lowest face index among equal ones)
    order = np.lexsort((ti, dsq, pi))
    first = order[np.r_[True, pi[order][1:] != pi[order][:-1]]]
    best[pi[first]], face[pi[first]] = dsq[first], ti[first]
    bu[pi[first]], bv[pi[first]] = u[first], v[first]
    # faces as close as the closest (sharing its edge or corner) on both sides of the point
    tie = dsq <= best[pi] * (1 + 1e-9)
    side = _side(points[pi[tie]], tri[ti[tie]], u[tie], v[tie])
    np.logical_or.at(above, pi[tie][side], True)
    np.logical_or.at(below, pi[tie][~side], True)
  dist = np.sqrt(best)
  outside = _side(points, tri[face], bu, bv)
  # the closest point on an edge or corner whose faces disagree on the side: MuJoCo 4.0 gives
  # the true side there (at every corner of a tetrahedron's octree, where its published
  # source's first-face rule errs at 1 in 140), so the winding number decides
  split = above & below
  outside[split] = _winding(points[split], tri) < 0.5
  return np.where(outside, dist, -dist)


def _side(points, tri, u, v):
  """Is each point on the normal's side of its triangle's point (u, v) (beyond 1e-12 of
  |normal| times the distance, querySignedDistance's test)?"""
  v0, v1, v2 = tri[:, 0], tri[:, 1], tri[:, 2]
  e1, e2 = v1 - v0, v2 - v0
  nrm = np.stack([e1[:, 1] * e2[:, 2] - e1[:, 2] * e2[:, 1],
                  e1[:, 2] * e2[:, 0] - e1[:, 0] * e2[:, 2],
                  e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]], axis=1)
  r = points - (v0 + u[:, None] * (v1 - v0) + v[:, None] * (v2 - v0))
  dist = np.sqrt(r[:, 0] * r[:, 0] + r[:, 1] * r[:, 1] + r[:, 2] * r[:, 2])
  dot = r[:, 0] * nrm[:, 0] + r[:, 1] * nrm[:, 1] + r[:, 2] * nrm[:, 2]
  nlen = np.sqrt(nrm[:, 0] * nrm[:, 0] + nrm[:, 1] * nrm[:, 1] + nrm[:, 2] * nrm[:, 2])
  return dot > 1e-12 * nlen * dist


def _winding(points, tri):
  """Generalised winding number of the mesh about each point (solid angles of the triangles,
  van Oosterom and Strackee, over 4 pi): 1 inside a closed mesh, 0 outside."""
  out = np.zeros(len(points))
  step = max(1, 2000000 // max(1, len(tri)))
  for start in range(0, len(points), step):
    p = points[start:start + step]
    a, b, c = (tri[None, :, k] - p[:, None] for k in range(3))
    la, lb, lc = (np.sqrt((x * x).sum(axis=2)) for x in (a, b, c))
    det = (a * np.cross(b, c)).sum(axis=2)
    den = (la * lb * lc + (a * b).sum(axis=2) * lc + (b * c).sum(axis=2) * la
           + (c * a).sum(axis=2) * lb)
    out[start:start + step] = np.arctan2(det, den).sum(axis=1) / (2 * np.pi)
  return out


def make_octree(vert, face, aamm, depth=MAXDEPTH):
  """dict of the octree's depth (n,), child (n,8), aabb (n,6) and coeff (n,8) for the mesh
  (float64 vertices and faces after compiling, aamm its bounds), as mjCOctree::CreateOctree and
  ComputeSdfCoeffs."""
  vert, face, aamm = np.asarray(vert, np.float64), np.asarray(face, np.int64), np.asarray(aamm)
  center, half = (aamm[:3] + aamm[3:]) / 2, (aamm[3:] - aamm[:3]) / 2
  bounds = _bounds(center - 1.1 * half, center + 1.1 * half, depth)
  tri = vert[face]
  level, ijk = [np.zeros(1, np.int64)], [np.zeros((1, 3), np.int64)]
  children = {}

  def box(lv, c):
    sh = depth - lv
    lo = np.stack([bounds[k, c[:, k] << sh] for k in range(3)], axis=1)
    hi = np.stack([bounds[k, (c[:, k] + 1) << sh] for k in range(3)], axis=1)
    return lo, hi

  # MakeOctree: breadth first, a node split while a triangle touches it, to `depth`
  nnode = 1
  cur = np.zeros(1, np.int64)                  # node ids of this level
  pn, pt = np.zeros(len(tri), np.int64), np.arange(len(tri))   # (node in cur, triangle)
  for lv in range(depth):
    lo, hi = box(lv, ijk[-1][pn])
    hit = _box_triangle(tri[pt], lo, hi)
    pn, pt = pn[hit], pt[hit]
    split = np.unique(pn)
    if not len(split):
      break
    rank = np.full(len(cur), -1, np.int64)
    rank[split] = np.arange(len(split))
    kids = nnode + np.arange(8 * len(split)).reshape(-1, 8)
    for k, node in enumerate(cur[split]):
      children[int(node)] = kids[k]
    cij = ijk[-1][split]
    level.append(np.full(8 * len(split), lv + 1, np.int64))
    ijk.append((2 * cij[:, None, :] + _BITS[None]).reshape(-1, 3))
    nnode += 8 * len(split)
    cur = kids.reshape(-1)
    pn = (rank[pn][:, None] * 8 + np.arange(8)[None]).reshape(-1)
    pt = np.repeat(pt, 8)
  level, ijk = np.concatenate(level), np.concatenate(ijk)
  return _balance_and_fill(level, ijk, children, bounds, depth, tri)


def _balance_and_fill(level, ijk, children, bounds, depth, tri):
  """BalanceOctree, MarkHangingNodes and ComputeSdfCoeffs on the nodes of MakeOctree."""
  nnode = len(level)
  child = np.full((nnode, 8), -1, np.int64)
  for node, kids in children.items():
    child[node] = kids
  # grid[l][flat cell] = node id of that cell at level l, -1 where none
  grid = [np.full(8 ** lv, -1, np.int64) for lv in range(depth + 1)]

  def enter(ids):
    for lv in np.unique(level[ids]):
      sel = ids[level[ids] == lv]
      c = ijk[sel]
      grid[lv][(c[:, 0] << (2 * lv)) | (c[:, 1] << lv) | c[:, 2]] = sel

  enter(np.arange(nnode))
  top = 1 << (depth + 1)   # the neighbour probe works in half cells of the deepest level

  def neighbours(leaves):
    """FindNeighbor for every leaf and direction (dim = dir // 2, side = dir % 2): the leaf
    holding the point just across the face, opposite the face's centre (ties to the lower
    half, as the descent's strict comparison), -1 outside the root."""
    sh = depth + 1 - level[leaves]
    start = ijk[leaves] << sh[:, None]
    out = np.full((len(leaves), 6), -1, np.int64)
    for dr in range(6):
      dim, side = dr // 2, dr % 2
      q = start + (1 << (sh - 1))[:, None] - 1
      q[:, dim] = start[:, dim] + (1 << sh) if side else start[:, dim] - 1
      ok = np.all((q >= 0) & (q < top), axis=1)
      nb = np.full(len(leaves), -1, np.int64)
      for lv in range(depth + 1):
        c = q[ok] >> (depth + 1 - lv)
        found = grid[lv][(c[:, 0] << (2 * lv)) | (c[:, 1] << lv) | c[:, 2]]
        nb[ok] = np.where(found >= 0, found, nb[ok])
      out[:, dr] = nb
    return out

  while True:
    leaves = np.flatnonzero(child[:, 0] == -1)
    nb = neighbours(leaves)
    nl = np.where(nb >= 0, level[nb], 0)
    ll = level[leaves][:, None]
    push = np.stack([np.where((nb >= 0) & (nl > ll + 1), leaves[:, None], -1),
                     np.where((nb >= 0) & (ll > nl + 1), nb, -1)], axis=2).reshape(-1)
    push = push[push >= 0]
    if not len(push):
      break
    _, first = np.unique(push, return_index=True)
    split = push[np.sort(first)]
    kids = nnode + np.arange(8 * len(split)).reshape(-1, 8)
    child = np.concatenate([child, np.full((8 * len(split), 8), -1, np.int64)])
    child[split] = kids
    level = np.concatenate([level, np.repeat(level[split] + 1, 8)])
    ijk = np.concatenate([ijk, (2 * ijk[split][:, None, :] + _BITS[None]).reshape(-1, 3)])
    nnode += 8 * len(split)
    enter(kids.reshape(-1))
  # corners in lattice units of the deepest level, keyed as one integer
  res = (1 << depth) + 1
  key = lambda c: (c[..., 0] * res + c[..., 1]) * res + c[..., 2]
  corner = (ijk[:, None, :] + _BITS[None]) << (depth - level)[:, None, None]
  # MarkHangingNodes: a leaf corner in the middle of a coarser neighbour's face (4 parents) or
  # edge (2 parents); the first (leaf, direction) that finds it defines it
  leaves = np.flatnonzero(child[:, 0] == -1)
  nb = neighbours(leaves)
  pi, dr = np.nonzero((nb >= 0) & (level[np.maximum(nb, 0)] < level[leaves][:, None]))
  leaf, n = leaves[pi], nb[pi, dr]
  dim, side = dr // 2, dr % 2
  rows = np.arange(len(pi))
  hv_all, dep_all = [], []
  for k in range(4):
    v = (side << dim) | ((k & 1) << ((dim + 1) % 3)) | (((k >> 1) & 1) << ((dim + 2) % 3))
    hv = corner[leaf, v]
    is_min, is_max = hv == corner[n, 0], hv == corner[n, 7]
    on = (is_min | is_max).sum(axis=1)
    deps = np.full((len(pi), 4), -1, np.int64)
    edge, face = np.flatnonzero(on == 2), np.flatnonzero(on == 1)
    mid = np.argmax(~(is_min | is_max), axis=1)
    fd = np.argmax(is_min | is_max, axis=1)
    for b in (0, 1):
      bits = is_max.astype(np.int64)
      bits[rows, mid] = b
      idx = bits[:, 0] | (bits[:, 1] << 1) | (bits[:, 2] << 2)
      deps[edge, b] = key(corner[n[edge], idx[edge]])
    for jj in range(4):
      bits = np.zeros((len(pi), 3), np.int64)
      bits[rows, fd] = is_max[rows, fd]
      bits[rows, (fd + 1) % 3] = jj & 1
      bits[rows, (fd + 2) % 3] = (jj >> 1) & 1
      idx = bits[:, 0] | (bits[:, 1] << 1) | (bits[:, 2] << 2)
      deps[face, jj] = key(corner[n[face], idx[face]])
    hv_all.append(np.where(on < 3, key(hv), -1))
    dep_all.append(deps)
  hkey = np.stack(hv_all, axis=1).reshape(-1)
  hdep = np.stack(dep_all, axis=1).reshape(-1, 4)
  ok = hkey >= 0
  hkey, hdep = hkey[ok], hdep[ok]
  hkey, first = np.unique(hkey, return_index=True)
  hdep = hdep[first]
  # ComputeSdfCoeffs: signed distances at the other corners; a hanging corner takes the mean
  # of its parents (summed in order), which MuJoCo's breadth-first pass has already filled
  keys, inv = np.unique(key(corner).reshape(-1), return_inverse=True)
  hanging = np.isin(keys, hkey)
  lat = np.stack([keys // (res * res), (keys // res) % res, keys % res], axis=1)[~hanging]
  point = np.stack([bounds[k, lat[:, k]] for k in range(3)], axis=1)
  value = np.zeros(len(keys))
  value[~hanging] = _signed_distance(point, tri)
  known = ~hanging
  hidx = np.searchsorted(keys, hkey)
  didx = np.searchsorted(keys, np.maximum(hdep, 0))
  ndep = (hdep >= 0).sum(axis=1)
  todo = np.ones(len(hkey), bool)
  while todo.any():   # parents that hang themselves sit on coarser faces: a few rounds
    ready = todo & np.all(known[didx] | (hdep < 0), axis=1)
    dv = np.where(hdep >= 0, value[didx], 0.0)
    total = dv[:, 0] + dv[:, 1]
    total = np.where(ndep == 4, (total + dv[:, 2]) + dv[:, 3], total)
    value[hidx[ready]] = total[ready] / ndep[ready]
    known[hidx[ready]] = True
    todo &= ~ready
  coeff = value[inv].reshape(-1, 8)
  lo = np.stack([bounds[k, corner[:, 0, k]] for k in range(3)], axis=1)
  hi = np.stack([bounds[k, corner[:, 7, k]] for k in range(3)], axis=1)
  return {"depth": level.astype(np.int32), "child": child.astype(np.int32),
          "aabb": np.concatenate([(lo + hi) / 2, (hi - lo) / 2], axis=1), "coeff": coeff}
