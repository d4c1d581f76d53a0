"""The model's visual settings: MuJoCo's mjVisual defaults, the MJCF `<visual>` and `<statistic>`
sections, and mjStatistic (center, extent, meansize, meanmass) computed as mj_setConst does.

The engine compiles `<visual>` and `<statistic>` into m.vis and m.stat (MuJoCo's names); this
module copies what drawing needs into typed groups, and reads builtin textures (checker floors,
skybox gradients) from the model's source file: the renderer draws plain checker floors
procedurally from them, and the gradient when a model has no compiled skybox texture. Every
other texture is drawn from the compiled pixels (m.tex_*) by render/textures.py.
"""
import dataclasses
import weakref

import numpy as np


@dataclasses.dataclass
class Global:
  """mjVisual.global: free camera defaults."""
  fovy: float = 45.0
  ipd: float = 0.068
  azimuth: float = 90.0
  elevation: float = -45.0
  linewidth: float = 1.0
  glow: float = 0.3
  orthographic: int = 0
  ellipsoidinertia: int = 0


@dataclasses.dataclass
class Headlight:
  """mjVisual.headlight: the light attached to the free camera."""
  ambient: tuple = (0.1, 0.1, 0.1)
  diffuse: tuple = (0.4, 0.4, 0.4)
  specular: tuple = (0.5, 0.5, 0.5)
  active: int = 1


@dataclasses.dataclass
class Map:
  """mjVisual.map: scale factors (clip planes in units of extent, force arrows, alpha)."""
  stiffness: float = 100.0
  stiffnessrot: float = 500.0
  force: float = 0.005
  torque: float = 0.1
  alpha: float = 0.3
  znear: float = 0.01
  zfar: float = 50.0
  haze: float = 0.3
  shadowclip: float = 1.0
  shadowscale: float = 0.6


@dataclasses.dataclass
class Quality:
  """mjVisual.quality: tessellation of the builtin shapes MuJoCo's renderer draws."""
  numslices: int = 28


@dataclasses.dataclass
class Scale:
  """mjVisual.scale: sizes of decorations, in units of stat.meansize."""
  forcewidth: float = 0.1
  contactwidth: float = 0.3
  contactheight: float = 0.1
  connect: float = 0.2
  com: float = 0.4
  selectpoint: float = 0.2
  jointlength: float = 1.0
  jointwidth: float = 0.1
  framelength: float = 1.0
  framewidth: float = 0.1
  constraint: float = 0.1


def _rgba(*v):
  return dataclasses.field(default=tuple(float(x) for x in v))


@dataclasses.dataclass
class Rgba:
  """mjVisual.rgba: colours of decorations."""
  force: tuple = _rgba(1, .5, .5, 1)
  inertia: tuple = _rgba(.8, .2, .2, .6)
  joint: tuple = _rgba(.2, .6, .8, 1)
  com: tuple = _rgba(.9, .9, .9, 1)
  selectpoint: tuple = _rgba(.9, .9, .1, 1)
  connect: tuple = _rgba(.2, .2, .8, 1)
  contactpoint: tuple = _rgba(.9, .6, .2, 1)
  contactforce: tuple = _rgba(.7, .9, .9, 1)
  contactfriction: tuple = _rgba(.9, .8, .4, 1)
  contactgap: tuple = _rgba(.5, .8, .9, 1)
  constraint: tuple = _rgba(.9, 0, 0, 1)
  rangefinder: tuple = _rgba(1, 1, .1, 1)
  haze: tuple = _rgba(1, 1, 1, 1)


@dataclasses.dataclass
class Statistic:
  """mjStatistic: model size statistics that scale the camera and the decorations."""
  center: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
  extent: float = 2.0
  meansize: float = 0.2
  meanmass: float = 1.0


@dataclasses.dataclass
class Visual:
  """Everything the renderer and camera read from mjVisual + mjStatistic."""
  global_: Global = dataclasses.field(default_factory=Global)
  headlight: Headlight = dataclasses.field(default_factory=Headlight)
  map: Map = dataclasses.field(default_factory=Map)
  quality: Quality = dataclasses.field(default_factory=Quality)
  scale: Scale = dataclasses.field(default_factory=Scale)
  rgba: Rgba = dataclasses.field(default_factory=Rgba)
  stat: Statistic = dataclasses.field(default_factory=Statistic)
  # from <asset>: material name -> {"builtin", "rgb1", "rgb2", "mark", "markrgb", "texrepeat",
  # "texuniform"} for materials with a builtin 2D texture; the skybox's (rgb1, rgb2) or None
  materials: dict = dataclasses.field(default_factory=dict)
  skybox: tuple = None


_CACHE = weakref.WeakKeyDictionary()


def visual_for(m):
  """The Visual of model `m` (computed once per Model object, then cached): the engine's m.vis
  and m.stat (MJCF <visual>/<statistic>, setStat), plus builtin textures read from the source."""
  try:
    return _CACHE[m]
  except (KeyError, TypeError):
    pass
  vis = Visual()
  for group in (vis.global_, vis.headlight, vis.map, vis.quality, vis.scale, vis.rgba):
    name = type(group).__name__.lower()
    src = getattr(m.vis, "global_" if name == "global" else name)
    for f in dataclasses.fields(group):
      v = getattr(src, f.name)
      cur = getattr(group, f.name)
      setattr(group, f.name, tuple(float(x) for x in v) if isinstance(cur, tuple) else type(cur)(v))
  vis.stat = Statistic(center=np.array(m.stat.center, dtype=float), extent=float(m.stat.extent),
                       meansize=float(m.stat.meansize), meanmass=float(m.stat.meanmass))
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
