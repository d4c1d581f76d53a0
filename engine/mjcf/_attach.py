"""MJCF `<attach>` and `<asset><model>`: splice part of another model into this one, as MuJoCo 4.

`expand` replaces every `<attach model= body=|frame= prefix=>` of the parsed tree by a copy of
the named body, frame or (neither given) the whole world body of the child model, in place, so
the compiled order of bodies, geoms, joints, ... is MuJoCo's (its parser attaches while it reads
the world body, appending to the lists of the enclosing body). In the copy every name, every
reference to a name and every default class gets the prefix. Then, as MuJoCo's `mjs_attach`:

- all of the child's assets are copied (prefixed), whether referenced or not;
- the child's default classes are copied (renamed) and its elements keep using them: the
  child's elements never see the parent's defaults (a parent whose top-level `<default>` sets
  attributes gets them moved into a class of their own so that they do not leak in);
- the child's pairs, excludes, tendons, equalities, actuators and sensors, in that order, are
  appended to the parent's sections if every name they refer to (prefixed) exists in the parent
  by then: those that refer into the attached part, and those that refer to nothing (a clock);
- every keyframe of the child is added (name prefixed), holding the child's values for the
  joints, actuators and mocap bodies this attach copied and the parent's defaults elsewhere
  (`AttachedKey`, filled in by the compiler once addresses are known). Inside `<replicate>` it
  sets the state of the first replica.

Without `model` the attach copies a body or frame of this model (self-attach): assets and
default classes are not copied and references to assets keep their names.

The child is compiled with its own `<compiler>` settings in MuJoCo. Here angles are converted
to the parent's `angle` and `eulerseq`, asset file paths are rewritten relative to the child's
file and meshdir/texturedir, and the other settings that change how values are read
(autolimits, inertia options, ...) must equal the parent's (a clear error otherwise).

The child's global attributes (`<option>` and its flags, `<size>`, `<visual><map znear/zfar>`,
`<visual><global realtime>`) meet the parent's as the parent's `<compiler conflict=>` says
(`_merge_globals`, as MuJoCo 4.0 merges attributes): "warning" keeps the
parent's values, "merge" takes the minimum / maximum / union per field and adopts values only
the child wrote, "error" refuses values both wrote differently. The rest of the child's
`<visual>` and its `<statistic>` are ignored, as in MuJoCo.
"""
import math
import os

from numjoco.engine import rotation
from numjoco.engine.mjcf import _node, _replicate, _schema
from numjoco.engine.mjcf._node import Node, floats
from numjoco.engine.mjcf._schema import ACTUATOR_TAGS, ATTRS, attr_key

# attribute -> kind of the element it names
_REFS = {
    "joint": "joint", "joint1": "joint", "joint2": "joint", "jointinparent": "joint",
    "tendon": "tendon", "tendon1": "tendon", "tendon2": "tendon",
    "site": "site", "site1": "site", "site2": "site", "refsite": "site", "cranksite": "site",
    "slidersite": "site", "sidesite": "site",
    "body": "body", "body1": "body", "body2": "body", "subtree1": "body", "subtree2": "body",
    "target": "body", "geom": "geom", "geom1": "geom", "geom2": "geom",
    "actuator": "actuator", "camera": "camera",
    "material": "material", "mesh": "mesh", "hfield": "hfield", "texture": "texture",
}
_ASSET_KINDS = {"material", "mesh", "hfield", "texture"}
_FRAME_KINDS = {"body": "body", "xbody": "body", "geom": "geom", "site": "site",
                "camera": "camera"}
_TREE_KINDS = {"body": "body", "joint": "joint", "freejoint": "joint", "geom": "geom",
               "site": "site", "camera": "camera", "light": "light", "frame": "frame"}
_FILES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")
# the order in which mjCModel::operator+= copies the elements outside the tree
_SECTIONS = (("contact", "pair"), ("contact", "exclude"), ("tendon", None),
             ("equality", None), ("actuator", None), ("sensor", None))
# compiler settings that change how the child's values are read, with MuJoCo's defaults
_COMPILER = {"autolimits": "true", "inertiafromgeom": "auto", "inertiagrouprange": "0 5", "boundmass": "0",
             "boundinertia": "0", "balanceinertia": "false", "alignfree": "false",
             "fitaabb": "false", "settotalmass": "-1", "fusestatic": "false",
             "strippath": "false"}
_PARENT_MAIN = "@main"   # class taking a parent's top-level defaults (see _isolate_main)
_MAX_DEPTH = 20


class AttachedKey(Node):
  """A `<key>` added by an attach: `state` maps field -> [(node, name, values)] of the copied
  elements, found in the compiled model by name (or, renamed by <replicate>, as the first
  element of that name and source line), unnamed ones by identity."""

  __slots__ = ("state",)

  def fill_key(self, c, A, i):
    """Write this key's values into row `i` of the compiled key arrays (`_assemble._keys`
    calls it after the defaults: qpos0, zeros, mocap body poses)."""
    joints = c.all_joints()
    acts = c.actuators
    mocap = [b for b in c.bodies if b.mocap]
    for field, objs, adr in (
        ("qpos", joints, lambda k, o: o.qposadr),
        ("qvel", joints, lambda k, o: o.dofadr),
        ("act", acts, lambda k, o: A["actuator_actadr"][k]),
        ("ctrl", acts, lambda k, o: A["actuator_ctrladr"][k]),
        ("mpos", mocap, lambda k, o: 3 * k),
        ("mquat", mocap, lambda k, o: 4 * k)):
      entries = self.state.get(field)
      if not entries:
        continue
      by_name = {o.name: (k, o) for k, o in enumerate(objs) if o.name}
      by_node = {id(o.node): (k, o) for k, o in enumerate(objs)}
      for node, name, vals in entries:
        hit = by_name.get(name) if name else by_node.get(id(node))
        if hit is None and name:   # renamed by <replicate>: its first replica
          hit = next(((k, o) for k, o in enumerate(objs) if o.name.startswith(name)
                      and (o.node.file, o.node.line) == (node.file, node.line)), None)
        if hit is None:
          continue   # an unnamed element copied by <replicate>
        a = int(adr(*hit))
        if a >= 0:
          A["key_" + field][i, a:a + len(vals)] = vals


# ------------------------------------------------------------------------------------- names

def _kind_names(root):
  """{kind: set of names} of the named elements of a model tree."""
  out = {}

  def add(kind, name):
    if name:
      out.setdefault(kind, set()).add(name)

  def tree(n):
    for c in n.children:
      if c.tag in _TREE_KINDS:
        add(_TREE_KINDS[c.tag], c.get("name"))
      tree(c)

  for sec in root.children:
    if sec.tag == "worldbody":
      tree(sec)
    elif sec.tag == "asset":
      for c in sec.children:
        add(c.tag, c.get("name"))
    elif sec.tag == "tendon":
      for c in sec.children:
        add("tendon", c.get("name"))
    elif sec.tag == "actuator":
      for c in sec.children:
        if c.tag in ACTUATOR_TAGS:
          add("actuator", c.get("name"))
  return out


def _refs(n):
  """(kind, name) of every element that `n` or its children (tendon paths) refer to."""
  out = []
  for key, val in n.attrib.items():
    if not val:
      continue
    if key in _REFS:
      out.append((_REFS[key], val))
    elif key in ("objname", "refname"):
      kind = _FRAME_KINDS.get(n.get("objtype" if key == "objname" else "reftype"))
      if kind:
        out.append((kind, val))
  for c in n.children:
    out += _refs(c)
  return out


# ------------------------------------------------------------------------------------- copying

class _Renamer:
  """How one attach renames: prefix on names and references, class map, file paths."""

  def __init__(self, prefix, classes, self_attach, paths, angles=None):
    self.prefix, self.classes, self.self_attach, self.paths = prefix, classes, self_attach, paths
    self.angles = angles
    self.copies = {}   # id(source node) -> copy

  def attrib(self, node):
    a = dict(node.attrib)
    p = self.prefix
    if a.get("name"):
      a["name"] = p + a["name"]
    for key, val in node.attrib.items():
      if not val:
        continue
      if key in _REFS:
        if not (self.self_attach and _REFS[key] in _ASSET_KINDS):
          a[key] = p + val
      elif key in ("objname", "refname"):
        a[key] = p + val
      elif key in ("class", "childclass") and self.classes is not None:
        a[key] = self.classes(val)
      elif key in _FILES and self.paths is not None:
        a[key] = self.paths(node, val)
    if self.angles is not None:
      self.angles(node, a)
    return a

  def copy(self, node, parent):
    c = Node(node.tag, self.attrib(node), node.file, node.line, parent)
    self.copies[id(node)] = c
    c.children = [self.copy(k, c) for k in node.children]
    return c


def _copy_defaults(renamer, node, parent, name):
  """Copy of a child's <default> node as class `name`, nested classes renamed, asset
  references prefixed."""
  c = Node("default", {"class": name}, node.file, node.line, parent)
  for k in node.children:
    if k.tag == "default":
      c.children.append(_copy_defaults(renamer, k, c, renamer.classes(k.get("class", ""))))
    else:
      a = dict(k.attrib)
      for key in _ASSET_KINDS:
        if a.get(key):
          a[key] = renamer.prefix + a[key]
      if renamer.angles is not None:
        renamer.angles(k, a, default=True)
      c.children.append(Node(k.tag, a, k.file, k.line, c))
  return c


# ------------------------------------------------------------------------------------- defaults

def _isolate_main(root):
  """Move the parent's top-level default attributes into class `_PARENT_MAIN` used by every
  element of the parent that used 'main', so attached classes (nested under main) do not
  inherit them. Done once per model, only when main sets something."""
  tops = [n for n in root.children if n.tag == "default"]
  if not any(k.tag != "default" for n in tops for k in n.children):
    return
  if any(k.get("class") == _PARENT_MAIN for n in tops for k in n.children):
    return
  first = tops[0]
  moved = Node("default", {"class": _PARENT_MAIN}, first.file, first.line, first)
  for n in tops:
    for k in n.children:
      k.parent = moved
      moved.children.append(k)
    n.children = []
  first.children = [moved]

  def rename(n):
    for c in n.children:
      for key in ("class", "childclass"):
        if c.get(key) == "main":
          c.attrib[key] = _PARENT_MAIN
      rename(c)

  rename(root)
  # elements that used main implicitly: the world's children (their subtrees inherit) and
  # the elements of the other sections that take a class
  for sec in root.children:
    if sec.tag in ("default", "keyframe", "sensor", "custom", "extension"):
      continue
    for c in sec.children:
      if sec.tag == "worldbody" and c.tag in ("body", "frame", "replicate"):
        c.attrib.setdefault("childclass", _PARENT_MAIN)
      elif c.tag != "attach" and "class" in ATTRS.get(attr_key(c), ()):
        c.attrib.setdefault("class", _PARENT_MAIN)


def _top_default(root):
  """The parent's top-level <default> (created when it has none)."""
  for n in root.children:
    if n.tag == "default":
      return n
  n = Node("default", {}, root.file, root.line, root)
  root.children.insert(0, n)
  return n


def _section(root, tag):
  """The parent's last section `tag` (created at the end when it has none)."""
  for n in reversed(root.children):
    if n.tag == tag:
      return n
  n = Node(tag, {}, root.file, root.line, root)
  root.children.append(n)
  return n


# ------------------------------------------------------------------------------------- models

class _Child:
  """One `<asset><model>`: its parsed tree (attaches and replicates expanded) and, when it has
  keyframes, its own compilation (for the layout of its key vectors)."""

  def __init__(self, node, root, assets):
    self.node, self.root, self.assets, self._compiled = node, root, assets, None
    self.events = []   # per attach of this model: the keys it added
    self.last = {}   # id(node) -> the last attach that copied it

  def compiled(self):
    if self._compiled is None:
      from numjoco.engine.mjcf.compile import Compiler
      c = Compiler(self.root)
      c.assets = self.assets
      sizes, arrays, _ = c.run()
      self._compiled = (c, arrays)
    return self._compiled


def _read_model(node, assets, depth):
  """Parse the file of <model file=...> into a checked tree with its own attaches expanded."""
  name = node.get("file")
  if not name:
    raise node.error("missing attribute 'file'")
  text, path = _node.read_referenced(node, name, assets, "model file")
  root = _node.read_text(text, path, assets)
  if root.tag != "mujoco":
    raise node.error(f"model file '{name}': root element must be <mujoco>")
  expand(root, assets, depth + 1)
  _replicate.expand(root)
  _schema.check(root)
  return root


def _models(root, assets, depth):
  """{name: _Child} of the <asset><model> elements, which are removed from the tree."""
  out = {}
  for sec in root.children:
    if sec.tag != "asset":
      continue
    keep = []
    for n in sec.children:
      if n.tag != "model":
        keep.append(n)
        continue
      for key in n.attrib:
        if key not in ("name", "file", "content_type"):
          raise n.error(f"unknown attribute '{key}'")
      if n.get("content_type", "text/xml") != "text/xml":
        raise n.error("attribute 'content_type': only 'text/xml' models can be attached")
      if depth > _MAX_DEPTH:
        raise n.error("model nesting too deep (a model that attaches itself?)")
      child = _Child(n, _read_model(n, assets, depth), assets)
      name = n.get("name") or child.root.get("model", "")
      if not name:
        raise n.error("model has no name: give it a 'name' (or the file a <mujoco model=...>)")
      if name in out:
        raise n.error(f"repeated model name '{name}'")
      out[name] = child
    sec.children = keep
  return out


def _compiler_settings(root):
  """{setting: value} of the `_COMPILER` settings, angle and eulerseq, and the asset
  directories of a model."""
  out = dict(_COMPILER, angle="degree", eulerseq="xyz")
  dirs = {"meshdir": "", "texturedir": ""}
  for n in root.children:
    if n.tag != "compiler":
      continue
    for k in out:
      if k in n.attrib:
        out[k] = " ".join(n.attrib[k].split())
    for k in dirs:
      dirs[k] = n.get(k, n.get("assetdir", dirs[k]))
  return out, dirs


def _path_mapper(parent, child):
  """Function rewriting a child's asset file names so the parent's compiler finds them, or
  None when the child sits in the parent's directory with the same asset directories."""
  _, pdirs = _compiler_settings(parent)
  _, cdirs = _compiler_settings(child)
  pbase = os.path.dirname(os.path.abspath(parent.file)) if not parent.file.startswith("<") \
      else os.getcwd()
  cbase = os.path.dirname(os.path.abspath(child.file))
  if pbase == cbase and pdirs == cdirs:
    return None

  def rewrite(node, val):
    d = cdirs["texturedir"] if node.tag == "texture" else cdirs["meshdir"]
    return os.path.normpath(os.path.join(cbase, d, val))

  return rewrite


# ------------------------------------------------------------------------------------- angles

def _default_table(root):
  """{class: {tag: attrib}} of a model's defaults, inherited as the compiler does."""
  table = {"main": {}}

  def walk(n, cls):
    for c in n.children:
      if c.tag == "default":
        name = c.get("class", "")
        table[name] = {k: dict(v) for k, v in table[cls].items()}
        walk(c, name)
      else:
        table[cls].setdefault(c.tag, {}).update(c.attrib)

  for n in root.children:
    if n.tag == "default":
      walk(n, "main")
  return table


def _angle_converter(parent, child):
  """Function rewriting the angles of a child's element (attrib dict, in place) from the
  child's <compiler angle/eulerseq> to the parent's, or None when they agree. Orientations
  keep their form (euler becomes a quat when the sequences differ); hinge and ball joints get
  their range, ref, springref and springyield written out, defaults included."""
  ps, _ = _compiler_settings(parent)
  cs, _ = _compiler_settings(child)
  if ps["angle"] not in ("degree", "radian") or cs["angle"] not in ("degree", "radian"):
    return None   # the compiler reports the bad keyword
  pdeg, cdeg = ps["angle"] == "degree", cs["angle"] == "degree"
  if pdeg == cdeg and ps["eulerseq"] == cs["eulerseq"]:
    return None
  scale = 1.0 if pdeg == cdeg else (180.0 / math.pi if pdeg else math.pi / 180.0)
  table = _default_table(child)
  fmt = lambda vals: " ".join(repr(v) for v in vals)   # noqa: E731

  def convert(node, a, default=False):
    if "euler" in a:
      vals = floats(node, "euler", 3, attrib=a)
      if ps["eulerseq"] != cs["eulerseq"]:
        q = rotation.orientation("euler", vals, cdeg, cs["eulerseq"])
        if isinstance(q, str):
          raise node.error(f"attribute 'euler': {q}")
        del a["euler"]
        a["quat"] = fmt(q)
      else:
        a["euler"] = fmt([v * scale for v in vals])
    if "axisangle" in a:
      vals = floats(node, "axisangle", 4, attrib=a)
      a["axisangle"] = fmt(vals[:3] + [vals[3] * scale])
    if node.tag != "joint" or default or scale == 1.0:
      return
    cls = node.get("class") or _inherited_class(node)
    eff = dict(table.get(cls, {}).get("joint", {}))
    eff.update(node.attrib)
    jtype = eff.get("type", "hinge")
    keys = {"hinge": ("range", "ref", "springref", "springyield"),
            "ball": ("range", "springyield")}.get(jtype, ())
    for k in keys:
      if k in eff:
        a[k] = fmt([v * scale for v in floats(node, k, attrib=eff)])

  return convert


# ------------------------------------------------------------------------------------- attach

def _find(tree, tag, name, skip=None):
  """First element `tag` called `name` below `tree` (document order), not inside `skip`."""
  for c in tree.children:
    if c is skip:
      continue
    if c.tag == tag and c.get("name") == name:
      return c
    hit = _find(c, tag, name, skip)
    if hit is not None:
      return hit
  return None


def _ancestors(node):
  while node.parent is not None:
    node = node.parent
    yield node


def _inherited_class(node):
  """The childclass a node of a child model inherits from its ancestors ('main' if none)."""
  for a in _ancestors(node):
    if a.tag in ("body", "frame") and a.get("childclass"):
      return a.get("childclass")
  return "main"


class _State:
  """Per-parse state: the parent root, its models, its names, a counter for class names."""

  def __init__(self, root, models):
    self.root, self.models, self.count = root, models, 0
    self.names = _kind_names(root)
    self.isolated = False

  def has(self, kind, name):
    return name in self.names.get(kind, ())

  def add_names(self, nodes_by_kind):
    for kind, names in nodes_by_kind.items():
      self.names.setdefault(kind, set()).update(names)


def _attach(st, at):
  """Replace the <attach> node `at` by the copied elements; return them."""
  for key in at.attrib:
    if key not in ("model", "body", "frame", "prefix"):
      raise at.error(f"unknown attribute '{key}'")
  if at.children:
    raise at.children[0].error("<attach> takes no child elements")
  if "prefix" not in at.attrib:
    raise at.error("missing attribute 'prefix'")
  prefix = at.get("prefix")
  if "body" in at.attrib and "frame" in at.attrib:
    raise at.error("give only one of 'body' and 'frame'")
  tag = "body" if "body" in at.attrib else ("frame" if "frame" in at.attrib else None)
  what = at.get(tag) if tag else None
  self_attach = "model" not in at.attrib
  if self_attach:
    if tag is None:
      raise at.error("either 'body' or 'frame' attribute must be specified for self-attach")
    if st.has(tag, prefix + what):
      raise at.error(f"cannot self-attach: element {prefix + what} already exists")
    world = next(c for c in st.root.children if c.tag == "worldbody")
    src = _find(world, tag, what, skip=at)
    if src is None:
      raise at.error(f"could not find {tag} '{what}' in the current model for self-attachment")
    if any(a is src for a in _ancestors(at)):
      raise at.error(f"cannot self-attach {tag} '{what}': it contains this <attach>")
    child, croot = None, st.root
  else:
    mname = at.get("model")
    if mname not in st.models:
      raise at.error(f"could not find model '{mname}'")
    child = st.models[mname]
    croot = child.root
    if tag is not None and st.has(tag, prefix + what):
      raise at.error(f"cannot attach: element {what} already exists with prefix {prefix}")
    if tag is not None:
      cworld = [c for c in croot.children if c.tag == "worldbody"]
      src = _find(cworld[0], tag, what) if cworld else None
      if src is None:
        raise at.error(f"could not find {tag} '{what}' in model asset '{mname}'")
    else:
      src = None
    _check_compiler(at, st.root, croot)
    _merge_globals(at, st.root, croot)

  classes = None
  k = st.count
  st.count += 1
  if not self_attach:
    classes = lambda cls: f"{prefix}{cls}@attach{k}"   # noqa: E731
  ren = _Renamer(prefix, classes, self_attach, None if self_attach else
                 _path_mapper(st.root, croot),
                 None if self_attach else _angle_converter(st.root, croot))

  # the tree part, in place of the <attach>
  parent = at.parent
  if src is None:   # the whole world body, in a new frame
    new = Node("frame", {}, at.file, at.line, parent)
    for w in croot.children:
      if w.tag == "worldbody":
        new.children += [ren.copy(c, new) for c in w.children]
  else:
    new = ren.copy(src, parent)
  # the copy keeps the defaults of where it came from, not those around the <attach>
  inherited = _inherited_class(src) if src is not None else "main"
  new.attrib.setdefault("childclass", classes(inherited) if classes else inherited)
  i = parent.children.index(at)
  parent.children[i] = new
  st.add_names(_kind_names_tree(new))

  if not self_attach:
    _copy_defaults_and_assets(st, croot, ren, classes)
  _copy_sections(st, croot, ren, classes)
  if child is not None:
    _copy_keys(st, child, ren, prefix)
  return new


def _kind_names_tree(n):
  out = {}
  if n.tag in _TREE_KINDS and n.get("name"):
    out.setdefault(_TREE_KINDS[n.tag], set()).add(n.get("name"))
  for c in n.children:
    for kind, names in _kind_names_tree(c).items():
      out.setdefault(kind, set()).update(names)
  return out


def _check_compiler(at, parent, child):
  """Error when the child's compiler reads values differently from the parent's."""
  ps, _ = _compiler_settings(parent)
  cs, _ = _compiler_settings(child)
  for k in _COMPILER:
    if ps[k] != cs[k]:
      raise at.error(f"the attached model's <compiler {k}=\"{cs[k]}\"> differs from this "
                     f"model's ({ps[k]}): attaching models compiled with other settings is "
                     "not supported")


# ------------------------------------------------------------------- global attribute merging

# (section, element, attribute) -> how `conflict="merge"` combines two written values; values
# written by the child alone are adopted. Fields not listed are the parent's in every mode.
_MERGE = {}
for _k in ("timestep", "tolerance", "ls_tolerance", "noslip_tolerance", "ccd_tolerance",
           "sleep_tolerance"):
  _MERGE[("option", None, _k)] = "min"
for _k in ("iterations", "ls_iterations", "noslip_iterations", "ccd_iterations",
           "sdf_iterations", "sdf_initpoints"):
  _MERGE[("option", None, _k)] = "max"
for _k in ("gravity", "wind", "magnetic", "density", "viscosity", "integrator", "cone",
           "jacobian", "solver", "impratio", "o_margin", "o_solref", "o_solimp", "o_friction"):
  _MERGE[("option", None, _k)] = "error"
# njmax / nconmax are not in MuJoCo's table; MuJoCo keeps the larger
for _k in ("memory", "nkey", "nuserdata", "njmax", "nconmax", "nuser_body", "nuser_jnt",
           "nuser_geom", "nuser_site", "nuser_cam", "nuser_tendon", "nuser_actuator",
           "nuser_sensor"):
  _MERGE[("size", None, _k)] = "max"
_MERGE[("visual", "map", "znear")] = "min"
_MERGE[("visual", "global", "realtime")] = "min"
_MERGE[("visual", "map", "zfar")] = "max"
_CONFLICT = ("warning", "merge", "error")


def _written(root, sec, elem, key):
  """The value the model writes for a global attribute (the last one), or None."""
  val = None
  for n in root.children:
    if n.tag != sec:
      continue
    nodes = [n] if elem is None else [c for c in n.children if c.tag == elem]
    for c in nodes:
      if key in c.attrib:
        val = c.get(key)
  return val


def _global_default(sec, elem, key):
  from numjoco.engine.mjcf.compile import default_option
  from numjoco.engine.visual import VISUAL_DEFAULTS
  if sec == "visual":
    return str(VISUAL_DEFAULTS[elem][key])
  if sec == "size":
    return "0" if key in ("nkey", "nuserdata") else "-1"
  extra = {"sleep_tolerance": "0.0001", "sdf_iterations": "10", "sdf_initpoints": "40",
           "integrator": "Euler", "cone": "pyramidal", "jacobian": "auto", "solver": "Newton"}
  if key in extra:
    return extra[key]
  return " ".join(f"{v:g}" for v in default_option()[key])


def _as_values(text):
  """Numbers of an attribute value (keywords and memory sizes stay strings)."""
  try:
    return tuple(float(x) for x in text.split())
  except ValueError:
    return text.strip()


def _set_written(root, sec, elem, key, value, line_of):
  """Write `key=value` into the parent's (last) section element, creating it when missing."""
  secs = [n for n in root.children if n.tag == sec]
  if secs:
    node = secs[-1]
  else:
    node = Node(sec, {}, line_of.file, line_of.line, root)
    root.children.insert(0, node)
  if elem is not None:
    kids = [c for c in node.children if c.tag == elem]
    if kids:
      node = kids[-1]
    else:
      kid = Node(elem, {}, line_of.file, line_of.line, node)
      node.children.append(kid)
      node = kid
  node.attrib[key] = value


def _flags(root):
  """{flag: 'enable'|'disable'} the model writes (the last value of each)."""
  out = {}
  for n in root.children:
    if n.tag == "option":
      for f in n.children:
        if f.tag == "flag":
          out.update(f.attrib)
  return out


def _flag_set(key, value):
  """A flag is "set" when it differs from its default (disable flags default to enable)."""
  from numjoco.engine.mjcf.compile import ENABLE_FLAGS
  return value == ("enable" if key in ENABLE_FLAGS else "disable")


def _groups(text):
  return set() if text is None else {int(float(x)) for x in text.split()}


def _merge_globals(at, parent, child):
  """Resolve the child's global attributes against the parent's per `<compiler conflict>`."""
  mode = "warning"
  for n in parent.children:
    if n.tag == "compiler" and "conflict" in n.attrib:
      mode = n.get("conflict")
      if mode not in _CONFLICT:
        raise n.error(f"invalid keyword '{mode}' for attribute 'conflict' (one of "
                      f"{', '.join(_CONFLICT)})")
  notes, errors = [], []
  for (sec, elem, key), how in _MERGE.items():
    cval = _written(child, sec, elem, key)
    if cval is None:
      continue
    pval = _written(parent, sec, elem, key)
    pcur = pval if pval is not None else _global_default(sec, elem, key)
    if _as_values(cval) == _as_values(pcur):
      continue
    what = f"{key}: parent has {pcur}{' (default)' if pval is None else ''}, child has {cval}"
    if pval is None:
      if mode == "merge":
        _set_written(parent, sec, elem, key, cval, at)
        notes.append(what + ", adopting child value")
      else:
        notes.append(what + ", keeping parent value")
    elif mode == "warning":
      notes.append(what + ", keeping parent value")
    elif mode == "error" or how == "error":
      errors.append(what)
    else:
      a, b = _as_values(pval), _as_values(cval)
      if isinstance(a, str) or isinstance(b, str):   # a memory size with units
        errors.append(what)
        continue
      take_child = (b < a) if how == "min" else (b > a)
      word = "minimum" if how == "min" else "maximum"
      if take_child:
        _set_written(parent, sec, elem, key, cval, at)
        notes.append(f"{what}, taking the {word}")
      else:
        notes.append(f"{what}, keeping parent value (the {word})")
  pflags = _flags(parent)
  for key, cval in _flags(child).items():
    cset = _flag_set(key, cval)
    if key not in pflags:
      if mode == "merge" and cset:
        _set_written(parent, "option", "flag", key, cval, at)
        notes.append(f"flag '{key.capitalize()}': added from child")
      continue
    pset = _flag_set(key, pflags[key])
    if pset == cset:
      continue
    what = (f"flag '{key.capitalize()}': parent {'set' if pset else 'unset'}, child "
            f"{'set' if cset else 'unset'}")
    if mode == "warning":
      notes.append(what + ", keeping parent")
    elif mode == "error":
      errors.append(what)
    elif cset:
      _set_written(parent, "option", "flag", key, cval, at)
      notes.append(f"flag '{key.capitalize()}': added from child")
  cgroups = _written(child, "option", None, "actuatorgroupdisable")
  if cgroups is not None:
    pg = _groups(_written(parent, "option", None, "actuatorgroupdisable"))
    cg = _groups(cgroups)
    # a group is only ever written as disabled, so groups never conflict: "merge" adds the
    # child's, the other modes keep the parent's without a word (as 4.0)
    if mode == "merge" and cg - pg:
      _set_written(parent, "option", None, "actuatorgroupdisable",
                   " ".join(str(g) for g in sorted(pg | cg)), at)
      notes += [f"disableactuator group {g}: added from child" for g in sorted(cg - pg)]
  head = f"attach conflict (policy '{mode}')"
  if errors:
    raise at.error(head + ": " + "; ".join(errors))
  if notes:
    _node.warn(at, head + ": " + "; ".join(notes))


def _copy_defaults_and_assets(st, croot, ren, classes):
  """The child's default classes (under the parent's main) and all its assets, prefixed."""
  if not st.isolated:
    _isolate_main(st.root)
    st.isolated = True
  tops = [n for n in croot.children if n.tag == "default"]
  top = _top_default(st.root)
  main = None
  for n in tops:
    d = _copy_defaults(ren, n, top, classes("main"))
    if main is None:
      main = d
      top.children.append(d)
    else:
      for c in d.children:
        c.parent = main
      main.children += d.children
  if main is None:
    top.children.append(Node("default", {"class": classes("main")}, croot.file, croot.line,
                             top))
  for sec_tag in ("asset", "deformable"):    # skins may sit in either (only skins in the
    assets = [c for n in croot.children if n.tag == sec_tag for c in n.children]   # latter)
    if not assets:
      continue
    sec = _section(st.root, sec_tag)
    new = []
    for a in assets:
      c = ren.copy(a, sec)
      if not c.get("name") and a.get("file") and a.tag in ("mesh", "hfield", "texture", "skin"):
        # named after its file, then prefixed (MuJoCo names it before the namespace)
        c.attrib["name"] = ren.prefix + os.path.splitext(os.path.basename(a.get("file")))[0]
      if "class" not in c.attrib and a.tag in ("material", "mesh", "texture"):
        c.attrib["class"] = classes("main")
      if a.tag == "skin" and a.get("file"):
        # the bone names read from its SKN file take the prefix too (mjCSkin::NameSpace)
        c.attrib[_node.SKIN_PREFIX] = ren.prefix + a.get(_node.SKIN_PREFIX, "")
      new.append(c)
      if c.get("name"):
        st.names.setdefault(a.tag, set()).add(c.get("name"))
    sec.children += new


def _copy_sections(st, croot, ren, classes):
  """The child's elements outside the tree whose references all resolve, appended."""
  for sec_tag, only in _SECTIONS:
    srcs = [c for n in croot.children if n.tag == sec_tag for c in n.children
            if only is None or c.tag == only]
    new = []
    for s in srcs:
      if all(st.has(kind, ren.prefix + name if not (ren.self_attach and kind in _ASSET_KINDS)
                    else name) for kind, name in _refs(s)):
        new.append(s)
    if not new:
      continue
    sec = _section(st.root, sec_tag)
    for s in new:
      c = ren.copy(s, sec)
      if classes is not None and "class" not in c.attrib and sec_tag not in ("sensor",) \
          and s.tag != "exclude":
        c.attrib["class"] = classes("main")
      sec.children.append(c)
      kind = "tendon" if sec_tag == "tendon" else (
          "actuator" if sec_tag == "actuator" and s.tag in ACTUATOR_TAGS else None)
      if kind and c.get("name"):
        st.names.setdefault(kind, set()).add(c.get("name"))


def _copy_keys(st, child, ren, prefix):
  """One `AttachedKey` per keyframe of the child, and the child's key values of the joints,
  actuators and mocap bodies this attach copied. As in MuJoCo, a copy takes the values of the keys of this attach and of the
  earlier attaches of the same model that did not copy that element."""
  every = [k for n in child.root.children if n.tag == "keyframe" for k in n.children
           if k.tag == "key"]
  keys = [k for k in every if not hasattr(k, "fill_key")]
  pending = [k for k in every if hasattr(k, "fill_key")]
  if not every:
    return
  c, A = child.compiled()
  mocap = [b for b in c.bodies if b.mocap]
  fields = (("qpos", c.all_joints(), lambda i, o: (o.qposadr, _NQ[o.type])),
            ("qvel", c.all_joints(), lambda i, o: (o.dofadr, _NV[o.type])),
            ("act", c.actuators, lambda i, o: (int(A["actuator_actadr"][i]),
                                               int(A["actuator_actnum"][i]))),
            ("ctrl", c.actuators, lambda i, o: (int(A["actuator_ctrladr"][i]),
                                                int(A["actuator_ctrlnum"][i]))),
            ("mpos", mocap, lambda i, o: (3 * i, 3)),
            ("mquat", mocap, lambda i, o: (4 * i, 4)))
  cls = AttachedKey
  sec = _section(st.root, "keyframe")
  made = []
  for key in keys:
    attrib = {"name": prefix + key.get("name", "")}
    if "time" in key.attrib:
      attrib["time"] = key.get("time")
    k = cls("key", attrib, key.file, key.line, sec)
    k.state = {}
    sec.children.append(k)
    made.append(k)
  child.events.append(made)
  now = len(child.events) - 1
  since = {}
  for field, objs, span in fields:
    for i, o in enumerate(objs):
      copy = ren.copies.get(id(o.node))
      if copy is None:
        continue
      first = since.setdefault(id(o.node), child.last.get(id(o.node), -1) + 1)
      a, n = span(i, o)
      if a < 0 or n == 0:
        continue
      name = copy.get("name", "")
      for ev in range(first, now + 1):
        for key, k in zip(keys, child.events[ev]):
          vals = floats(key, field)
          if vals is not None:
            k.state.setdefault(field, []).append((copy, name, vals[a:a + n]))
  for node_id in since:
    child.last[node_id] = now
  # keys the child got from its own attaches: added under their names, values carried along
  for key in pending:
    k = cls("key", dict(key.attrib), key.file, key.line, sec)
    k.state = {}
    for field, entries in key.state.items():
      for node, name, vals in entries:
        copy = ren.copies.get(id(node))
        if copy is not None:
          k.state.setdefault(field, []).append((copy, copy.get("name", ""), vals))
    sec.children.append(k)


_NQ = {0: 7, 1: 4, 2: 1, 3: 1}
_NV = {0: 6, 1: 3, 2: 1, 3: 1}


def expand(root, assets=None, depth=0):
  """Replace every <attach> below `root` (document order) and drop the <asset><model>s."""
  models = _models(root, assets, depth)
  st = None

  def walk(node):
    nonlocal st
    i = 0
    while i < len(node.children):
      c = node.children[i]
      if c.tag == "attach":
        if st is None:
          st = _State(root, models)
        c = _attach(st, c)
      walk(c)
      i += 1

  for sec in root.children:
    if sec.tag == "worldbody":
      walk(sec)
  return root
