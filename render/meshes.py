"""Unit meshes of the primitive shapes, built once per Renderer and drawn instanced, and the
vertex buffers of a model's mesh assets (`mesh_asset`).

Every vertex is (x, y, z, nx, ny, nz, cap): the vertex shader scales the position by the
instance's size and adds `cap` times the instance's half-length along z, which turns one unit
sphere split at the equator into any capsule.
"""
import math

import numpy as np

# the primitive shapes, each a function below; a shape's index in KINDS is its kind id
KINDS = ("quad", "sphere", "capsule", "cylinder", "box", "cone", "ball", "rod", "tip")

SLICES, STACKS = 20, 12         # draw resolution
SHADOW_SLICES, SHADOW_STACKS = 10, 6   # shadow-map resolution (vertices cost on software GL)


def shadow_mesh(name):
  """The low-resolution version of mesh `name` for the shadow pass."""
  return globals()[name](SHADOW_SLICES, SHADOW_STACKS)


def _grid_sphere(slices, stacks, split):
  """A UV sphere (radius 1); with `split`, the equator ring is doubled so the two halves can move
  apart (cap -1 below, +1 above)."""
  rings = []
  half = stacks // 2
  for i in range(stacks + 1):
    theta = math.pi * i / stacks          # 0 at the north pole
    z, r = math.cos(theta), math.sin(theta)
    cap = 1.0 if i <= half else -1.0
    rings.append((z, r, cap))
    if split and i == half:
      rings.append((z, r, -1.0))
  verts = []
  for z, r, cap in rings:
    for j in range(slices + 1):
      phi = 2 * math.pi * j / slices
      x, y = r * math.cos(phi), r * math.sin(phi)
      verts.append((x, y, z, x, y, z, cap if split else 0.0))
  idx = []
  w = slices + 1
  for i in range(len(rings) - 1):
    for j in range(slices):
      a, b = i * w + j, (i + 1) * w + j
      idx += [a, b, a + 1, a + 1, b, b + 1]
  return np.array(verts, np.float32), np.array(idx, np.int32)


def sphere(slices=SLICES, stacks=STACKS):
  """Unit sphere."""
  return _grid_sphere(slices, stacks, False)


MARKER_SLICES, MARKER_STACKS = 8, 4   # markers: a few pixels wide, drawn by the thousand


def ball(slices=MARKER_SLICES, stacks=MARKER_STACKS):
  """Unit sphere at low resolution: markers a few pixels wide (rangefinder points), drawn by
  the thousand."""
  return _grid_sphere(slices, stacks, False)


def rod(slices=MARKER_SLICES, stacks=None):
  """Cylinder at low resolution (shafts of marker arrows)."""
  return cylinder(slices)


def tip(slices=MARKER_SLICES, stacks=None):
  """Cone at low resolution (heads of marker arrows)."""
  return cone(slices)


def capsule(slices=SLICES, stacks=STACKS):
  """Unit-radius capsule with zero half-length (the instance's half-length opens it up)."""
  return _grid_sphere(slices, stacks, True)


def _disc(z, nz, slices, verts, idx):
  c = len(verts)
  verts.append((0, 0, z, 0, 0, nz, 0))
  for j in range(slices + 1):
    phi = 2 * math.pi * j / slices
    verts.append((math.cos(phi), math.sin(phi), z, 0, 0, nz, 0))
  for j in range(slices):
    a, b = c + 1 + j, c + 2 + j
    idx += [c, a, b] if nz > 0 else [c, b, a]


def cylinder(slices=SLICES, stacks=None):
  """Cylinder of radius 1 from z=-1 to z=1, with flat caps."""
  verts, idx = [], []
  for j in range(slices + 1):
    phi = 2 * math.pi * j / slices
    x, y = math.cos(phi), math.sin(phi)
    verts.append((x, y, 1, x, y, 0, 0))
    verts.append((x, y, -1, x, y, 0, 0))
  for j in range(slices):
    a = 2 * j
    idx += [a, a + 1, a + 2, a + 2, a + 1, a + 3]
  _disc(1.0, 1.0, slices, verts, idx)
  _disc(-1.0, -1.0, slices, verts, idx)
  return np.array(verts, np.float32), np.array(idx, np.int32)


def cone(slices=SLICES, stacks=None):
  """Cone with base radius 1 at z=0 and its tip at z=1 (arrow heads)."""
  verts, idx = [], []
  s = 1 / math.sqrt(2)
  for j in range(slices + 1):
    phi = 2 * math.pi * j / slices
    x, y = math.cos(phi), math.sin(phi)
    verts.append((x, y, 0, x * s, y * s, s, 0))
    verts.append((0, 0, 1, x * s, y * s, s, 0))
  for j in range(slices):
    a = 2 * j
    idx += [a, a + 2, a + 1]
  _disc(0.0, -1.0, slices, verts, idx)
  return np.array(verts, np.float32), np.array(idx, np.int32)


def box(slices=None, stacks=None):
  """Cube from -1 to 1 with one normal per face."""
  verts, idx = [], []
  for axis in range(3):
    for sign in (1.0, -1.0):
      n = [0.0, 0.0, 0.0]
      n[axis] = sign
      u, v = (axis + 1) % 3, (axis + 2) % 3
      c = len(verts)
      for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        p = [0.0, 0.0, 0.0]
        p[axis], p[u], p[v] = sign, a, b
        verts.append((*p, *n, 0))
      idx += [c, c + 1, c + 2, c, c + 2, c + 3] if sign > 0 else [c, c + 2, c + 1, c, c + 3, c + 2]
  return np.array(verts, np.float32), np.array(idx, np.int32)


def quad(slices=None, stacks=None, n=8):
  """Square from -1 to 1 in the xy plane, normal +z, as an n x n grid: directional lights are
  shaded per vertex (spot lights per fragment, see shaders.py); lines are denser towards the
  centre (x = t|t|), where a camera-following infinite plane is looked at."""
  t = np.linspace(-1.0, 1.0, n + 1)
  t = t * np.abs(t)
  x, y = np.meshgrid(t, t, indexing="xy")
  verts = np.zeros(((n + 1) ** 2, 7), np.float32)
  verts[:, 0], verts[:, 1], verts[:, 5] = x.ravel(), y.ravel(), 1.0
  idx = []
  for i in range(n):
    for j in range(n):
      a = i * (n + 1) + j
      idx += [a, a + 1, a + n + 2, a, a + n + 2, a + n + 1]
  return verts, np.array(idx, np.int32)


CREASE_COS = 0.8   # corners whose normal turns more than ~37 deg from the face's are drawn flat


def mesh_asset(vert, face, normal=None, facenormal=None, textured=False):
  """Vertices (x, y, z, nx, ny, nz, 0) of one mesh asset as unindexed triangles, scaled into the
  unit ball, and that scale (the instance size).

  With the compiled normals (`normal` = the mesh's mesh_normal rows, `facenormal` its
  mesh_facenormal), each corner is shaded as MuJoCo's renderer does (mjr_uploadMesh): with its
  normal as given on a mesh with texture coordinates (`textured`), otherwise with the face's
  own normal wherever the corner's is more than CREASE_COS from it, so that sharp edges stay
  sharp. Without them (height fields), corner normals are the area-weighted sums of the
  vertex's faces, under the same crease rule.
  """
  v = np.asarray(vert, np.float64).reshape(-1, 3)
  f = np.asarray(face, np.int64).reshape(-1, 3)
  if not len(f):
    return np.zeros((0, 7), np.float32), 1.0
  tri = v[f]                                          # (nf, 3, 3)
  fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])   # area-weighted face normals
  unit = lambda a: a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-30)
  fu = unit(fn)
  if normal is not None and facenormal is not None and len(normal):
    corner = np.asarray(normal, np.float64).reshape(-1, 3)[
        np.asarray(facenormal, np.int64).reshape(-1, 3)]           # (nf, 3, 3)
  else:
    textured = False
    vn = np.zeros_like(v)
    for k in range(3):
      np.add.at(vn, f[:, k], fn)
    corner = unit(vn)[f]
  if textured:
    normals = corner
  else:
    flat = np.einsum("fkj,fj->fk", corner, fu) < CREASE_COS
    normals = np.where(flat[..., None], fu[:, None, :], corner)
  scale = float(max(np.max(np.linalg.norm(v, axis=1)), 1e-9))
  out = np.zeros((len(f) * 3, 7), np.float32)
  out[:, 0:3] = (tri / scale).reshape(-1, 3)
  out[:, 3:6] = normals.reshape(-1, 3)
  return out, scale


def model_mesh(m, i):
  """(vert, face, mesh_asset's (vertices, scale)) of mesh `i` of Model `m`, drawn with its
  compiled normals where the model has them (mesh_normal, mesh_facenormal)."""
  a, b = int(m.mesh_faceadr[i]), int(m.mesh_facenum[i])
  va, vn = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
  vert, face = m.mesh_vert[va:va + vn], m.mesh_face[a:a + b]
  normal = facenormal = None
  if getattr(m, "mesh_normaladr", None) is not None and len(m.mesh_normaladr) > i:
    na, nn = int(m.mesh_normaladr[i]), int(m.mesh_normalnum[i])
    normal, facenormal = m.mesh_normal[na:na + nn], m.mesh_facenormal[a:a + b]
  texadr = getattr(m, "mesh_texcoordadr", None)
  textured = texadr is not None and len(texadr) > i and int(texadr[i]) >= 0
  return vert, face, mesh_asset(vert, face, normal, facenormal, textured)


def hfield_asset(size, nrow, ncol, data):
  """Vertices and faces of a height field as a closed solid: the elevation surface
  (data * size[2], bottom row first), four side walls and the base at -size[3]."""
  s0, s1, s2, s3 = (float(x) for x in size)
  z = np.asarray(data, np.float64).reshape(nrow, ncol) * s2
  xs = np.linspace(-s0, s0, ncol)
  ys = np.linspace(-s1, s1, nrow)
  top = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], z), axis=-1).reshape(-1, 3)
  idx = np.arange(nrow * ncol).reshape(nrow, ncol)
  a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()
  c, d = idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
  faces = [np.stack([a, b, c], 1), np.stack([a, c, d], 1)]
  # walls: the boundary loop counter-clockwise seen from above, each edge down to the base
  loop = np.concatenate([idx[0, :], idx[1:, -1], idx[-1, -2::-1], idx[-2:0:-1, 0]])
  base = top[loop].copy()
  base[:, 2] = -s3
  nb = len(top)
  verts = np.concatenate([top, base])
  k = np.arange(len(loop))
  t0, t1 = loop[k], loop[(k + 1) % len(loop)]
  b0, b1 = nb + k, nb + (k + 1) % len(loop)
  faces += [np.stack([t0, b0, b1], 1), np.stack([t0, b1, t1], 1)]
  # base: a fan over the base loop, facing down
  faces.append(np.stack([np.full(len(loop) - 2, nb), nb + k[2:], nb + k[1:-1]], 1))
  return verts, np.concatenate(faces).astype(np.int64)


# ------------------------------------------------------------------------ texture coordinates
# MuJoCo 4's built-in shapes carry explicit texture coordinates (render_context.c): spheres
# u = azimuth / 2pi, v = 0 at the north pole to 1 at the south pole; cylinder sides v = (1 - z) / 2
# and caps (0.5 + 0.5x, 0.5 + 0.5y); box faces u = (p + 1) / 2, v = (1 - q) / 2 with (p, q) =
# (y, z), (x, z), (x, y) on the x, y, z faces; capsule caps v from 0 at the pole to 1 at the
# rim (top) or 0 at the rim to 1 at the pole (bottom). Vertices are (x, y, z, nx, ny, nz, cap,
# u, v) for the textured draws (render/textures.py).

def _uv_sphere(slices, stacks):
  verts, idx = [], []
  for i in range(stacks + 1):
    theta = math.pi * i / stacks
    z, r = math.cos(theta), math.sin(theta)
    for j in range(slices + 1):
      phi = 2 * math.pi * j / slices
      x, y = r * math.cos(phi), r * math.sin(phi)
      verts.append((x, y, z, x, y, z, 0.0, j / slices, i / stacks))
  _grid_idx(idx, 0, stacks, slices)
  return verts, idx


def _grid_idx(idx, start, nrings, slices):
  """Quads between `nrings` + 1 consecutive rings of slices + 1 vertices from `start`."""
  w = slices + 1
  for i in range(nrings):
    for j in range(slices):
      a, b = start + i * w + j, start + (i + 1) * w + j
      idx += [a, b, a + 1, a + 1, b, b + 1]


def _uv_capsule(slices, stacks):
  verts, idx = [], []
  half = stacks // 2
  for sign in (1.0, -1.0):            # caps: top then bottom, each from its pole side down
    start = len(verts)
    for i in range(half + 1):
      theta = math.pi / 2 * i / half if sign > 0 else math.pi / 2 * (1 + i / half)
      z, r = math.cos(theta), math.sin(theta)
      v = i / half
      for j in range(slices + 1):
        phi = 2 * math.pi * j / slices
        x, y = r * math.cos(phi), r * math.sin(phi)
        verts.append((x, y, z, x, y, z, sign, j / slices, v))
    _grid_idx(idx, start, half, slices)
  start = len(verts)                  # the open cylinder between them
  for cap, v in ((1.0, 0.0), (-1.0, 1.0)):
    for j in range(slices + 1):
      phi = 2 * math.pi * j / slices
      x, y = math.cos(phi), math.sin(phi)
      verts.append((x, y, 0.0, x, y, 0.0, cap, j / slices, v))
  _grid_idx(idx, start, 1, slices)
  return verts, idx


def _uv_cylinder(slices, stacks):
  v, i = cylinder(slices)
  v = np.asarray(v, np.float64)
  uv = np.zeros((len(v), 2))
  side = np.abs(v[:, 5]) < 0.5
  ring = np.arange(len(v))
  uv[side, 0] = (ring[side] // 2) / slices
  uv[side, 1] = (1 - v[side, 2]) / 2
  uv[~side, 0] = 0.5 + 0.5 * v[~side, 0]
  uv[~side, 1] = 0.5 + 0.5 * v[~side, 1]
  return np.concatenate([v, uv], 1).tolist(), list(i)


def _uv_box():
  v, i = box()
  v = np.asarray(v, np.float64)
  axis = np.argmax(np.abs(v[:, 3:6]), axis=1)
  pq = np.where((axis == 0)[:, None], v[:, [1, 2]],
                np.where((axis == 1)[:, None], v[:, [0, 2]], v[:, [0, 1]]))
  uv = np.stack([(pq[:, 0] + 1) / 2, (1 - pq[:, 1]) / 2], 1)
  return np.concatenate([v, uv], 1).tolist(), list(i)


def textured(name):
  """Vertices (x, y, z, nx, ny, nz, cap, u, v) and indices of primitive `name` for textured
  draws; a plane's (u, v) is its unit (x, y), which the instance maps (render/textures.py)."""
  if name == "sphere":
    verts, idx = _uv_sphere(SLICES, STACKS)
  elif name == "capsule":
    verts, idx = _uv_capsule(SLICES, STACKS)
  elif name == "cylinder":
    verts, idx = _uv_cylinder(SLICES, STACKS)
  elif name == "box":
    verts, idx = _uv_box()
  else:
    v, i = globals()[name]()
    v = np.asarray(v, np.float64)
    return (np.concatenate([v, v[:, 0:2]], 1).astype(np.float32), np.asarray(i, np.int32))
  return np.array(verts, np.float32), np.array(idx, np.int32)


def mesh_uv(vert, face, texcoord=None, facetexcoord=None):
  """(u, v) of each corner of a mesh asset's triangles, in mesh_asset's order: its texture
  coordinates (mesh_texcoord at mesh_facetexcoord), or else the corner's object-space (x, y),
  which MuJoCo maps linearly (texgen) for meshes without texture coordinates."""
  f = np.asarray(face, np.int64).reshape(-1, 3)
  if texcoord is not None and facetexcoord is not None and len(texcoord):
    return np.asarray(texcoord, np.float32).reshape(-1, 2)[
        np.asarray(facetexcoord, np.int64).reshape(-1, 3)].reshape(-1, 2)
  v = np.asarray(vert, np.float32).reshape(-1, 3)
  return v[f][:, :, 0:2].reshape(-1, 2)
