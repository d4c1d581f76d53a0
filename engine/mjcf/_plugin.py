"""MJCF `<extension>` plugins: MuJoCo's first-party SDF plugins, touch-grid sensor plugin and
PID actuator plugin.

Reads `<extension><plugin plugin="mujoco.sdf.torus"><instance name=...><config key value/>`
into named instances (config strings kept as written, as MuJoCo's `plugin_attr`), and gives
each SDF kind what the compiler needs: its attributes with the plugin's defaults, its bounding
box (the plugin's `sdf_aabb`) and its distance function in numpy (`sdf_staticdistance`, for
the marching-cubes mesh of a `<mesh><plugin/></mesh>`). The run-time distance and gradient
are engine/collision/sdf.py's (compiled), selected by the kind stored in `plugin_kind`. The
touch grid (plugin/sensor/touch_grid.cc, a `<sensor><plugin>`) keeps its checked parameters
in `plugin_param` for engine/sensor.py. `mujoco.pid` (plugin/actuator/pid.cc) serves
`<actuator><plugin>` and is computed by engine/actuation.py from `actuator_pluginprm`
(`pid_prm`). Only these seven plugins are supported; any other plugin is refused with its
name.
"""
import math
import re

import numpy as np

# kind (stored in Model.plugin_kind), attribute names and defaults, as plugin/sdf/<kind>.h
TORUS, BOWL, GEAR, NUT, BOLT, TOUCH_GRID, PID = 0, 1, 2, 3, 4, 5, 6
SDF_PLUGINS = {
    "mujoco.sdf.torus": (TORUS, ("radius1", "radius2"), (0.35, 0.15)),
    "mujoco.sdf.bowl": (BOWL, ("height", "radius", "thickness"), (0.4, 1.0, 0.02)),
    "mujoco.sdf.gear": (GEAR, ("alpha", "diameter", "teeth", "thickness", "innerdiameter"),
                        (0.0, 2.8, 25.0, 0.2, -1.0)),
    "mujoco.sdf.nut": (NUT, ("radius",), (0.26,)),
    "mujoco.sdf.bolt": (BOLT, ("radius",), (0.26,)),
}
# actuator plugins: kind, attribute names, defaults (NaN: not given, which the PID tells apart)
ACTUATOR_PLUGINS = {
    "mujoco.pid": (PID, ("kp", "ki", "kd", "imax", "slewmax"),
                   (0.0, 0.0, 0.0, math.nan, math.nan)),
}
TOUCH_GRID_NAME = "mujoco.sensor.touch_grid"
# every supported plugin: kind and attribute names (in the plugin's order, as plugin_attr)
PLUGINS = dict({k: v[:2] for k, v in {**SDF_PLUGINS, **ACTUATOR_PLUGINS}.items()},
               **{TOUCH_GRID_NAME: (TOUCH_GRID, ("nchannel", "size", "fov", "gamma"))})
NATTR = 6   # the most numeric parameters of one plugin (touch grid): width of plugin_param
# the slot MuJoCo 4.0's Python wheel registers each plugin at (its `plugin` field; parity only)
SLOT_40 = {"mujoco.pid": 0, "mujoco.sensor.touch_grid": 1, "mujoco.sdf.bolt": 2, "mujoco.sdf.bowl": 3,
           "mujoco.sdf.gear": 4, "mujoco.sdf.nut": 5, "mujoco.sdf.torus": 6}


class Instance:
  """One plugin instance: name, plugin name, kind, config strings and numeric attributes
  (`attr`: an SDF's or the PID's attributes, NaN for a PID's absent imax and slewmax; the touch
  grid's nchannel, size x, y, fov x, y, gamma)."""

  def __init__(self, node, name, plugin, config):
    self.node, self.name, self.plugin, self.config = node, name, plugin, config
    self.kind = PLUGINS[plugin][0]
    if self.kind == TOUCH_GRID:
      self.attr = touch_grid_param(node, config)
      return
    _, names, defaults = {**SDF_PLUGINS, **ACTUATOR_PLUGINS}[plugin]
    self.attr = []
    for key, default in zip(names, defaults):
      value = config.get(key, "")
      try:
        self.attr.append(default if not value.strip() else float(value))
      except ValueError:
        raise node.error(f"plugin '{plugin}': config '{key}': expected a number, got "
                         f"'{value[:40]}'") from None

  def attr_string(self):
    """The config values in the plugin's attribute order, each NUL-terminated (plugin_attr)."""
    names = PLUGINS[self.plugin][1]
    return b"".join(self.config.get(k, "").encode() + b"\0" for k in names)


_STRTOD = re.compile(r"\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|nan)",
                     re.IGNORECASE)


def _strtod(text):
  """C's strtod: the number at the start of `text` (0 when there is none)."""
  hit = _STRTOD.match(text)
  return float(hit.group(0)) if hit else 0.0


def _items(text):
  """The pieces of `text` between single spaces, as std::getline reads them (no piece after
  a final space)."""
  pieces = text.split(" ")
  return pieces[:-1] if pieces[-1] == "" else pieces


def touch_grid_param(node, config):
  """[nchannel, size x, size y, fov x, fov y, gamma] of a touch grid instance, with the checks
  and messages of TouchGrid::Create (4.0 raises them when MjData is made); vectors are split
  at single spaces and read by strtod as touch_grid.cc's ReadVector."""
  if not (_number(config.get("gamma", "")) and _number(config.get("nchannel", ""))):
    raise node.error("Invalid or missing parameters in touch_grid sensor plugin")
  nchannel = int(_strtod(config.get("nchannel", ""))) or 1
  if not 1 <= nchannel <= 6:
    raise node.error("nchannel must be between 1 and 6")
  size = [int(_strtod(v)) for v in _items(config.get("size", ""))]
  if len(size) != 2:
    raise node.error("Both horizontal and vertical resolutions must be specified")
  if size[0] <= 0 or size[1] <= 0:
    raise node.error("Horizontal and vertical resolutions must be positive")
  fov = [_strtod(v) for v in _items(config.get("fov", ""))]
  if len(fov) != 2:
    raise node.error("Both horizontal and vertical fields of view must be specified")
  if not 0 < fov[0] <= 180:
    raise node.error("`fov[0]` must be a float between (0, 180] degrees")
  if not 0 < fov[1] <= 90:
    raise node.error("`fov[1]` must be a float between (0, 90] degrees")
  gamma = _strtod(config.get("gamma", ""))
  if not 0 <= gamma <= 1:
    raise node.error("`gamma` must be a nonnegative float between [0, 1]")
  return [float(nchannel), float(size[0]), float(size[1]), fov[0], fov[1], gamma]


def _number(text):
  """True when `text` (spaces removed) is a number strtod reads whole (the plugins' CheckAttr)."""
  s = "".join(text.split())
  if not s:
    return True
  try:
    float(s)
  except ValueError:
    return False
  return True


def check_plugin_name(node, name):
  """Raise the node's error unless `name` is one of the supported plugins."""
  if name not in PLUGINS:
    raise node.error(f"plugin '{name}' is not supported (supported: {', '.join(PLUGINS)})")


def _config(node, name):
  """{key: value string} of the `<config>` children of `node` (an instance of plugin `name`),
  each key once and one of the plugin's; an SDF's or the PID's values must be numbers."""
  keys, config = PLUGINS[name][1], {}
  for c in node.children:
    if c.tag != "config":
      raise c.error(f"unknown element <{c.tag}> in <{node.tag}>")
    for key in c.attrib:
      if key not in ("key", "value"):
        raise c.error(f"unknown attribute '{key}'")
    k, v = c.get("key"), c.get("value", "")
    if k is None:
      raise c.error("config needs a 'key'")
    if k not in keys:
      raise c.error(f"unknown config key '{k}' for plugin '{name}' (expected one of "
                    f"{', '.join(keys)})")
    if k in config:
      raise c.error(f"repeated config key '{k}'")
    if (name in SDF_PLUGINS or name in ACTUATOR_PLUGINS) and not _number(v):
      raise c.error(f"config '{k}' of plugin '{name}': invalid value '{v}' (a number "
                    "is expected)")
    config[k] = v
  return config


def _element(n, tag, parent, attr):
  """n's attribute `attr` (None when absent); an error unless n is a <tag> (in <parent>) whose
  only attribute is `attr`."""
  if n.tag != tag:
    raise n.error(f"unknown element <{n.tag}> in <{parent}>")
  for key in n.attrib:
    if key != attr:
      raise n.error(f"unknown attribute '{key}'")
  return n.get(attr)


def read_extension(root):
  """(instances by name in order, names of the declared plugins) of every `<extension>` of
  the model tree `root`."""
  out, declared = {}, set()
  for ext in (c for c in root.children if c.tag == "extension"):
    for p in ext.children:
      name = _element(p, "plugin", "extension", "plugin")
      if not name:
        raise p.error("plugin needs the 'plugin' attribute (the plugin's name)")
      check_plugin_name(p, name)
      declared.add(name)
      for inst in p.children:
        iname = _element(inst, "instance", "plugin", "name")
        if not iname:
          raise inst.error("plugin instance needs a name")
        if iname in out:
          raise inst.error(f"repeated plugin instance name '{iname}'")
        out[iname] = Instance(inst, iname, name, _config(inst, name))
  return out, declared


def resolve(node, instances, declared, implicit, use="sdf", attrs=()):
  """The instance a `<plugin>` names: `instance=` (a declared one) or `plugin=` (a plugin
  declared in <extension>: a new instance configured by the node's `<config>` children,
  appended to `implicit`). `use` says what `node` is: "sdf", a `<plugin>` child of a mesh or
  geom (an SDF plugin); "sensor", a `<sensor><plugin>` element (a sensor plugin; its own
  attributes are the sensor's, checked there); "actuator", an `<actuator><plugin>` element
  (an actuator plugin; `attrs`: its actuator attributes)."""
  if use != "sensor":
    for key in node.attrib:
      if key not in ("instance", "plugin") and key not in attrs:
        raise node.error(f"unknown attribute '{key}'")
  iname, pname = node.get("instance"), node.get("plugin")
  if iname is not None:
    if node.children:
      raise node.error("config of a plugin referenced by instance is not supported here: "
                       "declare it in <extension>")
    if iname not in instances:
      raise node.error(f"unknown plugin instance '{iname}'")
    inst = instances[iname]
    if pname is not None and pname != inst.plugin:
      raise node.error(f"plugin instance '{iname}' is a '{inst.plugin}', not '{pname}'")
  elif pname is None:
    raise node.error("plugin needs 'instance' (or 'plugin')")
  else:
    check_plugin_name(node, pname)
    if pname not in declared:
      raise node.error(f"plugin '{pname}' is not declared in <extension>")
    inst = Instance(node, "", pname, _config(node, pname))
    implicit.append(inst)
  if use == "sensor" and inst.kind != TOUCH_GRID:
    raise node.error(f"plugin '{inst.plugin}' does not support sensors")
  if use == "actuator" and inst.kind != PID:
    raise node.error(f"plugin '{inst.plugin}' does not support actuators")
  if use == "sdf" and inst.kind in (TOUCH_GRID, PID):
    what = "a sensor" if inst.kind == TOUCH_GRID else "an actuator"
    raise node.error(f"plugin '{inst.plugin}' is {what} plugin, not an SDF")
  return inst


# ------------------------------------------------------------------------------ the SDFs

def aabb(kind, a):
  """The plugin's bounding box (center, half sizes) in its frame (sdf_aabb)."""
  if kind == TORUS:
    return [0.0, 0.0, 0.0, a[0] + a[1], a[0] + a[1], a[1]]
  if kind == BOWL:
    r = a[1] + a[2]
    return [0.0, 0.0, 0.0, r, r, r]
  if kind == GEAR:
    return [0.0, 0.0, 0.0, a[1] / 2.0 * 1.25, a[1] / 2.0 * 1.25, a[3] / 2.0 * 1.1]
  return [0.0, 0.0, 0.0, 0.6, 0.6, 1.0]


def distance(kind, a, p):
  """Signed distance of the points p (..., 3) (the plugin's static distance, float64)."""
  x, y, z = p[..., 0], p[..., 1], p[..., 2]
  if kind == TORUS:
    q = np.sqrt(x * x + y * y) - a[0]
    return np.sqrt(q * q + z * z) - a[1]
  if kind == BOWL:
    height, radius, thick = a[0], a[1], a[2]
    width = math.sqrt(radius * radius - height * height)
    q0 = np.sqrt(x * x + y * y)
    d0, d1 = q0 - width, z - height
    return np.where(height * q0 < width * z, np.sqrt(d0 * d0 + d1 * d1),
                    np.abs(np.sqrt(q0 * q0 + z * z) - radius)) - thick
  if kind == GEAR:
    return _gear(a, x, y, z)
  return _screw(kind, a, x, y, z)


def _smooth_union(a, b, k):
  h = np.clip(0.5 + 0.5 * (b - a) / k, 0.0, 1.0)
  return b * (1. - h) + a * h - k * h * (1. - h)


def _gear(a, x, y, z):
  """gear.cc's distance: an involute gear profile extruded along z."""
  alpha, D, N = a[0], a[1], a[2]
  psi = 3.096e-5 * N * N - 6.557e-3 * N + 0.551    # pressure angle
  R = D / 2.0
  rho = np.sqrt(x * x + y * y)
  Pd = N / D
  P = math.pi / Pd
  Ro = (D + 2.0 / Pd) / 2.0
  h = 2.2 / Pd
  inner = Ro - h - 0.14 * D if a[4] < 0.0 else a[4] / 2.0
  Rb = D * math.cos(psi) / 2.0
  fi = np.arctan2(y, x) + alpha
  stride = P / R
  inv_alpha = math.acos(Rb / R)
  shift = stride / 2.0 - 2.0 * (math.tan(inv_alpha) - inv_alpha)
  mod = lambda u, v: u - v * np.floor(u / v)
  fia = mod(fi + shift / 2.0, stride) - shift / 2.0
  fib = mod(-fi - shift + shift / 2.0, stride) - shift / 2.0
  out = Rb < rho
  safe = np.where(out, rho, 1.0)
  acs = np.arccos(np.where(out, Rb / safe, 1.0))
  ta = np.sqrt(np.where(out, rho * rho - Rb * Rb, 0.0))
  dista = np.where(out, ta - Rb * (fia + acs), -1.0e6)
  distb = np.where(out, ta - Rb * (fib + acs), -1.0e6)
  outer = rho - Ro
  cogs = np.maximum(np.maximum(fia - (stride - shift), fib - (stride - shift)),
                    np.maximum(dista, distb))
  # smooth intersection of the outer circle and the cogs
  cogs = np.maximum(np.maximum(outer, cogs),
                    -_smooth_union(np.maximum(outer, -cogs), np.maximum(cogs, -outer), 0.0035 * D))
  cogs = _smooth_union(rho - (Ro - h), cogs, Rb - Ro + h)
  cogs = np.maximum(cogs, -(rho - inner))
  d2 = np.where(inner - rho > 0.0, inner - rho, np.where(Ro - rho < -0.2, rho - Ro, cogs))
  w1 = np.abs(z) - a[3] / 2.0
  m0, m1 = np.maximum(d2, 0.0), np.maximum(w1, 0.0)
  return np.minimum(np.maximum(d2, w1), 0.0) + np.sqrt(m0 * m0 + m1 * m1)


def _screw(kind, a, x, y, z):
  """nut.cc / bolt.cc's distance: a threaded hole or rod with a hexagonal head."""
  screw, s12 = 12.0, math.sqrt(2.0) / 2.0
  radius = np.sqrt(x * x + y * y) - a[0]
  u = z * screw - np.arctan2(y, x) / math.pi / 2.0
  thread = (radius - np.abs((u - np.floor(u)) - 0.5) / screw) * s12
  cone = (z - radius) * s12
  k = 6.0 / math.pi / 2.0
  angle = -np.floor(np.arctan2(y, x) * k + 0.5) / k
  head = np.sin(angle + math.pi * 0.5) * x + -np.sin(angle) * y - 0.5
  head = np.maximum(head, np.abs(z + 0.25) - 0.25)
  head = np.maximum(head, (z + radius - 0.22) * s12)
  if kind == NUT:
    hole = np.maximum(thread, -(cone + 0.5 * s12))
    hole = np.minimum(hole, -cone - 0.05 * s12)
    return np.maximum(head, -hole)
  bolt = np.maximum(thread, -(0.5 - np.abs(z + 0.5)))
  bolt = np.maximum(bolt, -(cone + 1.0 * s12))
  return np.minimum(bolt, head)


# ------------------------------------------------------------------------------ model arrays

def pid_prm(attr):
  """actuator_pluginprm of an actuator driven by a `mujoco.pid` instance with attributes `attr`
  (kp, ki, kd, imax, slewmax; NaN: not given): kp, ki, kd, the clamp of the error integral
  (imax / ki, as the plugin's PidConfig; -1: none) and slewmax (-1: none)."""
  kp, ki, kd, imax, slew = attr
  clamp = imax / ki if ki and not math.isnan(imax) else -1.0
  return [kp, ki, kd, clamp, -1.0 if math.isnan(slew) else slew]


def pid_params(node, inst, dyntype, actdim):
  """`pid_prm` after the checks of the plugin's Pid::Create (4.0's messages; 4.0 reports them
  when it makes the data)."""
  kp, ki, kd, imax, slew = inst.attr
  if ki and not math.isnan(imax) and imax / ki < 0:
    raise node.error("negative imax")
  if not math.isnan(slew) and slew < 0:
    raise node.error("slewmax must be non-negative")
  expect = int(ki != 0) + int(not math.isnan(slew)) + int(dyntype in (1, 2, 3))
  if actdim != expect:
    raise node.error(f"actuator has actdim {actdim}, expected {expect}. Add actdim=\"{expect}\" "
                     "to the actuator plugin element.")
  return pid_prm(inst.attr)


def plugin_arrays(plugin, plugin_attr, plugin_attradr):
  """(plugin_kind, plugin_param) from MuJoCo's compiled plugin fields (the wheel's slot
  numbers and NUL-terminated config strings), for a Model built from a mujoco.MjModel."""
  names = {slot: name for name, slot in SLOT_40.items()}
  n = len(plugin)
  kinds, params = np.full(n, -1, np.int32), np.zeros((n, NATTR))
  raw = bytes(np.asarray(plugin_attr, np.uint8))
  for i in range(n):
    name = names.get(int(plugin[i]))
    if name is None:
      continue
    keys = PLUGINS[name][1]
    values = raw[int(plugin_attradr[i]):].split(b"\0")[:len(keys)]
    config = {k: v.decode() for k, v in zip(keys, values)}
    attr = Instance(None, "", name, config).attr
    kinds[i] = PLUGINS[name][0]
    params[i, :len(attr)] = attr
  return kinds, params


def assemble(c, A, sizes):
  """plugin_* arrays (MuJoCo's names, plus plugin_kind and plugin_param), geom_plugin,
  sensor_plugin and actuator_plugin (plus the engine-only actuator_pluginprm), from the
  compiler's instances (declared ones first, then implicit ones)."""
  insts = list(c.plugins.values()) + list(c.plugin_implicit)
  index = {id(x): i for i, x in enumerate(insts)}
  attr = [x.attr_string() for x in insts]
  adr = np.cumsum([0] + [len(a) for a in attr])[:-1]
  sizes.update(nplugin=len(insts), npluginattr=sum(len(a) for a in attr))
  A["plugin"] = np.array([SLOT_40[x.plugin] for x in insts], np.int32)
  A["plugin_kind"] = np.array([x.kind for x in insts], np.int32)
  A["plugin_stateadr"] = np.zeros(len(insts), np.int32)   # these plugins keep no state
  A["plugin_statenum"] = np.zeros(len(insts), np.int32)
  A["plugin_attradr"] = np.array(adr, np.int32)
  A["plugin_attr"] = np.frombuffer(b"".join(attr), np.uint8).copy()
  param = np.zeros((len(insts), NATTR))
  for i, x in enumerate(insts):
    param[i, :len(x.attr)] = x.attr
  A["plugin_param"] = param
  geoms = [g for b in c.bodies for g in b.geoms]
  A["geom_plugin"] = np.array([index[id(g.plugin)] if g.get("plugin") is not None else -1
                               for g in geoms], np.int32)
  A["sensor_plugin"] = np.array([index[id(s["plugin"])] if s["plugin"] is not None else -1
                                 for s in c.sensors], np.int32)
  A["actuator_plugin"] = np.array([index[id(a.plugin)] if a.plugin is not None else -1
                                   for a in c.actuators], np.int32)
  A["actuator_pluginprm"] = np.array([a.pluginprm for a in c.actuators],
                                     np.float64).reshape(-1, 5)
