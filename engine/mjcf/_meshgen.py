"""Builtin meshes (`<mesh builtin="..." params="..."/>`): the vertices and faces MuJoCo's
compiler generates for them (mjs_makeMesh and mjCMesh::Make* in src/user/user_mesh.cc).

Vertices are float32 as MuJoCo stores them; where MuJoCo computes in float (the icosphere's
midpoints) we do too, so that the generated meshes are bit-identical. A mesh without faces
(cone, wedge) gets its convex hull's triangles when compiled, as an inline vertex-only mesh.
Plain numpy/math, load time only.
"""
import math

import numpy as np

from numjoco.engine import rotation
from numjoco.engine.mjcf import _limits
from numjoco.engine.mjcf._mesh import MeshError
from numjoco.engine.rotation import EPS

F32 = np.float32
TYPES = ("sphere", "hemisphere", "cone", "supersphere", "supertorus", "wedge", "plate",
         "grid", "box", "cylinder", "ellipsoid", "square", "disc")
FLEX = ("grid", "box", "cylinder", "ellipsoid", "square", "disc")   # MuJoCo's flexcomp shapes


def make(builtin, params):
  """(vert float32 (n,3), face int32 (m,3) or None, shell) of a builtin mesh; `shell` is
  True where MuJoCo switches the mesh's inertia to 'shell' (the flat plate), "legacy" where it
  switches only a legacy inertia (MuJoCo's flat flexcomp shapes). Raises
  MeshError for bad parameters, with MuJoCo's rules."""
  p = [float(x) for x in params]
  if not all(math.isfinite(x) for x in p):
    raise MeshError(f"builtin '{builtin}': params must be finite numbers")
  if builtin in FLEX:
    return _flex(builtin, p)
  need = {"sphere": 1, "hemisphere": 1, "cone": 2, "supersphere": 3, "supertorus": 4,
          "wedge": 5, "plate": 2}[builtin]
  if len(p) != need:
    raise MeshError(f"builtin '{builtin}' needs {need} parameter{'s' * (need > 1)} in "
                    f"'params', got {len(p)}")
  # vertices made, about: the cone's edges, the wedge's and plate's two resolutions
  # multiplied, the others' resolution squared
  r0 = abs(int(p[0]))
  r1 = abs(int(p[1])) if builtin in ("wedge", "plate") else r0
  npoint = r0 if builtin == "cone" else r0 * r1
  if npoint > _limits.MAX_SAMPLES:
    raise MeshError(f"builtin '{builtin}' params {p[:2]}: about {npoint} vertices, more than "
                    f"the {_limits.MAX_SAMPLES} numjoco generates")
  if builtin == "sphere":
    s = int(p[0])
    if not 0 <= s <= 4:
      raise MeshError("sphere subdivision must be an integer in [0, 4]")
    return (*_sphere(s), False)
  if builtin == "hemisphere":
    r = int(p[0])
    if not 0 <= r <= 10:
      raise MeshError("hemisphere resolution must be an integer in [0, 10]")
    return (*_hemisphere(r), False)
  if builtin == "cone":
    nedge = int(p[0])
    if nedge < 3 or not 0 <= p[1] <= 1:
      raise MeshError("cone needs at least 3 edges and a radius in [0, 1]")
    return _cone(nedge, p[1]), None, False
  if builtin == "supersphere":
    res = int(p[0])
    if res < 3 or p[1] < 0 or p[2] < 0:
      raise MeshError("supersphere needs resolution >= 3 and exponents e, n >= 0")
    return (*_supersphere(res, p[1], p[2]), False)
  if builtin == "supertorus":
    res = int(p[0])
    if res < 3 or not 0 < p[1] <= 1 or p[2] <= 0 or p[3] <= 0:
      raise MeshError("supertorus needs resolution >= 3, radius in (0, 1] and s, t > 0")
    return (*_supertorus(res, p[1], p[2], p[3]), False)
  res = [int(p[0]), int(p[1])]
  if res[0] <= 0 or res[1] <= 0:
    raise MeshError(f"{builtin} resolutions must be positive")
  if builtin == "wedge":
    if not 0 < p[2] <= 180 or not 0 < p[3] <= 90:
      raise MeshError("wedge field of view must be in (0, 180] x (0, 90] degrees")
    if not 0 <= p[4] <= 1:
      raise MeshError("wedge gamma must be in [0, 1]")
    return _wedge(res, p[2:4], p[4]), None, False
  return (*_plate(res), True)


def _f32(vals):
  return np.array(vals, np.float64).astype(F32).reshape(-1, 3)


def _sphere(subdiv):
  """Icosahedron subdivided `subdiv` times, midpoints normalised in float32 (MakeSphere)."""
  phi = F32((1.0 + math.sqrt(5.0)) / 2.0)
  base = [[-1, phi, 0], [1, phi, 0], [-1, -phi, 0], [1, -phi, 0],
          [0, -1, phi], [0, 1, phi], [0, -1, -phi], [0, 1, -phi],
          [phi, 0, -1], [phi, 0, 1], [-phi, 0, -1], [-phi, 0, 1]]
  norm = math.sqrt(1.0 + float(phi * phi))   # float product, double sum and sqrt
  vert = [[F32(float(F32(x)) / norm) for x in v] for v in base]
  face = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
          [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8],
          [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]]
  two = F32(2.0)
  for _ in range(subdiv):
    cache, new = {}, []

    def mid(a, b):
      key = (min(a, b), max(a, b))
      if key not in cache:
        m = [(vert[a][k] + vert[b][k]) / two for k in range(3)]
        n = np.sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2])
        cache[key] = len(vert)
        vert.append([m[k] / n for k in range(3)])
      return cache[key]

    for v1, v2, v3 in face:
      m12, m23, m31 = mid(v1, v2), mid(v2, v3), mid(v3, v1)
      new += [[v1, m12, m31], [v2, m23, m12], [v3, m31, m23], [m12, m23, m31]]
    face = new
  return np.array(vert, F32), np.array(face, np.int32)


def _hemisphere(res):
  """Quad-projected hemisphere with a bottom cap around a centre vertex (MakeHemisphere)."""
  pole = (0.0, 0.0, 1.0)
  equator = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))
  vert = [pole]
  for row in range(res + 1):
    for side in range(4):
      factor = (row + 1) / (res + 1)
      start = [pole[i] + factor * (equator[side][i] - pole[i]) for i in range(3)]
      end = [pole[i] + factor * (equator[(side + 1) % 4][i] - pole[i]) for i in range(3)]
      delta = [(end[i] - start[i]) / (row + 1) for i in range(3)]
      for i in range(row + 1):
        p = [start[j] + i * delta[j] for j in range(3)]
        norm = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
        vert.append([p[j] / norm for j in range(3)])
  vert.append([0.0, 0.0, 0.0])
  nvert = len(vert)
  face = [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1]]
  for row in range(res):
    start_curr = 2 * row * (row + 1) + 1
    count_curr = 4 * (row + 1)
    start_next = start_curr + count_curr
    count_next = 4 * (row + 2)
    for side in range(4):
      for i in range(row + 2):
        v_curr = i + (row + 1) * side
        v_next = i + (row + 2) * side
        face.append([start_curr + v_curr % count_curr, start_next + v_next % count_next,
                     start_next + (v_next + 1) % count_next])
        if i < row + 1:
          face.append([start_curr + v_curr % count_curr, start_next + (v_next + 1) % count_next,
                       start_curr + (v_curr + 1) % count_curr])
  start, count = 2 * res * (res + 1) + 1, 4 * (res + 1)
  for i in range(count):
    face.append([start + i, nvert - 1, start + (i + 1) % count])
  return _f32(vert), np.array(face, np.int32)


def _cone(nedge, radius):
  """Bottom unit polygon at z=-1, top polygon of `radius` at z=1 or the apex (MakeCone)."""
  vert = [[math.cos(2 * i * math.pi / nedge), math.sin(2 * i * math.pi / nedge), -1.0]
          for i in range(nedge)]
  if radius > 0:
    vert += [[radius * math.cos(2 * i * math.pi / nedge),
              radius * math.sin(2 * i * math.pi / nedge), 1.0] for i in range(nedge, 2 * nedge)]
  else:
    vert.append([0.0, 0.0, 1.0])
  return _f32(vert)


def _aux_c(w, m):
  return math.copysign(abs(math.cos(w)) ** m, math.cos(w))


def _aux_s(w, m):
  return math.copysign(abs(math.sin(w)) ** m, math.sin(w))


def _supersphere(res, e, n):
  """Superellipsoid with poles, `res` rings of `res` vertices (MakeSupersphere)."""
  vert = [[0.0, 0.0, -1.0]]
  for i in range(1, res):
    v = -math.pi / 2 + i * math.pi / res
    for j in range(res):
      u = -math.pi + j * 2 * math.pi / res
      vert.append([_aux_c(v, n) * _aux_c(u, e), _aux_c(v, n) * _aux_s(u, e), _aux_s(v, n)])
  vert.append([0.0, 0.0, 1.0])
  face = [[0, 1 + (j + 1) % res, 1 + j] for j in range(res)]
  for i in range(res - 2):
    for j in range(res):
      v1, v2 = 1 + i * res + j, 1 + i * res + (j + 1) % res
      v4, v3 = 1 + (i + 1) * res + j, 1 + (i + 1) * res + (j + 1) % res
      face += [[v1, v2, v4], [v2, v3, v4]]
  last = 1 + (res - 2) * res
  face += [[last + j, last + (j + 1) % res, len(vert) - 1] for j in range(res)]
  return _f32(vert), np.array(face, np.int32)


def _supertorus(res, radius, s, t):
  """Supertoroid of major radius 1 and minor `radius`, res x res vertices (MakeSupertorus)."""
  vert, face = [], []
  for i in range(res):
    for j in range(res):
      u, v = 2 * math.pi * i / res, 2 * math.pi * j / res
      vert.append([(1 + radius * _aux_c(v, s)) * _aux_c(u, t),
                   (1 + radius * _aux_c(v, s)) * _aux_s(u, t), radius * _aux_s(v, s)])
  for i in range(res):
    for j in range(res):
      i1, j1 = (i + 1) % res, (j + 1) % res
      v1, v2, v3, v4 = i * res + j, i1 * res + j, i1 * res + j1, i * res + j1
      face += [[v1, v2, v4], [v2, v3, v4]]
  return _f32(vert), np.array(face, np.int32)


def _linspace(lo, hi, n):
  """MuJoCo's LinSpace: accumulated increments (not numpy's linspace)."""
  inc = (hi - lo) / (n - 1) if n > 1 else 0.0
  out = []
  for _ in range(n):
    out.append(lo)
    lo += inc
  return out


def _wedge_angles(res, fov, gamma):
  """(azimuth, elevation) of the cell centres of a wedge (MakeWedge's BinEdges), row-major."""
  def edges(n, f):
    x = _linspace(-1.0, 1.0, n + 1)
    if gamma:
      g = max(0.0, min(1.0, gamma))
      x = [g * xi ** 5 + (1 - g) * xi for xi in x]
    s = f * math.pi / 180
    return [xi * s for xi in x]
  xe, ye = edges(res[0], fov[0]), edges(res[1], fov[1])
  return [(0.5 * (xe[i + 1] + xe[i]), 0.5 * (ye[j + 1] + ye[j]))
          for i in range(res[0]) for j in range(res[1])]


def _wedge(res, fov, gamma):
  """Cell centres of a foveated slice of the unit sphere (MakeWedge; tactile sensors)."""
  return _f32([[math.cos(e) * math.sin(a), math.sin(e), -math.cos(e) * math.cos(a)]
               for a, e in _wedge_angles(res, fov, gamma)])


def normals(builtin, params):
  """Given normals of a builtin mesh (float32 (3n,3): three per vertex) or None: the wedge's
  tangent frame per cell (TangentFrame: normal, azimuth and elevation directions) and the
  plate's identity frame; MuJoCo computes the other builtins' normals (MakeNormal)."""
  p = [float(x) for x in params]
  if builtin == "wedge":
    out = []
    for a, e in _wedge_angles([int(p[0]), int(p[1])], p[2:4], p[4]):
      ta = [math.cos(e) * math.cos(a), 0.0, math.cos(e) * math.sin(a)]
      te = [-math.sin(e) * math.sin(a), math.cos(e), math.sin(e) * math.cos(a)]
      rotation.normvec(ta, 3)
      rotation.normvec(te, 3)
      n = [te[1] * ta[2] - te[2] * ta[1], te[2] * ta[0] - te[0] * ta[2],
           te[0] * ta[1] - te[1] * ta[0]]
      out += [n, ta, te]
    return _f32(out)
  if builtin == "plate":
    return np.tile(np.eye(3, dtype=F32), (int(p[0]) * int(p[1]), 1))
  return None


def _plate(res):
  """Cell centres of a res[0] x res[1] grid on [-1, 1]^2 at z=-1, triangulated (MakeRect)."""
  vert, face = [], []
  dx, dy = 2.0 / res[0], 2.0 / res[1]
  for i in range(res[0]):
    for j in range(res[1]):
      vert.append([-1 + (i + 0.5) * dx, -1 + (j + 0.5) * dy, -1.0])
  for i in range(1, res[0]):
    for j in range(1, res[1]):
      face += [[(i - 1) * res[1] + j - 1, i * res[1] + j - 1, (i - 1) * res[1] + j],
               [i * res[1] + j, (i - 1) * res[1] + j, i * res[1] + j - 1]]
  return _f32(vert), np.array(face, np.int32).reshape(-1, 3)


# ------------------------------------------------- MuJoCo 4's flexcomp shapes as meshes
# The points (and, for surfaces, the triangles) that flexcomp's MakeGrid / MakeSquare /
# MakeBox generate; volumetric (dim 3) shapes keep only their points, so that the mesh's
# faces are its convex hull's, as MuJoCo compiles them.

def _flex(builtin, p):
  """Parameters count[3], spacing[3], [dim] of grid/box/cylinder/ellipsoid/square/disc."""
  flat = builtin in ("square", "disc")
  if len(p) not in ((6,) if flat else (6, 7)):
    raise MeshError(f"builtin '{builtin}' needs params count[3] spacing[3]"
                    + ("" if flat else " [dim]") + f" (6{'' if flat else ' or 7'} values), got "
                    f"{len(p)}")
  count, spacing = [int(x) for x in p[:3]], p[3:6]
  if math.prod(max(x, 1) for x in count) > _limits.MAX_SAMPLES:
    raise MeshError(f"builtin '{builtin}' count {count}: more than the {_limits.MAX_SAMPLES} "
                    "points numjoco generates")
  dim = int(p[6]) if len(p) == 7 else (2 if flat else 3)
  if dim not in (2, 3):
    raise MeshError(f"{builtin} dim must be 2 or 3")
  if builtin == "grid":
    if min(count) <= 0:
      raise MeshError("grid count must be positive")
    if dim == 2 and count[2] != 1:
      raise MeshError("grid count must be 1 along dimensions beyond dim")
    vert, face = _grid(count, spacing, dim, disc=False)
  elif flat:
    if count[0] <= 0 or count[1] <= 0 or count[2] != 1:
      raise MeshError(f"{builtin} count must be positive, with count[2] 1")
    vert, face = _grid(count, spacing, 2, disc=builtin == "disc")
    if builtin == "disc":
      size = [0.5 * spacing[0] * (count[0] - 1), 0.5 * spacing[1] * (count[1] - 1)]
      for v in vert:
        l0 = max(abs(v[0]), abs(v[1]))
        rotation.normvec(v, 2)
        v[0] *= size[0] * l0
        v[1] *= size[1] * l0
  else:
    if min(count) < 2:
      raise MeshError(f"{builtin} count must be at least 2")
    vert, face = _box(builtin, count, spacing, dim)
  return _f32(vert), (np.array(face, np.int32).reshape(-1, 3) if dim == 2 else None), (
      "legacy" if dim == 2 else False)


def _grid(count, spacing, dim, disc):
  """Points of a centred grid and, in 2D, its triangles (flexcomp MakeGrid)."""
  vert, face = [], []
  if dim == 2:
    for ix in range(count[0]):
      for iy in range(count[1]):
        pos = [spacing[0] * (ix - 0.5 * (count[0] - 1)), spacing[1] * (iy - 0.5 * (count[1] - 1))]
        vert.append([pos[0], pos[1], 0.0])
        q2t = [[0, 1, 2], [0, 2, 3]]
        if disc and ((pos[0] < -EPS and pos[1] > -EPS) or (pos[0] > -EPS and pos[1] < -EPS)):
          q2t[0][2], q2t[1][0] = 3, 1
        if ix < count[0] - 1 and iy < count[1] - 1:
          c = [count[2] * count[1] * ix + count[2] * iy,
               count[2] * count[1] * (ix + 1) + count[2] * iy,
               count[2] * count[1] * (ix + 1) + count[2] * (iy + 1),
               count[2] * count[1] * ix + count[2] * (iy + 1)]
          face += [[c[k] for k in tri] for tri in q2t]
  else:
    for ix in range(count[0]):
      for iy in range(count[1]):
        for iz in range(count[2]):
          vert.append([spacing[0] * (ix - 0.5 * (count[0] - 1)),
                       spacing[1] * (iy - 0.5 * (count[1] - 1)),
                       spacing[2] * (iz - 0.5 * (count[2] - 1))])
  return vert, face


def _box(kind, count, spacing, dim):
  """Surface points of a box projected onto a box, cylinder or ellipsoid (plus the centre
  in 3D) and, in 2D, the open-top surface's triangles (flexcomp MakeBox)."""
  size = [0.5 * spacing[k] * (count[k] - 1) for k in range(3)]
  opened = dim == 2

  def project(ix, iy, iz):
    pos = [2.0 * ix / (count[0] - 1) - 1, 2.0 * iy / (count[1] - 1) - 1,
           2.0 * iz / (count[2] - 1) - 1]
    if kind == "box":
      return [pos[k] * size[k] for k in range(3)]
    if kind == "cylinder":
      l0 = max(abs(pos[0]), abs(pos[1]))
      rotation.normvec(pos, 2)
      return [pos[0] * (size[0] * l0), pos[1] * (size[1] * l0), pos[2] * size[2]]
    rotation.normvec(pos, 3)
    return [pos[k] * size[k] for k in range(3)]

  vert = [[0.0, 0.0, 0.0]] if dim == 3 else []
  idx = {}

  def add(ix, iy, iz):
    idx[ix, iy, iz] = len(vert) - (dim == 3)
    vert.append(project(ix, iy, iz))

  for iz in range(0, count[2], count[2] - 1):
    for ix in range(count[0]):
      for iy in range(count[1]):
        if not (opened and iz != 0):
          add(ix, iy, iz)
  for iy in range(0, count[1], count[1] - 1):
    for ix in range(count[0]):
      for iz in range(count[2]):
        if iz > 0 and (opened or iz < count[2] - 1):
          add(ix, iy, iz)
  for ix in range(0, count[0], count[0] - 1):
    for iy in range(count[1]):
      for iz in range(count[2]):
        if iz > 0 and (opened or iz < count[2] - 1) and 0 < iy < count[1] - 1:
          add(ix, iy, iz)
  face = []
  if dim == 2:
    for iz in range(0, count[2], count[2] - 1):
      for ix in range(count[0] - 1):
        for iy in range(count[1] - 1):
          if iz != 0:
            continue
          s1, s2 = (1, 0) if iz == 0 else (0, 1)
          face += [[idx[ix, iy, iz], idx[ix + 1, iy + s1, iz], idx[ix + 1, iy + s2, iz]],
                   [idx[ix, iy, iz], idx[ix + s2, iy + 1, iz], idx[ix + s1, iy + 1, iz]]]
    for iy in range(0, count[1], count[1] - 1):
      for ix in range(count[0] - 1):
        for iz in range(count[2] - 1):
          ix0, dx = (ix, 1) if iy == 0 else (ix + 1, -1)
          face += [[idx[ix0, iy, iz], idx[ix0 + dx, iy, iz], idx[ix0 + dx, iy, iz + 1]],
                   [idx[ix0, iy, iz], idx[ix0 + dx, iy, iz + 1], idx[ix0, iy, iz + 1]]]
    for ix in range(0, count[0], count[0] - 1):
      for iy in range(count[1] - 1):
        for iz in range(count[2] - 1):
          iy0, dy = (iy, 1) if ix != 0 else (iy + 1, -1)
          face += [[idx[ix, iy0, iz], idx[ix, iy0 + dy, iz], idx[ix, iy0 + dy, iz + 1]],
                   [idx[ix, iy0, iz], idx[ix, iy0 + dy, iz + 1], idx[ix, iy0, iz + 1]]]
  return vert, face
