"""MJCF <flexcomp>: the points, elements and bodies of a flex component (mjCFlexcomp::Make).

Each generator (grid, box, cylinder, ellipsoid, square, disc, circle, mesh, gmsh, direct) makes
points and elements as MuJoCo does; the free points become bodies with slide joints (or,
for trilinear/quadratic flexes, the node grid does), written as ordinary MJCF nodes spliced
into the tree where the flexcomp was. The flex spec it fills is compiled by engine/mjcf/_flex.py.
"""
import math
import os

import numpy as np

from numjoco.engine import rotation
from numjoco.engine.mjcf import _flexread as fr
from numjoco.engine.mjcf import _limits
from numjoco.engine.mjcf._node import Node, Reader, floats
from numjoco.engine.types import MINVAL as _MINVAL

_EPS = 1e-6          # mjEPS
_TYPES = ("grid", "box", "cylinder", "ellipsoid", "square", "disc", "circle", "mesh", "gmsh",
          "direct")
_DOFS = ("full", "radial", "trilinear", "quadratic", "2d")
# MuJoCo 4.0 has no "vert" (its published source does)
_EDGE_EQ = {"false": 0, "true": 1, "strain": 3}
_BOOL = {"false": 0, "true": 1}


def expand_in(c, node, bodyname, flexes, body=None, frame=None):
  """Replace the <flexcomp> children of `node` (recursively) by the bodies they make; `body`
  is the enclosing body element and `frame` the pose of the <frame>s between them."""
  body = node if body is None else body
  kids = []
  for ch in node.children:
    if ch.tag == "flexcomp":
      made = _flexcomp(c, ch, body, bodyname, flexes, frame)
      if frame is not None:   # MuJoCo poses the points by the frame, not the bodies
        _undo_frame(made, frame)
      kids += made
      continue
    if ch.tag == "body":
      expand_in(c, ch, ch.get("name", ""), flexes)
    elif ch.tag == "frame":
      pose = c._pose(Reader(ch, None), ch)
      if frame is not None:
        pose = rotation.frameaccum(frame[0], frame[1], *pose)
      expand_in(c, ch, bodyname, flexes, body, pose)
    kids.append(ch)
  node.children = kids


def _undo_frame(bodies, frame):
  """Generated bodies spliced into a <frame>: their poses written in the frame's coordinates,
  so that the compiler's frame accumulation leaves them where MuJoCo puts them (parent frame,
  unrotated)."""
  pos, quat = frame
  inv = [quat[0], -quat[1], -quat[2], -quat[3]]
  for b in bodies:
    p = [float(x) for x in b.attrib["pos"].split()]
    local = rotation.rot_vec_quat([p[k] - pos[k] for k in range(3)], inv)
    b.attrib["pos"] = _fmt(local)
    b.attrib["quat"] = _fmt(inv)


def _flexcomp(c, n, parent, bodyname, flexes, frame=None):
  """mjCFlexcomp::Make: the flex spec of <flexcomp> `n` (appended to `flexes`) and the body
  nodes it adds to its parent."""
  f, fc = _read(c, n, bodyname)
  if frame is not None:
    fc["pos"], fc["quat"] = rotation.frameaccum(frame[0], frame[1], fc["pos"], fc["quat"])
    if fc["dof"] in ("trilinear", "quadratic") and fc["quat"] != [1.0, 0.0, 0.0, 0.0]:
      raise n.error(f"flexcomp dof='{fc['dof']}' is supported only for an unrotated grid or "
                    "box (interpolated flexes are not compiled in general yet)")
  point, element, texcoord, elemtexcoord = _generate(c, n, f, fc)
  dim = f["dim"]
  if fc["type"] in ("box", "cylinder") or (fc["type"] == "grid" and dim == 3):
    f["flatskin"] = True
  _check_points(n, f, fc, point, element)
  npnt = len(point) // 3
  if fc["direct"] and fc["scale"] != [1.0, 1.0, 1.0]:
    for i in range(npnt):
      for k in range(3):
        point[3 * i + k] *= fc["scale"][k]
  pos, quat = fc["pos"], fc["quat"]
  for i in range(npnt):
    p = rotation.rot_vec_quat(point[3 * i:3 * i + 3], quat)
    point[3 * i:3 * i + 3] = [pos[0] + p[0], pos[1] + p[1], pos[2] + p[2]]
  pts = np.array(point).reshape(-1, 3)
  minmax = list(pts.min(axis=0)) + list(pts.max(axis=0))
  rigid, centered = fc["rigid"], False
  pinned = [rigid] * npnt
  if not rigid:
    _pins(n, fc["pin"], pinned, npnt, fc["count"], dim)
    if fc["dof"] == "radial":
      pinned[0] = True
    if all(pinned):
      rigid = True
    elif not any(pinned):
      centered = True
  if not any(pinned) and any(ch.tag in ("joint", "freejoint") for ch in parent.children):
    raise n.error(f"body '{bodyname}' has joints but no flex vertices/nodes are pinned to it")
  if fc["direct"]:
    point, element, texcoord, pinned = _prune(point, element, texcoord, pinned)
    npnt = len(point) // 3
  f.update(elem=element, texcoord=texcoord, elemtexcoord=elemtexcoord, dim=dim)
  flexes.append(f)
  if rigid:
    f["vert"] = point
    f["vertbody"] = [bodyname]
    return []
  if fc["dof"] in ("trilinear", "quadratic"):
    f["vert"], f["vertbody"] = point, [bodyname] * npnt
    f["filled"] = True     # an unrotated grid or box (see _read): its cells are full
    return _nodes(n, f, parent, bodyname, point, pinned, centered, minmax, fc["cellcount"],
                  1 if fc["dof"] == "trilinear" else 2, fc["mass"], fc["inertiabox"])
  return _vertex_bodies(n, f, fc, parent, bodyname, point, pinned, centered)


def _read(c, n, bodyname):
  """The flex spec and the flexcomp settings of <flexcomp> `n`, checked as Make checks them
  before generating points."""
  f = fr.default_flex()
  f["node"] = n
  edge = fr.read_common(n, f)
  fc = dict(type=fr.kw(n, "type", {t: t for t in _TYPES}, "grid"),
            count=fr.ints(n, "count") or [10, 10, 10],
            cellcount=fr.ints(n, "cellcount") or [-1, -1, -1],
            spacing=fr.vec(n, "spacing", [0.02, 0.02, 0.02]),
            scale=fr.vec(n, "scale", [1.0, 1.0, 1.0]),
            mass=fr.num(n, "mass", 1.0), inertiabox=fr.num(n, "inertiabox", 0.005),
            origin=floats(n, "origin", 3), rigid=bool(fr.kw(n, "rigid", _BOOL, 0)),
            dof=fr.kw(n, "dof", {d: d for d in _DOFS}, "full"),
            pin={"id": [], "range": [], "grid": [], "gridrange": []})
  fc["direct"] = fc["type"] in ("direct", "mesh", "gmsh")
  if fc["origin"] is None and fc["type"] == "mesh" and f["dim"] == 3:
    raise n.error("origin must be specified for mesh flexcomps if dim=3")
  for p in n.children:
    if p.tag == "pin":
      for k in fc["pin"]:
        fc["pin"][k] += fr.ints(p, k) or []
  if edge is not None:
    f["equality"] = fr.kw(edge, "equality", _EDGE_EQ, 0)
    f["eq_solref"] = floats(edge, "solref", 2, 1)
    f["eq_solimp"] = floats(edge, "solimp", 5, 1)
  interp = fc["dof"] in ("trilinear", "quadratic")
  if f["equality"] == 3 and not interp:
    raise n.error(f"flex strain equality requires an interpolated flex '{f['name']}'")
  if f["elastic2d"] != 1 and f["equality"] and f["young"] > 0:
    raise n.error("flex constraints and elasticity (young) cannot both be present")
  if not bodyname:
    raise n.error("Parent body must have name")
  if not 1 <= f["dim"] <= 3:
    raise n.error("Invalid dim, must be between 1 and 3")
  if len(fc["count"]) != 3 or len(fc["cellcount"]) != 3:
    raise n.error("attributes 'count' and 'cellcount' take 3 values")
  if any(x < 1 or (fc["dof"] == "radial" and x < 2 and f["dim"] == 3) for x in fc["count"]):
    raise n.error("Count too small")
  _limits.check_samples(n, f"flexcomp count {' x '.join(map(str, fc['count']))}",
                        math.prod(fc["count"]))
  if not fc["direct"] and min(fc["spacing"]) < 2 * f["radius"] + f["margin"]:
    raise n.error("Spacing must be larger than geometry size")
  if min(fc["scale"]) < _MINVAL:
    raise n.error("Scale must be larger than mjMINVAL")
  if fc["mass"] < _MINVAL or fc["inertiabox"] < _MINVAL:
    raise n.error("Mass and inertiabox must be larger than mjMINVAL")
  fc["pos"], fc["quat"] = c._pose(Reader(n, None), n)
  if interp and (fc["type"] not in ("grid", "box") or fc["quat"] != [1.0, 0.0, 0.0, 0.0]
                 or f["elastic2d"] or f["equality"]):
    # MuJoCo weighs node masses and cell stiffness by the mesh content of each cell, which is
    # not derived here; a full, axis-aligned grid or box fills its cells, where they agree
    raise n.error(f"flexcomp dof='{fc['dof']}' is supported only for an unrotated grid or box "
                  "without elastic2d or edge equality (interpolated flexes are not compiled "
                  "in general yet)")
  return f, fc


def _generate(c, n, f, fc):
  """Points, elements and texture coordinates of the flexcomp's type (sets its dim where the
  type decides it)."""
  point = list(floats(n, "point") or [])
  element = list(fr.ints(n, "element") or [])
  texcoord = [float(np.float32(x)) for x in (floats(n, "texcoord") or [])]
  elemtexcoord = []
  ftype = fc["type"]
  gen = dict(type=ftype, count=fc["count"], spacing=fc["spacing"], dim=f["dim"],
             needtex=not texcoord and bool(f["material"]))
  if ftype in ("grid", "circle"):
    point, element, texcoord = _make_grid(n, gen)
  elif ftype in ("box", "cylinder", "ellipsoid"):
    point, element, texcoord = _make_box(gen)
  elif ftype in ("square", "disc"):
    f["dim"] = gen["dim"] = 2
    point, element, texcoord = _make_grid(n, gen)
    if ftype == "disc":
      _disc_project(point, fc["count"], fc["spacing"])
  elif ftype == "mesh":
    point, element, texcoord, elemtexcoord = _make_mesh(c, n, f["dim"], fc["origin"])
  elif ftype == "gmsh":
    point, element, f["dim"] = _make_gmsh(c, n)
  return point, element, texcoord, elemtexcoord


def _check_points(n, f, fc, point, element):
  """Make's checks of the pins, points and elements."""
  dim, pin = f["dim"], fc["pin"]
  if len(pin["range"]) % 2:
    raise n.error("Pin range number must be multiple of 2")
  if len(pin["grid"]) % dim:
    raise n.error("Pin grid number must be multiple of dim")
  if len(pin["gridrange"]) % (2 * dim):
    raise n.error("Pin grid range number of must be multiple of 2*dim")
  if (fc["type"] != "grid" and (pin["grid"] or pin["gridrange"])
      and fc["dof"] not in ("trilinear", "quadratic")):
    raise n.error("Pin grid(range) can only be used with grid or interpolated")
  if dim == 1 and (pin["grid"] or pin["gridrange"]):
    raise n.error("Pin grid(range) cannot be used with dim=1")
  if not point or not element:
    raise n.error("Point and element required")
  if len(point) % 3:
    raise n.error("Point size must be a multiple of 3")
  if len(element) % (dim + 1):
    raise n.error("Element size must be a multiple of dim+1")
  npnt = len(point) // 3
  for i, e in enumerate(element):
    if e < 0 or e >= npnt:
      raise n.error(f"element {i} has point id {e}, number of points is {npnt}")


def _prune(point, element, texcoord, pinned):
  """Direct, mesh and gmsh flexcomps: points no element uses are dropped, ids renumbered."""
  npnt = len(point) // 3
  used = [False] * npnt
  for e in element:
    used[e] = True
  if all(used):
    return point, element, texcoord, pinned
  newid = np.cumsum(used) - 1
  keep = [i for i in range(npnt) if used[i]]
  return ([point[3 * i + k] for i in keep for k in range(3)],
          [int(newid[e]) for e in element],
          [texcoord[2 * i + k] for i in keep for k in range(2)] if texcoord else texcoord,
          [pinned[i] for i in keep])


def _vertex_bodies(n, f, fc, parent, bodyname, point, pinned, centered):
  """One body per free point, at the point, with three (dof full), two (2d) or one radial
  slide joint; pinned points stay on the parent."""
  npnt = len(point) // 3
  bodymass = fc["mass"] / npnt
  bodyinertia = bodymass * (2.0 * fc["inertiabox"] * fc["inertiabox"]) / 3.0
  bodies, vertbody = [], []
  for i in range(npnt):
    if pinned[i]:
      vertbody.append(bodyname)
      continue
    b = _body_node(n, parent, _body_name(n, f, f"_{i}"), point[3 * i:3 * i + 3], bodymass,
                   bodyinertia)
    if fc["dof"] == "radial":
      axis = point[3 * i:3 * i + 3]
      rotation.normvec(axis)
      _joint_node(b, axis)
    else:
      for j in range(2 if fc["dof"] == "2d" else 3):
        _joint_node(b, [1.0 if k == j else 0.0 for k in range(3)])
    bodies.append(b)
    vertbody.append(b.attrib["name"])
    if not centered:
      point[3 * i:3 * i + 3] = [0.0, 0.0, 0.0]
  f["vertbody"] = vertbody
  f["vert"] = [] if centered else point
  return bodies


def _nodes(n, f, parent, bodyname, point, pinned, centered, minmax, cellcount, order, mass,
           inertiabox):
  """The node grid of a trilinear or quadratic flexcomp (mjCFlexcomp::Make): one body with
  three slide joints per free node, nodes only in empty cells (or, for shells, inside the
  box) pinned to the parent, masses by node weight scaled to the flexcomp's mass."""
  cells = list(cellcount) if cellcount[0] >= 0 else [1, 1, 1]
  f["cellcount"], f["order"] = cells, order
  nx, ny, nz = (cells[k] * order + 1 for k in range(3))
  nnode = nx * ny * nz
  pinned = list(pinned) + [False] * max(0, nnode - len(pinned))
  f["cell_empty"] = None
  if not f["elastic2d"]:
    empty = cell_empty(np.array(point).reshape(-1, 3), f["elem"], f["dim"], minmax, cells)
    f["cell_empty"] = empty
    cx, cy, cz = cells
    for gi in range(nx):
      for gj in range(ny):
        for gk in range(nz):
          rng = [range(max(0, 0 if g == 0 else (g - 1) // order), min(c - 1, g // order) + 1)
                 for g, c in ((gi, cx), (gj, cy), (gk, cz))]
          if all(empty[ci * cy * cz + cj * cz + ck]
                 for ci in rng[0] for cj in rng[1] for ck in rng[2]):
            pinned[gi * ny * nz + gj * nz + gk] = True
  else:
    for gi in range(nx):
      for gj in range(ny):
        for gk in range(nz):
          if not (gi in (0, nx - 1) or gj in (0, ny - 1) or gk in (0, nz - 1)):
            pinned[gi * ny * nz + gj * nz + gk] = True
  if centered and any(pinned[:nnode]):
    centered = False
  node = [0.0] * (3 * nnode)
  weights = (0.5, 0.5) if order == 1 else (1 / 6, 2 / 3, 1 / 6)
  bodies, nodebody, masses = [], [], []
  idx = 0
  for gi in range(nx):
    for gj in range(ny):
      for gk in range(nz):
        par = (gi / (cells[0] * order), gj / (cells[1] * order), gk / (cells[2] * order))
        p = [minmax[k] + par[k] * (minmax[k + 3] - minmax[k]) for k in range(3)]
        if pinned[idx]:
          node[3 * idx:3 * idx + 3] = p
          nodebody.append(bodyname)
          idx += 1
          continue
        m = 1.0    # each cell's share: MuJoCo lumps per cell (trilinear 1/8, Simpson weights)
        for g, ng in ((gi, nx), (gj, ny), (gk, nz)):
          loc = g % order
          m *= weights[loc] * (2 if 0 < g < ng - 1 and loc == 0 else 1)
        masses.append(m)
        b = Node("body", {"name": _body_name(n, f, f"_{gi}_{gj}_{gk}"), "pos": _fmt(p)},
                 n.file, n.line, parent)
        for j in range(3):
          _joint_node(b, [1.0 if k == j else 0.0 for k in range(3)])
        bodies.append(b)
        nodebody.append(b.attrib["name"])
        idx += 1
  total = sum(masses)
  scale = mass / total if total > 0 else 1.0
  for b, m in zip(bodies, masses):
    inertia = m * (2.0 * inertiabox * inertiabox) / 3.0 * scale
    b.children.insert(0, Node("inertial", {"pos": "0 0 0", "mass": repr(m * scale),
                                           "diaginertia": _fmt([inertia] * 3)},
                              n.file, n.line, b))
  f["nodebody"] = nodebody
  f["nodecoord"] = [] if centered else node
  return bodies


def cell_empty(vpos, elem, dim, minmax, cells):
  """mjCFlex::ComputeCellEmpty: cells no element's box reaches; for surfaces (dim 2) only
  those connected to the grid's boundary without crossing an element."""
  cx, cy, cz = cells
  ncell = cx * cy * cz
  d = [minmax[k + 3] - minmax[k] for k in range(3)]
  has = [False] * ncell

  def cell(coord, k, nc):
    if d[k] <= 0:
      return 0
    return max(0, min(nc - 1, int((coord - minmax[k]) / d[k] * nc)))

  nvpe = dim + 1
  for e in range(len(elem) // nvpe):
    p = vpos[elem[nvpe * e:nvpe * (e + 1)]]
    lo, hi = p.min(axis=0), p.max(axis=0)
    r = [range(cell(lo[k], k, nc), cell(hi[k], k, nc) + 1) for k, nc in enumerate(cells)]
    for ci in r[0]:
      for cj in r[1]:
        for ck in r[2]:
          has[ci * cy * cz + cj * cz + ck] = True
  if dim != 2:
    return [not h for h in has]
  empty = [False] * ncell
  queue = []
  for ci in range(cx):
    for cj in range(cy):
      for ck in range(cz):
        i = ci * cy * cz + cj * cz + ck
        if (ci in (0, cx - 1) or cj in (0, cy - 1) or ck in (0, cz - 1)) and not has[i] \
            and not empty[i]:
          empty[i] = True
          queue.append((ci, cj, ck))
  while queue:
    ci, cj, ck = queue.pop(0)
    for di, dj, dk in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)):
      a, b, c = ci + di, cj + dj, ck + dk
      if 0 <= a < cx and 0 <= b < cy and 0 <= c < cz:
        i = a * cy * cz + b * cz + c
        if not empty[i] and not has[i]:
          empty[i] = True
          queue.append((a, b, c))
  return empty


def _body_name(n, f, tail):
  """A generated body's name: the flexcomp's name and `tail`, then any replicate suffixes
  (engine/mjcf/_replicate.py)."""
  base = n.get("_flex_base", f["name"])
  return base + tail + f["name"][len(base):]


def _fmt(vals):
  """Floats as attribute text that reads back exactly."""
  return " ".join(repr(float(v)) for v in vals)


def _body_node(n, parent, name, pos, mass, inertia):
  """A generated vertex body (as mjs_addBody: explicit inertial at its origin)."""
  b = Node("body", {"name": name, "pos": _fmt(pos)}, n.file, n.line, parent)
  b.children.append(Node("inertial", {"pos": "0 0 0", "mass": repr(float(mass)),
                                      "diaginertia": _fmt([inertia] * 3)}, n.file, n.line, b))
  return b


def _joint_node(b, axis):
  """Add a slide joint along `axis` at body node `b`'s origin."""
  b.children.append(Node("joint", {"type": "slide", "pos": "0 0 0", "axis": _fmt(axis)},
                         b.file, b.line, b))


def _pins(n, pin, pinned, npnt, count, dim):
  """Pinned points from <pin id/range/grid/gridrange> (mjCFlexcomp::Make)."""
  for i in pin["id"]:
    if i < 0 or i >= npnt:
      raise n.error("pinid out of range")
    pinned[i] = True
  r = pin["range"]
  for i in range(0, len(r), 2):
    if not (0 <= r[i] < npnt and 0 <= r[i + 1] < npnt):
      raise n.error("pinrange out of range")
    for k in range(r[i], r[i + 1] + 1):
      pinned[k] = True
  gid = (lambda ix, iy: ix * count[1] + iy) if dim == 2 else \
      (lambda ix, iy, iz: ix * count[1] * count[2] + iy * count[2] + iz)
  g = pin["grid"]
  for i in range(0, len(g), dim):
    if any(g[i + k] < 0 or g[i + k] >= count[k] for k in range(dim)):
      raise n.error("pingrid out of range")
    pinned[gid(*g[i:i + dim])] = True
  g = pin["gridrange"]
  for i in range(0, len(g), 2 * dim):
    if any(g[i + k] < 0 or g[i + k] >= count[k % dim] for k in range(2 * dim)):
      raise n.error("pingridrange out of range")
    lo, hi = g[i:i + dim], g[i + dim:i + 2 * dim]
    if dim == 2:
      for ix in range(lo[0], hi[0] + 1):
        for iy in range(lo[1], hi[1] + 1):
          pinned[gid(ix, iy)] = True
    else:
      for ix in range(lo[0], hi[0] + 1):
        for iy in range(lo[1], hi[1] + 1):
          for iz in range(lo[2], hi[2] + 1):
            pinned[gid(ix, iy, iz)] = True


_QUAD2TRI = ((0, 1, 2), (0, 2, 3))
_CUBE2TETS = ((0, 3, 1, 7), (0, 1, 4, 7), (1, 3, 2, 7), (1, 2, 6, 7), (1, 5, 4, 7),
              (1, 6, 5, 7))


def _make_grid(n, g):
  """Points, elements and texture coordinates of a grid, circle or square (MakeGrid)."""
  count, sp, dim = g["count"], g["spacing"], g["dim"]
  point, element, tex = [], [], []
  f32 = lambda x: float(np.float32(x))
  if dim == 1:
    for ix in range(count[0]):
      if g["type"] == "circle":
        if ix >= count[0] - 1:
          continue
        theta = 2 * math.pi / (count[0] - 1)
        radius = sp[0] / math.sin(theta / 2) / 2
        point += [radius * math.cos(theta * ix), radius * math.sin(theta * ix), 0.0]
        element += [ix, 0 if ix == count[0] - 2 else ix + 1]
      else:
        point += [sp[0] * (ix - 0.5 * (count[0] - 1)), 0.0, 0.0]
        if ix < count[0] - 1:
          element += [ix, ix + 1]
  elif dim == 2:
    for ix in range(count[0]):
      for iy in range(count[1]):
        q2t = [list(_QUAD2TRI[0]), list(_QUAD2TRI[1])]
        pos = [sp[0] * (ix - 0.5 * (count[0] - 1)), sp[1] * (iy - 0.5 * (count[1] - 1))]
        point += [pos[0], pos[1], 0.0]
        if g["needtex"]:
          tex += [f32(ix / max(count[0] - 1, 1)), f32(iy / max(count[1] - 1, 1))]
        if (((pos[0] < -_EPS and pos[1] > -_EPS) or (pos[0] > -_EPS and pos[1] < -_EPS))
            and g["type"] == "disc"):
          q2t[0][2] = 3
          q2t[1][0] = 1
        if ix < count[0] - 1 and iy < count[1] - 1:
          c21 = count[2] * count[1]
          v = [c21 * ix + count[2] * iy, c21 * (ix + 1) + count[2] * iy,
               c21 * (ix + 1) + count[2] * (iy + 1), c21 * ix + count[2] * (iy + 1)]
          for s in range(2):
            element += [v[k] for k in q2t[s]]
  else:
    for ix in range(count[0]):
      for iy in range(count[1]):
        for iz in range(count[2]):
          point += [sp[0] * (ix - 0.5 * (count[0] - 1)), sp[1] * (iy - 0.5 * (count[1] - 1)),
                    sp[2] * (iz - 0.5 * (count[2] - 1))]
          if g["needtex"]:
            tex += [f32(np.float32(ix) / np.float32(max(count[0] - 1, 1))),
                    f32(np.float32(iy) / np.float32(max(count[1] - 1, 1)))]
          if ix < count[0] - 1 and iy < count[1] - 1 and iz < count[2] - 1:
            c21 = count[2] * count[1]
            v = [c21 * (ix + a) + count[2] * (iy + b) + iz + cz
                 for cz in (0, 1) for a, b in ((0, 0), (1, 0), (1, 1), (0, 1))]
            for s in _CUBE2TETS:
              element += [v[k] for k in s]
  if not element:
    raise n.error("No elements were created in grid")
  return point, element, tex


def _disc_project(point, count, sp):
  """MakeSquare's disc: the square grid pushed out radially onto a disc."""
  size = [0.5 * sp[0] * (count[0] - 1), 0.5 * sp[1] * (count[1] - 1)]
  for i in range(len(point) // 3):
    p = point[3 * i:3 * i + 2]
    l0 = max(abs(p[0]), abs(p[1]))
    rotation.normvec(p)
    point[3 * i] = p[0] * size[0] * l0
    point[3 * i + 1] = p[1] * size[1] * l0


def _box_project(g, ix, iy, iz):
  """BoxProject: grid point (ix, iy, iz) on the box, cylinder or ellipsoid."""
  count, sp = g["count"], g["spacing"]
  pos = [2.0 * ix / (count[0] - 1) - 1, 2.0 * iy / (count[1] - 1) - 1,
         2.0 * iz / (count[2] - 1) - 1]
  size = [0.5 * sp[k] * (count[k] - 1) for k in range(3)]
  if g["type"] == "box":
    return [pos[k] * size[k] for k in range(3)]
  if g["type"] == "cylinder":
    l0 = max(abs(pos[0]), abs(pos[1]))
    xy = pos[:2]
    rotation.normvec(xy)
    return [xy[0] * size[0] * l0, xy[1] * size[1] * l0, pos[2] * size[2]]
  rotation.normvec(pos)
  return [pos[k] * size[k] for k in range(3)]


def _make_box(g):
  """Points, elements and texture coordinates of a box, cylinder or ellipsoid (MakeBox; a
  3D one has a centre point and tetrahedra fanning out from it)."""
  count, dim = g["count"], g["dim"]
  f32 = lambda a, b: float(np.float32(np.float32(a) / np.float32(max(b - 1, 1))))
  point, element, tex = [], [], []
  if dim == 3:
    point += [0.0, 0.0, 0.0]
  if g["needtex"]:
    tex += [0.0, 0.0]
  idx = {}

  def add(ix, iy, iz, t):
    point.extend(_box_project(g, ix, iy, iz))
    idx[(ix, iy, iz)] = len(idx)
    if g["needtex"]:
      tex.extend(t)

  opened = dim == 2    # MakeBox's open=true: a 2D box has no top (iz = max) side
  for iz in range(0, count[2], max(count[2] - 1, 1)):
    for ix in range(count[0]):
      for iy in range(count[1]):
        if not (opened and iz != 0):
          add(ix, iy, iz, (f32(ix, count[0]), f32(iy, count[1])))
  top = count[2] if opened else count[2] - 1
  for iy in range(0, count[1], max(count[1] - 1, 1)):
    for ix in range(count[0]):
      for iz in range(1, top):
        add(ix, iy, iz, (f32(ix, count[0]), f32(iz, count[2])))
  for ix in range(0, count[0], max(count[0] - 1, 1)):
    for iy in range(1, count[1] - 1):
      for iz in range(1, top):
        add(ix, iy, iz, (f32(iy, count[1]), f32(iz, count[2])))

  def box_id(ix, iy, iz):
    return idx[(ix, iy, iz)] + 1

  def quads(a, b):
    if dim == 3:
      element.extend([0, box_id(*a[0]), box_id(*a[1]), box_id(*a[2]),
                      0, box_id(*b[0]), box_id(*b[1]), box_id(*b[2])])
    else:
      element.extend([idx[a[0]], idx[a[1]], idx[a[2]], idx[b[0]], idx[b[1]], idx[b[2]]])

  for iz in range(0, count[2], max(count[2] - 1, 1)):
    if opened and iz != 0:
      continue
    for ix in range(count[0] - 1):
      for iy in range(count[1] - 1):
        if dim == 3:
          quads(((ix, iy, iz), (ix + 1, iy, iz), (ix + 1, iy + 1, iz)),
                ((ix, iy, iz), (ix, iy + 1, iz), (ix + 1, iy + 1, iz)))
        else:
          s1, s2 = (1, 0) if iz == 0 else (0, 1)
          quads(((ix, iy, iz), (ix + 1, iy + s1, iz), (ix + 1, iy + s2, iz)),
                ((ix, iy, iz), (ix + s2, iy + 1, iz), (ix + s1, iy + 1, iz)))
  for iy in range(0, count[1], max(count[1] - 1, 1)):
    for ix in range(count[0] - 1):
      for iz in range(count[2] - 1):
        if dim == 3:
          quads(((ix, iy, iz), (ix + 1, iy, iz), (ix + 1, iy, iz + 1)),
                ((ix, iy, iz), (ix, iy, iz + 1), (ix + 1, iy, iz + 1)))
        else:
          x0, dx = (ix, 1) if iy == 0 else (ix + 1, -1)
          quads(((x0, iy, iz), (x0 + dx, iy, iz), (x0 + dx, iy, iz + 1)),
                ((x0, iy, iz), (x0 + dx, iy, iz + 1), (x0, iy, iz + 1)))
  for ix in range(0, count[0], max(count[0] - 1, 1)):
    for iy in range(count[1] - 1):
      for iz in range(count[2] - 1):
        if dim == 3:
          quads(((ix, iy, iz), (ix, iy + 1, iz), (ix, iy + 1, iz + 1)),
                ((ix, iy, iz), (ix, iy, iz + 1), (ix, iy + 1, iz + 1)))
        else:
          y0, dy = (iy, 1) if ix != 0 else (iy + 1, -1)
          quads(((ix, y0, iz), (ix, y0 + dy, iz), (ix, y0 + dy, iz + 1)),
                ((ix, y0, iz), (ix, y0 + dy, iz + 1), (ix, y0, iz + 1)))
  return point, element, tex


def _make_mesh(c, n, dim, origin):
  """Points and elements from a mesh file (MakeMesh): its triangles (dim 2), their first
  edges (dim 1, degenerate triangles), or tetrahedra from `origin` to each outward triangle
  (dim 3)."""
  from numjoco.engine.mjcf import _mesh
  file = n.get("file")
  if not file:
    raise n.error("File is required")
  if os.path.splitext(file)[1].lower() == ".msh":
    raise n.error("legacy MSH files are not supported in flexcomp")
  data = c._asset_bytes(n, file, "mesh")
  try:
    vert, face, uv, faceuv, _, _ = _mesh.read_file(file, data)
  except _mesh.MeshError as e:
    raise n.error(str(e)) from None
  if face is None and os.path.splitext(file)[1].lower() == ".obj":
    face = _obj_lines(data)
  vert, face = _mesh.dedup(vert, face)
  if not len(vert) or face is None or not len(face):
    raise n.error("Vertex and face data required")
  point = [float(x) for x in np.asarray(vert, np.float64).ravel()]
  tex, elemtex = [], []
  if uv is not None:
    tex = [float(x) for x in uv.ravel()]
    elemtex = [int(x) for x in faceuv.ravel()]
  face = [int(x) for x in face.ravel()]
  if dim == 2:
    return point, face, tex, elemtex
  if dim == 1:
    element = []
    for i in range(0, len(face), 3):
      element += [face[i], face[i + 1]]
    return point, element, tex, elemtex
  point = list(origin) + point
  element = []
  for i in range(0, len(face), 3):
    tet = [face[i] + 1, face[i + 1] + 1, face[i + 2] + 1]
    e = [[point[3 * t + k] - origin[k] for k in range(3)] for t in tet]
    nrm = rotation.cross(e[0], e[1])
    if nrm[0] * e[2][0] + nrm[1] * e[2][1] + nrm[2] * e[2][2] < _MINVAL:
      continue
    element += [0] + tet
  return point, element, tex, elemtex


def _obj_lines(data):
  """An OBJ's polylines (`l` records) as MuJoCo's decoder keeps them: one degenerate triangle
  (a, b, b) per segment; None without any."""
  face = []
  for line in data.decode("latin-1").splitlines():
    parts = line.split()
    if parts and parts[0] == "l":
      idx = [int(p.split("/")[0]) - 1 for p in parts[1:]]
      face += [[a, b, b] for a, b in zip(idx, idx[1:])]
  return np.array(face, np.int32) if face else None


def _make_gmsh(c, n):
  """Points, elements and dim from a GMSH file (engine/mjcf/_gmsh.py)."""
  from numjoco.engine.mjcf import _gmsh
  file = n.get("file")
  if not file:
    raise n.error("File is required")
  data = c._asset_bytes(n, file, "gmsh")
  try:
    return _gmsh.read_gmsh(data)
  except _gmsh.GmshError as e:
    raise n.error(f"GMSH decoder: {e}") from None
