"""The model elements outside the body tree, as MuJoCo's mjCTendon, mjCActuator, mjCEquality,
mjCPair/mjCBodyPair and mjCSensor (user_objects.cc): tendons and their spatial paths,
actuators, equality constraints, contact pairs and excludes, sensors. A mixin of
engine/mjcf/compile.Compiler.
"""
from numjoco.engine import types as t
from numjoco.engine.mjcf import _flex
from numjoco.engine.mjcf import _plugin
from numjoco.engine.mjcf import _sensor as _sensors
from numjoco.engine.mjcf._actuator import (apply_actuator as _apply_actuator, copy_act as _copy_act,
                                           finish_actuator as _finish_actuator)
from numjoco.engine.mjcf._node import BOOL as _BOOL, LIMITED as _LIMITED, SOLIMP, SOLREF, floats
from numjoco.engine.mjcf._node import Obj as _Obj
from numjoco.engine.mjcf._node import user_values as _user
from numjoco.engine.mjcf._schema import ACT_PLUGIN_ATTRS



class ElementCompiler:
  """Compiles <tendon>, <actuator>, <equality>, <contact> and <sensor> into the Compiler's
  objects."""

  def _tendon(self, n):
    rd, _ = self._reader(n, "main", "tendon")
    te = _Obj(node=n, name=n.get("name", ""), kind=n.tag)
    te.group = rd.int("group", 0)
    te.user = _user(n, rd.str("user"))
    te.limited = rd.kw("limited", _LIMITED, 2)
    te.actfrclimited = rd.kw("actuatorfrclimited", _LIMITED, 2)
    te.range = rd.exact("range", [0.0, 0.0], 2)
    te.actfrcrange = rd.exact("actuatorfrcrange", [0.0, 0.0], 2)
    te.solref_lim = rd.vec("solreflimit", SOLREF, 2)
    te.solimp_lim = rd.vec("solimplimit", SOLIMP)
    te.solref_fri = rd.vec("solreffriction", SOLREF, 2)
    te.solimp_fri = rd.vec("solimpfriction", SOLIMP)
    te.margin = rd.num("margin", 0.0)
    te.stiffness, *te.stiffnesspoly = rd.vec("stiffness", [0.0] * 3, 3)
    te.springyield = rd.num("springyield", 0.0)
    if te.springyield < 0:
      raise n.error("springyield cannot be negative in tendon")
    te.damping, *te.dampingpoly = rd.vec("damping", [0.0] * 3, 3)
    te.armature = rd.num("armature", 0.0)
    te.frictionloss = rd.num("frictionloss", 0.0)
    te.springlength = [-1.0, -1.0]
    for src in rd.srcs:   # one value sets both ends of the dead band (mjXReader::OneTendon)
      if "springlength" in src:
        sl = floats(n, "springlength", 2, 1, attrib=src)
        te.springlength = sl * 2 if len(sl) == 1 else sl
    te.width = rd.num("width", 0.003)
    te.rgba = rd.exact("rgba", [0.5, 0.5, 0.5, 1.0], 4)
    # path entries: (mjtWrap type, object id, prm) as MuJoCo's wrap_type/objid/prm
    te.path = []
    if n.tag == "fixed":
      for c in n.children:
        for key in ("joint", "coef"):
          if key not in c.attrib:
            raise c.error(f"missing attribute '{key}'")
        coef = floats(c, "coef", 1)
        j = self.find("joint", c.attrib["joint"], c, "tendon joint")
        if any(p[1] == j for p in te.path):
          raise c.error(f"joint '{c.attrib['joint']}' is repeated in the tendon")
        te.path.append((int(t.mjtWrap.JOINT), j, coef[0] if coef else 1.0))
    else:
      self._spatial_path(n, te)
    if not te.path:
      raise n.error("tendon path cannot be empty")
    for key, lim in (("limited", "range"), ("actfrclimited", "actuatorfrcrange")):
      rng = te.range if lim == "range" else te.actfrcrange
      if te[key] == 2 and not self.autolimits and rng != [0.0, 0.0]:
        raise n.error(f"tendon has '{lim}' but no explicit limited attribute")
    te.is_limited = te.limited == 1 or (te.limited == 2 and te.range[0] < te.range[1])
    te.is_actfrclimited = te.actfrclimited == 1 or (
        te.actfrclimited == 2 and te.actfrcrange[0] < te.actfrcrange[1])
    if te.is_limited and te.range[0] >= te.range[1]:
      raise n.error("invalid limits in tendon")
    if te.springlength[0] > te.springlength[1]:
      raise n.error("invalid springlength in tendon")
    self.tendons.append(te)

  def _spatial_path(self, n, te):
    """Path of a spatial tendon, checked as mjCTendon::Compile checks it."""
    for c in n.children:
      if c.tag == "site":
        if "site" not in c.attrib:
          raise c.error("missing attribute 'site'")
        te.path.append((int(t.mjtWrap.SITE), self.find("site", c.attrib["site"], c,
                                                       "tendon site"), 0.0))
      elif c.tag == "geom":
        if "geom" not in c.attrib:
          raise c.error("missing attribute 'geom'")
        gid = self.find("geom", c.attrib["geom"], c, "tendon geom")
        gtype = [g for b in self.bodies for g in b.geoms][gid].type
        if gtype not in (2, 5):
          raise c.error("wrapping geom must be a sphere or a cylinder")
        side = (self.find("site", c.attrib["sidesite"], c, "tendon sidesite")
                if "sidesite" in c.attrib else -1)
        wt = t.mjtWrap.SPHERE if gtype == 2 else t.mjtWrap.CYLINDER
        te.path.append((int(wt), gid, float(side)))
      else:
        div = floats(c, "divisor", 1)
        if div is None:
          raise c.error("missing attribute 'divisor'")
        if div[0] <= 0:
          raise c.error("pulley divisor must be positive")
        te.path.append((int(t.mjtWrap.PULLEY), -1, div[0]))
    sz = len(te.path)
    if sz and sz < 2:
      raise n.error("spatial tendon path must contain at least two objects")
    if te.width <= 0:
      raise n.error("tendon must have positive width")
    if te.armature < 0:
      raise n.error("tendon armature cannot be negative")
    P, S = int(t.mjtWrap.PULLEY), int(t.mjtWrap.SITE)
    for i, (typ, oid, _) in enumerate(te.path):
      prev = te.path[i - 1][0] if i > 0 else None
      nxt = te.path[i + 1][0] if i < sz - 1 else None
      if typ == P:
        if prev == P:
          raise n.error(f"consecutive pulleys in tendon path (pos {i})")
        if nxt is None:
          raise n.error("tendon path ends with pulley")
      elif typ == S:
        if prev in (None, P) and nxt in (None, P):
          raise n.error(f"site {i} in tendon path needs a neighbor that is not a pulley")
        if nxt == S and te.path[i + 1][1] == oid:
          raise n.error(f"site {i} is repeated in tendon path")
      else:
        if prev != S or nxt != S:
          raise n.error(f"geom at pos {i} in tendon path not bracketed by sites")
        if te.armature > 0:
          raise n.error("geom wrapping not supported by tendon armature")

  def _actuator(self, n):
    cls = self._cls(n, "main")
    a = _copy_act(self.act_defaults[cls])
    _apply_actuator(n, a, self._act_ancestors(self.default_parent.get(cls)))
    a.node, a.name = n, n.get("name", "")
    targets = [k for k in ("joint", "jointinparent", "tendon", "site", "body", "cranksite")
               if k in n.attrib]
    if len(targets) != 1:
      raise n.error("actuator needs exactly one transmission target (joint, jointinparent, "
                    "tendon, site, cranksite or body)")
    kind = targets[0]
    for extra, owner in (("refsite", "site"), ("slidersite", "cranksite")):
      if extra in n.attrib and kind != owner:
        raise n.error(f"'{extra}' is only allowed with '{owner}'")
    a.trntype = {"joint": 0, "jointinparent": 1, "cranksite": 2, "tendon": 3, "site": 4,
                 "body": 5}[kind]
    what = {"jointinparent": "joint", "cranksite": "site"}.get(kind, kind)
    a.trnid = [self.find(what, n.attrib[kind], n, f"actuator {kind}"), -1]
    if kind == "site" and "refsite" in n.attrib:
      a.trnid[1] = self.find("site", n.attrib["refsite"], n, "actuator refsite")
    if kind == "cranksite":
      if "slidersite" not in n.attrib:
        raise n.error("slider-crank actuator needs 'slidersite'")
      a.trnid[1] = self.find("site", n.attrib["slidersite"], n, "actuator slidersite")
      if a.cranklength <= 0:
        raise n.error("slider-crank actuator needs a positive 'cranklength'")
    a.plugin, a.pluginprm = None, [0.0] * 5
    if n.tag == "plugin":
      a.plugin = _plugin.resolve(n, self.plugins, self.plugin_declared, self.plugin_implicit,
                                 use="actuator", attrs=ACT_PLUGIN_ATTRS)
    _finish_actuator(self, a)
    if a.plugin is not None:
      a.pluginprm = _plugin.pid_params(n, a.plugin, a.dyntype, a.actdim)
    self.actuators.append(a)

  def _equality(self, n):
    rd, _ = self._reader(n, "main", "equality")
    e = _Obj(node=n, name=n.get("name", ""))
    e.type = {"connect": 0, "weld": 1, "joint": 2, "tendon": 3, "flex": 4,
              "flexstrain": 6}[n.tag]
    e.active = rd.kw("active", _BOOL, True)
    e.solref = rd.vec("solref", SOLREF, 2)
    e.solimp = rd.vec("solimp", SOLIMP)
    data = [0.0] * 12
    data[1] = 1.0
    data[10] = 1.0
    if e.type in (0, 1):
      anchor = floats(n, "anchor", 3)
      if "body1" in n.attrib and (anchor is not None or e.type == 1):
        e.objtype = int(t.mjtObj.BODY)
        e.obj1id = self.find("body", n.attrib["body1"], n, "equality body1")
        e.obj2id = (self.find("body", n.attrib["body2"], n, "equality body2")
                    if "body2" in n.attrib else 0)
        data[0:3] = anchor if anchor is not None else [0.0] * 3
      else:
        if "site1" not in n.attrib or "site2" not in n.attrib:
          raise n.error("needs body1 (+anchor) or site1 and site2")
        e.objtype = int(t.mjtObj.SITE)
        e.obj1id = self.find("site", n.attrib["site1"], n, "equality site1")
        e.obj2id = self.find("site", n.attrib["site2"], n, "equality site2")
        if e.type == 1 and anchor is not None:
          data[0:3] = anchor
        if e.type == 0:
          data = [0.0] * 12   # site-based connect: MuJoCo leaves eq_data unused (zero)
      if e.type == 1:
        rp = floats(n, "relpose", 7)
        if rp is not None:
          data[3:10] = rp
        ts = floats(n, "torquescale", 1)
        if ts is not None:
          data[10] = ts[0]
        if e.objtype == int(t.mjtObj.BODY) and not any(data[6:10]):
          data[11] = 1.0   # MuJoCo 4: set_const derives the relative pose at qpos0
    elif e.type in (4, 6):    # flex edge or strain equality (engine/mjcf/_flex.py)
      _flex.flex_equality(self, n, e)
    else:
      kind = "joint" if e.type == 2 else "tendon"
      if kind + "1" not in n.attrib:
        raise n.error(f"missing attribute '{kind}1'")
      e.objtype = 0   # MuJoCo leaves objtype unset for joint and tendon equalities
      e.obj1id = self.find(kind, n.attrib[kind + "1"], n, f"equality {kind}1")
      e.obj2id = (self.find(kind, n.attrib[kind + "2"], n, f"equality {kind}2")
                  if kind + "2" in n.attrib else -1)
      if kind == "joint":
        for j in (e.obj1id, e.obj2id):
          if j >= 0 and self.all_joints()[j].type not in (2, 3):
            raise n.error("only hinge and slide joints allowed in a joint equality")
      pc = floats(n, "polycoef", 5, 1)
      if pc is not None:
        data[:len(pc)] = pc
    if e.type in (0, 1, 2, 3) and e.obj1id == e.obj2id:
      raise n.error("the same element is both ends of the equality (MuJoCo refuses it)")
    e.data = data
    self.eqs.append(e)

  def _contact(self, n):
    """<pair> and <exclude>: resolved here, mixed and sorted in _assemble._contacts."""
    if n.tag == "pair":
      ids = []
      for k in ("geom1", "geom2"):
        if k not in n.attrib:
          raise n.error(f"missing attribute '{k}'")
        ids.append(self.find("geom", n.attrib[k], n, f"contact pair {k}"))
      rd, _ = self._reader(n, "main")
      condim = rd.int("condim", 3)
      if condim not in (1, 3, 4, 6):
        raise n.error("attribute 'condim': must be 1, 3, 4 or 6")
      # mjs_defaultPair: every attribute has a value, nothing is mixed from the geoms
      self.pairs.append(_Obj(
          node=n, name=n.get("name", ""), geom=ids, condim=condim,
          friction=rd.vec("friction", [1.0, 1.0, 0.005, 0.0001, 0.0001], 5),
          solref=rd.vec("solref", SOLREF, 2),
          solreffriction=rd.vec("solreffriction", [0.0, 0.0], 2),
          solimp=rd.vec("solimp", SOLIMP), margin=rd.num("margin", 0.0),
          gap=rd.num("gap", 0.0), adhesion=rd.num("adhesion", 0.0)))
    else:
      ids = []
      for k in ("body1", "body2"):
        if k not in n.attrib:
          raise n.error(f"missing attribute '{k}'")
        ids.append(self.find("body", n.attrib[k], n, f"contact exclude {k}"))
      self.excludes.append(_Obj(node=n, name=n.get("name", ""), body=ids))

  def _sensor(self, n):
    _sensors.compile_sensor(self, n)
