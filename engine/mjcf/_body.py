"""The body tree of the MJCF compiler, as MuJoCo's mjCBody, mjCJoint, mjCGeom, mjCSite, mjCCamera
and mjCLight (user_objects.cc): frames and orientations, inertia from geoms, fused static
bodies, joints, geoms, sites, cameras and lights. A mixin of engine/mjcf/compile.Compiler.
"""
import math

import numpy as np

from numjoco.engine import rotation
from numjoco.engine import types as t
from numjoco.engine.mjcf import _inertia
from numjoco.engine.mjcf import _skin
from numjoco.engine.mjcf._assets import mesh_geom_inertia as _mesh_geom_inertia
from numjoco.engine.mjcf._node import BOOL as _BOOL, LIMITED as _LIMITED, SOLIMP, SOLREF
from numjoco.engine.mjcf._node import floats, ints
from numjoco.engine.mjcf._node import Obj as _Obj, Reader as _Reader
from numjoco.engine.mjcf._node import user_values as _user
from numjoco.engine.types import MAXVAL, MINVAL



_GEOM_TYPES = {"plane": 0, "hfield": 1, "sphere": 2, "capsule": 3, "ellipsoid": 4,
               "cylinder": 5, "box": 6, "mesh": 7, "sdf": 8}


_GEOM_NSIZE = {0: 3, 1: 0, 2: 1, 3: 2, 4: 3, 5: 2, 6: 3, 7: 0, 8: 0}


_JNT_TYPES = {"free": 0, "ball": 1, "slide": 2, "hinge": 3}


_PROJECTION = {"perspective": 0, "orthographic": 1}


_CAMLIGHT_MODE = {"fixed": 0, "track": 1, "trackcom": 2, "targetbody": 3, "targetbodycom": 4}


_LIGHT_TYPE = {"spot": 0, "directional": 1, "point": 2, "image": 3}


_ORIENT = ("axisangle", "xyaxes", "zaxis", "euler")


_ORIENT_N = {"axisangle": 4, "xyaxes": 6, "zaxis": 3, "euler": 3}


def _atan2f(y, x):
  """C's atan2f as MuJoCo's compiler calls it: the C library's own (its float rounding differs
  from numpy's float32 arctan2 and from the correctly rounded value by an ulp at times)."""
  global _ATAN2F
  if _ATAN2F is None:
    try:
      import ctypes
      import ctypes.util
      f = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").atan2f
      f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
      _ATAN2F = f
    except (OSError, AttributeError):
      _ATAN2F = lambda a, b: np.arctan2(np.float32(a), np.float32(b))
  return float(_ATAN2F(y, x))


_ATAN2F = None


def geom_refs(n, out):
  """Names of geoms other elements refer to (tendon wraps, pairs, sensors, custom tuples)."""
  if (n.tag == "geom" and n.parent is not None and n.parent.tag == "spatial"
      or n.tag == "tactile"):
    out.add(n.get("geom"))
  for key in ("geom1", "geom2"):
    if key in n.attrib:
      out.add(n.attrib[key])
  for typ, name in (("objtype", "objname"), ("reftype", "refname")):
    if n.get(typ) == "geom" and name in n.attrib:
      out.add(n.attrib[name])
  for c in n.children:
    geom_refs(c, out)


def children(n, tag):
  return [c for c in n.children if c.tag == tag]


def body_collision(b):
  """A body's contype and conaffinity (the union of its geoms') and margin (its geoms' largest
  margin + gap)."""
  b.contype = b.conaffinity = 0
  b.margin = 0.0
  for g in b.geoms:
    b.contype |= g.contype
    b.conaffinity |= g.conaffinity
    b.margin = max(b.margin, g.margin + g.gap)


def _geom_aabb(gtype, size):
  if gtype == 2:
    hi = [size[0]] * 3
    lo = [-size[0]] * 3
  elif gtype == 3:
    hi = [size[0], size[0], size[0] + size[1]]
    lo = [-x for x in hi]
  elif gtype == 5:
    hi = [size[0], size[0], size[1]]
    lo = [-x for x in hi]
  elif gtype == 0:
    lo = [-MAXVAL] * 3
    hi = [MAXVAL, MAXVAL, 0.0]
  else:
    hi = list(size)
    lo = [-x for x in size]
  return [(hi[i] + lo[i]) / 2 for i in range(3)] + [(hi[i] - lo[i]) / 2 for i in range(3)]


def _geom_rbound(gtype, s):
  if gtype == 2:
    return s[0]
  if gtype == 3:
    return s[0] + s[1]
  if gtype == 5:
    return math.sqrt(s[0] * s[0] + s[1] * s[1])
  if gtype == 4:
    return max(max(s[0], s[1]), s[2])
  if gtype == 6:
    return math.sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2])
  return 0.0


class BodyCompiler:
  """Compiles a <body> subtree into the Compiler's body, joint, geom, site, camera and light
  objects."""

  def _body_children(self, n, body, childclass, frame):
    """Collect the children of a body (or frame) node into `body`, flattening frames."""
    for c in n.children:
      tag = c.tag
      if tag == "body":
        self._new_body(c, body, childclass, frame)
      elif tag == "frame":
        cc = c.get("childclass", childclass)
        if cc not in self.defaults:
          raise c.error(f"unknown default class '{cc}'")
        pos, quat = self._pose(_Reader(c, None), c)
        if frame is not None:
          pos, quat = rotation.frameaccum(frame[0], frame[1], pos, quat)
        self._body_children(c, body, cc, (pos, quat))
      elif tag == "inertial":
        body.inertial = c
      elif tag in ("joint", "freejoint"):
        body.joints.append(_Obj(node=c, cc=childclass, frame=frame, body=body,
                                name=c.get("name", "")))
      elif tag in ("geom", "site", "camera", "light"):
        lst = {"geom": body.geoms, "site": body.sites, "camera": body.cams,
               "light": body.lights}[tag]
        lst.append(_Obj(node=c, cc=childclass, frame=frame, body=body, name=c.get("name", "")))
      elif tag == "plugin":
        raise c.error("body plugins are not supported (only SDF plugins on meshes and geoms)")

  def _new_body(self, c, parent, childclass, frame):
    cc = c.get("childclass", childclass)
    if cc not in self.defaults:
      raise c.error(f"unknown default class '{cc}'")
    b = _Obj(node=c, name=c.get("name", ""), parent=parent, id=len(self.bodies), childclass=cc,
             frame=frame, joints=[], geoms=[], sites=[], cams=[], lights=[], children=[],
             inertial=None)
    self.bodies.append(b)
    parent.children.append(b)
    self._body_children(c, b, cc, None)

  def _pose(self, rd, n, quat_default=(1.0, 0.0, 0.0, 0.0)):
    """(pos, quat) of an element from pos and any one orientation form."""
    pos = rd.exact("pos", [0.0, 0.0, 0.0], 3)
    return pos, self._orient(rd, n, quat_default)

  def _orient(self, rd, n, quat_default=(1.0, 0.0, 0.0, 0.0)):
    def given(src, k):   # an empty value is none (MuJoCo)
      return src.get(k, "").strip() != ""
    own = [k for k in ("quat",) + _ORIENT if given(n.attrib, k)]
    if len(own) > 1:
      raise n.error(f"multiple orientation specifiers: {', '.join(own)}")
    srcs = [n.attrib] if own else [s for s in rd.srcs[:1]]
    for src in srcs:
      for k in _ORIENT:
        if given(src, k):
          vals = floats(n, k, _ORIENT_N[k], attrib=src)
          q = rotation.orientation(k, vals, self.degree, self.eulerseq)
          if isinstance(q, str):
            raise n.error(f"attribute '{k}': {q}")
          return q
      if given(src, "quat"):
        q = floats(n, "quat", 4, attrib=src)
        rotation.normvec(q)
        return q
    return list(quat_default)

  def _compile_body(self, b):
    """Body pose, geoms, inertia and joints, as mjCBody::Compile."""
    n = b.node
    if b.id == 0:
      b.pos, b.quat, b.mocap, b.gravcomp = [0.0] * 3, [1.0, 0, 0, 0], False, 0.0
      b.user = []
      b.weldid = 0
    else:
      rd = _Reader(n, None)
      b.pos, b.quat = self._pose(rd, n)
      b.mocap = rd.kw("mocap", _BOOL, False)
      b.gravcomp = rd.num("gravcomp", 0.0)
      b.user = _user(n, n.get("user"))
      b.weldid = b.id if (b.joints or b.mocap) else b.parent.weldid
    ipos, iquat, mass, inertia, explicit = None, [1.0, 0, 0, 0], 0.0, [0.0] * 3, False
    if b.inertial is not None:
      explicit = True
      ni = b.inertial
      ri = _Reader(ni, None)
      if "mass" not in ni.attrib:
        raise ni.error("missing attribute 'mass'")
      ipos = ri.exact("pos", [0.0] * 3, 3)
      mass = ri.num("mass", 0.0)
      iquat = self._orient(ri, ni)
      inertia = ri.exact("diaginertia", [0.0] * 3, 3)
      if "fullinertia" in ni.attrib:
        if any(k in ni.attrib for k in ("quat",) + _ORIENT):
          raise ni.error("fullinertia and inertial orientation cannot both be specified")
        if "diaginertia" in ni.attrib:
          raise ni.error("fullinertia and diagonal inertia cannot both be specified")
        res = _inertia.full_inertia(ri.exact("fullinertia", [0.0] * 6, 6))
        if res is None:
          raise ni.error("fullinertia must have positive eigenvalues")
        iquat, inertia = res
    for g in b.geoms:
      self._compile_geom(g, b, explicit)
    if b.id > 0 and (self.inertiafromgeom == 1 or (ipos is None and self.inertiafromgeom == 2)):
      res = self._inertia_from_geoms(b)
      if res is not None:
        ipos, iquat, mass, inertia = res
    if ipos is None:
      ipos, iquat = list(b.pos), list(b.quat)  # as MuJoCo: copy the body frame
    if b.id > 0:
      mass = max(mass, self.boundmass)
      inertia = [max(x, self.boundinertia) for x in inertia]
      if mass < 0 or min(inertia) < 0:
        raise n.error("mass and inertia cannot be negative")
      if (inertia[0] + inertia[1] < inertia[2] or inertia[0] + inertia[2] < inertia[1]
          or inertia[1] + inertia[2] < inertia[0]):
        if not self.balanceinertia:
          raise n.error("inertia must satisfy A + B >= C; use 'balanceinertia' to fix")
        inertia = [(inertia[0] + inertia[1] + inertia[2]) / 3.0] * 3
    if b.frame is not None:
      b.pos, b.quat = rotation.frameaccum(b.frame[0], b.frame[1], b.pos, b.quat)
    b.ipos, b.iquat, b.mass, b.inertia = ipos, iquat, mass, inertia
    body_collision(b)
    b.dofnum = sum(self._compile_joint(j) for j in b.joints)
    if b.dofnum > 6:
      raise n.error("more than 6 dofs in body")
    hasball = False
    for j in b.joints:
      if j.type in (1, 3) and hasball:
        raise j.node.error("ball joint followed by a rotational joint in the same body")
      hasball = hasball or j.type == 1
      if j.type == 0 and (len(b.joints) > 1 or b.parent.id != 0):
        raise j.node.error("free joint can only appear by itself in a top-level body")
    if b.id > 0 and b.mocap and (b.dofnum or b.parent.id != 0):
      raise n.error("mocap body is not a fixed child of world")
    for s in b.sites:
      self._compile_site(s)
    for c in b.cams:
      self._compile_camera(c)
    for x in b.lights:
      self._compile_light(x)
    if (len(b.joints) == 1 and b.joints[0].type == 0 and not b.children
        and (b.joints[0].get("align", 2) == 1
             or (b.joints[0].get("align", 2) == 2 and self.alignfree))):
      self._align_free(b)

  def _align_free(self, b):
    """Free-joint alignment (mjCBody::Compile): a free body without children moves its frame
    onto its inertial frame; geoms, sites, cameras and lights keep their world poses."""
    b.pos, b.quat = rotation.frameaccum(b.pos, b.quat, b.ipos, b.iquat)
    qinv = [b.iquat[0], -b.iquat[1], -b.iquat[2], -b.iquat[3]]
    pinv = [-v for v in rotation.mulmatvec(rotation.quat2mat(qinv), b.ipos)]
    b.ipos, b.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
    for o in b.geoms + b.sites + b.cams:
      o.pos, o.quat = rotation.frameaccum(pinv, qinv, o.pos, o.quat)
    for x in b.lights:
      x.pos, _ = rotation.frameaccum(pinv, qinv, x.pos, [1.0, 0.0, 0.0, 0.0])
      x.dir = rotation.rot_vec_quat(x.dir, qinv)

  def _discard_visual(self):
    """compiler discardvisual (mjCModel::IndexAssets with discard): a geom that cannot collide
    (contype = conaffinity = 0), has no fluid ellipsoid and is named by no other element (tendon
    wrap, pair, sensor, custom tuple) goes after its body's inertia was computed with it; then
    every mesh no remaining geom or tactile sensor uses (mesh texture coordinates too).
    Materials and textures are dropped at the end of `run`."""
    named = set()
    geom_refs(self.root, named)
    for b in self.bodies:
      b.geoms = [g for g in b.geoms if g.contype or g.conaffinity or g.fluidshape
                 or (g.name and g.name in named)]
      b.margin = max((g.margin + g.gap for g in b.geoms), default=0.0)
    tactile = {n.get("mesh") for sec in children(self.root, "sensor")
               for n in children(sec, "tactile")}
    used = sorted({g.meshid for b in self.bodies for g in b.geoms if "meshid" in g}
                  | {i for i, me in enumerate(self.meshes) if me.name in tactile})
    remap = {old: new for new, old in enumerate(used)}
    for b in self.bodies:
      for g in b.geoms:
        if g.type in (7, 8):
          g.dataid = remap[g.dataid]
    self.meshes = [self.meshes[i] for i in used]
    for me in self.meshes:
      me.texcoord = me.facetexcoord = None

  def _fuse_static(self):
    """Fuse bodies without joints into their parents, as MuJoCo's compiler fusestatic does.

    A fused body's geoms, sites, cameras and lights move to its parent (appended, in the
    parent's frame), its child bodies take its place in the parent's list, and its inertia is
    added to the parent's unless the parent is the world. Bodies that something refers to by
    name, mocap bodies, bodies with fuse="false", bodies with a force/torque sensor's site, and
    massive bodies whose gravcomp differs from the parent's or that sit in a fluid are kept.
    """
    refs, ft_sites = set(), set()

    def scan(node):
      if node.tag != "body":
        for key in ("body1", "body2", "body", "objname", "refname", "target"):
          if key in node.attrib:
            refs.add(node.attrib[key])
      if node.tag in ("force", "torque") and "site" in node.attrib:
        ft_sites.add(node.attrib["site"])
      for c in node.children:
        scan(c)

    scan(self.root)
    for s in self.skins:   # bones named in SKN files (inline bones are <bone body=...>)
      refs |= _skin.bone_names(s)
    for f in self.flexes:   # bodies flex vertices and nodes sit on
      refs |= set(f["vertbody"]) | set(f["nodebody"])
    fluid = self.opt["density"][0] > 0 or self.opt["viscosity"][0] > 0
    old_ids = {b.id: b for b in self.bodies}
    i = 1
    while i < len(self.bodies):
      b, par = self.bodies[i], self.bodies[i].parent
      keep = (b.joints or b.mocap or (b.name and b.name in refs)
              or b.node.get("fuse") == "false"
              or b.node.get("sleep", "auto") != "auto"
              or any(s.name and s.name in ft_sites for s in b.sites)
              or (b.mass >= MINVAL and (b.gravcomp != par.gravcomp or fluid)))
      if keep:
        i += 1
        continue
      if par.id != 0 and b.mass >= MINVAL:
        self._accumulate_inertia(par, b)
      for c in b.children:
        c.pos, c.quat = rotation.frameaccum(b.pos, b.quat, c.pos, c.quat)
        c.parent = par
      k = par.children.index(b)
      par.children[k:k + 1] = b.children
      for lst, dst in ((b.geoms, par.geoms), (b.sites, par.sites), (b.cams, par.cams)):
        for o in lst:
          o.pos, o.quat = rotation.frameaccum(b.pos, b.quat, o.pos, o.quat)
          o.body = par
          dst.append(o)
      for x in b.lights:
        x.pos = rotation.frameaccum(b.pos, b.quat, x.pos, [1.0, 0.0, 0.0, 0.0])[0]
        x.dir = rotation.rot_vec_quat(x.dir, b.quat)
        x.body = par
        par.lights.append(x)
      del self.bodies[i]   # the first child (if any) now sits at i: check it next
    for k, b in enumerate(self.bodies):
      b.id = k
      if k:
        b.weldid = k if (b.joints or b.mocap) else b.parent.weldid
      body_collision(b)
    for x in [c for b in self.bodies for c in b.cams + b.lights]:
      if x.targetbodyid >= 0:
        x.targetbodyid = old_ids[x.targetbodyid].id

  def _accumulate_inertia(self, par, b):
    """Add body `b`'s mass and inertia (given in its parent's frame) to `par`'s, as MuJoCo."""
    opos, oquat = rotation.frameaccum(b.pos, b.quat, b.ipos, b.iquat)
    masses, iposes = [par.mass, b.mass], [par.ipos, opos]
    inertias, iquats = [par.inertia, b.inertia], [par.iquat, oquat]
    mass = masses[0] + masses[1]
    com = [masses[0] * iposes[0][k] + masses[1] * iposes[1][k] for k in range(3)]
    if mass < MINVAL:
      par.mass, par.inertia, par.ipos, par.iquat = 0.0, [0.0] * 3, [0.0] * 3, [1.0, 0, 0, 0]
      return
    com = [x / mass for x in com]
    tot = [0.0] * 6
    for j in range(2):
      dpos = [iposes[j][k] - com[k] for k in range(3)]
      a = _inertia.global_inertia(inertias[j], iquats[j])
      o = _inertia.offcenter(masses[j], dpos)
      for k in range(6):
        tot[k] += a[k] + o[k]
    res = _inertia.full_inertia(tot)
    if res is None:
      raise b.node.error("error in fusing static body inertias (not positive definite)")
    par.mass, par.ipos = mass, com
    par.iquat, par.inertia = res

  def _inertia_from_geoms(self, b):
    lo, hi = self.inertiagrouprange
    sel = [g for g in b.geoms if lo <= g.group <= hi and g.mass > rotation.EPS]
    if len(sel) == 1:
      g = sel[0]
      return list(g.pos), list(g.quat), g.mass, list(g.inertia)
    if not sel:
      return None
    mass = 0.0
    com = [0.0, 0.0, 0.0]
    for g in sel:
      mass += g.mass
      for k in range(3):
        com[k] += g.mass * g.pos[k]
    if mass < rotation.EPS:
      raise b.node.error("body mass is too small, cannot compute center of mass")
    ipos = [com[k] / mass for k in range(3)]
    toti = [0.0] * 6
    for g in sel:
      i0 = _inertia.global_inertia(g.inertia, g.quat)
      i1 = _inertia.offcenter(g.mass, [g.pos[k] - ipos[k] for k in range(3)])
      for k in range(6):
        toti[k] = toti[k] + i0[k] + i1[k]
    res = _inertia.full_inertia(toti)
    if res is None:
      raise b.node.error("inertia must have positive eigenvalues")
    return ipos, res[0], mass, res[1]

  def _compile_joint(self, j):
    n = j.node
    if n.tag == "freejoint":
      rd, cls = _Reader(n, None), None
      j.type = 0
      j.align = rd.kw("align", {"false": 0, "true": 1, "auto": 2}, 2)
    else:
      rd, cls = self._reader(n, j.cc)
      j.type = rd.kw("type", _JNT_TYPES, 3)
    j.group = rd.int("group", 0)
    j.user = _user(n, rd.str("user"))
    j.pos = rd.exact("pos", [0.0] * 3, 3)
    j.axis = rd.exact("axis", [0.0, 0.0, 1.0], 3)
    j.limited = rd.kw("limited", _LIMITED, 2)
    j.actfrclimited = rd.kw("actuatorfrclimited", _LIMITED, 2)
    j.range = rd.exact("range", [0.0, 0.0], 2)
    j.actfrcrange = rd.exact("actuatorfrcrange", [0.0, 0.0], 2)
    j.actgravcomp = rd.kw("actuatorgravcomp", _BOOL, False)
    j.solref_limit = rd.vec("solreflimit", SOLREF, 2)
    j.solimp_limit = rd.vec("solimplimit", SOLIMP)
    j.solref_fric = rd.vec("solreffriction", SOLREF, 2)
    j.solimp_fric = rd.vec("solimpfriction", SOLIMP)
    # polynomial coefficients "a b c": a is jnt_stiffness, (b, c) jnt_stiffnesspoly
    j.stiffness, *j.stiffnesspoly = rd.vec("stiffness", [0.0] * 3, 3)
    j.springdamper = rd.exact("springdamper", [0.0, 0.0], 2)
    if (j.springdamper[0] or j.springdamper[1]) and min(j.springdamper) <= 0:
      raise n.error("when defined, springdamper values must be positive in joint")
    j.damping, *j.dampingpoly = rd.vec("damping", [0.0] * 3, 3)
    j.armature = rd.num("armature", 0.0)
    j.frictionloss = rd.num("frictionloss", 0.0)
    j.margin = rd.num("margin", 0.0)
    j.ref = rd.num("ref", 0.0)
    j.springref = rd.num("springref", 0.0)
    j.springyield = rd.num("springyield", 0.0)
    if j.springyield < 0:
      raise n.error("springyield cannot be negative in joint")
    if j.type == 0 and j.springyield > 0:
      raise n.error("springyield should not be defined in free joint")
    if j.type == 0:
      j.limited = 0
    elif j.limited == 2 and not self.autolimits and j.range != [0.0, 0.0]:
      raise n.error("joint has 'range' but not 'limited'; set compiler autolimits='true' or "
                    "specify 'limited'")
    j.is_limited = j.limited == 1 or (j.limited == 2 and j.range[0] < j.range[1])
    if j.is_limited:
      if j.range[0] >= j.range[1] and j.type != 1:
        raise n.error("range[0] should be smaller than range[1] in joint")
      if j.range[0] and j.type == 1:
        raise n.error("range[0] should be 0 in ball joint")
      if self.degree and j.type in (1, 3):
        j.range = [x * math.pi / 180.0 if x else x for x in j.range]
    if j.type in (0, 1):
      j.actfrclimited = 0
    elif j.actfrclimited == 2 and not self.autolimits and j.actfrcrange != [0.0, 0.0]:
      raise n.error("joint has 'actuatorfrcrange' but not 'actuatorfrclimited'")
    j.is_actfrclimited = j.actfrclimited == 1 or (
        j.actfrclimited == 2 and j.actfrcrange[0] < j.actfrcrange[1])
    if j.is_actfrclimited and j.actfrcrange[0] >= j.actfrcrange[1]:
      raise n.error("actfrcrange[0] should be smaller than actfrcrange[1] in joint")
    if j.type in (0, 1):
      j.axis = [0.0, 0.0, 1.0]
    elif j.frame is not None:
      j.axis = rotation.rot_vec_quat(j.axis, j.frame[1])
    if rotation.normvec(j.axis) < rotation.EPS:
      raise n.error("axis too small in joint")
    if j.type == 0:
      j.pos = [0.0] * 3
    elif j.frame is not None:
      j.pos, _ = rotation.frameaccum(j.frame[0], j.frame[1], j.pos, [1.0, 0, 0, 0])
    if j.type == 3 and self.degree:
      j.ref *= math.pi / 180.0
      j.springref *= math.pi / 180.0
    if j.type in (1, 3) and self.degree:
      j.springyield *= math.pi / 180.0
    return {0: 6, 1: 3, 2: 1, 3: 1}[j.type]

  def _compile_geom(self, g, b, explicit):
    n = g.node
    rd, _ = self._reader(n, g.cc)
    g.type = rd.kw("type", _GEOM_TYPES, 2)
    g.plugin = self._geom_plugin(n, g)
    if (g.type == 1) != (n.get("hfield") is not None):
      raise n.error("hfield geom must have type='hfield' and an 'hfield' attribute")
    g.contype = rd.int("contype", 1)
    g.conaffinity = rd.int("conaffinity", 1)
    g.condim = rd.int("condim", 3)
    if g.condim not in (1, 3, 4, 6):
      raise n.error("invalid condim in geom (must be 1, 3, 4 or 6)")
    g.group = rd.int("group", 0)
    g.priority = rd.int("priority", 0)
    g.user = _user(n, rd.str("user"))
    g.size = rd.vec("size", [0.0] * 3, 3)
    g.friction = rd.vec("friction", [1.0, 0.005, 0.0001], 3)
    g.solmix = rd.num("solmix", 1.0)
    g.solref = rd.vec("solref", SOLREF, 2)
    g.solimp = rd.vec("solimp", SOLIMP)
    g.margin = rd.num("margin", 0.0)
    g.gap = rd.num("gap", 0.0)
    g.adhesion = rd.num("adhesion", 0.0)
    g.surfacevel = rd.vec("surfacevel", [0.0] * 6, 6)
    g.rgba = rd.exact("rgba", [0.5, 0.5, 0.5, 1.0], 4)
    g.matid = self._matid(rd, n)
    shell = rd.kw("shellinertia", _BOOL, False)
    fluid_ellipsoid = rd.kw("fluidshape", {"none": 0, "ellipsoid": 1}, 0)
    g.fluidshape = fluid_ellipsoid
    fluidcoef = rd.vec("fluidcoef", [0.5, 0.25, 1.5, 1.0, 1.0], 5)
    if g.type == 0 and b.weldid != 0 and not self._weld_mocap(b):
      raise n.error("plane only allowed in static bodies")
    g.pos, g.quat = self._fromto(rd, n, g) if g.type not in (7, 8) else self._pose(rd, n)
    g.dataid = -1
    nsize = _GEOM_NSIZE[g.type]
    if g.type in (7, 8):
      mesh = self._geom_mesh(rd, n, g)
    else:
      if rd.str("mesh") is not None:
        self._geom_fit(rd, n, g)
      if g.type == 1:
        self._geom_hfield(n, g)
      elif g.type == 0:
        if g.size[2] <= 0:
          raise n.error("plane size(3) must be positive")
      elif any(g.size[i] <= 0 for i in range(nsize)):
        raise n.error(f"size must have {nsize} positive value(s) for this geom type")
    if g.type not in (1, 7, 8):
      g.aabb = _geom_aabb(g.type, g.size)
      g.rbound = _geom_rbound(g.type, g.size)
    g.mass, g.inertia = 0.0, [0.0] * 3
    lo, hi = self.inertiagrouprange
    infer = b.id > 0 and (not explicit or self.inertiafromgeom == 1) and lo <= g.group <= hi
    if infer:
      mass, density = rd.str("mass"), rd.num("density", 1000.0)
      itype = 6 if g.type == 1 else g.type   # a height field's inertia is its box's
      volume = ((lambda: mesh["volume"]) if g.type in (7, 8)
                else (lambda: _inertia.geom_volume(itype, g.size, shell)))
      inertia = ((lambda: _mesh_geom_inertia(mesh["boxsz"], g.mass)) if g.type in (7, 8)
                 else (lambda: _inertia.geom_inertia(itype, g.size, g.mass, shell)))
      if mass is not None:
        mass = rd.num("mass", 0.0)
        vol = volume()
        if mass != 0 and vol > rotation.EPS:
          g.mass, density = mass, mass / vol
          g.inertia = inertia()
      elif density != 0:
        g.mass = density * volume()
        g.inertia = inertia()
      if g.mass < 0 or min(g.inertia) < 0 or density < 0:
        raise n.error("mass, inertia or density are negative in geom")
    g.fluid = (_inertia.fluid_params(g.type, g.size, fluidcoef) if fluid_ellipsoid
               else [0.0] * t.NFLUID)
    if g.frame is not None:
      g.pos, g.quat = rotation.frameaccum(g.frame[0], g.frame[1], g.pos, g.quat)

  def _weld_mocap(self, b):
    w = b
    while w.id != w.weldid:
      w = w.parent
    return w.mocap

  def _matid(self, rd, n):
    name = rd.str("material")
    if not name:      # absent or empty (MuJoCo: no material)
      return -1
    for i, m in enumerate(self.mats):
      if m.name == name:
        return -1 if self.discardvisual else i
    raise n.error(f"unknown material '{name}'")

  def _fromto(self, rd, n, g):
    """pos and quat of a geom or site, from 'fromto' or pos + orientation (sets size[1:])."""
    if rd.has("fromto"):
      ft = rd.exact("fromto", [0.0] * 6, 6)
      if g.type not in (3, 4, 5, 6):
        raise n.error("fromto requires capsule, cylinder, box or ellipsoid")
      pos = rd.exact("pos", [0.0] * 3, 3)
      if pos[0] or pos[1] or pos[2]:
        raise n.error("both pos and fromto defined")
      vec = [ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]]
      g.size[1] = rotation.normvec(vec) / 2
      if g.size[1] < rotation.EPS:
        raise n.error("fromto points too close")
      if g.type in (4, 6):
        g.size[2] = g.size[1]
        g.size[1] = g.size[0]
      return ([(ft[0] + ft[3]) / 2, (ft[1] + ft[4]) / 2, (ft[2] + ft[5]) / 2], rotation.z2quat(vec))
    return self._pose(rd, n)

  def _compile_site(self, s):
    n = s.node
    rd, _ = self._reader(n, s.cc)
    s.type = rd.kw("type", _GEOM_TYPES, 2)
    if s.type in (0, 1, 7, 8):
      raise n.error("meshes, hfields and planes not allowed in site")
    s.group = rd.int("group", 0)
    s.user = _user(n, rd.str("user"))
    s.size = rd.vec("size", [0.005] * 3, 3)
    s.rgba = rd.exact("rgba", [0.5, 0.5, 0.5, 1.0], 4)
    s.matid = self._matid(rd, n)
    s.pos, s.quat = self._fromto(rd, n, s)
    if s.frame is not None:
      s.pos, s.quat = rotation.frameaccum(s.frame[0], s.frame[1], s.pos, s.quat)
    rotation.normvec(s.quat)
    nsize = _GEOM_NSIZE[s.type]
    if any(s.size[i] <= 0 for i in range(nsize)):
      raise n.error(f"size must have {nsize} positive value(s) for this site type")

  def _target(self, rd, n):
    name = rd.str("target")
    if name is None:
      return -1
    for b in self.bodies:
      if b.name == name:
        return b.id
    raise n.error(f"unknown target body '{name}'")

  def _compile_camera(self, c):
    n = c.node
    rd, _ = self._reader(n, c.cc)
    c.mode = rd.kw("mode", _CAMLIGHT_MODE, 0)
    c.user = _user(n, rd.str("user"))
    c.pos, c.quat = self._pose(rd, n)
    if c.frame is not None:
      c.pos, c.quat = rotation.frameaccum(c.frame[0], c.frame[1], c.pos, c.quat)
    rotation.normvec(c.quat)
    c.targetbodyid = self._target(rd, n)   # none with a target mode: MuJoCo keeps it fixed
    c.projection = rd.kw("projection", _PROJECTION, 0)
    c.fovy = rd.num("fovy", 45.0)
    if c.fovy >= 180:
      raise n.error("fovy too large in camera")
    c.ipd = rd.num("ipd", 0.068)
    self._camera_intrinsic(c, rd, n)

  def _camera_intrinsic(self, c, rd, n):
    """resolution, sensorsize and intrinsic (focal length, principal point) of a camera, in
    float32 as mjCCamera::Compile; a sensor size sets fovy from the focal length."""
    f4 = np.float32
    c.resolution = ints(n, "resolution", rd.exact("resolution", [1.0, 1.0], 2))
    size = [f4(v) for v in rd.exact("sensorsize", [0.0, 0.0], 2)]
    focal = [f4(v) for v in rd.exact("focal", [0.0, 0.0], 2)]
    focalpx = [f4(v) for v in rd.exact("focalpixel", [0.0, 0.0], 2)]
    princ = [f4(v) for v in rd.exact("principal", [0.0, 0.0], 2)]
    princpx = [f4(v) for v in rd.exact("principalpixel", [0.0, 0.0], 2)]
    c.sensorsize = size
    if any(focal + focalpx + princ + princpx) and not (size[0] > 0 and size[1] > 0):
      raise n.error("focal/principal require sensorsize in camera")
    if size[0] > 0 and size[1] > 0:
      if c.resolution[0] <= 0 or c.resolution[1] <= 0:
        raise n.error("sensorsize requires positive resolution in camera")
      dens = [f4(c.resolution[k]) / size[k] for k in range(2)]
      c.intrinsic = [focalpx[k] / dens[k] if focalpx[k] else focal[k] for k in range(2)]
      c.intrinsic += [princpx[k] / dens[k] if princpx[k] else princ[k] for k in range(2)]
      c.fovy = _atan2f(float(size[1] / f4(2)), float(c.intrinsic[1])) * 360.0 / math.pi
    else:
      znear = f4(self.visual.get("map", {}).get("znear", 0.01))
      c.intrinsic = [znear, znear, f4(0), f4(0)]

  def _compile_light(self, x):
    n = x.node
    rd, _ = self._reader(n, x.cc)
    x.mode = rd.kw("mode", _CAMLIGHT_MODE, 0)
    x.type = rd.kw("type", _LIGHT_TYPE, 0)
    if rd.kw("directional", _BOOL, False):
      x.type = 1
    x.castshadow = rd.kw("castshadow", _BOOL, True)
    x.active = rd.kw("active", _BOOL, True)
    x.pos = rd.exact("pos", [0.0] * 3, 3)
    x.dir = rd.exact("dir", [0.0, 0.0, -1.0], 3)
    if x.frame is not None:
      x.pos, _ = rotation.frameaccum(x.frame[0], x.frame[1], x.pos, [1.0, 0, 0, 0])
      x.dir = rotation.rot_vec_quat(x.dir, x.frame[1])
    if rotation.normvec(x.dir) < rotation.EPS:
      raise n.error("zero direction in light")
    x.attenuation = rd.exact("attenuation", [1.0, 0.0, 0.0], 3)
    x.cutoff = rd.num("cutoff", 45.0)
    x.exponent = rd.num("exponent", 10.0)
    x.ambient = rd.exact("ambient", [0.0] * 3, 3)
    x.diffuse = rd.exact("diffuse", [0.7] * 3, 3)
    x.specular = rd.exact("specular", [0.3] * 3, 3)
    x.targetbodyid = self._target(rd, n)
