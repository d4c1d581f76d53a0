"""MJCF reading: XML -> a tree of `Node`s that remember their source file and line.

Includes are spliced in here, and every element and attribute is checked against the subset of
the MJCF schema this engine understands, so later stages can report errors as
``file.xml:LINE: <tag name="...">: message``.
"""
import os

from lxml import etree

from numjoco.engine.visual import VISUAL_DEFAULTS


class MjcfError(ValueError):
  """An error in an MJCF model, located by file, line and element."""

  def __init__(self, node, msg, file=None, line=None):
    if node is not None:
      file, line = node.file, node.line
      name = node.attrib.get("name")
      elem = f"<{node.tag} name=\"{name}\">" if name else f"<{node.tag}>"
      text = f"{os.path.basename(file)}:{line}: {elem}: {msg}"
    else:
      text = f"{os.path.basename(file or '<string>')}:{line}: {msg}"
    super().__init__(text)
    self.file, self.line, self.node, self.msg = file, line, node, msg


class MjcfWarning(UserWarning):
  """Something in an MJCF model was ignored (it changes only the drawing, not the physics)."""


def warn(node, msg):
  """Warn about an ignored part of a model, located like `MjcfError`."""
  import warnings
  name = node.attrib.get("name")
  elem = f"<{node.tag} name=\"{name}\">" if name else f"<{node.tag}>"
  warnings.warn_explicit(f"{os.path.basename(node.file or '<string>')}:{node.line}: {elem}: "
                         f"{msg}", MjcfWarning, node.file or "<string>", node.line or 0)


class Node:
  """One MJCF element: tag, attributes (strings), children, source file and line."""

  __slots__ = ("tag", "attrib", "children", "file", "line", "parent")

  def __init__(self, tag, attrib, file, line, parent=None):
    self.tag, self.attrib, self.file, self.line = tag, dict(attrib), file, line
    self.children, self.parent = [], parent

  def get(self, key, default=None):
    return self.attrib.get(key, default)

  def error(self, msg):
    return MjcfError(self, msg)

  def __repr__(self):
    return f"Node({self.tag!r}, {self.file}:{self.line})"


# ------------------------------------------------------------------------------------- schema

# set by <attach> on a skin copied from an SKN file: the prefix its bones' body names take
SKIN_PREFIX = "_attach_prefix"

_ORIENT = "quat axisangle xyaxes zaxis euler"
_JOINT = ("type group pos axis springdamper limited actuatorfrclimited solreflimit solimplimit "
          "solreffriction solimpfriction stiffness range actuatorfrcrange actuatorgravcomp "
          "margin ref springref springyield armature damping frictionloss user")
_GEOM = ("type contype conaffinity condim group priority size material friction mass density "
         "shellinertia solmix solref solimp margin gap surfacevel adhesion fromto pos hfield "
         "mesh fitscale rgba fluidshape fluidcoef user " + _ORIENT)
_SITE = "type group pos material size fromto rgba user " + _ORIENT
_CAMERA = ("projection fovy ipd resolution output pos mode target focal focalpixel principal "
           "principalpixel sensorsize orthographic user " + _ORIENT)
_LIGHT = ("directional type castshadow active pos dir bulbradius intensity range attenuation "
          "cutoff softness exponent ambient diffuse specular mode target texture")
_ACT_COMMON = ("group ctrllimited forcelimited actlimited ctrlrange forcerange actrange "
               "lengthrange gear cranklength user damping armature actearly nsample interp delay")
_ACT_EXTRA = {
    "general": "dyntype gaintype biastype dynprm gainprm biasprm actdim input velrange ffrange "
               "inheritrange",
    "motor": "",
    "position": "kp kv dampratio timeconst inheritrange",
    "velocity": "kv",
    "intvelocity": "kp kv dampratio inheritrange",
    "damper": "kv",
    "cylinder": "timeconst area diameter bias",
    "muscle": "timeconst tausmooth range force scale lmin lmax vmax fpmax fvmax",
    "adhesion": "gain",
}
# MuJoCo 4's newer shortcuts take a smaller common set (its schema rejects the rest: a dcmotor's
# force limits come from `saturation`, its activation layout from its features)
_ACT_COMMON_NEW = ("group ctrllimited ctrlrange lengthrange gear cranklength user damping "
                   "armature nsample interp delay")
_ACT_EXTRA_NEW = {
    "pid": ("forcelimited forcerange kp kv dampratio ki imax slewmax input posrange velrange "
            "ffrange inheritrange"),
    "dcmotor": ("resistance motorconst nominal inductance thermal saturation cogging lugre input "
                "controller"),
}
_ACT_ORIENTATION = "group nsample interp delay forcelimited ctrlrange forcerange user kp kv " \
                   "dampratio input"
ACTUATOR_TAGS = tuple(_ACT_EXTRA) + tuple(_ACT_EXTRA_NEW) + ("orientation",)


def _act_attrs(tag):
  """Attributes of actuator element `tag` (without target and name/class)."""
  if tag == "orientation":
    return _ACT_ORIENTATION
  if tag in _ACT_EXTRA_NEW:
    return _ACT_COMMON_NEW + " " + _ACT_EXTRA_NEW[tag]
  return _ACT_COMMON + " " + _ACT_EXTRA[tag]
_ACT_TARGET = "name class joint jointinparent tendon site body refsite cranksite slidersite"
# <actuator><plugin> besides plugin/instance (MuJoCo's schema, actuator_plugin); "plugin" is a
# free section here, so the compiler checks these (engine/mjcf/_plugin.py resolve)
ACT_PLUGIN_ATTRS = set(f"{_ACT_COMMON} {_ACT_TARGET} actdim dyntype dynprm".split())
_MATERIAL = ("texture texrepeat texuniform emission specular shininess reflectance metallic "
             "roughness rgba")
_TENDON = ("group limited actuatorfrclimited range actuatorfrcrange solreflimit solimplimit "
           "solreffriction solimpfriction frictionloss springlength width material margin "
           "stiffness springyield damping armature user rgba")
_EQ = "active solref solimp"
_TEXTURE = ("type colorspace content_type file gridsize gridlayout fileright fileleft fileup "
            "filedown filefront fileback builtin rgb1 rgb2 mark markrgb random width height "
            "hflip vflip nchannel embed")

# Attributes of elements that may appear inside <default>.
DEFAULT_ATTRS = {
    "joint": _JOINT, "geom": _GEOM, "site": _SITE, "camera": _CAMERA, "light": _LIGHT,
    "material": _MATERIAL, "tendon": _TENDON, "equality": _EQ, "mesh": "scale maxhullvert inertia",
    "texture": _TEXTURE,
    "pair": "condim friction solref solreffriction solimp gap margin adhesion",
    **{t: _act_attrs(t) for t in ACTUATOR_TAGS},
}
DEFAULT_ATTRS = {k: set(v.split()) for k, v in DEFAULT_ATTRS.items()}

_FLAGS = ("constraint equality frictionloss limit contact spring damper gravity clampctrl "
          "warmstart filterparent actuation refsafe sensor midphase eulerdamp autoreset "
          "nativeccd island multiccd override energy fwdinv invdiscrete sleep diagexact")

# Attributes of regular (non-default) elements; None means "anything" (ignored sections).
ATTRS = {
    "mujoco": "model",
    "compiler": ("autolimits boundmass boundinertia settotalmass balanceinertia strippath "
                 "coordinate angle fitaabb eulerseq meshdir texturedir discardvisual usethread "
                 "fusestatic inertiafromgeom inertiagrouprange saveinertial assetdir alignfree conflict"),
    "option": ("timestep impratio tolerance ls_tolerance noslip_tolerance ccd_tolerance "
               "sleep_tolerance gravity wind magnetic density viscosity o_margin o_solref "
               "o_solimp o_friction integrator cone jacobian solver iterations ls_iterations "
               "noslip_iterations ccd_iterations sdf_iterations sdf_initpoints "
               "actuatorgroupdisable"),
    "flag": _FLAGS,
    "size": ("memory njmax nconmax nstack nuserdata nkey nuser_body nuser_jnt nuser_geom "
             "nuser_site nuser_cam nuser_tendon nuser_actuator nuser_sensor"),
    "include": "file",
    "default": "class",
    "body": "name childclass pos mocap gravcomp user sleep fuse " + _ORIENT,
    "worldbody": "",
    "frame": "name childclass pos " + _ORIENT,
    "inertial": "pos mass diaginertia fullinertia " + _ORIENT,
    "joint": "name class " + _JOINT,
    "freejoint": "name group align",
    "geom": "name class " + _GEOM,
    "site": "name class " + _SITE,
    "camera": "name class " + _CAMERA,
    "light": "name class " + _LIGHT,
    "material": "name class " + _MATERIAL,
    "fixed": "name class " + _TENDON,
    "tendon:joint": "joint coef",
    "spatial": "name class " + _TENDON,
    "spatial:site": "site",
    "spatial:geom": "geom sidesite",
    "pulley": "divisor",
    "pair": "name class geom1 geom2 condim friction solref solreffriction solimp gap margin "
            "adhesion",
    "exclude": "name body1 body2",
    "connect": "name class body1 body2 site1 site2 anchor " + _EQ,
    "weld": "name class body1 body2 site1 site2 anchor relpose torquescale " + _EQ,
    "eq:joint": "name class joint1 joint2 polycoef " + _EQ,
    "eq:tendon": "name class tendon1 tendon2 polycoef " + _EQ,
    "eq:flex": "name class flex " + _EQ,
    "key": "name time qpos qvel act ctrl mpos mquat plastic",
    "hfield": "name content_type file nrow ncol elevation size",
    "mesh": ("name class content_type file vertex normal texcoord face refpos refquat scale "
             "smoothnormal maxhullvert inertia builtin params material"),
    "layer": "texture role",
    "skin": "name file material rgba inflate vertex texcoord face group " + SKIN_PREFIX,
    "bone": "body bindpos bindquat vertid vertweight",
    **{t: _ACT_TARGET + " " + _act_attrs(t) for t in ACTUATOR_TAGS},
}
ATTRS = {k: set(v.split()) for k, v in ATTRS.items()}
ATTRS.update({g: set(a) for g, a in VISUAL_DEFAULTS.items()})
ATTRS["statistic"] = {"meaninertia", "meanmass", "meansize", "extent", "center"}
ATTRS["visual"] = set()

# Allowed children by parent; "*" marks sections whose content is accepted without checks.
CHILDREN = {
    "mujoco": {"compiler", "option", "size", "visual", "statistic", "default", "custom",
               "extension", "asset", "deformable", "worldbody", "contact", "equality", "tendon", "actuator",
               "sensor", "keyframe", "include"},
    "option": {"flag"},
    "visual": set(VISUAL_DEFAULTS),
    "compiler": {"lengthrange"},
    "default": {"default"} | set(DEFAULT_ATTRS),
    "worldbody": {"body", "frame", "geom", "site", "camera", "light", "include", "flexcomp"},
    "body": {"body", "frame", "inertial", "joint", "freejoint", "geom", "site", "camera",
             "light", "include", "plugin", "composite", "flexcomp", "replicate"},
    "asset": {"material", "texture", "mesh", "hfield", "skin", "model", "include"},
    "contact": {"pair", "exclude", "include"},
    "equality": {"connect", "weld", "joint", "tendon", "include", "flex", "flexstrain"},
    "tendon": {"fixed", "spatial", "include"},
    "fixed": {"joint"},
    "spatial": {"site", "geom", "pulley"},
    "actuator": set(ACTUATOR_TAGS) | {"include", "plugin"},
    "keyframe": {"key", "include"},
    "mesh": {"plugin"},
    "geom": {"plugin"},
    "material": {"layer"},
    "skin": {"bone"},
}
CHILDREN["frame"] = CHILDREN["body"] - {"inertial"}
_FREE_SECTIONS = {"custom", "extension", "sensor", "texture",
                  "lengthrange", "model", "plugin"}
_UNSUPPORTED = {"composite", "flexcomp"}


def _attr_key(node):
  parent = node.parent.tag if node.parent is not None else ""
  if node.tag == "joint" and parent == "fixed":
    return "tendon:joint"
  if node.tag in ("site", "geom") and parent == "spatial":
    return "spatial:" + node.tag
  if node.tag in ("joint", "tendon") and parent == "equality":
    return "eq:" + node.tag
  if node.tag in ("flex", "flexstrain") and parent == "equality":
    return "eq:flex"
  return node.tag


def _check(node, flex=False):
  """Validate element names and attribute names of the tree below `node` (recursively); flex
  elements are an error unless `flex` (engine/mjcf/_flex.py: compiled for tests only, until
  the flex physics exists)."""
  if node.tag == "deformable":
    for c in node.children:
      if c.tag == "flex" and flex:
        from numjoco.engine.mjcf import _flex
        _flex.check(c)
        continue
      if c.tag != "skin":
        raise c.error(f"element <{c.tag}> (deformable bodies) is not supported yet")
      _check(c)
    return
  if node.tag == "extension":
    return   # plugins and their instances: checked by the compiler (engine/mjcf/_plugin.py)
  if (node.tag in ("flex", "flexstrain") and node.parent is not None
      and node.parent.tag == "equality" and not flex):
    raise node.error(f"element <{node.tag}> (flex equality) is not supported yet")
  if node.tag == "flexcomp" and flex:
    from numjoco.engine.mjcf import _flex
    _flex.check(node)
    return
  if node.tag in _UNSUPPORTED:   # before its attributes: they are not what is wrong
    what = " (flex: deformable bodies)" if node.tag == "flexcomp" else ""
    raise node.error(f"element <{node.tag}>{what} is not supported yet")
  if node.tag in _FREE_SECTIONS:
    return
  in_default = node.parent is not None and node.parent.tag == "default"
  if in_default and node.tag != "default":
    allowed = DEFAULT_ATTRS.get(node.tag, set())
  else:
    allowed = ATTRS.get(_attr_key(node), set())
  for key in node.attrib:
    if key not in allowed:
      raise node.error(f"unknown attribute '{key}'")
  kids = CHILDREN.get(node.tag, set())
  for child in node.children:
    if child.tag not in kids:
      if child.tag in _UNSUPPORTED:
        _check(child, flex)   # its "not supported" error, or a flexcomp when allowed
      if child.tag == "plugin" and child.get("plugin"):
        raise child.error(f"plugin '{child.get('plugin')}' in <{node.tag}> is not supported "
                          "(only MuJoCo's SDF plugins in meshes and geoms, and its PID "
                          "actuator plugin, are)")
      raise child.error(f"unknown element <{child.tag}> in <{node.tag}>")
    if in_default and child.tag != "default":
      # elements inside <default> take no children (but a material's texture layers)
      for grandchild in child.children:
        if child.tag == "material" and grandchild.tag == "layer" and not grandchild.children:
          _check(grandchild)
          continue
        raise grandchild.error(f"unknown element <{grandchild.tag}> in default <{child.tag}>")
      allowed = DEFAULT_ATTRS[child.tag]
      for key in child.attrib:
        if key not in allowed:
          raise child.error(f"unknown attribute '{key}'")
      continue
    _check(child, flex)


# ------------------------------------------------------------------------------------- reading

def _read_xml(text, file):
  parser = etree.XMLParser(remove_comments=True, remove_pis=True)
  try:
    return etree.fromstring(text, parser)
  except etree.XMLSyntaxError as e:
    err = e
  fixed, notes = _lenient_xml(text)
  if notes:   # what MuJoCo's XML parser reads but a strict one does not
    try:
      root = etree.fromstring(fixed, parser)
    except etree.XMLSyntaxError:
      pass
    else:
      import warnings
      for line, what in notes:
        warnings.warn_explicit(f"{os.path.basename(file)}:{line}: {what}", MjcfWarning, file,
                               line)
      return root
  line = err.position[0] if err.position else err.lineno
  raise MjcfError(None, f"malformed XML: {err.msg}", file=file, line=line) from None


_NAME_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")
_SPACE_NOTE = "attributes without a space between them (read as if separated)"
_COMMENT_NOTE = "'--' inside a comment (the comment is ignored)"


def _lenient_xml(text):
  """(text as a strict XML parser reads it, [(line, note)]) for two things MuJoCo's parser
  (tinyxml2) accepts: an attribute's closing quote directly followed by the next attribute's
  name inside a tag (a space is inserted), and '--' inside a comment (the comment is emptied,
  its line breaks kept). CDATA, processing instructions and text between tags are left
  alone."""
  out, notes = bytearray(), []
  i, n, line = 0, len(text), 1

  def copy(upto):
    nonlocal i, line
    line += text.count(b"\n", i, upto)
    out.extend(text[i:upto])
    i = upto

  def note(what):
    if (line, what) not in notes:
      notes.append((line, what))

  while i < n:
    lt = text.find(b"<", i)
    if lt < 0:
      copy(n)
      break
    copy(lt)
    if text.startswith(b"<!--", i):
      stop = text.find(b"-->", i + 4)
      stop = n if stop < 0 else stop + 3
      body = text[i + 4:stop - 3]
      if b"--" in body or body.endswith(b"-"):
        note(_COMMENT_NOTE)
        out.extend(b"<!--" + b"\n" * body.count(b"\n") + b"-->")
        line += text.count(b"\n", i, stop)
        i = stop
      else:
        copy(stop)
      continue
    for start, end in ((b"<![CDATA[", b"]]>"), (b"<?", b"?>"), (b"<!", b">")):
      if text.startswith(start, i):
        stop = text.find(end, i + len(start))
        copy(n if stop < 0 else stop + len(end))
        break
    else:   # a start or end tag: walk its attributes
      j = i + 1
      while j < n and text[j] != ord(">"):
        if text[j] in (ord('"'), ord("'")):
          close = text.find(text[j:j + 1], j + 1)
          if close < 0:
            break
          j = close + 1
          if j < n and text[j] in _NAME_START:
            copy(j)
            out.extend(b" ")
            note(_SPACE_NOTE)
          continue
        j += 1
      copy(min(j + 1, n))
  return bytes(out), notes


_NAME_KEYS = frozenset(("name", "class", "childclass", "file", "content_type", "prefix"))


def _has_nan(text):
  """A numeric attribute value with a NaN among its numbers (MuJoCo warns about it)."""
  try:
    vals = [float(p) for p in text.split()]
  except ValueError:
    return False
  return any(v != v for v in vals)


class _Includes:
  """What <include> resolves against while one model file is read: the main file (every include
  path is relative to its folder, as MuJoCo's XML reference says; like MuJoCo 4, a path that is
  not there is then tried relative to the including file's folder) and the files already
  included (MuJoCo refuses a file included twice)."""

  def __init__(self, main):
    self.main = main
    self.seen = set()


def _convert(elem, file, parent, assets, depth, includes=None):
  if includes is None:
    includes = _Includes(file)
  node = Node(elem.tag, elem.attrib, file, elem.sourceline, parent)
  for key, text in node.attrib.items():
    if key not in _NAME_KEYS and "nan" in text.lower() and _has_nan(text):
      warn(node, f"attribute '{key}': XML contains a 'NaN'. Please check it carefully.")
  for child in elem:
    if not isinstance(child.tag, str):
      continue
    if child.tag == "include":
      inc = Node("include", child.attrib, file, child.sourceline, node)
      for key in inc.attrib:
        if key != "file":
          raise inc.error(f"unknown attribute '{key}'")
      if "file" not in inc.attrib:
        raise inc.error("missing attribute 'file'")
      for sub in _load_include(inc, assets, depth, includes):
        sub.parent = node
        node.children.append(sub)
      continue
    node.children.append(_convert(child, file, node, assets, depth, includes))
  return node


def read_referenced(node, name, assets, what):
  """(bytes, path) of the XML file `name` referred to by `node` (relative to node's file): from
  `assets` (by the name as written, the resolved path or their normalised forms), else disk."""
  base = os.path.dirname(node.file) if node.file and not node.file.startswith("<") else ""
  path = os.path.normpath(os.path.join(base, name))
  text = None
  if assets is not None:
    for key in (name, path, os.path.normpath(name)):
      if key in assets:
        text = assets[key]
        break
    if text is None:
      for key, val in assets.items():
        if os.path.normpath(key) == os.path.normpath(name):
          text = val
  if text is None:
    if not os.path.isfile(path):
      raise node.error(f"{what} '{name}' not found (looked for {path})")
    with open(path, "rb") as f:
      text = f.read()
  return (text.encode() if isinstance(text, str) else text), path


def _load_include(inc, assets, depth, includes):
  """Children of the root element of the file named by <include file=...>: the path is taken
  relative to the main model file's folder, else (an include inside an included file written
  relative to its own folder, which MuJoCo 4 also finds) relative to the including file's."""
  if depth > 20:
    raise inc.error("include nesting too deep (recursive include?)")
  name = inc.attrib["file"]
  as_main = Node("include", inc.attrib, includes.main, inc.line)   # resolves from main's folder
  try:
    text, path = read_referenced(as_main, name, assets, "include file")
  except MjcfError as e:
    if inc.file == includes.main:
      raise inc.error(e.msg) from None
    try:
      text, path = read_referenced(inc, name, assets, "include file")
    except MjcfError:
      raise inc.error(e.msg) from None
  key = os.path.normcase(os.path.abspath(path))
  if key in includes.seen:
    raise inc.error(f"file '{name}' already included")
  includes.seen.add(key)
  sub = _convert(_read_xml(text, path), path, None, assets, depth + 1, includes)
  return sub.children


def parse(source, assets=None, flex=False):
  """Parse an MJCF file path or XML string (bytes/str) into a checked `Node` tree (flex
  elements accepted only with `flex`, see `_check`)."""
  if isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("<")):
    text = source.encode() if isinstance(source, str) else source
    file = "<string>"
  else:
    file = os.fspath(source)
    if not os.path.isfile(file):
      raise MjcfError(None, "file not found", file=file, line=0)
    with open(file, "rb") as f:
      text = f.read()
  root = _convert(_read_xml(text, file), file, None, assets, 0)
  if root.tag == "robot":
    from numjoco.engine.mjcf.urdf import urdf_to_mjcf
    root = urdf_to_mjcf(root)
  if root.tag != "mujoco":
    raise root.error("root element must be <mujoco> (MJCF) or <robot> (URDF)")
  from numjoco.engine.mjcf import _attach, _replicate
  _attach.expand(root, assets)
  _replicate.expand(root)
  _check(root, flex)
  return root


# ------------------------------------------------------------------------------------- values

def floats(node, key, n=None, lo=None, attrib=None):
  """Attribute `key` as a list of floats; exactly `n` values, or between `lo` and `n`."""
  text = (attrib if attrib is not None else node.attrib).get(key)
  if text is None:
    return None
  parts = text.split()
  try:
    vals = [float(p) for p in parts]
  except ValueError:
    raise node.error(f"attribute '{key}': non-numeric value '{text}'") from None
  if n is not None:
    lo = n if lo is None else lo
    if not lo <= len(vals) <= n:
      want = f"{n}" if lo == n else f"{lo} to {n}"
      raise node.error(f"attribute '{key}': expected {want} values, got {len(vals)}")
  return vals


def number(node, key, default=None, attrib=None, integer=False):
  """Scalar numeric attribute (int when `integer`), or `default` when absent."""
  vals = floats(node, key, 1, attrib=attrib)
  if vals is None:
    return default
  if integer:
    if vals[0] != int(vals[0]):
      raise node.error(f"attribute '{key}': expected an integer, got '{vals[0]}'")
    return int(vals[0])
  return vals[0]


def keyword(node, key, choices, default=None, attrib=None):
  """Attribute value from `choices` (a dict keyword -> value), or `default` when absent."""
  text = (attrib if attrib is not None else node.attrib).get(key)
  if text is None:
    return default
  if text not in choices:
    raise node.error(f"attribute '{key}': invalid value '{text}' (expected one of "
                     f"{', '.join(choices)})")
  return choices[text]
