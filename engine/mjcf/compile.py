"""MJCF model compiler: `Node` tree -> (sizes, arrays, names) laid out as MuJoCo's mjModel.

Follows MuJoCo's compiler (user_model.cc, user_objects.cc) step by step so the numbers agree:
defaults, frames, orientation forms, inertia from geoms, sparsity layouts. Quantities that need
the dynamics at qpos0 (invweight0, acc0, length0, ...) are left to a later stage.

`Compiler` holds the settings, defaults, name tables and the assembly order; its element kinds
are mixins in their own modules, as MuJoCo splits its user_* files: assets (`_assets`: meshes,
textures, height fields), the body tree (`_body`: bodies, joints, geoms, sites, cameras,
lights), the other elements (`_elements`: tendons, actuators, equality, contact pairs,
sensors), with helpers in `_actuator`, `_sensor`, `_flex` and `_skin`.
"""
import os
import re

import numpy as np

from numjoco.engine import types as t
from numjoco.engine.mjcf import _flex
from numjoco.engine.mjcf import _plugin
from numjoco.engine.mjcf import _skin
from numjoco.engine.mjcf._actuator import (ACT_TAGS as _ACT_TAGS, apply_actuator as _apply_actuator,
                                           copy_act as _copy_act,
                                           default_actuator as _default_actuator,
                                           has_mass as _has_mass)
from numjoco.engine.mjcf._assets import AssetCompiler
from numjoco.engine.mjcf._body import BodyCompiler, children
from numjoco.engine.mjcf._elements import ElementCompiler
from numjoco.engine.mjcf._node import BOOL as _BOOL, SOLIMP, SOLREF, floats, ints, keyword
from numjoco.engine.mjcf._node import Obj as _Obj, Reader as _Reader
from numjoco.engine.visual import VISUAL_DEFAULTS

_INTEGRATOR = {"Euler": 0, "RK4": 1, "implicit": 2, "implicitfast": 3, "discrete": 4}
_CONE = {"pyramidal": 0, "elliptic": 1}
_JACOBIAN = {"dense": 0, "sparse": 1, "auto": 2}
_SOLVER = {"PGS": 0, "CG": 1, "Newton": 2}
ENABLE_FLAGS = {"override", "energy", "fwdinv", "invdiscrete", "sleep", "diagexact"}
# <visual> flags MuJoCo reads as keywords (stored as ints 0/1 in mjVisual, as MuJoCo does)
_VIS_BOOL = {("global", "orthographic"), ("global", "ellipsoidinertia"), ("global", "bvactive")}
_HEADLIGHT_ACTIVE = {"false": 0, "true": 1, "auto": 2}   # or an integer


_MEMORY = re.compile(r"^\s*(\d+)([KMGTPE]?)\s*$", re.IGNORECASE)


def _check_memory(n):
  """<size memory>: -1 or an unsigned integer with an optional suffix K, M, G, T, P or E (powers
  of 1024) that fits in a size_t, as MuJoCo reads it. numjoco preallocates Data and has no arena
  to size, so the value is checked, not used."""
  text = n.get("memory")
  if text is None or text.strip() == "-1":
    return
  match = _MEMORY.match(text)
  scale = 1024 ** ("KMGTPE".index(match[2].upper()) + 1) if match and match[2] else 1
  if match is None or int(match[1]) * scale >= 2**64:
    raise n.error("unsigned integer with an optional suffix {K,M,G,T,P,E} is expected in "
                  "attribute 'memory' (or the size specified is too big)")


class Compiler(BodyCompiler, ElementCompiler, AssetCompiler):
  """State of one compilation: settings, defaults, objects and the name tables."""

  def __init__(self, root):
    self.root = root
    self.degree, self.eulerseq, self.autolimits = True, "xyz", True
    self.inertiafromgeom, self.boundmass, self.boundinertia = 2, 0.0, 0.0
    self.settotalmass, self.balanceinertia = -1.0, False
    self.fusestatic = False
    self.discardvisual = False
    self.alignfree = False
    self.inertiagrouprange = [0, 5]
    self.nconmax, self.njmax = -1, -1
    self.size_node, self.nkey = None, 0   # the last <size>; its nkey
    self.defaults = {}   # class -> {tag: attrib dict}
    self.act_defaults = {}   # class -> actuator state
    self.default_parent = {}   # class -> its parent class ("main" has none)
    self.bodies, self.joints, self.geoms, self.sites = [], [], [], []
    self.cams, self.lights, self.mats, self.tendons = [], [], [], []
    self.actuators, self.eqs, self.keys = [], [], []
    self.pairs, self.excludes, self.sensors = [], [], []
    self.opt = default_option()
    self.visual, self.statistic = {}, {}
    self.meshes, self.meshdir, self.strippath = [], "", False
    self.fitaabb = False
    self.textures, self.texturedir = [], ""
    self.hfields = []
    self.skins = []   # <skin> (asset or deformable), engine/mjcf/_skin.py
    self.flexes = []   # <deformable><flex> and <flexcomp> specs, engine/mjcf/_flex.py
    self.plugins, self.plugin_implicit = {}, []   # <extension> instances; implicit ones
    self.plugin_declared = set()
    self.nuser = {k: -1 for k in _USER_KINDS}   # <size nuser_*>: -1 sizes from the longest
    self.assets = None   # name -> bytes for files not on disk (compile_model's `assets`)
    self.lropt = dict(mode=1, useexisting=True, uselimit=False, accel=20.0, maxforce=0.0,
                      timeconst=1.0, timestep=0.01, inttotal=10.0, interval=2.0, tolrange=0.05)

  # ------------------------------------------------------------------------- top level

  def run(self):
    """Compile the whole model; returns (sizes, arrays, names)."""
    r = self.root
    for n in children(r, "compiler"):
      self._compiler(n)
    for n in children(r, "option"):
      self._option(n)
    for n in children(r, "visual"):
      self._visual(n)
    for n in children(r, "statistic"):
      rd = _Reader(n, None)
      for k in ("meaninertia", "meanmass", "meansize", "extent"):
        if rd.has(k):
          self.statistic[k] = rd.num(k, 0.0)
      if rd.has("center"):
        self.statistic["center"] = rd.exact("center", [0.0] * 3, 3)
    for n in children(r, "size"):
      rd = _Reader(n, None)
      self.size_node = n
      self.nconmax = rd.int("nconmax", self.nconmax)
      self.njmax = rd.int("njmax", self.njmax)
      for k in ("nconmax", "njmax"):
        if getattr(self, k) < -1:
          raise n.error(f"{k} must be >= -1")
      if rd.int("nstack", -1) < -1:    # MuJoCo's arena; numjoco preallocates instead
        raise n.error("nstack must be >= -1")
      _check_memory(n)
      if rd.int("nuserdata", 0) < 0:
        raise n.error("nuserdata must be >= 0")
      self.nkey = rd.int("nkey", self.nkey)
      for k in _USER_KINDS:
        self.nuser[k] = rd.int("nuser_" + k, self.nuser[k])
        if self.nuser[k] < -1:
          raise n.error(f"nuser_{k} must be >= -1")
    self._defaults_root([n for n in r.children if n.tag == "default"])
    self.plugins, self.plugin_declared = _plugin.read_extension(r)
    for sec in children(r, "asset"):
      for n in sec.children:
        if n.tag == "material":
          self._material(n)
        elif n.tag == "mesh":
          self._mesh(n)
        elif n.tag == "hfield":
          self._hfield(n)
        elif n.tag == "texture":
          self._texture(n)
    for sec in r.children:   # skins in document order, whichever section holds them
      if sec.tag in ("asset", "deformable"):
        self.skins += [_skin.read_skin(self, n) for n in sec.children if n.tag == "skin"]
    self._check_unique("skin", [_Obj(s) for s in self.skins])
    for what, lst in (("mesh", self.meshes), ("texture", self.textures),
                      ("hfield", self.hfields)):
      self._check_unique(what, lst, "repeated name '{name}' in {what}")   # MuJoCo's words
    self.flexes = _flex.expand(self, r)   # flexcomps become bodies (parse allowed them)
    world = _Obj(node=r, name="world", parent=None, id=0, childclass="main", frame=None,
                 joints=[], geoms=[], sites=[], cams=[], lights=[], children=[], mocap=False,
                 inertial=None, gravcomp=0.0)
    self.bodies.append(world)
    for wb in children(r, "worldbody"):
      self._body_children(wb, world, "main", None)
    self._names_unique()
    for b in self.bodies:
      self._compile_body(b)
    for b in self.bodies[1:]:
      if b.joints and not _has_mass(b):
        raise b.node.error("mass and inertia of moving bodies must be larger than mjMINVAL")
    if self.fusestatic:
      self._fuse_static()
    if self.discardvisual:
      self._discard_visual()
    for tag, read in (("tendon", self._tendon), ("actuator", self._actuator),
                      ("equality", self._equality)):
      for n in _elements(r, tag):
        read(n)
    for i, f in enumerate(self.flexes):   # flexcomp <edge equality>: after the model's own
      e = _flex.equality(self, f, i)
      if e is not None:
        self.eqs.append(e)
    for tag, read in (("contact", self._contact), ("sensor", self._sensor)):
      for n in _elements(r, tag):
        read(n)
    self._check_unique("tendon", self.tendons)
    self._check_unique("actuator", self.actuators)
    self._check_unique("equality", self.eqs)
    self._check_unique("sensor", [_Obj(s) for s in self.sensors])
    for n in _elements(r, "keyframe"):
      self.keys.append(_Obj(node=n, name=n.get("name", "")))
    self._check_unique("key", self.keys)
    # <size nkey>: keyframes at the defaults after the model's own (_assemble._keys)
    self.nkey_default = max(0, self.nkey - len(self.keys))
    if self.discardvisual:   # every material and texture goes (they only draw)
      self.mats, self.textures = [], []
    from numjoco.engine.mjcf import _assemble
    return _assemble.assemble(self)

  def _lengthrange_opt(self, n):
    """<compiler><lengthrange>: options of the compile-time actuator length-range simulation
    (mjLROpt)."""
    rd = _Reader(n, None)
    o = self.lropt
    o["mode"] = rd.kw("mode", {"none": 0, "muscle": 1, "muscleuser": 2, "all": 3}, o["mode"])
    o["useexisting"] = rd.kw("useexisting", _BOOL, o["useexisting"])
    o["uselimit"] = rd.kw("uselimit", _BOOL, o["uselimit"])
    for k in ("accel", "maxforce", "timeconst", "timestep", "inttotal", "interval", "tolrange"):
      o[k] = rd.num(k, o[k])
    for k in n.attrib:
      if k not in o:
        raise n.error(f"unknown attribute '{k}'")

  def _compiler(self, n):
    rd = _Reader(n, None)
    self.degree = rd.kw("angle", {"degree": True, "radian": False}, self.degree)
    seq = rd.str("eulerseq", self.eulerseq)
    if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
      raise n.error(f"attribute 'eulerseq': invalid value '{seq}'")
    self.eulerseq = seq
    self.autolimits = rd.kw("autolimits", _BOOL, self.autolimits)
    self.inertiafromgeom = rd.kw("inertiafromgeom", {"false": 0, "true": 1, "auto": 2},
                                 self.inertiafromgeom)
    self.boundmass = rd.num("boundmass", self.boundmass)
    self.boundinertia = rd.num("boundinertia", self.boundinertia)
    self.settotalmass = rd.num("settotalmass", self.settotalmass)
    self.balanceinertia = rd.kw("balanceinertia", _BOOL, self.balanceinertia)
    self.inertiagrouprange = ints(n, "inertiagrouprange",
                                  rd.exact("inertiagrouprange", self.inertiagrouprange, 2))
    self.discardvisual = rd.kw("discardvisual", _BOOL, self.discardvisual)
    self.fusestatic = rd.kw("fusestatic", _BOOL, self.fusestatic)
    self.meshdir = rd.str("meshdir", rd.str("assetdir", self.meshdir))
    self.texturedir = rd.str("texturedir", rd.str("assetdir", self.texturedir))
    self.strippath = rd.kw("strippath", _BOOL, self.strippath)
    self.fitaabb = rd.kw("fitaabb", _BOOL, self.fitaabb)
    for c in children(n, "lengthrange"):
      self._lengthrange_opt(c)
    self.alignfree = rd.kw("alignfree", _BOOL, self.alignfree)
    if rd.str("coordinate", "local") != "local":
      raise n.error("only coordinate='local' is supported")

  def _visual(self, n):
    """<visual>: values by group, rounded to float32 as MuJoCo stores them."""
    for g in n.children:
      rd, vals = _Reader(g, None), self.visual.setdefault(g.tag, {})
      for key, default in VISUAL_DEFAULTS[g.tag].items():
        if not rd.has(key):
          continue
        if isinstance(default, list):
          vals[key] = [float(np.float32(x)) for x in rd.exact(key, default, len(default))]
        elif (g.tag, key) in _VIS_BOOL:
          vals[key] = rd.kw(key, {"false": 0, "true": 1}, default)
        elif (g.tag, key) == ("headlight", "active") and g.get(key) in _HEADLIGHT_ACTIVE:
          vals[key] = _HEADLIGHT_ACTIVE[g.get(key)]
        elif isinstance(default, int):
          vals[key] = rd.int(key, default)
        else:
          vals[key] = float(np.float32(rd.num(key, default)))

  def _option(self, n):
    rd, o = _Reader(n, None), self.opt
    for k in ("timestep", "impratio", "tolerance", "ls_tolerance", "noslip_tolerance",
              "ccd_tolerance", "density", "viscosity", "o_margin", "sleep_tolerance"):
      o[k] = [rd.num(k, o[k][0])]
    for k in ("gravity", "wind", "magnetic"):
      o[k] = rd.exact(k, o[k], 3)
    o["o_solref"] = rd.vec("o_solref", o["o_solref"], 2)
    o["o_solimp"] = rd.vec("o_solimp", o["o_solimp"])
    o["o_friction"] = rd.vec("o_friction", o["o_friction"])
    for k, table in (("integrator", _INTEGRATOR), ("cone", _CONE), ("jacobian", _JACOBIAN),
                     ("solver", _SOLVER)):
      o[k] = [rd.kw(k, table, o[k][0])]
    for k in ("iterations", "ls_iterations", "noslip_iterations", "ccd_iterations",
              "sdf_iterations", "sdf_initpoints"):
      o[k] = [rd.int(k, o[k][0])]
    if not 0 <= o["sdf_initpoints"][0] <= 50:
      raise n.error("sdf_initpoints must be between 0 and 50 (numjoco's contact buffer)")
    groups = floats(n, "actuatorgroupdisable", 31, 0) or []
    for g in groups:
      if g != int(g):
        raise n.error("attribute 'actuatorgroupdisable': expected integers")
      if g < 0:
        raise n.error("disabled actuator group value must be non-negative")
      if g > 30:
        raise n.error("disabled actuator group value cannot exceed 30")
      o["disableactuator"] = [o["disableactuator"][0] | (1 << int(g))]
    for f in children(n, "flag"):
      for key in f.attrib:
        on = keyword(f, key, {"enable": True, "disable": False})
        if key in ENABLE_FLAGS:
          bit, field, setbit = t.mjtEnableBit[key.upper()], "enableflags", on
        else:
          bit, field, setbit = t.mjtDisableBit[key.upper()], "disableflags", not on
        v = o[field][0]
        o[field] = [v | int(bit) if setbit else v & ~int(bit)]

  # ------------------------------------------------------------------------- defaults

  def _defaults_root(self, nodes):
    self.defaults["main"] = {}
    self.act_defaults["main"] = _default_actuator()
    for n in nodes:
      cls = n.get("class", "main")
      if cls != "main":
        raise n.error("top-level <default> must not have a class other than 'main'")
      self._default_class(n, "main", None)

  def _default_class(self, n, cls, parent):
    """One <default> class: its own elements first, then its nested classes, whatever their
    order in the file (mjXReader::Default), so a child class copies all of its parent's."""
    if parent is not None:
      if cls in self.defaults:
        raise n.error(f"repeated default class name '{cls}'")
      self.defaults[cls] = {k: dict(v) for k, v in self.defaults[parent].items()}
      self.act_defaults[cls] = _copy_act(self.act_defaults[parent])
      self.default_parent[cls] = parent
    seen = set()
    for c in n.children:
      if c.tag == "default":
        continue
      if c.tag in seen:   # MuJoCo's schema: one element of each kind per class
        raise c.error(f"element <{c.tag}> found twice in one default class")
      seen.add(c.tag)
      if c.tag in _ACT_TAGS:
        _apply_actuator(c, self.act_defaults[cls], self._act_ancestors(parent))
      else:
        attrs = self.defaults[cls].setdefault(c.tag, {})
        new = dict(c.attrib)
        for layer in c.children:   # a default material's rgb layer sets its texture (as 4.0)
          if layer.get("role", "rgb") == "rgb" and layer.get("texture"):
            new["texture"] = layer.get("texture")
        # polynomial coefficients: "a" over an inherited "a b c" keeps "b c" (MuJoCo copies
        # the parent class's object and overwrites the leading entries)
        for key in ("stiffness", "damping"):
          if key in new and key in attrs:
            mine, inherited = new[key].split(), attrs[key].split()
            new[key] = " ".join(mine + inherited[len(mine):])
        attrs.update(new)
    for c in n.children:
      if c.tag == "default":
        if "class" not in c.attrib:
          raise c.error("nested <default> requires a 'class' attribute")
        self._default_class(c, c.attrib["class"], cls)

  def _act_ancestors(self, cls):
    """The actuator defaults of class `cls` and its ancestors, nearest first: where a shortcut
    looks for parameters when its own class's default was written with another shortcut."""
    out = []
    while cls is not None:
      out.append(self.act_defaults[cls])
      cls = self.default_parent.get(cls)
    return out

  def _cls(self, n, childclass):
    cls = n.get("class", childclass)
    if cls not in self.defaults:
      raise n.error(f"unknown default class '{cls}'")
    return cls

  def _reader(self, n, childclass, tag=None):
    cls = self._cls(n, childclass)
    return _Reader(n, self.defaults[cls].get(tag or n.tag)), cls

  # ------------------------------------------------------------------------- assets


  # ------------------------------------------------------------------------- kinematic tree

  def _names_unique(self):
    for what, lst in (("body", self.bodies), ("joint", [j for b in self.bodies for j in b.joints]),
                      ("geom", [g for b in self.bodies for g in b.geoms]),
                      ("site", [s for b in self.bodies for s in b.sites]),
                      ("camera", [c for b in self.bodies for c in b.cams]),
                      ("light", [x for b in self.bodies for x in b.lights]),
                      ("material", self.mats)):
      self._check_unique(what, lst)

  def _check_unique(self, what, lst, text="duplicate {what} name '{name}'"):
    """Refuse a name given twice among `lst` (`text`: the message's start)."""
    seen = {}
    for o in lst:
      if o.name:
        if o.name in seen:
          prev = seen[o.name]
          raise o.node.error(text.format(what=what, name=o.name) + " (first defined at "
                             f"{os.path.basename(prev.file)}:{prev.line})")
        seen[o.name] = o.node


  # ------------------------------------------------------------------------- discardvisual


  # ------------------------------------------------------------------------- fusestatic


  # ------------------------------------------------------------------------- other objects

  def find(self, kind, name, node, what):
    """Id of the object called `name` among joints/tendons/bodies/sites/geoms/cameras/actuators,
    else error."""
    if kind in ("site", "geom", "camera"):
      # the body tree is complete when elements refer to these (as all_joints assumes)
      cache = self.__dict__.setdefault("_obj_cache", {})
      lst = cache.get(kind)
      if not lst:
        attr = {"site": "sites", "geom": "geoms", "camera": "cams"}[kind]
        lst = cache[kind] = [x for b in self.bodies for x in getattr(b, attr)]
    else:
      lst = {"joint": self.all_joints(), "tendon": self.tendons, "body": self.bodies,
             "actuator": self.actuators}[kind]
    # name -> first id, rebuilt when the (append-only) list has grown
    index = self.__dict__.setdefault("_name_index", {})
    n, ids = index.get(kind, (-1, None))
    if n != len(lst):
      ids = {}
      for i, o in enumerate(lst):
        ids.setdefault(o.name, i)
      index[kind] = (len(lst), ids)
    i = ids.get(name)
    if i is None:
      raise node.error(f"{what}: unknown {kind} '{name}'")
    return i

  def all_joints(self):
    if not hasattr(self, "_jcache") or len(self._jcache) == 0:
      self._jcache = [j for b in self.bodies for j in b.joints]
    return self._jcache


# ---------------------------------------------------------------------------- actuators


# ---------------------------------------------------------------------------- helpers

_USER_KINDS = ("body", "jnt", "geom", "site", "cam", "tendon", "actuator", "sensor")


def _elements(n, tag):
  """The elements of every <tag> section of n, in document order."""
  return [c for sec in children(n, tag) for c in sec.children]


def default_option():
  return {"timestep": [0.002], "impratio": [1.0], "tolerance": [1e-8], "ls_tolerance": [0.01],
          "noslip_tolerance": [1e-6], "ccd_tolerance": [1e-6], "sleep_tolerance": [1e-3], "density": [0.0],
          "viscosity": [0.0], "o_margin": [0.0], "gravity": [0.0, 0.0, -9.81],
          "wind": [0.0] * 3, "magnetic": [0.0, -0.5, 0.0], "o_solref": list(SOLREF),
          "o_solimp": list(SOLIMP), "o_friction": [1.0, 1.0, 0.005, 0.0001, 0.0001],
          "integrator": [0], "cone": [0], "jacobian": [2], "solver": [2], "iterations": [100],
          "ls_iterations": [50], "noslip_iterations": [0], "ccd_iterations": [35],
          "sdf_iterations": [10], "sdf_initpoints": [40], "disableflags": [0], "enableflags": [0], "disableactuator": [0]}


