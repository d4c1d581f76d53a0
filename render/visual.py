"""The model's visual settings as drawing reads them: m.vis and m.stat (the MJCF `<visual>` and
`<statistic>` over MuJoCo's mjv_defaultVisual defaults, which engine/visual.py holds; mjStatistic
as mj_setConst computes it) copied into typed groups, and the builtin textures (checker floors,
skybox gradients) read from the model's source file: the renderer draws plain checker floors
procedurally from them, and the gradient when a model has no compiled skybox texture. Every
other texture is drawn from the compiled pixels (m.tex_*) by render/textures.py.
"""
import dataclasses
import weakref

import numpy as np


@dataclasses.dataclass
class Global:
  """mjVisual.global: free camera defaults."""
  fovy: float
  ipd: float
  azimuth: float
  elevation: float
  linewidth: float
  glow: float
  orthographic: int
  ellipsoidinertia: int


@dataclasses.dataclass
class Headlight:
  """mjVisual.headlight: the light attached to the free camera."""
  ambient: tuple
  diffuse: tuple
  specular: tuple
  active: int


@dataclasses.dataclass
class Map:
  """mjVisual.map: scale factors (clip planes in units of extent, force arrows, alpha)."""
  stiffness: float
  stiffnessrot: float
  force: float
  torque: float
  alpha: float
  znear: float
  zfar: float
  haze: float
  shadowclip: float
  shadowscale: float


@dataclasses.dataclass
class Quality:
  """mjVisual.quality: tessellation of the builtin shapes MuJoCo's renderer draws."""
  numslices: int


@dataclasses.dataclass
class Scale:
  """mjVisual.scale: sizes of decorations, in units of stat.meansize."""
  forcewidth: float
  contactwidth: float
  contactheight: float
  connect: float
  com: float
  selectpoint: float
  jointlength: float
  jointwidth: float
  framelength: float
  framewidth: float
  constraint: float


@dataclasses.dataclass
class Rgba:
  """mjVisual.rgba: colours of decorations."""
  force: tuple
  inertia: tuple
  joint: tuple
  com: tuple
  selectpoint: tuple
  connect: tuple
  contactpoint: tuple
  contactforce: tuple
  contactfriction: tuple
  contactgap: tuple
  constraint: tuple
  rangefinder: tuple
  haze: tuple


@dataclasses.dataclass
class Statistic:
  """mjStatistic: model size statistics that scale the camera and the decorations."""
  center: np.ndarray
  extent: float
  meansize: float
  meanmass: float


@dataclasses.dataclass
class Visual:
  """Everything the renderer and camera read from mjVisual + mjStatistic."""
  global_: Global
  headlight: Headlight
  map: Map
  quality: Quality
  scale: Scale
  rgba: Rgba
  stat: Statistic
  # from <asset>: material name -> {"builtin", "rgb1", "rgb2", "mark", "markrgb", "texrepeat",
  # "texuniform"} for materials with a builtin 2D texture; the skybox's (rgb1, rgb2) or None
  materials: dict = dataclasses.field(default_factory=dict)
  skybox: tuple = None


_CACHE = weakref.WeakKeyDictionary()
_GROUPS = {"global_": Global, "headlight": Headlight, "map": Map, "quality": Quality,
           "scale": Scale, "rgba": Rgba}


def _group(cls, src):
  """A `cls` holding the values of its fields in `src` (a group of m.vis: the model's
  <visual> over mjv_defaultVisual's defaults, engine/visual.py)."""
  return cls(**{f.name: tuple(float(x) for x in getattr(src, f.name)) if f.type is tuple
                else f.type(getattr(src, f.name)) for f in dataclasses.fields(cls)})


def visual_for(m):
  """The Visual of model `m` (computed once per Model object, then cached): the engine's m.vis
  and m.stat (MJCF <visual>/<statistic>, setStat), plus builtin textures read from the source."""
  try:
    return _CACHE[m]
  except (KeyError, TypeError):
    pass
  groups = {name: _group(cls, getattr(m.vis, name)) for name, cls in _GROUPS.items()}
  stat = Statistic(center=np.array(m.stat.center, dtype=float), extent=float(m.stat.extent),
                   meansize=float(m.stat.meansize), meanmass=float(m.stat.meanmass))
  vis = Visual(**groups, stat=stat)
  _apply_assets(vis, _read_sections(getattr(m, "source", None)))
  try:
    _CACHE[m] = vis
  except TypeError:
    pass
  return vis


def _read_sections(path):
  """The <visual>, <statistic> and <asset> nodes of an MJCF file (includes spliced), or []."""
  if not path:
    return []
  try:
    from numjoco.engine.mjcf.parse import parse
    root = parse(path)
  except Exception:   # the engine already loaded this file; a failure here only loses styling
    return []
  out = []

  def walk(node):
    for c in node.children:
      if c.tag in ("visual", "statistic", "asset"):
        out.append(c)
      elif c.tag == "include":
        walk(c)
  walk(root)
  return out


def _floats(text):
  return [float(x) for x in text.split()]


def _apply_assets(vis, nodes):
  """Builtin textures (checker, gradient, flat) of materials and of the skybox."""
  textures, materials = {}, {}
  for node in nodes:
    if node.tag != "asset":
      continue
    for c in node.children:
      if c.tag == "texture":
        textures[c.get("name", "")] = c
        if c.get("type") == "skybox" and c.get("builtin") in ("gradient", "flat", "checker"):
          vis.skybox = (tuple(_floats(c.get("rgb1", "0.8 0.8 0.8"))),
                        tuple(_floats(c.get("rgb2", "0.5 0.5 0.5"))))
      elif c.tag == "material":
        materials[c.get("name", "")] = c
  for name, mat in materials.items():
    tex = textures.get(mat.get("texture"))
    if tex is None or tex.get("builtin", "none") == "none" or tex.get("type") == "skybox":
      continue
    try:
      vis.materials[name] = {
          "builtin": tex.get("builtin"),
          "rgb1": tuple(_floats(tex.get("rgb1", "0.8 0.8 0.8"))),
          "rgb2": tuple(_floats(tex.get("rgb2", "0.5 0.5 0.5"))),
          "mark": tex.get("mark", "none"),
          "markrgb": tuple(_floats(tex.get("markrgb", "0 0 0"))),
          "texrepeat": tuple(_floats(mat.get("texrepeat", "1 1"))),
          "texuniform": mat.get("texuniform", "false") == "true"}
    except ValueError:
      continue
