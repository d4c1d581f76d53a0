"""The subset of MJCF's schema this engine reads: the attributes (`ATTRS`, `DEFAULT_ATTRS`) and
children (`CHILDREN`) of every element, and `check`, which refuses any other element or
attribute with its file and line."""
from numjoco.engine.mjcf._node import SKIN_PREFIX
from numjoco.engine.visual import VISUAL_DEFAULTS


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


def attr_key(node):
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


# children that may appear once (MuJoCo's schema: "unique element 'flag' found 2 times")
_UNIQUE = {"option": {"flag"}, "compiler": {"lengthrange"}, "body": {"inertial"},
           "visual": {"global", "quality", "headlight", "map", "scale", "rgba"},
           "default": set(DEFAULT_ATTRS)}
# the elements of the sections whose attributes the compiler checks (or ignores: <custom>)
_FREE_CHILDREN = {"custom": {"numeric", "text", "tuple"}, "tuple": {"element"}}


def _check_free(node):
  """The elements of a free section, as far as MuJoCo's schema fixes them: <custom> holds
  numeric, text and tuple (its elements); a sensor has no children but a plugin's config."""
  if node.tag in _FREE_CHILDREN:
    for child in node.children:
      if child.tag not in _FREE_CHILDREN[node.tag]:
        raise child.error(f"unknown element <{child.tag}> in <{node.tag}>")
      _check_free(child)
  elif node.tag == "sensor" and node.parent is not None and node.parent.tag == "mujoco":
    for key in node.attrib:
      raise node.error(f"unknown attribute '{key}'")
    for sensor in node.children:
      for child in sensor.children:
        if sensor.tag != "plugin":
          raise child.error(f"unknown element <{child.tag}> in <{sensor.tag}>")
  elif node.tag in ("numeric", "text", "element"):
    for child in node.children:
      raise child.error(f"unknown element <{child.tag}> in <{node.tag}>")


def check(node, flex=False):
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
      check(c)
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
    _check_free(node)
    return
  in_default = node.parent is not None and node.parent.tag == "default"
  if in_default and node.tag != "default":
    allowed = DEFAULT_ATTRS.get(node.tag, set())
  else:
    allowed = ATTRS.get(attr_key(node), set())
  for key in node.attrib:
    if key not in allowed:
      raise node.error(f"unknown attribute '{key}'")
  kids = CHILDREN.get(node.tag, set())
  once = _UNIQUE.get(node.tag, ())
  seen = set()
  for child in node.children:
    if child.tag in once:
      if child.tag in seen:
        raise child.error(f"<{child.tag}> given twice in <{node.tag}> (MuJoCo's schema allows "
                          "one)")
      seen.add(child.tag)
    if child.tag not in kids:
      if child.tag in _UNSUPPORTED:
        check(child, flex)   # its "not supported" error, or a flexcomp when allowed
      if child.tag == "plugin" and child.get("plugin"):
        raise child.error(f"plugin '{child.get('plugin')}' in <{node.tag}> is not supported "
                          "(only MuJoCo's SDF plugins in meshes and geoms, and its PID "
                          "actuator plugin, are)")
      raise child.error(f"unknown element <{child.tag}> in <{node.tag}>")
    if in_default and child.tag != "default":
      # elements inside <default> take no children (but a material's texture layers)
      for grandchild in child.children:
        if child.tag == "material" and grandchild.tag == "layer" and not grandchild.children:
          check(grandchild)
          continue
        raise grandchild.error(f"unknown element <{grandchild.tag}> in default <{child.tag}>")
      allowed = DEFAULT_ATTRS[child.tag]
      for key in child.attrib:
        if key not in allowed:
          raise child.error(f"unknown attribute '{key}'")
      continue
    check(child, flex)
