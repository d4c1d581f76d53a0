"""`m.vis` and `m.stat`: MJCF's <visual> and <statistic>, by the names of MuJoCo's mjVisual and
mjStatistic (`m.vis.global_.fovy`, `m.vis.map.stiffness`, `m.stat.extent`).

The renderer and the viewer read these; the engine itself needs only the perturbation
stiffnesses, which live in Model arrays (`vis_map_stiffness`, `vis_map_stiffnessrot`) so the
compiled step sees edits. MuJoCo stores visual settings as float32: the defaults below are the
float32 values, so they compare equal to MuJoCo's.
"""
import numpy as np

_F32 = np.float32


def _rgba(r, g, b, a=1.0):
  return [float(_F32(x)) for x in (r, g, b, a)]


# group -> attribute -> default (MuJoCo's mjv_defaultVisual); ints stay ints.
VISUAL_DEFAULTS = {
    "global": {"cameraid": -1, "orthographic": 0, "fovy": 45.0, "ipd": 0.068, "azimuth": 90.0,
               "elevation": -45.0, "linewidth": 1.0, "glow": 0.3, "realtime": 1.0,
               "offwidth": 640, "offheight": 480, "ellipsoidinertia": 0, "bvactive": 0},
    "quality": {"shadowsize": 4096, "offsamples": 4, "numslices": 28, "numstacks": 16,
                "numquads": 4},
    "headlight": {"ambient": [0.1] * 3, "diffuse": [0.4] * 3, "specular": [0.5] * 3,
                  "active": 2},
    "map": {"stiffness": 100.0, "stiffnessrot": 500.0, "force": 0.005, "torque": 0.1,
            "alpha": 0.3, "fogstart": 3.0, "fogend": 10.0, "znear": 0.01, "zfar": 50.0,
            "haze": 0.3, "shadowclip": 1.0, "shadowscale": 0.6, "actuatortendon": 2.0},
    "scale": {"forcewidth": 0.1, "contactwidth": 0.3, "contactheight": 0.1, "connect": 0.2,
              "com": 0.4, "camera": 0.3, "light": 0.3, "selectpoint": 0.2, "jointlength": 1.0,
              "jointwidth": 0.1, "actuatorlength": 0.7, "actuatorwidth": 0.2,
              "framelength": 1.0, "framewidth": 0.1, "constraint": 0.1, "slidercrank": 0.2,
              "frustum": 10.0},
    "rgba": {"fog": _rgba(0, 0, 0), "haze": _rgba(1, 1, 1), "force": _rgba(1, .5, .5),
             "inertia": _rgba(.8, .2, .2, .6), "joint": _rgba(.2, .6, .8),
             "actuator": _rgba(.2, .25, .2), "actuatornegative": _rgba(.2, .6, .9),
             "actuatorpositive": _rgba(.9, .4, .2), "com": _rgba(.9, .9, .9),
             "camera": _rgba(.6, .9, .6), "light": _rgba(.6, .6, .9),
             "selectpoint": _rgba(.9, .9, .1), "connect": _rgba(.2, .2, .8),
             "contactpoint": _rgba(.9, .6, .2), "contactforce": _rgba(.7, .9, .9),
             "contactfriction": _rgba(.9, .8, .4), "contacttorque": _rgba(.9, .7, .9),
             "contactgap": _rgba(.5, .8, .9), "rangefinder": _rgba(1, 1, .1),
             "constraint": _rgba(.9, 0, 0), "slidercrank": _rgba(.5, .3, .8),
             "crankbroken": _rgba(.9, 0, 0), "frustum": _rgba(1, 1, 0, .2),
             "bv": _rgba(0, 1, 0, .5), "bvactive": _rgba(1, 0, 0, .5)},
}
# Values MuJoCo stores as float32 are rounded as it rounds them.
for _g in VISUAL_DEFAULTS.values():
  for _k, _v in _g.items():
    if isinstance(_v, float):
      _g[_k] = float(_F32(_v))
    elif isinstance(_v, list):
      _g[_k] = [float(_F32(x)) for x in _v]

STATISTIC_DEFAULTS = {"meaninertia": 1.0, "meanmass": 1.0, "meansize": 0.2, "extent": 2.0,
                      "center": [0.0, 0.0, 0.0]}

# Attributes backed by Model arrays (read by compiled code).
BACKED = {("map", "stiffness"): "vis_map_stiffness", ("map", "stiffnessrot"): "vis_map_stiffnessrot"}


class _Group:
  """One <visual> child: attributes by MuJoCo's names; vectors are numpy arrays."""

  def __init__(self, name, values, backed):
    object.__setattr__(self, "_name", name)
    object.__setattr__(self, "_values", values)
    object.__setattr__(self, "_backed", backed)

  def __getattr__(self, key):
    if key in self._backed:
      return self._backed[key].item()
    try:
      return self._values[key]
    except KeyError:
      raise AttributeError(f"vis.{self._name} has no field {key!r}") from None

  def __setattr__(self, key, value):
    if key in self._backed:
      self._backed[key][...] = value
    elif key in self._values:
      old = self._values[key]
      if isinstance(old, np.ndarray):
        old[...] = value
      else:
        self._values[key] = type(old)(value)
    else:
      raise AttributeError(f"vis.{self._name} has no field {key!r}")

  def __dir__(self):
    return sorted(set(self._values) | set(self._backed))


class Visual:
  """`m.vis`: global_ (MuJoCo's Python name for <global>), quality, headlight, map, scale, rgba."""

  def __init__(self, values, arrays):
    for group, attrs in VISUAL_DEFAULTS.items():
      vals = {}
      for key, default in attrs.items():
        v = values.get(group, {}).get(key, default)
        vals[key] = np.array(v, dtype=float) if isinstance(default, list) else v
      backed = {key: arrays[a] for (g, key), a in BACKED.items() if g == group and a in arrays}
      for key in backed:
        vals.pop(key)
      setattr(self, "global_" if group == "global" else group, _Group(group, vals, backed))


class Statistic:
  """`m.stat`: meaninertia, meanmass, meansize, extent, center (mj_setConst's setStat, then the
  values given in <statistic>)."""

  def __init__(self, user=None):
    self.user = dict(user or {})
    self.meaninertia = STATISTIC_DEFAULTS["meaninertia"]
    self.meanmass = STATISTIC_DEFAULTS["meanmass"]
    self.meansize = STATISTIC_DEFAULTS["meansize"]
    self.extent = STATISTIC_DEFAULTS["extent"]
    self.center = np.array(STATISTIC_DEFAULTS["center"], dtype=float)

  def apply_user(self):
    """Values written in <statistic> override the computed ones."""
    for k, v in self.user.items():
      if k == "center":
        self.center[:] = v
      else:
        setattr(self, k, float(v))
