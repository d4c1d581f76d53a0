"""MJCF flex: <deformable><flex> and <flexcomp>, compiled into MuJoCo 4.0's flex_* fields.

Compile-time only, for now: the flex physics (passive forces, collisions, equality rows) does
not exist yet, so `engine.load_model` still stops at a flex element; `load_flex_model` compiles
one anyway (tests, and the kernel work to come). Follows MuJoCo's mjCFlexcomp::Make (points,
elements, the generated bodies and slide joints, pins) and mjCFlex::Compile (edges, flaps,
shells, element layers, stiffness and bending coefficients, vert0, size), with 4.0's model
layout (per-element flex_matid, 24 stiffness numbers per tetrahedron, flex_cellnum, ...).

The generated bodies and joints are ordinary MJCF nodes spliced into the tree where the
flexcomp was, so they compile through the normal body/joint path (defaults included). The
flex arrays are Python-side Model attributes, as the skin and texture ones are (see
engine/mjcf/_assemble.py DRAW_FIELDS): no kernel reads them yet.
"""
import math
import os

import numpy as np

from engine.mjcf import _math as mm
from engine.mjcf.parse import Node, floats

# mjModel's flex sizes and fields, by MuJoCo 4.0's names
SIZES = ("nflex", "nflexnode", "nflexvert", "nflexedge", "nflexelem", "nflexelemdata",
         "nflexelemedge", "nflexshelldata", "nflexstiffness", "nflexbending", "nflextexcoord",
         "nJfe")
FIELDS = (
    "flex_contype", "flex_conaffinity", "flex_condim", "flex_priority", "flex_solmix",
    "flex_solref", "flex_solimp", "flex_friction", "flex_margin", "flex_gap", "flex_selfcollide",
    "flex_activelayers", "flex_passive", "flex_dim", "flex_matid", "flex_group", "flex_interp",
    "flex_nodeadr", "flex_nodenum", "flex_vertadr", "flex_vertnum", "flex_edgeadr",
    "flex_edgenum", "flex_elemadr", "flex_elemnum", "flex_elemdataadr", "flex_elemedgeadr",
    "flex_shellnum", "flex_shelldataadr", "flex_texcoordadr", "flex_nodebodyid",
    "flex_vertbodyid", "flex_vertcell", "flex_cellnum", "flex_edge", "flex_edgeflap",
    "flex_elem", "flex_elemtexcoord", "flex_elemedge", "flex_elemlayer", "flex_shell",
    "flex_vert", "flex_vert0", "flex_node", "flex_node0", "flexedge_length0",
    "flexedge_invweight0", "flex_radius", "flex_size", "flex_stiffness", "flex_stiffnessadr",
    "flex_bending", "flex_bendingadr", "flex_damping", "flex_edgestiffness",
    "flex_edgedamping", "flex_edgeequality", "flex_rigid", "flexedge_rigid", "flex_centered",
    "flex_flatskin", "flex_bvhadr", "flex_bvhnum", "flexedge_J_rownnz", "flexedge_J_rowadr",
    "flexedge_J_colind", "flex_plasticadr", "flex_plasticmode", "flex_yield", "flex_rgba",
    "flex_texcoord")

_NGROUP = 6
_EPS = 1e-6          # mjEPS (bounding boxes)
_MINVAL = 1e-15      # mjMINVAL
_TYPES = ("grid", "box", "cylinder", "ellipsoid", "square", "disc", "circle", "mesh", "gmsh",
          "direct")
_DOFS = ("full", "radial", "trilinear", "quadratic", "2d")
_SELF = {"none": 0, "narrow": 1, "bvh": 2, "sap": 3, "auto": 4}
_ELASTIC2D = {"none": 0, "bend": 1, "stretch": 2, "both": 3}
_EDGE_EQ = {"false": 0, "true": 1, "strain": 3}   # 4.0 has no "vert" (the source does)
_BOOL = {"false": 0, "true": 1}
# local edges of a simplex (MuJoCo's eledge), by dim
_ELEDGE = {1: ((0, 1),), 2: ((1, 2), (2, 0), (0, 1)),
           3: ((0, 1), (1, 2), (2, 0), (2, 3), (0, 3), (1, 3))}
# tetrahedron faces and the two faces not adjacent to each edge (Stencil3D)
_TET_FACE = ((2, 1, 0), (0, 1, 3), (1, 2, 3), (2, 0, 3))
_TET_EDGE2FACE = ((2, 3), (1, 3), (2, 1), (1, 0), (0, 2), (0, 3))
_TRI_FACE = ((1, 2), (2, 0), (0, 1))

_CONTACT = ("contype conaffinity condim priority friction solmix solref solimp margin gap "
            "selfcollide activelayers passive").split()
_ELASTICITY = "young poisson damping thickness elastic2d".split()
ATTRS = {
    "flexcomp": set(("name type count cellcount spacing scale mass inertiabox file material "
                     "rgba flatskin dim radius group origin pos quat axisangle xyaxes zaxis "
                     "euler rigid point element texcoord dof").split()),
    "flex": set(("name group dim radius material rgba flatskin body vertex element texcoord "
                 "elemtexcoord node nodecoord cellcount dof").split()),
    "contact": set(_CONTACT),
    "edge": {"equality", "solref", "solimp", "stiffness", "damping"},
    "flex:edge": {"stiffness", "damping"},
    "elasticity": set(_ELASTICITY),
    "pin": {"id", "range", "grid", "gridrange"},
}


# ------------------------------------------------------------------------------------ schema

def check(n):
  """Element and attribute names of a <flexcomp> or <deformable><flex> (MuJoCo 4.0's schema:
  no `internal` contact attribute, no flexcomp plugins)."""
  kids = {"contact", "edge", "elasticity"} | ({"pin"} if n.tag == "flexcomp" else set())
  _attrs(n, ATTRS[n.tag])
  for c in n.children:
    if c.tag == "plugin" and n.tag == "flexcomp":
      raise c.error("flexcomp plugins are not supported")
    if c.tag not in kids:
      raise c.error(f"unknown element <{c.tag}> in <{n.tag}>")
    _attrs(c, ATTRS["flex:edge" if (c.tag == "edge" and n.tag == "flex") else c.tag])
    if c.children:
      raise c.children[0].error(f"unknown element <{c.children[0].tag}> in <{c.tag}>")


def _attrs(n, allowed):
  for key in n.attrib:
    if key not in allowed:
      raise n.error(f"unknown attribute '{key}'")


# ------------------------------------------------------------------------------------ values

def _ints(n, key):
  vals = floats(n, key)
  if vals is None:
    return None
  if any(v != int(v) for v in vals):
    raise n.error(f"attribute '{key}': expected integers")
  return [int(v) for v in vals]


def _num(n, key, default):
  vals = floats(n, key, 1)
  return default if vals is None else vals[0]


def _int(n, key, default):
  vals = _ints(n, key)
  if vals is None:
    return default
  if len(vals) != 1:
    raise n.error(f"attribute '{key}': expected 1 value, got {len(vals)}")
  return vals[0]


def _kw(n, key, choices, default):
  text = n.get(key)
  if text is None:
    return default
  if text not in choices:
    raise n.error(f"attribute '{key}': invalid value '{text}' (expected one of "
                  f"{', '.join(choices)})")
  return choices[text] if isinstance(choices, dict) else text


def _vec(n, key, base, lo=None):
  """Attribute `key` over `base`: the given leading values replace base's (MuJoCo's ReadAttr
  with exact=false), or exactly len(base) values when `lo` is None."""
  out = list(base)
  vals = floats(n, key, len(base), len(base) if lo is None else lo)
  if vals is not None:
    out[:len(vals)] = vals
  return out


def _child(n, tag):
  for c in n.children:
    if c.tag == tag:
      return c
  return None


def default_flex():
  """mjs_defaultFlex."""
  return dict(contype=1, conaffinity=1, condim=3, priority=0, friction=[1.0, 0.005, 0.0001],
              solmix=1.0, solref=[0.02, 1.0], solimp=[0.9, 0.95, 0.001, 0.5, 2.0],
              margin=0.0, gap=0.0, selfcollide=4, activelayers=1, passive=0, dim=2,
              radius=0.005, group=0, material="", rgba=[0.5, 0.5, 0.5, 1.0], flatskin=False,
              edgestiffness=0.0, edgedamping=0.0, young=0.0, poisson=0.0, damping=0.0,
              thickness=-1.0, elastic2d=0, cellcount=[1, 1, 1], order=0, vertbody=[],
              vert=[], elem=[], texcoord=[], elemtexcoord=[], nodebody=[], nodecoord=[],
              equality=0, eq_solref=None, eq_solimp=None, name="")


def _read_common(n, f):
  """Attributes a <flex> and a <flexcomp> share, and their contact/edge/elasticity children."""
  f["name"] = n.get("name", "")
  f["group"] = _int(n, "group", f["group"])
  f["dim"] = _int(n, "dim", f["dim"])
  f["radius"] = _num(n, "radius", f["radius"])
  f["material"] = n.get("material", "")
  f["rgba"] = _vec(n, "rgba", f["rgba"])
  f["flatskin"] = bool(_kw(n, "flatskin", _BOOL, int(f["flatskin"])))
  cont = _child(n, "contact")
  if cont is not None:
    for k in ("contype", "conaffinity", "condim", "priority", "activelayers"):
      f[k] = _int(cont, k, f[k])
    for k in ("solmix", "margin", "gap"):
      f[k] = _num(cont, k, f[k])
    for k in ("friction", "solref", "solimp"):
      f[k] = _vec(cont, k, f[k], 1)
    f["selfcollide"] = _kw(cont, "selfcollide", _SELF, f["selfcollide"])
    f["passive"] = _kw(cont, "passive", _BOOL, f["passive"])
  edge = _child(n, "edge")
  if edge is not None:
    f["edgestiffness"] = _num(edge, "stiffness", f["edgestiffness"])
    f["edgedamping"] = _num(edge, "damping", f["edgedamping"])
  el = _child(n, "elasticity")
  if el is not None:
    for k in ("young", "poisson", "damping", "thickness"):
      f[k] = _num(el, k, f[k])
    f["elastic2d"] = _kw(el, "elastic2d", _ELASTIC2D, f["elastic2d"])
  return edge


def read_flex(n):
  """A <deformable><flex> element as a flex spec (mjXReader::OneFlex)."""
  f = default_flex()
  f["node"] = n
  _read_common(n, f)
  f["vertbody"] = n.get("body", "").split()
  f["vert"] = floats(n, "vertex") or []
  f["elem"] = _ints(n, "element") or []
  f["texcoord"] = floats(n, "texcoord") or []
  f["elemtexcoord"] = _ints(n, "elemtexcoord") or []
  f["nodebody"] = n.get("node", "").split()
  f["nodecoord"] = floats(n, "nodecoord") or []
  f["cellcount"] = _vec(n, "cellcount", [1, 1, 1])
  dof = _kw(n, "dof", {d: i for i, d in enumerate(_DOFS)}, 0)
  f["order"] = {2: 1, 3: 2}.get(dof, 0)
  return f


# ------------------------------------------------------------------------------------ flexcomp

def expand(c, root):
  """Replace every <flexcomp> below <worldbody> by the bodies it makes; returns the flex specs
  of <deformable><flex> elements then flexcomps, in MuJoCo's order (deformable first)."""
  flexes = [read_flex(n) for sec in root.children if sec.tag == "deformable"
            for n in sec.children if n.tag == "flex"]
  for wb in root.children:
    if wb.tag == "worldbody":
      _expand_in(c, wb, "world", flexes)
  return flexes


def _expand_in(c, node, bodyname, flexes):
  kids = []
  for ch in node.children:
    if ch.tag == "flexcomp":
      kids += _flexcomp(c, ch, node, bodyname, flexes)
      continue
    if ch.tag == "body":
      _expand_in(c, ch, ch.get("name", ""), flexes)
    elif ch.tag == "frame":
      _expand_in(c, ch, bodyname, flexes)
    kids.append(ch)
  node.children = kids


def _flexcomp(c, n, parent, bodyname, flexes):
  """mjCFlexcomp::Make: the flex spec of <flexcomp> `n` (appended to `flexes`) and the body
  nodes it adds to its parent."""
  f = default_flex()
  f["node"] = n
  edge = _read_common(n, f)
  name = f["name"]
  ftype = _kw(n, "type", {t: t for t in _TYPES}, "grid")
  count = _ints(n, "count") or [10, 10, 10]
  cellcount = _ints(n, "cellcount") or [-1, -1, -1]
  spacing = _vec(n, "spacing", [0.02, 0.02, 0.02])
  scale = _vec(n, "scale", [1.0, 1.0, 1.0])
  mass = _num(n, "mass", 1.0)
  inertiabox = _num(n, "inertiabox", 0.005)
  origin = floats(n, "origin", 3)
  if origin is None and ftype == "mesh" and f["dim"] == 3:
    raise n.error("origin must be specified for mesh flexcomps if dim=3")
  rigid = bool(_kw(n, "rigid", _BOOL, 0))
  dof = _kw(n, "dof", {d: d for d in _DOFS}, "full")
  point = list(floats(n, "point") or [])
  element = list(_ints(n, "element") or [])
  texcoord = [float(np.float32(x)) for x in (floats(n, "texcoord") or [])]
  elemtexcoord = []
  pin = {"id": [], "range": [], "grid": [], "gridrange": []}
  for p in n.children:
    if p.tag == "pin":
      for k in pin:
        pin[k] += _ints(p, k) or []
  if edge is not None:
    f["equality"] = _kw(edge, "equality", _EDGE_EQ, 0)
    f["eq_solref"] = floats(edge, "solref", 2, 1)
    f["eq_solimp"] = floats(edge, "solimp", 5, 1)
  if f["equality"] == 3 and dof not in ("trilinear", "quadratic"):
    raise n.error(f"flex strain equality requires an interpolated flex '{name}'")
  if f["elastic2d"] != 1 and f["equality"] and f["young"] > 0:
    raise n.error("flex constraints and elasticity (young) cannot both be present")
  direct = ftype in ("direct", "mesh", "gmsh")
  if not bodyname:
    raise n.error("Parent body must have name")
  if not 1 <= f["dim"] <= 3:
    raise n.error("Invalid dim, must be between 1 and 3")
  if len(count) != 3 or len(cellcount) != 3:
    raise n.error("attributes 'count' and 'cellcount' take 3 values")
  if any(x < 1 or (dof == "radial" and x < 2 and f["dim"] == 3) for x in count):
    raise n.error("Count too small")
  minspace = 2 * f["radius"] + f["margin"]
  if not direct and min(spacing) < minspace:
    raise n.error("Spacing must be larger than geometry size")
  if min(scale) < _MINVAL:
    raise n.error("Scale must be larger than mjMINVAL")
  if mass < _MINVAL or inertiabox < _MINVAL:
    raise n.error("Mass and inertiabox must be larger than mjMINVAL")
  from engine.mjcf.compile import _Reader
  pos, quat = c._pose(_Reader(n, None), n)
  needtex = not texcoord and bool(f["material"])
  gen = dict(type=ftype, count=count, spacing=spacing, dim=f["dim"], needtex=needtex)
  if ftype in ("grid", "circle"):
    point, element, texcoord = _make_grid(n, gen)
  elif ftype in ("box", "cylinder", "ellipsoid"):
    point, element, texcoord = _make_box(gen)
  elif ftype in ("square", "disc"):
    f["dim"] = gen["dim"] = 2
    point, element, texcoord = _make_grid(n, gen)
    if ftype == "disc":
      _disc_project(point, count, spacing)
  elif ftype == "mesh":
    point, element, texcoord, elemtexcoord = _make_mesh(c, n, f["dim"], origin)
  elif ftype == "gmsh":
    point, element, f["dim"] = _make_gmsh(c, n)
  dim = f["dim"]
  if ftype in ("box", "cylinder") or (ftype == "grid" and dim == 3):
    f["flatskin"] = True
  if len(pin["range"]) % 2:
    raise n.error("Pin range number must be multiple of 2")
  if len(pin["grid"]) % dim:
    raise n.error("Pin grid number must be multiple of dim")
  if len(pin["gridrange"]) % (2 * dim):
    raise n.error("Pin grid range number of must be multiple of 2*dim")
  if ftype != "grid" and (pin["grid"] or pin["gridrange"]) and dof not in ("trilinear",
                                                                         "quadratic"):
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
  interp = dof in ("trilinear", "quadratic")
  if interp and (ftype not in ("grid", "box") or quat != [1.0, 0.0, 0.0, 0.0]
                 or f["elastic2d"] or f["equality"]):
    # 4.0 weighs node masses and cell stiffness by the mesh content of each cell, which we
    # have not derived; a full, axis-aligned grid or box fills its cells, where they agree
    raise n.error(f"flexcomp dof='{dof}' is supported only for an unrotated grid or box "
                  "without elastic2d or edge equality (interpolated flexes are not compiled "
                  "in general yet)")
  if direct and scale != [1.0, 1.0, 1.0]:
    for i in range(npnt):
      for k in range(3):
        point[3 * i + k] *= scale[k]
  for i in range(npnt):
    p = mm.rot_vec_quat(point[3 * i:3 * i + 3], quat)
    point[3 * i:3 * i + 3] = [pos[0] + p[0], pos[1] + p[1], pos[2] + p[2]]
  pts = np.array(point).reshape(-1, 3)
  minmax = list(pts.min(axis=0)) + list(pts.max(axis=0))
  pinned = [rigid] * npnt
  centered = False
  if not rigid:
    _pins(n, pin, pinned, npnt, count, dim, ftype)
    if dof == "radial":
      pinned[0] = True
    if all(pinned):
      rigid = True
    elif not any(pinned):
      centered = True
  if not any(pinned) and any(ch.tag in ("joint", "freejoint") for ch in parent.children):
    raise n.error(f"body '{bodyname}' has joints but no flex vertices/nodes are pinned to it")
  if direct:
    used = [False] * npnt
    for e in element:
      used[e] = True
    if not all(used):
      newid = np.cumsum(used) - 1
      element = [int(newid[e]) for e in element]
      keep = [i for i in range(npnt) if used[i]]
      point = [point[3 * i + k] for i in keep for k in range(3)]
      if texcoord:
        texcoord = [texcoord[2 * i + k] for i in keep for k in range(2)]
      pinned = [pinned[i] for i in keep]
      npnt = len(keep)
  f.update(elem=element, texcoord=texcoord, elemtexcoord=elemtexcoord, dim=dim)
  flexes.append(f)
  if rigid:
    f["vert"] = point
    f["vertbody"] = [bodyname]
    return []
  if interp:
    f["vert"], f["vertbody"] = point, [bodyname] * npnt
    return _nodes(n, f, parent, bodyname, point, pinned, centered, minmax, cellcount,
                  1 if dof == "trilinear" else 2, mass, inertiabox)
  bodymass = mass / npnt
  bodyinertia = bodymass * (2.0 * inertiabox * inertiabox) / 3.0
  bodies, vertbody = [], []
  for i in range(npnt):
    if pinned[i]:
      vertbody.append(bodyname)
      continue
    b = _body_node(n, parent, f"{name}_{i}", point[3 * i:3 * i + 3], bodymass, bodyinertia)
    if dof == "radial":
      axis = point[3 * i:3 * i + 3]
      mm.normvec(axis)
      _joint_node(b, axis)
    else:
      for j in range(2 if dof == "2d" else 3):
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
    empty = _cell_empty(np.array(point).reshape(-1, 3), f["elem"], f["dim"], minmax, cells)
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
        m = 1.0    # each cell's share: 4.0 lumps per cell (trilinear 1/8, Simpson weights)
        for g, ng in ((gi, nx), (gj, ny), (gk, nz)):
          loc = g % order
          m *= weights[loc] * (2 if 0 < g < ng - 1 and loc == 0 else 1)
        masses.append(m)
        b = Node("body", {"name": f"{f['name']}_{gi}_{gj}_{gk}", "pos": _fmt(p)}, n.file,
                 n.line, parent)
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


def _cell_empty(vpos, elem, dim, minmax, cells):
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


def _fmt(vals):
  return " ".join(repr(float(v)) for v in vals)


def _body_node(n, parent, name, pos, mass, inertia):
  """A generated vertex body (as mjs_addBody: explicit inertial at its origin)."""
  b = Node("body", {"name": name, "pos": _fmt(pos)}, n.file, n.line, parent)
  b.children.append(Node("inertial", {"pos": "0 0 0", "mass": repr(float(mass)),
                                      "diaginertia": _fmt([inertia] * 3)}, n.file, n.line, b))
  return b


def _joint_node(b, axis):
  b.children.append(Node("joint", {"type": "slide", "pos": "0 0 0", "axis": _fmt(axis)},
                         b.file, b.line, b))


def _pins(n, pin, pinned, npnt, count, dim, ftype):
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
  size = [0.5 * sp[0] * (count[0] - 1), 0.5 * sp[1] * (count[1] - 1)]
  for i in range(len(point) // 3):
    p = point[3 * i:3 * i + 2]
    l0 = max(abs(p[0]), abs(p[1]))
    mm.normvec(p)
    point[3 * i] = p[0] * size[0] * l0
    point[3 * i + 1] = p[1] * size[1] * l0


def _box_project(g, ix, iy, iz):
  count, sp = g["count"], g["spacing"]
  pos = [2.0 * ix / (count[0] - 1) - 1, 2.0 * iy / (count[1] - 1) - 1,
         2.0 * iz / (count[2] - 1) - 1]
  size = [0.5 * sp[k] * (count[k] - 1) for k in range(3)]
  if g["type"] == "box":
    return [pos[k] * size[k] for k in range(3)]
  if g["type"] == "cylinder":
    l0 = max(abs(pos[0]), abs(pos[1]))
    xy = pos[:2]
    mm.normvec(xy)
    return [xy[0] * size[0] * l0, xy[1] * size[1] * l0, pos[2] * size[2]]
  mm.normvec(pos)
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
  from engine.mjcf import _mesh
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
  vert, face = _mesh._dedup(vert, face)
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
    nrm = mm.cross(e[0], e[1])
    if nrm[0] * e[2][0] + nrm[1] * e[2][1] + nrm[2] * e[2][2] < _MINVAL:
      continue
    element += [0] + tet
  return point, element, tex, elemtex


def _obj_lines(data):
  """An OBJ's polylines (`l` records) as 4.0's decoder keeps them: one degenerate triangle
  (a, b, b) per segment; None without any."""
  face = []
  for line in data.decode("latin-1").splitlines():
    parts = line.split()
    if parts and parts[0] == "l":
      idx = [int(p.split("/")[0]) - 1 for p in parts[1:]]
      face += [[a, b, b] for a, b in zip(idx, idx[1:])]
  return np.array(face, np.int32) if face else None


def _make_gmsh(c, n):
  from engine.mjcf import _gmsh
  file = n.get("file")
  if not file:
    raise n.error("File is required")
  data = c._asset_bytes(n, file, "gmsh")
  try:
    return _gmsh.read_gmsh(data)
  except _gmsh.GmshError as e:
    raise n.error(f"GMSH decoder: {e}") from None


# ------------------------------------------------------------------------------------ compile

def _body_frames(c):
  """World position and orientation of every body at qpos0 (mjCBody's xpos0, xquat0)."""
  xpos, xquat = [None] * len(c.bodies), [None] * len(c.bodies)
  for b in c.bodies:   # parents come first
    if b.id == 0:
      xpos[0], xquat[0] = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
      continue
    p = b.parent.id
    xpos[b.id], xquat[b.id] = mm.frameaccum(xpos[p], xquat[p], b.pos, b.quat)
  return xpos, xquat


def compile_flex(c, f, fid, bodyid, xpos, xquat):
  """mjCFlex::Compile for flex spec `f` (number `fid`): checks, vertex positions, edges,
  flaps, elasticity, shells, layers and the bounding box. Stores the results in `f`."""
  n = f["node"]
  dim = f["dim"]
  if not 1 <= dim <= 3:
    raise n.error("dim must be 1, 2 or 3")
  elem = list(f["elem"])
  if not elem:
    raise n.error("elem is empty")
  if len(elem) % (dim + 1):
    raise n.error("elem size must be multiple of (dim+1)")
  interp = bool(f["nodebody"])
  vertbody, vert = f["vertbody"], list(f["vert"])
  if interp and f["selfcollide"] != 0:
    raise n.error("trilinear interpolation cannot do self-collision")
  if not vertbody and not interp:
    raise n.error("vertbody and nodebody are both empty")
  if len(vert) % 3:
    raise n.error("vert size must be a multiple of 3")
  if f["edgestiffness"] > 0 and dim > 1:
    raise n.error("edge stiffness only available for dim=1, please use elasticity plugins")
  nelem = len(elem) // (dim + 1)
  if f["elastic2d"]:
    if f["thickness"] <= 0:
      raise n.error("2d elasticity requires positive thickness")
    if f["poisson"] < 0 or f["poisson"] >= 0.5:
      raise n.error("Poisson ratio must be in [0, 0.5)")
    if dim != 2 and not interp:
      raise n.error("2d elasticity requires 2d flex")
  rigid = centered = False
  if not vert:
    centered = True
    nvert = len(vertbody)
  else:
    nvert = len(vert) // 3
    if len(vertbody) == 1:
      rigid = True
    elif len(vertbody) != nvert:
      raise n.error("vertbody size must be 1 or nvert")
  if nvert < dim + 1:
    raise n.error("not enough vertices")
  nnode = len(f["nodebody"])
  order, cells = f["order"], f["cellcount"]
  if nnode and not order:
    raise n.error("Interpolation order must be explicitly specified (dof is missing)")
  if order:
    if 0 in cells:
      raise n.error("cellcount cannot be 0 in any dimension when interpolation order > 0")
    want = (cells[0] * order + 1) * (cells[1] * order + 1) * (cells[2] * order + 1)
    if nnode != want:
      raise n.error(f"number of nodes ({nnode}) does not match cellcount and dof expected "
                    f"({want})")
  for e in elem:
    if e < 0 or e >= nvert:
      raise n.error("elem vertex id out of range")
  tex, etex = f["texcoord"], list(f["elemtexcoord"])
  if tex and len(tex) != 2 * nvert and not etex:
    raise n.error("two texture coordinates per vertex expected")
  matid = -1
  if f["material"]:
    names = [m.name for m in c.mats]
    if f["material"] not in names:
      raise n.error(f"unknown material '{f['material']}' in flex")
    matid = names.index(f["material"])
  vbid = []
  for name in vertbody:
    if name not in bodyid:
      raise n.error(f"unknown body '{name}' in flex")
    vbid.append(bodyid[name])
  for e in range(nelem):
    el = sorted(elem[e * (dim + 1):(e + 1) * (dim + 1)])
    if any(el[k] == el[k + 1] for k in range(dim)):
      raise n.error("repeated vertex in element")
  nbid = []
  for name in f["nodebody"]:
    if name not in bodyid:
      raise n.error(f"unknown body '{name}' in flex")
    nbid.append(bodyid[name])
  if not rigid and not interp:
    rigid = all(b == vbid[0] for b in vbid)
  if not centered and not interp:
    centered = all(v == 0 for v in vert)
  if not centered and interp:
    centered = all(v == 0 for v in f["nodecoord"])
  vx = np.zeros((nvert, 3))
  for i in range(nvert):
    b = vbid[0] if rigid else vbid[i]
    p = list(xpos[b])
    if not centered or interp:
      off = mm.rot_vec_quat(vert[3 * i:3 * i + 3], xquat[b])
      p = [p[k] + off[k] for k in range(3)]
    vx[i] = p
  if interp:
    vbid = [-1] * nvert
    node = list(f["nodecoord"])
    nx = np.zeros((nnode, 3))
    for i, b in enumerate(nbid):
      p = list(xpos[b])
      if not centered:
        off = mm.rot_vec_quat(node[3 * i:3 * i + 3], xquat[b])
        p = [p[k] + off[k] for k in range(3)]
      nx[i] = p
    empty = f.get("cell_empty")
    if not f["elastic2d"] and empty is None and cells[0] * cells[1] * cells[2] > 1:
      mn, mxv = vx.min(axis=0), vx.max(axis=0)
      empty = _cell_empty(vx, elem, dim, list(mn) + list(mxv), cells)
    R0, nlocal = _unrotated(n, nx, cells, order, empty)
  if dim == 3:   # right-handed tetrahedra: faces (0,1,2), (0,2,3), (0,3,1), (1,3,2) outward
    for e in range(nelem):
      v = elem[4 * e:4 * e + 4]
      v01, v02, v03 = (list(vx[v[k]] - vx[v[0]]) for k in (1, 2, 3))
      nrm = mm.cross(v01, v02)
      if nrm[0] * v03[0] + nrm[1] * v03[1] + nrm[2] * v03[2] > 0:
        elem[4 * e + 1], elem[4 * e + 2] = elem[4 * e + 2], elem[4 * e + 1]
  if not etex and tex:   # 4.0 copies the elements after the reorientation (measured)
    etex = list(elem)
  edges, edgeidx, index = [], [], {}
  for e in range(nelem):
    v = elem[e * (dim + 1):(e + 1) * (dim + 1)]
    for a, b in _ELEDGE[dim]:
      pair = (min(v[a], v[b]), max(v[a], v[b]))
      if pair not in index:
        index[pair] = len(edges)
        edges.append(pair)
      edgeidx.append(index[pair])
  flaps = _flaps(elem, nelem) if dim == 2 else None
  stiffness, bending = [], []
  if f["young"] > 0 and interp:
    if f["elastic2d"]:
      raise n.error("interpolated shells (dof trilinear/quadratic with elastic2d) are not "
                    "supported yet")
    stiffness = _cell_stiffness(nlocal, cells, order, empty, f["young"], f["poisson"])
  elif f["young"] > 0:
    if f["poisson"] < 0 or f["poisson"] >= 0.5:
      raise n.error("Poisson ratio must be in [0, 0.5)")
    if dim == 3:
      stiffness = [_stiffness3d(vx, elem[4 * e:4 * e + 4], f["young"], f["poisson"])
                   for e in range(nelem)]
    elif dim == 2 and f["elastic2d"] >= 2 and f["thickness"] > 0:
      stiffness = [_stiffness2d(vx, elem[3 * e:3 * e + 3], f["young"], f["poisson"],
                                f["thickness"]) for e in range(nelem)]
    elif dim < 3:   # 4.0 keeps 21 zeros per element when it computes no stiffness
      stiffness = [np.zeros(21)] * nelem
    if dim == 2 and f["elastic2d"] in (1, 3):
      # 4.0: the flap's edge vertices in the edge's (sorted) order, and the plate bending
      # modulus E t^3 / (12 (1 - nu^2)) over the flap area (measured against 4.0)
      modulus = f["young"] * f["thickness"] ** 3 / (12 * (1 - f["poisson"] ** 2))
      bending = [_bending(vx, list(edges[k]) + fl[2:], modulus)
                 for k, fl in enumerate(flaps)]
  shell, elemlayer = _shells(elem, nelem, dim)
  active = [e for e in range(nelem) if dim < 3 or elemlayer[e] < f["activelayers"]]
  lo, hi = _root_box(vx, elem, dim, active, f["radius"])
  vert0 = np.full((nvert, 3), 0.5)
  node0 = np.zeros((0, 3))
  if interp:    # parametric coordinates in the node grid's box, unrotated
    vlocal = np.array([[sum(p[j] * R0[3 * i + j] for j in range(3)) for i in range(3)]
                       for p in vx.tolist()])
    nlo, nhi = nlocal.min(axis=0), nlocal.max(axis=0)
    size = [(nhi[k] - nlo[k]) / 2 for k in range(3)]
    for k in range(3):
      ext = nhi[k] - nlo[k]
      if ext > _MINVAL:
        vert0[:, k] = (vlocal[:, k] - nlo[k]) / ext
    node0 = nlocal
  else:
    size = [(hi[k] - lo[k]) / 2 - f["radius"] for k in range(3)]
    center = [(hi[k] + lo[k]) / 2 for k in range(3)]
    for k in range(3):
      if size[k] > _MINVAL:
        vert0[:, k] = (vx[:, k] - center[k]) / (2 * size[k]) + 0.5
  f.update(nnode=nnode, nodebodyid=nbid, node0=node0, interp=interp, nvert=nvert, nelem=nelem, elem=elem, edges=edges, edgeidx=edgeidx, flaps=flaps,
           stiffness=stiffness, bending=bending, shell=shell, elemlayer=elemlayer,
           nbvh=2 * len(active) - 1 if active else 0, size=size, vert0=vert0, rigid=rigid,
           centered=centered, vertbodyid=vbid, matid=matid, texcoord_c=tex, elemtexcoord_c=etex,
           vert_c=vert)


def _unrotated(n, nx, cells, order, empty):
  """ComputeUnrotatedNodePositions: the grid's rotation R0 (rows: the unit edges of the first
  non-empty cell) and the node positions with it undone."""
  cx, cy, cz = cells
  ny, nz = cy * order + 1, cz * order + 1
  ref = next(((ci, cj, ck) for ci in range(cx) for cj in range(cy) for ck in range(cz)
              if empty is None or not empty[ci * cy * cz + cj * cz + ck]), (0, 0, 0))
  g = lambda i, j, k: ((ref[0] * order + i) * ny * nz + (ref[1] * order + j) * nz
                       + ref[2] * order + k)
  R0 = []
  for corner in (g(order, 0, 0), g(0, order, 0), g(0, 0, order)):
    row = list(nx[corner] - nx[g(0, 0, 0)])
    mm.normvec(row)
    R0 += row
  for a in range(3):
    for b in range(a, 3):
      dot = sum(R0[3 * a + k] * R0[3 * b + k] for k in range(3))
      if abs(dot - (1.0 if a == b else 0.0)) > 1e-8:
        raise n.error("flex grid rotation R0 is not orthonormal")
  local = np.array([[sum(p[j] * R0[3 * i + j] for j in range(3)) for i in range(3)]
                    for p in nx.tolist()])
  return R0, local


def _gauss(npt):
  """Gauss-Legendre points and weights on [0, 1] (2 or 3 points; 4.0 has the 3-point nodes at
  +-sqrt(3/5), where the source divides by it)."""
  p0, h = 0.5, 0.5
  if npt == 2:
    return [-h / math.sqrt(3) + p0, h / math.sqrt(3) + p0], [h, h]
  return ([p0, -h * math.sqrt(3.0 / 5.0) + p0, h * math.sqrt(3.0 / 5.0) + p0],
          [8.0 / 9.0 * h, 5.0 / 9.0 * h, 5.0 / 9.0 * h])


def _phi(s, i, order):
  if order == 1:
    return 1 - s if i == 0 else s
  return (2 * s * s - 3 * s + 1, 4 * (s - s * s), 2 * s * s - s)[i]


def _dphi(s, i, order):
  if order == 1:
    return -1.0 if i == 0 else 1.0
  return (4 * s - 3, 4 * (1 - 2 * s), 4 * s - 1)[i]


def _linear_stiffness(pos, young, poisson, order):
  """ComputeLinearStiffness: the (3n x 3n) linear-elastic stiffness of one axis-aligned
  trilinear or triquadratic cell (n nodes), Gauss-Legendre quadrature, negated."""
  nb = order + 1
  nn = nb ** 3
  pts, wts = _gauss(nb)
  ext = pos[nn - 1] - pos[0]
  detj = ext[0] * ext[1] * ext[2]
  invj = 1.0 / ext
  # 4.0: lambda tr(e)^2 + 2 mu e:e (the source has mu e:e; fitted to 4.0)
  la = young * poisson / (1 + poisson) / (1 - 2 * poisson)
  mu = young / (1 + poisson)
  K = np.zeros((3 * nn, 3 * nn))
  for ps in range(nb):
    for pt in range(nb):
      for pu in range(nb):
        s, t, u = pts[ps], pts[pt], pts[pu]
        dvol = wts[ps] * wts[pt] * wts[pu] * detj
        G = np.array([[_dphi(s, bx, order) * _phi(t, by, order) * _phi(u, bz, order),
                       _phi(s, bx, order) * _dphi(t, by, order) * _phi(u, bz, order),
                       _phi(s, bx, order) * _phi(t, by, order) * _dphi(u, bz, order)]
                      for bx in range(nb) for by in range(nb) for bz in range(nb)]) * invj
        # du = e_k G_i', dv = e_l G_j': tr(du) tr(dv) = G_ik G_jl and
        # tr(sym(du) sym(dv)) = (d_kl G_i.G_j + G_il G_jk) / 2
        gg = G @ G.T
        for k in range(3):
          for l in range(3):
            blk = la * np.outer(G[:, k], G[:, l]) * dvol
            sym = ((gg if k == l else 0.0) + np.outer(G[:, l], G[:, k])) / 2
            K[k::3, l::3] -= blk
            K[k::3, l::3] -= mu * sym * dvol
  return K


def _cell_stiffness(nlocal, cells, order, empty, young, poisson):
  """Per cell (volume mode), the linear stiffness of its nodes (zeros for empty cells)."""
  cx, cy, cz = cells
  ny, nz = cy * order + 1, cz * order + 1
  nn = (order + 1) ** 3
  out = []
  for fe in range(cx * cy * cz):
    if empty is not None and empty[fe]:
      out.append(np.zeros(9 * nn * nn))
      continue
    ci, cj, ck = fe // (cy * cz), (fe // cz) % cy, fe % cz
    ids = [(ci * order + li) * ny * nz + (cj * order + lj) * nz + ck * order + lk
           for li in range(order + 1) for lj in range(order + 1) for lk in range(order + 1)]
    out.append(_linear_stiffness(nlocal[ids], young, poisson, order).ravel())
  return out


def _check_integrator(c, flexes):
  """The integrator checks 4.0 makes of a model with flexes (measured: 4.0 names no element;
  these name the flex's)."""
  integ = int(np.asarray(c.opt["integrator"]).ravel()[0])
  for f in flexes:    # passive contact of surfaces and volumes needs the effective metric
    if f["passive"] and f["dim"] > 1 and integ != 4:
      raise f["node"].error("passive flex contact requires an integrator with the effective "
                            "metric: set integrator='discrete'")
  for f in flexes:
    if integ in (2, 3) and f["young"] > 0 and not (f["dim"] == 2 and not f["elastic2d"]):
      raise f["node"].error("flex elasticity is no longer integrated implicitly under "
                            "integrator='implicit' and 'implicitfast': set "
                            "integrator='discrete', or 'Euler' with a small timestep")
  for f in flexes:
    if integ == 4 and (f["edgestiffness"] or f["edgedamping"]):
      raise f["node"].error("discrete integrator: flex edge stiffness and damping are not "
                            "supported; use <elasticity> or <edge equality> instead")


def _root_box(vx, elem, dim, active, radius):
  """The flex BVH's root box as mjCBoundingVolumeHierarchy::MakeBVH builds it from the
  element boxes (centre +- half size + radius), flat sides inflated by mjEPS."""
  lo, hi = [math.inf] * 3, [-math.inf] * 3
  for e in active:
    p = vx[elem[e * (dim + 1):(e + 1) * (dim + 1)]]
    mn, mx = p.min(axis=0), p.max(axis=0)
    for k in range(3):
      c, h = 0.5 * (mx[k] + mn[k]), 0.5 * (mx[k] - mn[k]) + radius
      lo[k], hi[k] = min(lo[k], c - h), max(hi[k], c + h)
  for k in range(3):
    if abs(lo[k] - hi[k]) < _EPS:
      lo[k] -= _EPS
      hi[k] += _EPS
  return lo, hi


def _flaps(elem, nelem):
  """CreateFlapStencil: per edge (in edge order), its two vertices, the opposite vertex of
  its first triangle and of its second (-1 on the boundary)."""
  flaps, index = [], {}
  for t in range(nelem):
    v = elem[3 * t:3 * t + 3]
    for a, b in _ELEDGE[2]:
      pair = (min(v[a], v[b]), max(v[a], v[b]))
      if pair not in index:
        index[pair] = len(flaps)
        flaps.append([v[a], v[b], v[(b + 1) % 3], -1])
      else:
        flaps[index[pair]][3] = v[(b + 1) % 3]
  return flaps


def _shells(elem, nelem, dim):
  """CreateShellPair: the border fragments (shell, in original vertex order) and each
  element's distance from the border (3D; 0 in 1D and 2D)."""
  frags = []
  for e in range(nelem):
    el = elem[e * (dim + 1):(e + 1) * (dim + 1)]
    if dim == 1:
      parts = [[el[0]], [el[1]]]
    elif dim == 2:
      parts = [[el[0], el[1]], [el[2], el[0]], [el[1], el[2]]]
    else:
      parts = [[el[0], el[1], el[2]], [el[0], el[3], el[1]], [el[0], el[2], el[3]],
               [el[1], el[3], el[2]]]
    for p in parts:
      frags.append(sorted(p) + [e] + p)
  frags.sort()
  nfrag = len(frags)
  border = [False] * nelem
  borderfrag = [False] * nfrag
  connect = []
  cnt = 1
  for i in range(1, nfrag):
    if frags[i - 1][:dim] == frags[i][:dim]:
      connect.append((frags[i - 1][dim], frags[i][dim]))
      cnt += 1
    else:
      if cnt == 1:
        border[frags[i - 1][dim]] = True
        borderfrag[i - 1] = True
      cnt = 1
  if cnt == 1:
    border[frags[-1][dim]] = True
    borderfrag[-1] = True
  shell = [v for i in range(nfrag) if borderfrag[i] for v in frags[i][dim + 1:]]
  if dim < 3:
    return shell, [0] * nelem
  layer = [0 if border[e] else nelem + 1 for e in range(nelem)]
  change = True
  while change:
    change = False
    for e1, e2 in connect:
      if layer[e1] > layer[e2] + 1:
        layer[e1] = layer[e2] + 1
        change = True
      elif layer[e2] > layer[e1] + 1:
        layer[e2] = layer[e1] + 1
        change = True
  return shell, layer


def _cross(a, b):
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a, b):
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _sub(a, b):
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _metric(basis, mu, la, nedge):
  """MetricTensor: upper triangle of mu tr(Ei Ej) + la tr(Ei) tr(Ej) over the edge bases."""
  tr = [basis[e][0] + basis[e][4] + basis[e][8] for e in range(nedge)]
  out = []
  for e1 in range(nedge):
    for e2 in range(e1, nedge):
      tee = 0.0
      for i in range(3):
        for j in range(3):
          tee += basis[e1][3 * i + j] * basis[e2][3 * j + i]
      out.append(mu * tee + la * tr[e2] * tr[e1])
  return out


def _stiffness3d(vx, v, young, poisson):
  """ComputeStiffness<Stencil3D>: the 21 metric coefficients of one tetrahedron (MuJoCo 4.0
  stores 24 per element, the last 3 zero in every model measured)."""
  x = [list(vx[i]) for i in v]
  volume = _dot(_cross(_sub(x[1], x[0]), _sub(x[2], x[0])), _sub(x[3], x[0])) / 6
  # Lame coefficients times the volume; 4.0's la is half the source's (fitted to 4.0)
  mu = young / (2 * (1 + poisson)) * abs(volume)
  la = young * poisson / ((1 + poisson) * (1 - 2 * poisson)) * abs(volume) / 2
  basis = []
  for e in range(6):
    fl, fr = _TET_FACE[_TET_EDGE2FACE[e][0]], _TET_FACE[_TET_EDGE2FACE[e][1]]
    nl = _cross(_sub(x[fl[1]], x[fl[0]]), _sub(x[fl[2]], x[fl[0]]))
    nr = _cross(_sub(x[fr[1]], x[fr[0]]), _sub(x[fr[2]], x[fr[0]]))
    basis.append([(nl[i] * nr[j] + nr[i] * nl[j]) / (36 * 2 * volume * volume)
                  for i in range(3) for j in range(3)])
  return np.array(_metric(basis, mu, la, 6) + [0.0, 0.0, 0.0])


def _stiffness2d(vx, v, young, poisson, thickness):
  """ComputeStiffness<Stencil2D>: the 6 metric coefficients of one triangle, in a block of
  21 as MuJoCo stores them."""
  x = [list(vx[i]) for i in v]
  nrm = _cross(_sub(x[1], x[0]), _sub(x[2], x[0]))
  volume = math.sqrt(_dot(nrm, nrm)) / 2
  # 4.0: shear modulus and half the plane-stress la, times area and thickness (fitted to
  # 4.0; the source has both 3D coefficients over a quarter of the area)
  mu = young / (2 * (1 + poisson)) * volume * thickness
  la = young * poisson / (1 - poisson * poisson) * volume * thickness / 2
  basis = []
  for e in range(3):
    fl, fr = _TRI_FACE[_TRI_FACE[e][0]], _TRI_FACE[_TRI_FACE[e][1]]
    el = _sub(x[fl[0]], x[fl[1]])
    er = _sub(x[fr[1]], x[fr[0]])
    normal = _cross(er, el)
    mm.normvec(normal)
    bl, br = _cross(normal, el), _cross(er, normal)
    basis.append([(bl[i] * br[j] + br[i] * bl[j]) / (8 * volume * volume)
                  for i in range(3) for j in range(3)])
  out = np.zeros(21)
  out[:6] = _metric(basis, mu, la, 3)
  return out


def _cot(x, v0, v1, v2):
  e1, e2 = _sub(x[v1], x[v0]), _sub(x[v2], x[v0])
  nrm = _cross(e1, e2)
  return _dot(e1, e2) / math.sqrt(_dot(nrm, nrm))


def _area(x, v):
  nrm = _cross(_sub(x[v[1]], x[v[0]]), _sub(x[v[2]], x[v[0]]))
  return math.sqrt(_dot(nrm, nrm)) / 2


def _bending(vx, v, modulus):
  """ComputeBending: the 17 bending coefficients of one edge flap (zero on the boundary):
  the cotangent stencil (Wardetzky et al.) times the flap's bending stiffness, and the
  curved-reference coefficient."""
  out = np.zeros(17)
  if v[3] == -1:
    return out
  x = {i: list(vx[i]) for i in v}
  a01, a02 = _cot(x, v[0], v[1], v[2]), _cot(x, v[0], v[3], v[1])
  a03, a04 = _cot(x, v[1], v[2], v[0]), _cot(x, v[1], v[0], v[3])
  c = [a03 + a04, a01 + a02, -(a01 + a03), -(a02 + a04)]
  volume = _area(x, v) + _area(x, [v[1], v[0], v[3]])
  stiffness = modulus / volume
  e0, e1, e2 = _sub(x[v[1]], x[v[0]]), _sub(x[v[2]], x[v[0]]), _sub(x[v[3]], x[v[0]])
  e3, e4 = _sub(x[v[2]], x[v[1]]), _sub(x[v[3]], x[v[1]])
  t0 = [-(a03 * e1[k] + a01 * e3[k]) for k in range(3)]
  t1 = [-(a04 * e2[k] + a02 * e4[k]) for k in range(3)]
  sqr = _dot(e0, e0)
  cos_theta = -_dot(t0, t1) / sqr
  for i in range(4):
    for j in range(4):
      out[4 * i + j] += c[i] * c[j] * cos_theta * stiffness
  # 4.0's curved-reference coefficient (fitted to 4.0; the source's Garg et al. term
  # differs): -stiffness det(e0, e1, e2) |e0|^4 / (|e0 x e1|^2 |e0 x e2|^2)
  n1, n2 = _cross(e0, e1), _cross(e0, e2)
  out[16] = -stiffness * _dot(n1, e2) * sqr * sqr / (_dot(n1, n1) * _dot(n2, n2))
  return out


# ------------------------------------------------------------------------------------ assemble

def _vertcell(f):
  """4.0's flex_vertcell: the node-grid cell of each vertex of an interpolated flex (as
  mju_cellLookup finds it from vert0), -1 otherwise."""
  if not f["interp"]:
    return [-1] * f["nvert"]
  cx, cy, cz = f["cellcount"]
  out = []
  for p in f["vert0"]:
    ci, cj, ck = (min(max(int(math.floor(p[k] * nc)), 0), nc - 1)
                  for k, nc in enumerate((cx, cy, cz)))
    out.append(ci * cy * cz + cj * cz + ck)
  return out


def equality(c, f, fid):
  """The equality a flexcomp's <edge equality=...> adds (after the model's own equalities,
  as 4.0 orders them)."""
  from engine.mjcf.compile import _Obj
  if not f["equality"] or f["equality"] == 3:
    return None
  e = _Obj(node=f["node"], name="")
  e.type = 4 if f["equality"] == 1 else 5
  e.active = True
  # MuJoCo's built-in equality defaults: 4.0 applies no default class here (measured)
  e.solref = _vec_over(f["eq_solref"], None, [0.02, 1.0])
  e.solimp = _vec_over(f["eq_solimp"], None, [0.9, 0.95, 0.001, 0.5, 2.0])
  e.objtype, e.obj1id, e.obj2id = 0, fid, -1
  data = [0.0] * 12
  data[1] = data[10] = 1.0
  e.data = data
  return e


def flex_equality(c, n, e):
  """<equality><flex flex=...> (all edges of a flex at their rest lengths) and <flexstrain>
  (interpolated flexes only, not compiled yet): the flex's id and 4.0's object fields."""
  name = n.get("flex")
  if name is None:
    raise n.error("missing attribute 'flex'")
  ids = [i for i, f in enumerate(c.flexes) if f["name"] == name]
  if not ids:
    raise n.error(f"unknown flex '{name}' in equality")
  f = c.flexes[ids[0]]
  if e.type == 6:
    if not f["nodebody"] and f["order"] == 0:
      raise n.error(f"flex strain equality requires an interpolated flex '{name}'")
    raise n.error("flex strain equalities (stiffness eigenmodes) are not supported yet")
  e.objtype, e.obj1id, e.obj2id = 0, ids[0], -1


def _vec_over(given, dflt, base):
  out = list(base)
  if dflt is not None:
    vals = [float(x) for x in dflt.split()]
    out[:len(vals)] = vals
  if given is not None:
    out[:len(given)] = given
  return out


def assemble(c, A, sizes):
  """The flex_* arrays of every flex by mjModel's names (Python-side Model attributes)."""
  flexes = getattr(c, "flexes", [])
  bodyid = {b.name: b.id for b in c.bodies if b.name}
  bodyid["world"] = 0
  xpos, xquat = _body_frames(c)
  for i, f in enumerate(flexes):
    compile_flex(c, f, i, bodyid, xpos, xquat)
  _check_integrator(c, flexes)
  for f in flexes:   # 4.0: vertex bodies move by the flex's own damping only
    if f["rigid"]:
      continue
    for b in sorted(set(f["nodebodyid"] if f["interp"] else f["vertbodyid"])):
      if any(j.damping for j in c.bodies[b].joints):
        raise f["node"].error(f"flex vertex/node body '{c.bodies[b].name}' cannot have joint "
                              "damping; use flex elasticity or edge damping instead")
  nf = len(flexes)
  nvert = sum(f["nvert"] for f in flexes)
  nedge = sum(len(f["edges"]) for f in flexes)
  nelem = sum(f["nelem"] for f in flexes)
  ntex = sum(len(f["texcoord_c"]) // 2 for f in flexes)
  sizes.update(nflex=nf, nflexnode=sum(f["nnode"] for f in flexes), nflexvert=nvert,
               nflexedge=nedge, nflexelem=nelem,
               nflexelemdata=sum(f["nelem"] * (f["dim"] + 1) for f in flexes),
               nflexelemedge=sum(f["nelem"] * len(_ELEDGE[f["dim"]]) for f in flexes),
               nflexshelldata=sum(len(f["shell"]) for f in flexes),
               nflexstiffness=sum(sum(len(s) for s in f["stiffness"]) for f in flexes),
               nflexbending=sum(17 * len(f["bending"]) for f in flexes),
               nflextexcoord=ntex, nJfe=0)
  I = lambda vals: np.array(vals, np.int32)
  D = lambda vals: np.array(vals, np.float64)
  col = lambda key: [f[key] for f in flexes]
  for k in ("contype", "conaffinity", "condim", "priority", "group", "selfcollide",
            "activelayers", "passive", "dim"):
    A["flex_" + k] = I(col(k))
  for k in ("solmix", "margin", "gap", "radius", "damping"):
    A["flex_" + k] = D(col(k))
  A["flex_solref"] = D(col("solref")).reshape(nf, 2)
  A["flex_solimp"] = D(col("solimp")).reshape(nf, 5)
  A["flex_friction"] = D(col("friction")).reshape(nf, 3)
  A["flex_rgba"] = np.array(col("rgba"), np.float32).reshape(nf, 4)
  A["flex_size"] = D(col("size")).reshape(nf, 3)
  A["flex_edgestiffness"] = D(col("edgestiffness"))
  A["flex_edgedamping"] = D(col("edgedamping"))
  A["flex_rigid"] = np.array(col("rigid"), bool)
  A["flex_centered"] = np.array(col("centered"), bool)
  A["flex_flatskin"] = np.array(col("flatskin"), bool)
  A["flex_interp"] = I([(-f["order"] if f["elastic2d"] else f["order"]) if f["interp"] else 0
                        for f in flexes])
  A["flex_cellnum"] = I(col("cellcount")).reshape(nf, 3)
  A["flex_plasticadr"] = I([-1] * nf)
  A["flex_plasticmode"] = I([0] * nf)
  A["flex_yield"] = np.zeros((nf, 2))
  A["flex_bvhnum"] = I(col("nbvh"))
  # 4.0 numbers the BVH nodes of bodies (their collidable geoms), meshes (their faces), then
  # flexes; a tree over n leaves has 2n - 1 nodes
  tree = lambda nleaf: 2 * nleaf - 1 if nleaf else 0
  static = sum(tree(sum(1 for g in b.geoms if g.contype or g.conaffinity)) for b in c.bodies)
  static += sum(tree(int(k)) for k in A.get("mesh_facenum", []))
  A["flex_bvhadr"] = I([static + sum(g["nbvh"] for g in flexes[:i]) if f["nbvh"] else -1
                        for i, f in enumerate(flexes)])
  eq = {e.obj1id: e.type for e in c.eqs if e.type in (4, 5, 6)}
  A["flex_edgeequality"] = I([{4: 1, 5: 2, 6: 3}.get(eq.get(i), 0) for i in range(nf)])
  adr = lambda counts: I(np.concatenate([[0], np.cumsum(counts)[:-1]]) if nf else [])
  A["flex_vertadr"] = adr(col("nvert"))
  A["flex_vertnum"] = I(col("nvert"))
  A["flex_nodeadr"] = adr(col("nnode"))
  A["flex_nodenum"] = I(col("nnode"))
  A["flex_edgeadr"] = adr([len(f["edges"]) for f in flexes])
  A["flex_edgenum"] = I([len(f["edges"]) for f in flexes])
  A["flex_elemadr"] = adr(col("nelem"))
  A["flex_elemnum"] = I(col("nelem"))
  A["flex_elemdataadr"] = adr([f["nelem"] * (f["dim"] + 1) for f in flexes])
  A["flex_elemedgeadr"] = adr([f["nelem"] * len(_ELEDGE[f["dim"]]) for f in flexes])
  shellnum = [len(f["shell"]) // f["dim"] for f in flexes]
  A["flex_shellnum"] = I(shellnum)
  sadr = adr([len(f["shell"]) for f in flexes])
  A["flex_shelldataadr"] = I([a if s else -1 for a, s in zip(sadr, shellnum)])
  tadr = adr([len(f["texcoord_c"]) // 2 for f in flexes])
  A["flex_texcoordadr"] = I([a if f["texcoord_c"] else -1 for a, f in zip(tadr, flexes)])
  sadr, badr = 0, 0
  stiffadr, bendadr = [], []
  for f in flexes:
    n = sum(len(s) for s in f["stiffness"])
    stiffadr.append(sadr if n else -1)
    sadr += n
    bendadr.append(badr if f["bending"] else -1)
    badr += 17 * len(f["bending"])
  A["flex_stiffnessadr"] = I(stiffadr)
  A["flex_bendingadr"] = I(bendadr)
  cat = lambda parts, shape, dtype: (np.concatenate(parts).astype(dtype).reshape(shape)
                                     if parts else np.zeros([max(k, 0) for k in shape], dtype))
  A["flex_stiffness"] = cat([s for f in flexes for s in f["stiffness"]], (-1,), np.float64)
  A["flex_bending"] = cat([b for f in flexes for b in f["bending"]], (-1,), np.float64)
  A["flex_matid"] = I([f["matid"] for f in flexes for _ in range(f["nelem"])])
  A["flex_vertbodyid"] = I([f["vertbodyid"][0] if f["rigid"] else f["vertbodyid"][v]
                            for f in flexes for v in range(f["nvert"])])
  A["flex_vertcell"] = I([v for f in flexes for v in _vertcell(f)])
  A["flex_nodebodyid"] = I([b for f in flexes for b in f["nodebodyid"]])
  A["flex_node"] = cat([np.zeros((f["nnode"], 3)) if f["centered"] or not f["nodecoord"]
                        else np.array(f["nodecoord"], np.float64).reshape(-1, 3)
                        for f in flexes], (-1, 3), np.float64)
  A["flex_node0"] = cat([f["node0"] for f in flexes], (-1, 3), np.float64)
  A["flex_vert"] = cat([np.zeros((f["nvert"], 3)) if f["centered"] and not f["interp"]
                        else np.array(f["vert_c"], np.float64).reshape(-1, 3)
                        for f in flexes], (-1, 3), np.float64)
  A["flex_vert0"] = cat([f["vert0"] for f in flexes], (-1, 3), np.float64)
  A["flex_edge"] = cat([np.array(f["edges"], np.int32).reshape(-1, 2) for f in flexes],
                       (-1, 2), np.int32)
  flap = []
  for f in flexes:
    bend = f["dim"] == 2 and f["elastic2d"] in (1, 3)
    flap.append(np.array([fl[2:] for fl in f["flaps"]] if bend
                         else [[-1, -1]] * len(f["edges"]), np.int32).reshape(-1, 2))
  A["flex_edgeflap"] = cat(flap, (-1, 2), np.int32)
  A["flex_elem"] = I([v for f in flexes for v in f["elem"]])
  A["flex_elemtexcoord"] = I([v for f in flexes for v in (f["elemtexcoord_c"] or f["elem"])])
  A["flex_elemedge"] = I([v for f in flexes for v in f["edgeidx"]])
  A["flex_elemlayer"] = I([v for f in flexes for v in f["elemlayer"]])
  A["flex_shell"] = I([v for f in flexes for v in f["shell"]])
  A["flex_texcoord"] = np.array([v for f in flexes for v in f["texcoord_c"]],
                                np.float32).reshape(-1, 2)
  weld = {b.id: b.weldid for b in c.bodies}
  rigid_edges = []
  for f in flexes:
    for a, b in f["edges"]:
      if f["rigid"]:
        rigid_edges.append(True)
      elif f["interp"]:
        rigid_edges.append(False)
      else:
        vb = f["vertbodyid"]
        rigid_edges.append(weld[vb[a]] == weld[vb[b]])
  A["flexedge_rigid"] = np.array(rigid_edges, bool)
  A["flexedge_length0"] = np.zeros(nedge)     # set_edge_constants (qpos0 kinematics)
  A["flexedge_invweight0"] = np.zeros(nedge)
  A["flexedge_J_rownnz"] = I([0] * nedge)
  A["flexedge_J_rowadr"] = I([0] * nedge)
  A["flexedge_J_colind"] = I([])


# ------------------------------------------------------------------------------------ qpos0

def set_edge_constants(m):
  """flexedge_length0, flexedge_J_* (sparsity) and flexedge_invweight0 at qpos0, as 4.0's
  mj_setConst computes them (after engine.setconst.set_const filled M and the kinematics)."""
  from engine import io
  from engine import setconst as sc
  if not m.nflex:
    return
  d = io.make_data(m)
  d.qpos[:] = m.qpos0
  sc._position_stages(m.struct, d.struct)
  sc._inertia_stages(m.struct, d.struct)
  xmat = d.xmat.reshape(-1, 3, 3)
  rowadr = np.zeros(m.nflexedge, np.int32)
  rownnz = np.zeros(m.nflexedge, np.int32)
  colind, jrows, njfe = [], {}, 0
  length0 = np.zeros(m.nflexedge)
  invw = np.zeros(m.nflexedge)
  for f in range(m.nflex):
    va, ea = m.flex_vertadr[f], m.flex_edgeadr[f]
    if m.flex_interp[f]:    # 4.0 leaves interpolated flexes' edge constants at 0
      continue
    vb = m.flex_vertbodyid[va:va + m.flex_vertnum[f]]
    vloc = m.flex_vert[va:va + m.flex_vertnum[f]]
    pos = d.xpos[vb] + np.einsum("nij,nj->ni", xmat[vb], vloc)
    # 4.0 sizes nJfe over every edge of a non-rigid flex but fills the rows only of flexes
    # with a built-in edge force or constraint
    skip = not (m.flex_edgeequality[f] or m.flex_edgedamping[f] or m.flex_edgestiffness[f]
                or m.flex_damping[f])
    for e in range(ea, ea + m.flex_edgenum[f]):
      v1, v2 = m.flex_edge[e]
      vec = pos[v2] - pos[v1]
      length0[e] = np.sqrt(vec @ vec)
      if m.flex_rigid[f]:
        continue
      b1, b2 = int(vb[v1]), int(vb[v2])
      chain = sorted(set(sc.dof_chain(m, b1)) | set(sc.dof_chain(m, b2)))
      njfe += len(chain)
      if skip:
        continue
      rownnz[e] = len(chain)
      colind += chain
      if m.nv:
        j1, _ = sc.jac(m, d, pos[v1], b1)
        j2, _ = sc.jac(m, d, pos[v2], b2)
        jrows[e] = (vec / max(length0[e], 1e-15)) @ (j2 - j1)
  if m.nv:
    for f in range(m.nflex):
      va, ea = m.flex_vertadr[f], m.flex_edgeadr[f]
      if m.flex_interp[f]:
        continue
      for e in range(ea, ea + m.flex_edgenum[f]):
        b1, b2 = (m.flex_vertbodyid[va + v] for v in m.flex_edge[e])
        if m.flexedge_rigid[e]:
          invw[e] = 0.0
        elif m.body_simple[b1] == 2 and m.body_simple[b2] == 2:
          invw[e] = (1 / m.body_mass[b1] + 1 / m.body_mass[b2]) / 2
        elif e in jrows:
          row = jrows[e]
          invw[e] = row @ sc._solve_m(m, d, row[None])[0]
  rowadr[1:] = np.cumsum(rownnz)[:-1]   # every edge's, rows or not (as 4.0)
  m.__dict__.update(flexedge_length0=length0, flexedge_invweight0=invw,
                    flexedge_J_rowadr=rowadr, flexedge_J_rownnz=rownnz,
                    flexedge_J_colind=np.array(colind + [0] * (njfe - len(colind)), np.int32),
                    nJfe=njfe)


def load_flex_model(source, assets=None):
  """Compile a model with flex elements into a Model, as `engine.load_model` does (set_const
  and the flex edge constants at qpos0 included). For tests and the flex kernel work: the
  simulation does not move flexes yet, which is why `engine.load_model` refuses them."""
  from engine import io
  from engine import lengthrange
  from engine import setconst
  from engine.mjcf.compile import compile_model
  sizes, arrays, names = compile_model(source, assets, flex=True)
  path = source if isinstance(source, str) and not source.lstrip().startswith("<") else None
  lropt = arrays.pop("_lengthrange")
  m = io.Model(sizes, arrays, names, source=path)
  m.__dict__["lropt"] = lropt
  setconst.set_const(m)
  lengthrange.set_length_range(m)
  set_edge_constants(m)
  return m
