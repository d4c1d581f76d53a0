"""MJCF <sensor> elements -> sensor_* arrays, as MuJoCo's XML reader and mjCSensor::Compile.

Supported: the joint, tendon, actuator, ball, limit, frame, subtree, site (touch, imu, force,
torque, magnetometer), rangefinder (site or camera, every data field), insidesite, clock and
energy sensors, the collision sensors (distance, normal, fromto), contact, camprojection,
tactile and the touch-grid sensor plugin (`<plugin plugin="mujoco.sensor.touch_grid">`).
Anything else is an error naming the element.
"""
import numpy as np

from numjoco.engine import types as t
from numjoco.engine.mjcf import _limits

INTERP = {"zoh": 0, "linear": 1, "cubic": 2}   # history interpolation (actuators, sensors)
_MAXSAMPLE = 1 << 24   # MuJoCo stores a buffer's cursor as an mjtNum


def check_history(n, nsample, delay):
  """MuJoCo's checks of a history buffer (actuators and sensors); a negative nsample, which
  MuJoCo 4.0 accepts but then indexes a buffer that does not exist, is refused here."""
  if nsample < 0:
    raise n.error(f"nsample cannot be negative, got {nsample}")
  if delay > 0 and nsample <= 0:
    raise n.error("setting delay > 0 without a history buffer (set nsample > 0)")
  if nsample > _MAXSAMPLE:
    raise n.error(f"at most 2^24 samples in history buffer, got {nsample}")


S, O = t.mjtSensor, t.mjtObj

# targets: (attribute naming the object, object type); None: objtype/objname
_SITE = ("site", O.SITE)
_JOINT = ("joint", O.JOINT)
_TENDON = ("tendon", O.TENDON)
_ACTUATOR = ("actuator", O.ACTUATOR)
_BODY = ("body", O.BODY)
_NONE = (None, O.UNKNOWN)
_FRAME = None
_PAIR = ("pair", O.GEOM)         # geom1|body1 and geom2|body2
_CONTACT = ("contact", O.UNKNOWN)
# target -> its sensors' tags; a tag's sensor type is the mjtSensor member named by the tag in
# upper case, or by the name after its colon
_TAGS_BY_TARGET = (
    (_SITE, "touch accelerometer velocimeter gyro force torque magnetometer rangefinder "
            "camprojection"),
    (_JOINT, "jointpos jointvel jointactuatorfrc:JOINTACTFRC ballquat ballangvel jointlimitpos "
             "jointlimitvel jointlimitfrc"),
    (_TENDON, "tendonpos tendonvel tendonactuatorfrc:TENDONACTFRC tendonlimitpos tendonlimitvel "
              "tendonlimitfrc"),
    (_ACTUATOR, "actuatorpos actuatorvel actuatorfrc"),
    (_BODY, "subtreecom subtreelinvel subtreeangmom"),
    (_FRAME, "framepos framequat framexaxis frameyaxis framezaxis framelinvel frameangvel "
             "framelinacc frameangacc insidesite"),
    (_NONE, "clock e_potential e_kinetic plugin"),
    (_PAIR, "distance:GEOMDIST normal:GEOMNORMAL fromto:GEOMFROMTO"),
    (_CONTACT, "contact"),
    (("geom", O.GEOM), "tactile"),
)
# tag -> (sensor type, target)
TAGS = {tag: (S[(name or tag).upper()], target)
        for target, tags in _TAGS_BY_TARGET
        for tag, _, name in (w.partition(":") for w in tags.split())}
# MuJoCo sensors this engine does not compute yet: a clear error, never a silent zero
UNSUPPORTED = {"user"}

# contact sensor: data keywords in mjtConDataField order, their sizes, reduce keywords
CONDATA = ("found", "force", "torque", "dist", "pos", "normal", "tangent", "linvel", "angvel")
CONDATA_SIZE = (1, 3, 3, 1, 3, 3, 3, 3, 3)
REDUCE = ("none", "mindist", "maxforce", "netforce")

# rangefinder: data keywords in mjtRayDataField order and their sizes per ray
RAYDATA = ("dist", "dir", "origin", "point", "normal", "depth")
RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)

_FRAMEOBJ = {"body": O.BODY, "xbody": O.XBODY, "geom": O.GEOM, "site": O.SITE,
             "camera": O.CAMERA}
_BASE_ATTRS = {"name", "noise", "cutoff", "user", "nsample", "interp", "delay", "interval"}
# the attributes of <tactile> (4.0 reads a cutoff, no noise) and of a sensor <plugin>
_TACTILE_ATTRS = _BASE_ATTRS - {"noise"} | {"geom", "mesh"}
_PLUGIN_ATTRS = {"name", "plugin", "instance", "cutoff", "objtype", "objname", "reftype",
                 "refname", "user"}

_DIMS = {S.GEOMDIST: 1, S.GEOMNORMAL: 3, S.GEOMFROMTO: 6, S.CAMPROJECTION: 2}
_ACC = {S.TOUCH, S.ACCELEROMETER, S.FORCE, S.TORQUE, S.ACTUATORFRC, S.JOINTACTFRC,
        S.TENDONACTFRC, S.JOINTLIMITFRC, S.TENDONLIMITFRC, S.FRAMELINACC, S.FRAMEANGACC}
_VEL = {S.VELOCIMETER, S.GYRO, S.JOINTVEL, S.TENDONVEL, S.ACTUATORVEL, S.BALLANGVEL,
        S.JOINTLIMITVEL, S.TENDONLIMITVEL, S.FRAMELINVEL, S.FRAMEANGVEL, S.SUBTREELINVEL,
        S.SUBTREEANGMOM, S.TACTILE}   # tactile: velocity in MuJoCo 4.0 (acc in MuJoCo 3)
_DIM3 = {S.ACCELEROMETER, S.VELOCIMETER, S.GYRO, S.FORCE, S.TORQUE, S.MAGNETOMETER,
         S.BALLANGVEL, S.FRAMEPOS, S.FRAMEXAXIS, S.FRAMEYAXIS, S.FRAMEZAXIS, S.FRAMELINVEL,
         S.FRAMEANGVEL, S.FRAMELINACC, S.FRAMEANGACC, S.SUBTREECOM, S.SUBTREELINVEL,
         S.SUBTREEANGMOM}


def datatype(st):
  """mjtDataType of a sensor type (MuJoCo's sensorDatatype)."""
  if st in (S.TOUCH, S.INSIDESITE):
    return t.mjtDataType.POSITIVE
  if st in (S.FRAMEXAXIS, S.FRAMEYAXIS, S.FRAMEZAXIS, S.GEOMNORMAL):
    return t.mjtDataType.AXIS
  if st in (S.BALLQUAT, S.FRAMEQUAT):
    return t.mjtDataType.QUATERNION
  return t.mjtDataType.REAL


def needstage(st):
  """mjtStage a sensor type needs (MuJoCo's sensorNeedstage)."""
  return t.mjtStage.ACC if st in _ACC else (t.mjtStage.VEL if st in _VEL else t.mjtStage.POS)


def contact_needstage(dataspec, reduce):
  """Stage of a contact sensor, from its data fields and reduction (MuJoCo 4.0): forces need
  the constraint solution, velocities the velocity stage."""
  if dataspec & 0b110 or reduce >= 2:
    return t.mjtStage.ACC
  if dataspec & 0b110000000:
    return t.mjtStage.VEL
  return t.mjtStage.POS


def _contact_spec(n):
  """(dataspec bits, reduce, num) of a <contact> sensor, checked as MuJoCo's XML reader."""
  from numjoco.engine.mjcf._node import floats as number_list, number
  num = number(n, "num", 1)
  if num != int(num):
    raise n.error("attribute 'num': expected an integer")
  if num < 1:
    raise n.error("'num' must be positive in sensor")
  spec = _data_bits(n, CONDATA)
  red = n.get("reduce", "none")
  if red not in REDUCE:
    raise n.error(f"attribute 'reduce': '{red}' is not one of {', '.join(REDUCE)}")
  reduce = REDUCE.index(red)
  if reduce == 3 and spec & 0b110000000:
    raise n.error("netforce reduction is incompatible with linvel or angvel")
  return spec, reduce, int(num)


def _ray_spec(n):
  """Bits of a rangefinder's `data` keywords (mjtRayDataField; default dist), which must come
  in RAYDATA's order, as MuJoCo's XML reader checks them."""
  return _data_bits(n, RAYDATA)


def _data_bits(n, names):
  """Bits of a sensor's `data` keywords (default: the first of `names`), each once and in the
  order of `names`, as MuJoCo's XML reader checks them."""
  spec, last = 0, -1
  for w in n.get("data", names[0]).split() or [names[0]]:
    if w not in names:
      raise n.error(f"attribute 'data': '{w}' is not one of {', '.join(names)}")
    k = names.index(w)
    if spec & (1 << k):
      raise n.error(f"attribute 'data': duplicate keyword '{w}'")
    if k < last:
      raise n.error("data attributes must be in order: " + ", ".join(names))
    spec, last = spec | (1 << k), k
  return spec


def _one_of(c, n, keys, required):
  """(objtype, objid) named by at most one of `keys` (key -> object type) of a pair/contact
  sensor; (UNKNOWN, -1) when none is given and not `required`."""
  given = [k for k in keys if k in n.attrib]
  if len(given) > 1:
    raise n.error("at most one of " + ", ".join(f"'{k}'" for k in keys) + " can be specified")
  if not given:
    if required:
      raise n.error("one of " + ", ".join(f"'{k}'" for k in keys) + " must be specified")
    return O.UNKNOWN, -1
  key = given[0]
  return keys[key], _find(c, n, keys[key], key, required=True)


def compile_sensor(c, n):
  """One <sensor> child -> a sensor record appended to `c.sensors`."""
  if n.tag in UNSUPPORTED:
    raise n.error(f"sensor <{n.tag}> is not supported yet")
  if n.tag not in TAGS:
    raise n.error(f"unknown element <{n.tag}> in <sensor>")
  st, target = TAGS[n.tag]
  if st == S.PLUGIN:
    return _plugin_sensor(c, n)
  allowed = set(_BASE_ATTRS) if st != S.TACTILE else set(_TACTILE_ATTRS)
  if st == S.RANGEFINDER:
    allowed |= {"data", "camera"}
  if target is _FRAME:
    allowed |= {"objtype", "objname"}
    if st == S.INSIDESITE:
      allowed.add("site")
    elif st not in (S.FRAMELINACC, S.FRAMEANGACC):
      allowed |= {"reftype", "refname"}
  elif target is _PAIR:
    allowed |= {"geom1", "geom2", "body1", "body2"}
  elif target is _CONTACT:
    allowed |= {"geom1", "geom2", "body1", "body2", "subtree1", "subtree2", "site", "num",
                "data", "reduce"}
  elif target[0]:
    allowed.add(target[0])
  if st == S.CAMPROJECTION:
    allowed.add("camera")
  for key in n.attrib:
    if key not in allowed:
      raise n.error(f"unknown attribute '{key}'")
  from numjoco.engine.mjcf._node import floats as number_list, number
  noise = number(n, "noise", 0.0)
  cutoff = number(n, "cutoff", 0.0)
  if noise < 0:
    raise n.error("negative noise in sensor")
  if cutoff < 0:
    raise n.error("negative cutoff in sensor")
  nsample, interp, delay, interval = _history(n)
  dt = datatype(st)
  if cutoff > 0 and dt in (t.mjtDataType.QUATERNION, t.mjtDataType.AXIS) and st != S.GEOMNORMAL:
    raise n.error("cutoff applied to axis or quaternion datatype in sensor")
  reftype, refid = O.UNKNOWN, -1
  intprm = [0] * t.NSENS
  stage = needstage(st)
  if target is _PAIR:
    objtype, objid = _one_of(c, n, {"geom1": O.GEOM, "body1": O.BODY}, True)
    reftype, refid = _one_of(c, n, {"geom2": O.GEOM, "body2": O.BODY}, True)
    if objtype == reftype and objid == refid:
      raise n.error("1st body/geom must be different from 2nd body/geom")
    geoms = [g for b in c.bodies for g in b.geoms]
    for ot, oid in ((objtype, objid), (reftype, refid)):
      if ot == O.GEOM and geoms[oid].type == t.mjtGeom.HFIELD:
        raise n.error("height fields are not supported in geom distance sensors")
  elif target is _CONTACT:
    objtype, objid = _one_of(c, n, {"geom1": O.GEOM, "body1": O.BODY, "subtree1": O.XBODY,
                                    "site": O.SITE}, False)
    reftype, refid = _one_of(c, n, {"geom2": O.GEOM, "body2": O.BODY, "subtree2": O.XBODY},
                             False)
    intprm = list(_contact_spec(n))
    stage = contact_needstage(intprm[0], intprm[1])
  elif st == S.RANGEFINDER:
    objtype, objid = _one_of(c, n, {"site": O.SITE, "camera": O.CAMERA}, True)
    intprm[0] = _ray_spec(n)
    if objtype == O.CAMERA:
      res = [x for b in c.bodies for x in b.cams][objid].resolution
      if res[0] <= 0 or res[1] <= 0:
        raise n.error("rangefinder camera sensor requires positive camera resolution")
  elif target is _FRAME:
    objtype = _frame_type(n, "objtype", required=True)
    objid = _find(c, n, objtype, "objname", required=True)
    if st == S.INSIDESITE:
      reftype, refid = O.SITE, _find(c, n, O.SITE, "site", required=True)
    elif "reftype" in n.attrib or "refname" in n.attrib:
      reftype = _frame_type(n, "reftype", required=True)
      refid = _find(c, n, reftype, "refname", required=True)
  elif st == S.TACTILE:
    reftype, refid = O.GEOM, _find(c, n, O.GEOM, "geom", required=True)
    objtype, objid = O.MESH, _mesh_id(c, n)
    _check_tactile_body(c, n, refid)
  else:
    key, objtype = target
    objid = -1 if key is None else _find(c, n, objtype, key, required=True)
  if st == S.CAMPROJECTION:
    if "camera" not in n.attrib:
      raise n.error("missing attribute 'camera'")
    reftype, refid = O.CAMERA, _find(c, n, O.CAMERA, "camera", required=True)
    res = [x for b in c.bodies for x in b.cams][refid].resolution
    if res[0] <= 0 or res[1] <= 0:
      raise n.error("camera in camprojection sensor must have positive resolution")
  dim = 4 if st in (S.BALLQUAT, S.FRAMEQUAT) else (3 if st in _DIM3 else 1)
  if st in _DIMS:
    dim = _DIMS[st]
  if st == S.CONTACT:
    dim = intprm[2] * sum(z for k, z in enumerate(CONDATA_SIZE) if intprm[0] >> k & 1)
  if st == S.TACTILE:   # depth and two sliding speeds per mesh vertex
    dim = 3 * len(c._mesh_compiled(objid)["vert"])
  if st == S.RANGEFINDER:
    dim = sum(z for k, z in enumerate(RAYDATA_SIZE) if intprm[0] >> k & 1)
    if objtype == O.CAMERA:
      dim *= res[0] * res[1]
  if objtype == O.ACTUATOR and st in (S.ACTUATORPOS, S.ACTUATORVEL, S.ACTUATORFRC):
    dim = c.actuators[objid].outnum   # one value per force output (SO3 servos: 3)
  if objtype == O.JOINT:
    j = c.all_joints()[objid]
    if st in (S.JOINTPOS, S.JOINTVEL, S.JOINTACTFRC) and j.type not in (2, 3):
      raise n.error("joint must be slide or hinge in sensor")
    if st in (S.BALLQUAT, S.BALLANGVEL) and j.type != 1:
      raise n.error("joint must be ball in sensor")
    if st in (S.JOINTLIMITPOS, S.JOINTLIMITVEL, S.JOINTLIMITFRC) and not j.is_limited:
      raise n.error("joint must be limited in sensor")
  if objtype == O.TENDON and st in (S.TENDONLIMITPOS, S.TENDONLIMITVEL, S.TENDONLIMITFRC):
    if not c.tendons[objid].is_limited:
      raise n.error("tendon must be limited in sensor")
  c.sensors.append(dict(node=n, name=n.get("name", ""), type=int(st), datatype=int(dt),
                        needstage=int(stage), objtype=int(objtype), objid=objid,
                        reftype=int(reftype), refid=refid, dim=dim, cutoff=cutoff,
                        noise=noise, intprm=intprm, nsample=nsample, interp=interp,
                        delay=delay, interval=interval, plugin=None,
                        user=[] if "user" not in n.attrib else number_list(n, "user")))


def _mesh_id(c, n):
  """Id of the mesh a tactile sensor names."""
  if not n.get("mesh"):
    raise n.error("missing attribute 'mesh'")
  for i, me in enumerate(c.meshes):
    if me.name == n.get("mesh"):
      return i
  raise n.error(f"sensor mesh: unknown mesh '{n.get('mesh')}'")


def _check_tactile_body(c, n, geom):
  """A tactile sensor's geom must be on a body with a colliding geom (mj_validateModel)."""
  body = [g for b in c.bodies for g in b.geoms][geom].body
  if not any(g.contype or g.conaffinity for g in body.geoms):
    raise n.error("Touch sensor requires a body with at least one collision geom")


def _plugin_sensor(c, n):
  """A sensor `<plugin>` (mjSENS_PLUGIN) of the touch-grid plugin: its instance (named, or
  made here from its `<config>` children), the site it is attached to (objtype/objname), an
  optional reference frame, dim = nchannel * size x * size y, computed in the acceleration
  stage after the built-in sensors."""
  from numjoco.engine.mjcf import _plugin
  from numjoco.engine.mjcf._node import floats as number_list, number
  for key in n.attrib:
    if key not in _PLUGIN_ATTRS:
      raise n.error(f"unknown attribute '{key}'")
  inst = _plugin.resolve(n, c.plugins, c.plugin_declared, c.plugin_implicit, use="sensor")
  cutoff = number(n, "cutoff", 0.0)
  if cutoff < 0:
    raise n.error("negative cutoff in sensor")
  for typ, name in (("objtype", "objname"), ("reftype", "refname")):
    if n.get(typ) and not n.get(name):
      raise n.error(f"{typ} is specified but {name} is not")
    if n.get(name) and not n.get(typ):
      raise n.error(f"{name} is specified but {typ} is not")
  if n.get("objtype") != "site":
    raise n.error("Touch Grid sensor must be attached to a site")
  objid = _find(c, n, O.SITE, "objname", required=True)
  reftype, refid = O.UNKNOWN, -1
  if n.get("reftype"):
    reftype = _frame_type(n, "reftype", required=True)
    refid = _find(c, n, reftype, "refname", required=True)
  nchannel, sx, sy = (int(v) for v in inst.attr[:3])
  c.sensors.append(dict(node=n, name=n.get("name", ""), type=int(S.PLUGIN),
                        datatype=int(t.mjtDataType.REAL), needstage=int(t.mjtStage.ACC),
                        objtype=int(O.SITE), objid=objid, reftype=int(reftype), refid=refid,
                        dim=nchannel * sx * sy, cutoff=cutoff, noise=0.0, intprm=[0] * t.NSENS,
                        nsample=0, interp=0, delay=0.0, interval=[0.0, 0.0], plugin=inst,
                        user=[] if "user" not in n.attrib else number_list(n, "user")))


def _history(n):
  """(nsample, interp, delay, [period, phase]) of a sensor's history buffer, with MuJoCo 4's
  checks (engine/history.py)."""
  from numjoco.engine.mjcf._node import floats, keyword, number
  nsample = number(n, "nsample", 0, integer=True)
  interp = keyword(n, "interp", INTERP, 0)
  delay = number(n, "delay", 0.0)
  interval = (floats(n, "interval", 2, 1) or []) + [0.0, 0.0]
  period, phase = interval[0], interval[1]
  if period < 0:
    raise n.error("negative interval in sensor")
  if phase > 0:
    raise n.error("positive phase in sensor")
  if period > 0 and phase <= -period:
    raise n.error("phase must be greater than -period in sensor")
  check_history(n, nsample, delay)
  return nsample, interp, delay, [period, phase]


def history_layout(c, A, sizes):
  """actuator_/sensor_ history, historyadr, delay (and sensor_interval) and nhistory: one block
  of 2 + n + n*dim numbers per buffer, actuators first, as MuJoCo lays out d.history (dim: the
  actuator's ctrlnum or the sensor's dim)."""
  adr = 0
  for kind, objs in (("actuator", c.actuators), ("sensor", c.sensors)):
    get = (lambda o, k: o[k]) if kind == "sensor" else (lambda o, k: getattr(o, k, 0))
    hist, hadr = [], []
    for o in objs:
      n = int(get(o, "nsample"))
      dim = int(o["dim"] if kind == "sensor" else o.ctrlnum)
      hist.append([n, int(get(o, "interp"))])
      hadr.append(adr if n > 0 else -1)
      adr += 2 + n + n * dim if n > 0 else 0
    A[kind + "_history"] = np.array(hist, np.int32).reshape(len(objs), 2)
    A[kind + "_historyadr"] = np.array(hadr, np.int32)
    A[kind + "_delay"] = np.array([float(get(o, "delay")) for o in objs], np.float64)
  A["sensor_interval"] = np.array([s["interval"] for s in c.sensors],
                                  np.float64).reshape(len(c.sensors), 2)
  sizes["nhistory"] = adr
  dt = float(np.ravel(A["opt_timestep"])[0])
  if adr and dt <= 0:
    from numjoco.engine.mjcf._node import MjcfError
    raise MjcfError(None, f"history buffers require positive timestep, got {dt:g}")


def _frame_type(n, key, required):
  if key not in n.attrib:
    raise n.error(f"missing attribute '{key}'")
  v = n.attrib[key]
  if v not in _FRAMEOBJ:
    raise n.error(f"attribute '{key}': '{v}' is not one of {', '.join(_FRAMEOBJ)}")
  return _FRAMEOBJ[v]


def _find(c, n, objtype, key, required):
  if key not in n.attrib or not n.attrib[key]:
    raise n.error(f"missing attribute '{key}'")
  name = n.attrib[key]
  kind = {O.BODY: "body", O.XBODY: "body", O.GEOM: "geom", O.SITE: "site", O.CAMERA: "camera",
          O.JOINT: "joint", O.TENDON: "tendon", O.ACTUATOR: "actuator"}[objtype]
  return c.find(kind, name, n, f"sensor {key}")


def assemble(c, A, sizes):
  """sensor_* arrays and the nsensor / nsensordata sizes."""
  ss = c.sensors
  adr = 0
  for s in ss:
    s["adr"] = adr
    adr += s["dim"]
    _limits.check_bytes(s["node"], f"sensordata of {adr} values", 8 * adr)
  sizes.update(nsensor=len(ss), nsensordata=adr)
  i4 = np.int32
  for k in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid", "dim",
            "adr"):
    A["sensor_" + k] = np.array([s[k] for s in ss], i4)
  A["sensor_intprm"] = np.zeros((len(ss), t.NSENS), i4)
  for i, s in enumerate(ss):
    A["sensor_intprm"][i] = s["intprm"]
  A["sensor_cutoff"] = np.array([s["cutoff"] for s in ss], np.float64)
  A["sensor_noise"] = np.array([s["noise"] for s in ss], np.float64)
  history_layout(c, A, sizes)
