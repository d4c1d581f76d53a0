"""MJCF flex: <deformable><flex> and <flexcomp>, compiled into MuJoCo's flex_* fields.

Follows MuJoCo's mjCFlex::Compile (edges, flaps, shells, element layers, node grids, vert0,
size; elasticity coefficients in engine/mjcf/_flexelastic.py) with MuJoCo 4.0's model layout
(per-element flex_matid, 24 stiffness numbers per tetrahedron, flex_cellnum/vertcell, ...);
<flexcomp> is expanded into bodies and a flex spec by engine/mjcf/_flexcomp.py. The flex
physics is engine/flex.py, engine/collision/flex.py and engine/flex_contact.py;
`check_simulated` refuses what it does not simulate yet, naming the element (the compiler's
tests compile every flex model: preview.Compiled(simulated=False)).

Shapes of the flex arrays (MuJoCo 4.0's, field tables in engine/types.py): per flex
(nflex,) or (nflex, k); per vertex (nflexvert, 3) flex_vert/vert0, flex_vertbodyid; per edge
(nflexedge, 2) flex_edge/edgeflap, flexedge_*; per element flex_elem (nflexelemdata,),
flex_elemedge (nflexelemedge,), flex_elemlayer/matid (nflexelem,); flex_stiffness
(nflexstiffness,), flex_bending (nflexbending,), flexedge_J_colind (nJfe,).
"""
import math

import numpy as np

from numjoco.engine import rotation
from numjoco.engine.mjcf import _flexcomp
from numjoco.engine.mjcf import _flexelastic as _elastic
from numjoco.engine.mjcf._node import Obj, floats
from numjoco.engine.mjcf._flexread import (default_flex, ints as _ints, kw as _kw,
                                           read_common as _read_common, vec as _vec)
from numjoco.engine.types import MINVAL as _MINVAL

# mjModel's flex sizes and fields, by MuJoCo's names
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

_EPS = 1e-6          # mjEPS (bounding boxes)
_DOFS = ("full", "radial", "trilinear", "quadratic", "2d")
# local edges of a simplex (MuJoCo's eledge), by dim
_ELEDGE = {1: ((0, 1),), 2: ((1, 2), (2, 0), (0, 1)),
           3: ((0, 1), (1, 2), (2, 0), (2, 3), (0, 3), (1, 3))}

_CONTACT = ("contype conaffinity condim priority friction solmix solref solimp margin gap "
            "selfcollide activelayers passive").split()
_ELASTICITY = "young poisson damping thickness elastic2d".split()
ATTRS = {
    "flexcomp": set(("name type count cellcount spacing scale mass inertiabox file material "
                     "rgba flatskin dim radius group origin pos quat axisangle xyaxes zaxis "
                     "euler rigid point element texcoord dof _flex_base").split()),
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
  """An error for the first attribute of `n` not in `allowed`."""
  for key in n.attrib:
    if key not in allowed:
      raise n.error(f"unknown attribute '{key}'")


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
      _flexcomp.expand_in(c, wb, "world", flexes)
  return flexes


# ------------------------------------------------------------------------------------ compile

def _body_frames(c):
  """World position and orientation of every body at qpos0 (mjCBody's xpos0, xquat0)."""
  xpos, xquat = [None] * len(c.bodies), [None] * len(c.bodies)
  for b in c.bodies:   # parents come first
    if b.id == 0:
      xpos[0], xquat[0] = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
      continue
    p = b.parent.id
    xpos[b.id], xquat[b.id] = rotation.frameaccum(xpos[p], xquat[p], b.pos, b.quat)
  return xpos, xquat


def compile_flex(c, f, bodyid, xpos, xquat):
  """mjCFlex::Compile for flex spec `f`: checks, vertex (and node) positions, edges, flaps,
  elasticity, shells, layers and the bounding box. Stores the results in `f`."""
  r = _check_spec(c, f, bodyid)
  n, dim, nelem, elem = f["node"], f["dim"], r["nelem"], r["elem"]
  vx, nlocal, R0, empty = _positions(f, r, xpos, xquat)
  if dim == 3:   # right-handed tetrahedra: faces (0,1,2), (0,2,3), (0,3,1), (1,3,2) outward
    for e in range(nelem):
      v = elem[4 * e:4 * e + 4]
      v01, v02, v03 = (list(vx[v[k]] - vx[v[0]]) for k in (1, 2, 3))
      nrm = rotation.cross(v01, v02)
      if nrm[0] * v03[0] + nrm[1] * v03[1] + nrm[2] * v03[2] > 0:
        elem[4 * e + 1], elem[4 * e + 2] = elem[4 * e + 2], elem[4 * e + 1]
  if not r["etex"] and r["tex"]:   # MuJoCo copies the elements after the reorientation
    r["etex"] = list(elem)
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
  stiffness, bending = _elasticity(n, f, r, vx, nlocal, empty, edges, flaps)
  shell, elemlayer = _shells(elem, nelem, dim)
  active = [e for e in range(nelem) if dim < 3 or elemlayer[e] < f["activelayers"]]
  lo, hi = _root_box(vx, elem, dim, active, f["radius"])
  vert0 = np.full((r["nvert"], 3), 0.5)
  node0 = np.zeros((0, 3))
  if r["interp"]:    # parametric coordinates in the node grid's box, unrotated
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
  f.update(nnode=r["nnode"], nodebodyid=r["nbid"], node0=node0, interp=r["interp"],
           nvert=r["nvert"], nelem=nelem, elem=elem, edges=edges, edgeidx=edgeidx,
           flaps=flaps, stiffness=stiffness, bending=bending, shell=shell,
           elemlayer=elemlayer, nbvh=2 * len(active) - 1 if active else 0, size=size,
           vert0=vert0, rigid=r["rigid"], centered=r["centered"], vertbodyid=r["vbid"],
           matid=r["matid"], texcoord_c=r["tex"], elemtexcoord_c=r["etex"], vert_c=r["vert"])


def _check_spec(c, f, bodyid):
  """Compile's checks of a flex spec and what they settle: sizes, rigid and centered, body
  and material ids."""
  n, dim = f["node"], f["dim"]
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
  if any(e < 0 or e >= nvert for e in elem):
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
  ids = {}
  for what in ("vertbody", "nodebody"):
    ids[what] = []
    for name in f[what]:
      if name not in bodyid:
        raise n.error(f"unknown body '{name}' in flex")
      ids[what].append(bodyid[name])
  vbid = ids["vertbody"]
  nelem = len(elem) // (dim + 1)
  for e in range(nelem):
    el = sorted(elem[e * (dim + 1):(e + 1) * (dim + 1)])
    if any(el[k] == el[k + 1] for k in range(dim)):
      raise n.error("repeated vertex in element")
  if not rigid and not interp:
    rigid = all(b == vbid[0] for b in vbid)
  if not centered and not interp:
    centered = all(v == 0 for v in vert)
  if not centered and interp:
    centered = all(v == 0 for v in f["nodecoord"])
  return dict(elem=elem, nelem=nelem, nvert=nvert, nnode=nnode, interp=interp, rigid=rigid,
              centered=centered, vert=vert, vbid=vbid, nbid=ids["nodebody"], matid=matid,
              tex=tex, etex=etex)


def _positions(f, r, xpos, xquat):
  """World vertex positions at qpos0, and for an interpolated flex its node positions with
  the grid's rotation undone, that rotation and the grid's empty cells."""
  vx = np.zeros((r["nvert"], 3))
  vert, vbid = r["vert"], r["vbid"]
  for i in range(r["nvert"]):
    b = vbid[0] if r["rigid"] else vbid[i]
    p = list(xpos[b])
    if not r["centered"] or r["interp"]:
      off = rotation.rot_vec_quat(vert[3 * i:3 * i + 3], xquat[b])
      p = [p[k] + off[k] for k in range(3)]
    vx[i] = p
  if not r["interp"]:
    return vx, None, None, None
  r["vbid"] = [-1] * r["nvert"]
  node, cells = list(f["nodecoord"]), f["cellcount"]
  nx = np.zeros((r["nnode"], 3))
  for i, b in enumerate(r["nbid"]):
    p = list(xpos[b])
    if not r["centered"]:
      off = rotation.rot_vec_quat(node[3 * i:3 * i + 3], xquat[b])
      p = [p[k] + off[k] for k in range(3)]
    nx[i] = p
  empty = f.get("cell_empty")
  if not f["elastic2d"] and empty is None and cells[0] * cells[1] * cells[2] > 1:
    box = list(vx.min(axis=0)) + list(vx.max(axis=0))
    empty = _flexcomp.cell_empty(vx, r["elem"], f["dim"], box, cells)
  R0, nlocal = _unrotated(f["node"], nx, cells, f["order"], empty)
  return vx, nlocal, R0, empty


def _elasticity(n, f, r, vx, nlocal, empty, edges, flaps):
  """flex_stiffness and flex_bending blocks of one flex (engine/mjcf/_flexelastic.py)."""
  dim, nelem, elem = f["dim"], r["nelem"], r["elem"]
  young, poisson = f["young"], f["poisson"]
  stiffness, bending = [], []
  if young <= 0:
    return stiffness, bending
  if r["interp"]:
    if not f.get("filled"):
      raise n.error("elasticity of an interpolated <flex> (MuJoCo weighs each cell's stiffness "
                    "by its mesh content) is not supported yet")
    if f["elastic2d"]:
      raise n.error("interpolated shells (dof trilinear/quadratic with elastic2d) are not "
                    "supported yet")
    return _elastic.cell_stiffness(nlocal, f["cellcount"], f["order"], empty, young,
                                   poisson), bending
  if poisson < 0 or poisson >= 0.5:
    raise n.error("Poisson ratio must be in [0, 0.5)")
  if dim == 3:
    stiffness = [_elastic.stiffness3d(vx, elem[4 * e:4 * e + 4], young, poisson)
                 for e in range(nelem)]
  elif dim == 2 and f["elastic2d"] >= 2 and f["thickness"] > 0:
    stiffness = [_elastic.stiffness2d(vx, elem[3 * e:3 * e + 3], young, poisson,
                                      f["thickness"]) for e in range(nelem)]
  else:   # MuJoCo keeps 21 zeros per element when it computes no stiffness
    stiffness = [np.zeros(21)] * nelem
  if dim == 2 and f["elastic2d"] in (1, 3):
    # as MuJoCo: the flap's edge vertices in the edge's (sorted) order, and the plate bending
    # modulus E t^3 / (12 (1 - nu^2)) over the flap area
    modulus = young * f["thickness"] ** 3 / (12 * (1 - poisson ** 2))
    bending = [_elastic.bending(vx, list(edges[k]) + fl[2:], modulus)
               for k, fl in enumerate(flaps)]
  return stiffness, bending


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
    rotation.normvec(row)
    R0 += row
  for a in range(3):
    for b in range(a, 3):
      dot = sum(R0[3 * a + k] * R0[3 * b + k] for k in range(3))
      if abs(dot - (1.0 if a == b else 0.0)) > 1e-8:
        raise n.error("flex grid rotation R0 is not orthonormal")
  local = np.array([[sum(p[j] * R0[3 * i + j] for j in range(3)) for i in range(3)]
                    for p in nx.tolist()])
  return R0, local


def _check_integrator(c, flexes):
  """The integrator checks MuJoCo makes of a model with flexes (MuJoCo names no element;
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


# ------------------------------------------------------------------------------------ assemble

def _vertcell(f):
  """MuJoCo's flex_vertcell: the node-grid cell of each vertex of an interpolated flex (as
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
  as MuJoCo orders them)."""
  if not f["equality"] or f["equality"] == 3:
    return None
  e = Obj(node=f["node"], name="")
  e.type = 4 if f["equality"] == 1 else 5
  e.active = True
  # MuJoCo's built-in equality defaults: MuJoCo applies no default class here
  e.solref = _vec_over(f["eq_solref"], None, [0.02, 1.0])
  e.solimp = _vec_over(f["eq_solimp"], None, [0.9, 0.95, 0.001, 0.5, 2.0])
  e.objtype, e.obj1id, e.obj2id = 0, fid, -1
  data = [0.0] * 12
  data[1] = data[10] = 1.0
  e.data = data
  return e


def flex_equality(c, n, e):
  """<equality><flex flex=...> (all edges of a flex at their rest lengths) and <flexstrain>
  (interpolated flexes only, not compiled yet): the flex's id and MuJoCo's object fields."""
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
  """`base` with the leading values of a default (text) and then of `given` over it."""
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
  if flexes:
    bodyid = {b.name: b.id for b in c.bodies if b.name}
    bodyid["world"] = 0
    xpos, xquat = _body_frames(c)
    for f in flexes:
      compile_flex(c, f, bodyid, xpos, xquat)
  _check_integrator(c, flexes)
  for f in flexes:   # as MuJoCo: vertex bodies move by the flex's own damping only
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
  # MuJoCo numbers the BVH nodes of bodies (their collidable geoms), meshes (their faces), then
  # flexes; a tree over n leaves has 2n - 1 nodes
  tree = lambda nleaf: 2 * nleaf - 1 if nleaf else 0
  static = 0
  if flexes:
    static = sum(tree(sum(1 for g in b.geoms if g.contype or g.conaffinity))
                 for b in c.bodies)
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
  _edge_sparsity(flexes, A, sizes)


def _dof_chain(A, body):
  """Dofs that move `body`, from its own last dof to the root (MuJoCo's chain order)."""
  b = body
  while b > 0 and A["body_dofnum"][b] == 0:
    b = A["body_parentid"][b]
  out = []
  if b > 0:
    v = A["body_dofadr"][b] + A["body_dofnum"][b] - 1
    while v >= 0:
      out.append(int(v))
      v = A["dof_parentid"][v]
  return out


def _edge_sparsity(flexes, A, sizes):
  """flexedge_J_rownnz/rowadr/colind and nJfe, as MuJoCo lays them out: nJfe counts the merged
  dof chains of every edge of a non-rigid, non-interpolated flex, but only flexes with a
  built-in edge force or constraint get rows (the others' rownnz are 0; colind is padded)."""
  rownnz, colind, njfe = [], [], 0
  for i, f in enumerate(flexes):
    skip = not (A["flex_edgeequality"][i] or A["flex_edgedamping"][i]
                or A["flex_edgestiffness"][i] or A["flex_damping"][i])
    for a, b in f["edges"]:
      if f["rigid"] or f["interp"]:
        rownnz.append(0)
        continue
      vb = f["vertbodyid"]
      chain = sorted(set(_dof_chain(A, vb[a])) | set(_dof_chain(A, vb[b])))
      njfe += len(chain)
      rownnz.append(0 if skip else len(chain))
      if not skip:
        colind += chain
  rownnz = np.array(rownnz, np.int32)
  rowadr = np.zeros(len(rownnz), np.int32)
  rowadr[1:] = np.cumsum(rownnz)[:-1]
  A["flexedge_J_rownnz"] = rownnz
  A["flexedge_J_rowadr"] = rowadr
  A["flexedge_J_colind"] = np.array(colind + [0] * (njfe - len(colind)), np.int32)
  sizes["nJfe"] = njfe


# ------------------------------------------------------------------------------------ qpos0

def check_simulated(c, A):
  """Refuse, naming the flex element, what engine/flex.py does not simulate yet and would
  change the motion if ignored: flex collisions with SDF geoms, flex collisions that need GJK
  while nativeccd is disabled (libccd), interpolated flexes, 1D (rod) elasticity, passive flex
  contact, and elastic flexes under the discrete integrator.
  preview.Compiled(simulated=False) skips this check (tests compile every flex model)."""
  gtype = np.asarray(A.get("geom_type", np.zeros(0)))
  gct = np.asarray(A.get("geom_contype", np.zeros(0)))
  gca = np.asarray(A.get("geom_conaffinity", np.zeros(0)))
  flexes = getattr(c, "flexes", [])
  libccd = int(A["opt_disableflags"][0]) & (1 << 17)     # nativeccd="disable"
  fix = ('give one of them contype/conaffinity bits that do not match, or the flex '
         '<contact contype="0" conaffinity="0"/>')
  dims = [f["dim"] for f in flexes]
  selfcollide = [f["selfcollide"] for f in flexes]
  for i, f in enumerate(flexes):
    node = f["node"]
    fct, fca = int(A["flex_contype"][i]), int(A["flex_conaffinity"][i])
    if fct or fca:
      sdf = next((g for g in range(gtype.size) if int(gtype[g]) == 8
                  and ((int(gct[g]) & fca) or (fct & int(gca[g])))), None)
      why = (libccd_refusal(i, dims, selfcollide, A["flex_contype"], A["flex_conaffinity"],
                            gtype, gct, gca) if libccd else None)
      if sdf is not None and (why is None or why[0] != "geom" or sdf <= why[1]):
        raise node.error("collisions of a flex with SDF geoms are not simulated yet, and "
                         f"geom {sdf} (SDF) can touch this flex; {fix}")
      if why is not None and why[0] == "geom":
        raise node.error("flex collisions through libccd (nativeccd=\"disable\") are not "
                         f"simulated yet, and geom {why[1]} can touch this flex; enable "
                         f"nativeccd or {fix}")
      if why is not None and why[0] == "self":
        raise node.error("flex self-collisions through libccd (nativeccd=\"disable\") are not "
                         'simulated yet; enable nativeccd or set <contact selfcollide="none"/>')
      if why is not None:
        raise node.error("flex-flex collisions through libccd (nativeccd=\"disable\") are "
                         "not simulated yet; enable nativeccd or give the flexes contype/"
                         "conaffinity bits that do not match")
    if f["interp"]:
      raise node.error("interpolated flexes (dof trilinear/quadratic) are not simulated yet")
    if f["dim"] == 1 and f["young"] > 0:
      raise node.error("1D flex (rod) elasticity (young > 0) is not simulated yet; edge "
                       "stiffness, damping and equality are")
    if f["passive"]:
      raise node.error('passive flex contact (<contact passive="true">: MuJoCo turns the flex\'s '
                       "contacts into passive forces) is not simulated yet")
    elastic = f["young"] > 0 and not (f["dim"] == 2 and not f["elastic2d"])
    if A["opt_integrator"][0] == 4 and elastic:
      raise node.error("flex elasticity under the discrete integrator is not simulated yet (MuJoCo "
                       "moves an elastic flex differently there); flexes with edge equality, "
                       "rigid flexes and their contacts are")


def libccd_refusal(i, dims, selfcollide, contype, conaffinity, gtype, gct, gca):
  """What flex i (with collision bits) would collide through GJK, which our libccd path
  (nativeccd disabled) does not do for flexes: ("geom", g) for the first geom it can touch
  that our flex collider does not do without GJK (planes, and spheres, capsules and, for
  curves and surfaces, boxes by their analytic functions), else ("self", i) for a surface or
  volume that collides with itself, else ("flex", j) for another flex it can touch where one
  of the two is no curve, else None."""
  fct, fca = int(contype[i]), int(conaffinity[i])
  analytic = (0, 2, 3) if dims[i] == 3 else (0, 2, 3, 6)
  for g in range(len(gtype)):
    if ((int(gct[g]) & fca) or (fct & int(gca[g]))) and int(gtype[g]) not in analytic:
      return "geom", g
  if dims[i] > 1 and int(selfcollide[i]) != 0:
    return "self", i
  for j in range(i + 1, len(dims)):
    fct2, fca2 = int(contype[j]), int(conaffinity[j])
    if ((fct & fca2) or (fct2 & fca)) and (dims[i] > 1 or dims[j] > 1):
      return "flex", j
  return None


def option_error(m):
  """What of `check_simulated`'s refusals the options currently in m.opt bring about, as a message
  ('' when none): flex collisions that need GJK while nativeccd is disabled, and elastic flexes
  under the discrete integrator. The viewer checks an option edit with it (the model was
  loaded under other options)."""
  if not m.nflex:
    return ""
  libccd = int(m.opt.disableflags) & (1 << 17)
  dims = [int(x) for x in m.flex_dim]
  for i in range(m.nflex):
    if libccd and (m.flex_contype[i] or m.flex_conaffinity[i]):
      why = libccd_refusal(i, dims, m.flex_selfcollide, m.flex_contype, m.flex_conaffinity,
                           m.geom_type, m.geom_contype, m.geom_conaffinity)
      if why is not None and why[0] == "geom":
        return (f"flex {i} can touch geom {why[1]}, and flex collisions through libccd "
                "(nativeccd disabled) are not simulated yet")
      if why is not None and why[0] == "self":
        return (f"flex {i} collides with itself, and flex self-collisions through libccd "
                "(nativeccd disabled) are not simulated yet")
      if why is not None:
        return (f"flexes {i} and {why[1]} can touch, and flex-flex collisions through libccd "
                "(nativeccd disabled) are not simulated yet")
    sadr = int(m.flex_stiffnessadr[i])
    if int(m.opt.integrator) == 4 and sadr >= 0 and m.flex_stiffness[sadr] != 0:
      return (f"flex {i} is elastic, and flex elasticity under the discrete integrator is not "
              "simulated yet")
  return ""
