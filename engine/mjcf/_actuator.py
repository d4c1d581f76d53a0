"""MuJoCo 4's multi-input actuators in the MJCF compiler: the `pid`, `dcmotor` and
`orientation` shortcuts (mjs_setToPID, mjs_setToDCMotor, mjs_setToOrientation), the `input`
signature, and the per-actuator control/output layout (ctrlnum, ctrlspec, outnum and the
per-input control ranges of mjCActuator::Compile)."""
import math

from numjoco.engine import types as t
from numjoco.engine.mjcf._node import BOOL as _BOOL, LIMITED as _LIMITED
from numjoco.engine.mjcf._node import Obj as _Obj, Reader as _Reader, user_values as _user
from numjoco.engine.mjcf._sensor import INTERP, check_history as _check_history
from numjoco.engine.types import (MINVAL, mjtChart, mjtDyn, mjtGain, mjtBias, mjtInput, mjtJoint,
                                  mjtTrn)

_POS, _VEL, _FF, _VOLT, _NONE, _PRESS = (int(mjtInput.POS), int(mjtInput.VEL), int(mjtInput.FF),
                                         int(mjtInput.VOLTAGE), int(mjtInput.NONE),
                                         int(mjtInput.PRESSURE))
_SERVO = _POS | _VEL | _FF
_INPUT_BITS = {"pos": _POS, "vel": _VEL, "ff": _FF, "voltage": _VOLT, "pressure": _PRESS}
_CHARTS = {"expmap": int(mjtChart.EXPMAP), "quat": int(mjtChart.QUAT)}

# input signature each older shortcut declares (4.0 records it in actuator_ctrlspec)
SHORTCUT_INPUT = {"position": _POS, "velocity": _VEL, "intvelocity": _VEL, "cylinder": _PRESS,
                  "motor": 0, "damper": 0, "muscle": 0, "adhesion": 0}


def read_input(n):
  """The `input` attribute as a ctrlspec (None when absent, 0 for "": the gaintype's default)."""
  text = n.attrib.get("input")
  if text is None:
    return None
  text = text.strip()
  if text in _CHARTS:
    return _CHARTS[text]
  if text == "none":
    return _NONE
  spec, last = 0, 0
  for tok in text.split():
    bit = _INPUT_BITS.get(tok)
    if bit is None:
      raise n.error(f"attribute 'input': invalid token '{tok}' (expected pos, vel, ff, voltage, "
                    "pressure, none, expmap or quat)")
    if bit == last:
      raise n.error(f"attribute 'input': duplicate token '{tok}'")
    if bit < last:
      raise n.error("inputs must be listed in canonical order [pos, vel, ff, voltage, pressure]")
    spec |= bit
    last = bit
  return spec


def _opt(rd, key, base=0.0):
  """(value, given) of a scalar attribute."""
  return rd.num(key, base), key in rd.node.attrib


def read_kv(rd, bias2):
  """biasprm[2] of a servo from kv (stored as -kv) or dampratio (stored as the positive ratio,
  which set_const turns into a damping); `bias2` when neither is given."""
  n = rd.node
  if "kv" in n.attrib and "dampratio" in n.attrib:
    raise n.error("kv and dampratio cannot both be defined")
  if "kv" in n.attrib:
    kv = rd.num("kv", 0.0)
    if kv < 0:
      raise n.error("kv cannot be negative")
    return -kv
  if "dampratio" in n.attrib:
    dr = rd.num("dampratio", 0.0)
    if dr < 0:
      raise n.error("dampratio cannot be negative")
    return dr
  return bias2


def set_pid(rd, a, inherit):
  """The pid shortcut (mjs_setToPID): kp, kv in biasprm, ki in gainprm[0], imax and slewmax in
  dynprm; parameters inherited only when `inherit` (shortcut_source found a default)."""
  n = rd.node
  kp = rd.num("kp", -a.biasprm[1] if inherit else 1.0)
  bias2 = read_kv(rd, a.biasprm[2] if inherit else 0.0)
  ki = rd.num("ki", a.gainprm[0] if inherit else 0.0)
  imax = rd.num("imax", a.dynprm[0] if inherit else 0.0)
  slew = rd.num("slewmax", a.dynprm[1] if inherit else 0.0)
  if slew < 0:
    raise n.error("slewmax cannot be negative")
  if "input" in n.attrib:
    a.ctrlspec = read_input(n)
  elif not inherit:
    a.ctrlspec = 0
  a.ctrlrange = rd.exact("posrange", a.ctrlrange, 2)
  a.inheritrange = rd.num("inheritrange", a.inheritrange)
  if a.inheritrange > 0 and (a.ctrlrange[0] or a.ctrlrange[1]):
    raise n.error("posrange and inheritrange cannot both be defined")
  a.dyntype = int(mjtDyn.PID) if (ki or slew) else int(mjtDyn.NONE)
  a.gaintype, a.biastype = int(mjtGain.PID), int(mjtBias.AFFINE)
  a.dynprm = [imax if ki else 0.0, slew] + [0.0] * 8
  a.gainprm = [ki] + [0.0] * 9
  a.biasprm = [0.0, -kp, bias2] + [0.0] * 7


def set_orientation(rd, a, inherit):
  """The orientation shortcut (mjs_setToOrientation): geodesic servo on an SO3 transmission."""
  n = rd.node
  kp = rd.num("kp", a.gainprm[0] if inherit else 1.0)
  bias2 = read_kv(rd, a.biasprm[2] if inherit else 0.0)
  if "input" in n.attrib:
    a.ctrlspec = read_input(n)
  elif not inherit:
    a.ctrlspec = 0
  a.dyntype, a.gaintype, a.biastype = int(mjtDyn.NONE), int(mjtGain.SO3), int(mjtBias.SO3)
  a.dynprm = [1.0] + [0.0] * 9
  a.gainprm = [kp] + [0.0] * 9
  a.biasprm = [0.0, -kp, bias2] + [0.0] * 7


def set_dcmotor(rd, a, inherit):
  """The dcmotor shortcut (mjs_setToDCMotor with MuJoCo's parameter checks): R, K and the
  controller gains in gainprm, electrical/thermal/LuGre/controller constants in dynprm,
  cogging and LuGre friction in biasprm; saturation sets forcerange."""
  n = rd.node
  inh = inherit
  g, dy, b = a.gainprm, a.dynprm, a.biasprm
  mc = rd.vec("motorconst", [g[1] if inh else 0.0, 0.0], 2)
  R = rd.num("resistance", g[0] if inh else 0.0)
  nominal = rd.vec("nominal", [0.0] * 3, 3)
  # an authored inductance replaces the inherited one (zeros clear it)
  sat = rd.vec("saturation", [0.0, 0.0, dy[1] if inh else 0.0])
  ind = rd.vec("inductance", [0.0, dy[0] if inh and "inductance" not in n.attrib else 0.0])
  cog = rd.vec("cogging", b[0:3] if inh else [0.0] * 3, 3)
  ctl = rd.vec("controller", [g[4], g[5], g[6], dy[7], dy[8], g[7]] if inh else [0.0] * 6, 6)
  th = rd.vec("thermal", [dy[2], dy[3], 0.0, g[2], g[3], dy[4]] if inh else [0.0] * 6, 6)
  lu = rd.vec("lugre", [dy[5], dy[6], b[3], b[4], b[5]] if inh else [0.0] * 5, 5)
  spec = a.ctrlspec if inh else 0
  if "input" in n.attrib:
    spec = read_input(n)
  Kt, Ke = mc
  if Kt < 0 or Ke < 0:
    raise n.error("DC motor: motor constants must be non-negative")
  vn, tau0, w0 = nominal
  if vn > 0 and Ke <= 0 and w0 > 0:
    # back-EMF constant from the nominal point: w0 = vn Ke / (Ke^2 + R B)
    B = a.damping
    if B > 0 and R > 0:
      disc = vn * vn - 4 * R * B * w0 * w0
      Ke = (vn + math.sqrt(disc)) / (2 * w0) if disc > 0 else vn / w0
    elif B > 0 and tau0 > 0:
      exact = vn / w0 - vn * B / tau0
      Ke = exact if exact > 0 else vn / w0
    else:
      Ke = vn / w0
  K = math.sqrt(Kt * Ke) if (Kt > 0 and Ke > 0) else (Kt if Kt > 0 else Ke)
  if R == 0 and vn > 0 and tau0 > 0 and K > 0:
    R = K * vn / tau0
  if K <= 0 and spec != _NONE:
    raise n.error("DC motor: motor constant K must be positive")
  if R <= 0:
    raise n.error("DC motor: resistance R must be positive")
  if ind[0] < 0:
    raise n.error("DC motor: inductance must be non-negative")
  if ind[1] < 0:
    raise n.error("DC motor: electrical time constant must be non-negative")
  g = [R, K, 0.0, 0.0, ctl[0], ctl[1], ctl[2], ctl[5] if ctl[5] > 0 else 0.0, 0.0, 0.0]
  dy = [0.0] * 10
  b = [cog[0], cog[1], cog[2]] + [0.0] * 7
  dy[7], dy[8] = ctl[3], ctl[4]
  if "saturation" in n.attrib:
    # an authored saturation replaces any inherited force range
    a.forcerange, a.forcelimited = [0.0, 0.0], 2
  if sat[0] > 0 or sat[1] > 0:
    tmax = sat[0] if sat[0] > 0 else K * sat[1]
    a.forcerange, a.forcelimited = [-tmax, tmax], 1
  dy[1] = sat[2] if sat[2] > 0 else 0.0
  dy[0] = ind[0] / R if ind[0] > 0 else ind[1]
  if th[0] > 0 or th[1] > 0 or th[2] > 0:
    RT, C, tth = th[0], th[1], th[2]
    if tth > 0 and RT > 0:
      C = tth / RT
    elif tth > 0 and C > 0 and RT == 0:
      RT = tth / C
    if RT <= 0:
      raise n.error("DC motor: thermal resistance must be positive")
    if C <= 0:
      raise n.error("DC motor: thermal capacitance must be positive")
    dy[2], dy[3], dy[4] = RT, C, th[5]
    g[2], g[3] = th[3], th[4]
  if lu[0] > 0:
    dy[5], dy[6] = lu[0], lu[1]
    b[3], b[4], b[5] = lu[2], lu[3], lu[4]
  a.gainprm, a.dynprm, a.biasprm = g, dy, b
  a.dyntype, a.gaintype, a.biastype = (int(mjtDyn.DCMOTOR), int(mjtGain.DCMOTOR),
                                       int(mjtBias.DCMOTOR))
  a.ctrlspec = spec
  a.actdim = dcmotor_slots(dy, g)[5]   # its state count, which a general in its class inherits
  a.actlimited, a.actearly = 0, True


def dcmotor_slots(dynprm, gainprm):
  """Offsets of a DC motor's states (slew, integral, temperature, bristle, current; -1 when
  absent) and their count (mj_dcmotorSlots)."""
  out = [-1] * 5
  k = 0
  for j, on in enumerate((dynprm[7] > 0, gainprm[5] > 0, dynprm[2] > 0, dynprm[5] > 0,
                          dynprm[0] > 0)):
    if on:
      out[j] = k
      k += 1
  return out + [k]


def _count(spec, bits):
  return sum(1 for b in bits if spec & b)


def resolve_layout(c, a):
  """Checks of the PID, DC-motor and SO3 types and the actuator's control/output blocks
  (mjCActuator::Compile): a.ctrlnum, a.ctrlspec, a.outnum, a.so3, a.ctrlranges."""
  n = a.node
  gt, bt, dt = a.gaintype, a.biastype, a.dyntype
  spec = a.ctrlspec
  a.ctrlnum, a.outnum, a.so3 = 1, 1, False
  if gt == mjtGain.SO3 or bt == mjtBias.SO3:
    if gt != mjtGain.SO3 or bt != mjtBias.SO3:
      raise n.error("gaintype and biastype must both be 'so3'")
    if dt not in (mjtDyn.NONE, mjtDyn.INTEGRATOR):
      raise n.error("so3 requires dyntype 'none' or 'integrator'")
    if a.gainprm[0] != -a.biasprm[1]:
      raise n.error("so3 requires gainprm[0] == -biasprm[1]")
    if a.trntype == mjtTrn.SITE:
      if a.trnid[1] < 0:
        raise n.error("so3 site transmission requires refsite")
    elif a.trntype == mjtTrn.JOINT:
      if c.all_joints()[a.trnid[0]].type != mjtJoint.BALL:
        raise n.error("so3 joint transmission requires a ball joint")
    else:
      raise n.error("so3 requires site or ball joint transmission")
    if dt == mjtDyn.INTEGRATOR:
      if a.actdim > 0 and a.actdim != 3:
        raise n.error("so3 integrator requires actdim 3")
      a.actdim = 3
      if a.actlimited == 1 and a.actrange == [0.0, 0.0]:
        a.actlimited = 0
    spec = spec or int(mjtChart.EXPMAP)
    if spec == mjtChart.QUAT:
      if dt != mjtDyn.NONE:
        raise n.error("so3 quat input requires dyntype 'none'")
    elif spec != mjtChart.EXPMAP:
      raise n.error("so3 input must be expmap or quat")
    limited = a.forcelimited == 1 or (a.forcelimited == 2 and a.forcerange != [0.0, 0.0])
    if limited and a.forcerange[0] != 0:
      raise n.error("so3 forcerange bounds the force norm, lower bound must be 0")
    a.ctrlnum = 4 if spec == mjtChart.QUAT else 3
    a.outnum, a.so3 = 3, True
  if gt == mjtGain.PID:
    if bt != mjtBias.AFFINE:
      raise n.error("pid requires biastype 'affine'")
    if dt not in (mjtDyn.NONE, mjtDyn.PID):
      raise n.error("pid requires dyntype 'none' or 'pid'")
    if dt == mjtDyn.NONE and a.gainprm[0]:
      raise n.error("ki (gainprm[0]) requires dyntype 'pid'")
    if a.trntype == mjtTrn.BODY:
      raise n.error("pid cannot use body transmission")
    if dt == mjtDyn.PID:
      if a.dynprm[0] < 0:
        raise n.error("imax (dynprm[0]) must be non-negative")
      if a.dynprm[1] < 0:
        raise n.error("slewmax (dynprm[1]) must be non-negative")
      nslot = int(a.dynprm[1] > 0) + int(a.gainprm[0] > 0)
      if a.actdim > 0 and a.actdim != nslot:
        raise n.error("pid controller states require matching actdim")
      a.actdim = nslot
    spec = spec or (_POS | _VEL)
    if spec & ~_SERVO:
      raise n.error("pid inputs are a subset of [pos, vel, ff]")
    if dt == mjtDyn.PID and not spec & _POS:
      raise n.error("pid controller states require the pos input")
    a.ctrlnum = _count(spec, (_POS, _VEL, _FF))
  if gt == mjtGain.DCMOTOR:
    spec = spec or _VOLT
    if spec != _NONE and spec & ~(_SERVO | _VOLT):
      raise n.error("dcmotor inputs are 'none' or a subset of [pos, vel, ff, voltage]")
    ctl = 0 if spec == _NONE else spec & _SERVO
    g = a.gainprm
    if ctl and g[1] <= 0:
      raise n.error("dcmotor controller inputs require a positive motor constant")
    if g[0] <= 0:
      raise n.error("DC motor: resistance R must be positive")
    if not ctl and (g[4] or g[5] or g[6]):
      raise n.error("dcmotor controller gains require a controller input [pos, vel, ff]")
    if g[5] > 0 and not spec & _POS:
      raise n.error("dcmotor integral gain requires the pos input")
    a.ctrlnum = 0 if spec == _NONE else _count(spec, (_POS, _VEL, _FF, _VOLT))
    if not ctl and a.dynprm[7] > 0:
      raise n.error("dcmotor slew rate limiting requires a controller input [pos, vel, ff]")
    if bt != mjtBias.DCMOTOR or dt != mjtDyn.DCMOTOR:
      raise n.error("dcmotor requires dyntype and biastype 'dcmotor'")
    nslot = dcmotor_slots(a.dynprm, g)[5]
    if a.actdim >= 0 and a.actdim != nslot:
      raise n.error(f"dcmotor has {nslot} state(s) from its parameters but actdim {a.actdim}")
    a.actdim = nslot
    if not a.actearly:
      raise n.error("actearly cannot be false for DC motor actuator")
    a.actlimited = 0
  elif dt == mjtDyn.DCMOTOR or bt == mjtBias.DCMOTOR:
    raise n.error("dyntype and biastype 'dcmotor' require gaintype 'dcmotor'")
  if dt == mjtDyn.PID and gt != mjtGain.PID:
    raise n.error("dyntype 'pid' requires gaintype 'pid'")
  if gt in (mjtGain.MUSCLE, mjtGain.USER) and spec:
    raise n.error("input is not available for muscle and user gains")
  if gt in (mjtGain.FIXED, mjtGain.AFFINE) and spec not in (0, _POS, _VEL, _PRESS):
    raise n.error("fixed and affine gains take one input, 'pos', 'vel' or 'pressure'")
  a.ctrlspec = spec


def control_ranges(a):
  """Per-input (limited, range) of the actuator's control block: ctrlrange broadcast, with
  velrange and ffrange for a PID's vel and ff inputs (limited when lo < hi)."""
  out = [(a.is_ctrllimited, list(a.ctrlrange)) for _ in range(a.ctrlnum)]
  if a.gaintype == mjtGain.PID:
    j = 1 if a.ctrlspec & _POS else 0
    for bit, rng in ((_VEL, a.velrange), (_FF, a.ffrange)):
      if a.ctrlspec & bit:
        out[j] = (rng[0] < rng[1], list(rng))
        j += 1
  return out


# ------------------------------------------------------------------ actuator elements and defaults

DYN = {"none": 0, "integrator": 1, "filter": 2, "filterexact": 3, "muscle": 4, "dcmotor": 5,
        "pid": 6, "user": 7}
GAIN = {"fixed": 0, "affine": 1, "muscle": 2, "dcmotor": 3, "so3": 4, "pid": 5, "user": 6}
BIAS = {"none": 0, "affine": 1, "muscle": 2, "dcmotor": 3, "so3": 4, "user": 5}

ACT_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder",
             "muscle", "adhesion", "pid", "dcmotor", "orientation")


def has_mass(b):
  """Body b, or one of the bodies welded to it (children without joints, recursively), has
  mass and every principal inertia >= mjMINVAL (mjCModel::CheckBodyMassInertia)."""
  if b.mass >= MINVAL and min(b.inertia) >= MINVAL:
    return True
  return any(has_mass(c) for c in b.children if not c.joints)


def default_actuator():
  a = _Obj(gaintype=0, biastype=0, dyntype=0, gainprm=[1.0] + [0.0] * 9, biasprm=[0.0] * 10,
           dynprm=[1.0] + [0.0] * 9, ctrlrange=[0.0, 0.0], forcerange=[0.0, 0.0],
           actrange=[0.0, 0.0], lengthrange=[0.0, 0.0], ctrllimited=2, forcelimited=2,
           actlimited=2, gear=[1.0] + [0.0] * 5, cranklength=0.0, group=0, actearly=False,
           inheritrange=0.0, actdim=-1, damping=0.0, dampingpoly=[0.0, 0.0], armature=0.0,
           ctrlspec=0, velrange=[0.0, 0.0], ffrange=[0.0, 0.0], user=[], nsample=0, interp=0,
           delay=0.0, acttype="general")
  return a


def copy_act(a):
  return _Obj({k: list(v) if isinstance(v, list) else v for k, v in a.items()})


# the gain type of a <general> default whose raw parameters a shortcut reads as its own
_SHORTCUT_GAIN = {"motor": 0, "position": 0, "velocity": 0, "intvelocity": 0, "cylinder": 0,
                  "adhesion": 0, "damper": 1, "muscle": 2, "dcmotor": 3, "orientation": 4,
                  "pid": 5}


def _shortcut_source(tag, a, ancestors):
  """The actuator default a shortcut `tag` takes its parameters (kp, kv, area...) from, as
  MuJoCo 4: the nearest of `a` (its own class's default) and `ancestors` written with the same
  shortcut, or with <general> and the shortcut's gain type; None: its documented defaults."""
  for src in [a] + list(ancestors):
    if src.acttype == tag or (src.acttype == "general" and src.gaintype == _SHORTCUT_GAIN[tag]):
      return src
  return None


def apply_actuator(n, a, ancestors=()):
  """Apply one actuator element (general or a shortcut) to actuator state `a`, as MuJoCo 4:
  mechanical attributes (ctrlrange, gear...) are inherited from the class's default whatever
  wrote it; a shortcut writes its whole gain/bias/dynamics table, its parameters inherited only
  from the default `_shortcut_source` finds (modeling chapter, "Shortcuts")."""
  rd = _Reader(n, None)
  a.group = rd.int("group", a.group)
  a.ctrllimited = rd.kw("ctrllimited", _LIMITED, a.ctrllimited)
  a.forcelimited = rd.kw("forcelimited", _LIMITED, a.forcelimited)
  a.actlimited = rd.kw("actlimited", _LIMITED, a.actlimited)
  a.ctrlrange = rd.exact("ctrlrange", a.ctrlrange, 2)
  a.forcerange = rd.exact("forcerange", a.forcerange, 2)
  a.actrange = rd.exact("actrange", a.actrange, 2)
  a.lengthrange = rd.exact("lengthrange", a.lengthrange, 2)
  a.gear = rd.vec("gear", a.gear, 6)
  a.cranklength = rd.num("cranklength", a.cranklength)
  a.actearly = rd.kw("actearly", _BOOL, a.actearly)
  a.damping, *a.dampingpoly = rd.vec("damping", [a.damping] + a.dampingpoly, 3)
  a.armature = rd.num("armature", a.armature)
  a.velrange = rd.exact("velrange", a.velrange, 2)
  a.ffrange = rd.exact("ffrange", a.ffrange, 2)
  a.nsample = rd.int("nsample", a.nsample)   # control history (engine/history.py)
  a.interp = rd.kw("interp", INTERP, a.interp)
  a.delay = rd.num("delay", a.delay)
  if "user" in n.attrib:
    a.user = _user(n, n.attrib["user"])
  tag = n.tag
  inh = False
  if tag in _SHORTCUT_GAIN:
    src = _shortcut_source(tag, a, ancestors)
    inh = src is not None
    if inh and src is not a:
      for key in ("gainprm", "biasprm", "dynprm"):
        a[key] = list(src[key])
      a.dyntype, a.gaintype, a.biastype = src.dyntype, src.gaintype, src.biastype
      a.ctrlspec = src.ctrlspec
    elif not inh:
      fresh = default_actuator()
      for key in ("gainprm", "biasprm", "dynprm", "dyntype", "gaintype", "biastype"):
        a[key] = fresh[key]
    # the activation layout is the shortcut's too: actlimited automatic, actearly off
    a.actdim, a.actlimited, a.actearly = -1, 2, False
    a.acttype = tag
  elif tag == "general":
    a.acttype = "general"
  if tag in SHORTCUT_INPUT:
    a.ctrlspec = SHORTCUT_INPUT[tag]
  if tag == "general":
    a.dyntype = rd.kw("dyntype", DYN, a.dyntype)
    gaintype = rd.kw("gaintype", GAIN, a.gaintype)
    if gaintype != a.gaintype:
      a.ctrlspec = 0   # an inherited input signature belongs to the old gaintype
    a.gaintype = gaintype
    a.biastype = rd.kw("biastype", BIAS, a.biastype)
    a.dynprm = rd.vec("dynprm", a.dynprm, 10)
    a.gainprm = rd.vec("gainprm", a.gainprm, 10)
    a.biasprm = rd.vec("biasprm", a.biasprm, 10)
    a.actdim = rd.int("actdim", a.actdim)
    a.inheritrange = rd.num("inheritrange", a.inheritrange)
    spec = read_input(n)
    if spec is not None:
      a.ctrlspec = spec
  elif tag == "plugin":   # an actuator plugin (mujoco.pid): its dynamics and state size
    a.dyntype = rd.kw("dyntype", DYN, a.dyntype)
    a.dynprm = rd.vec("dynprm", a.dynprm, 10)
    a.actdim = rd.int("actdim", a.actdim)
  elif tag == "pid":
    set_pid(rd, a, inh)
  elif tag == "dcmotor":
    set_dcmotor(rd, a, inh)
  elif tag == "orientation":
    set_orientation(rd, a, inh)
  elif tag == "motor":
    _table(a, 0, 0, 0, [1.0], [], [])
  elif tag in ("position", "intvelocity"):
    kp = rd.num("kp", a.gainprm[0] if inh else 1.0)
    bias2 = read_kv(rd, a.biasprm[2] if inh else 0.0)
    tc = a.dynprm[0] if inh and a.dyntype == 3 else 0.0
    if "timeconst" in n.attrib:
      tc = rd.num("timeconst", 0.0)
      if tc < 0:
        raise n.error("timeconst cannot be negative")
    a.inheritrange = rd.num("inheritrange", a.inheritrange)
    if a.inheritrange > 0 and tag == "position" and (a.ctrlrange[0] or a.ctrlrange[1]):
      raise n.error("ctrlrange and inheritrange cannot both be defined")
    dyn = [tc] if "timeconst" in n.attrib or tc > 0 else []
    _table(a, 0 if tc == 0 else 3, 0, 1, [kp], [0.0, -kp, bias2], dyn)
    if tag == "intvelocity":
      a.dyntype = 1
      if a.inheritrange > 0 and (a.actrange[0] or a.actrange[1]):
        raise n.error("actrange and inheritrange cannot both be defined")
  elif tag == "velocity":
    kv = rd.num("kv", a.gainprm[0] if inh else 1.0)
    _table(a, 0, 0, 1, [kv], [0.0, 0.0, -kv], [])
  elif tag == "muscle":
    _set_muscle(rd, a, inh)
  elif tag == "cylinder":
    tc = rd.num("timeconst", a.dynprm[0] if inh else 1.0)
    area = rd.num("area", a.gainprm[0] if inh else 1.0)
    if "diameter" in n.attrib:
      area = math.pi / 4 * rd.num("diameter", 0.0) ** 2
    bias = rd.exact("bias", a.biasprm[0:3] if inh else [0.0] * 3, 3)
    _table(a, 2, 0, 1, [area], list(bias), [tc])
  elif tag == "adhesion":
    gain = rd.num("gain", a.gainprm[0] if inh else 1.0)
    if gain < 0:
      raise n.error("adhesion gain cannot be negative")
    _table(a, 0, 0, 0, [gain], [], [])
    a.ctrllimited = 1
    if a.ctrlrange[0] < 0 or a.ctrlrange[1] < 0:
      raise n.error("adhesion control range cannot be negative")
  elif tag == "damper":
    kv = rd.num("kv", -a.gainprm[2] if inh else 0.0)
    _table(a, 0, 1, 0, [0.0, 0.0, -kv], [], [])
    a.ctrllimited = 1
    if kv < 0:
      raise n.error("damping coefficient cannot be negative")
    if a.ctrlrange[0] < 0 or a.ctrlrange[1] < 0:
      raise n.error("damper control range cannot be negative")


def _table(a, dyntype, gaintype, biastype, gain, bias, dyn):
  """A shortcut's whole actuator table: the types, and gain/bias/dynamics parameters that
  start with `gain`, `bias`, `dyn` and are otherwise MuJoCo's defaults (gainprm and dynprm
  1 0 0..., biasprm zeros)."""
  a.dyntype, a.gaintype, a.biastype = dyntype, gaintype, biastype
  a.gainprm = (list(gain) + [0.0] * 10)[:10] if gain else [1.0] + [0.0] * 9
  a.biasprm = (list(bias) + [0.0] * 10)[:10]
  a.dynprm = (list(dyn) + [0.0] * 10)[:10] if dyn else [1.0] + [0.0] * 9


_MUSCLE_PRM = [0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2]


def _set_muscle(rd, a, inh):
  """The muscle shortcut (mjs_setToMuscle): muscle dynamics, gain and bias with shared prm;
  parameters inherited from the default `_shortcut_source` found (`inh`)."""
  tc = rd.exact("timeconst", a.dynprm[0:2] if inh else [0.01, 0.04], 2)
  smooth = rd.num("tausmooth", a.dynprm[2] if inh else 0.0)
  if smooth < 0:
    raise rd.node.error("muscle tausmooth cannot be negative")
  base = a.gainprm[0:9] if inh else list(_MUSCLE_PRM)
  prm = list(rd.exact("range", base[0:2], 2))
  for k, key in enumerate(("force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax")):
    prm.append(rd.num(key, base[2 + k]))
  _table(a, 4, 2, 2, prm, prm, list(tc) + [smooth])


def finish_actuator(c, a):
  """Checks and derived values of mjCActuator::Compile (inheritrange, limits, actdim)."""
  n = a.node
  # PID / DC-motor / SO3 checks; these fix their own input, output and activation layout
  resolve_layout(c, a)
  _check_history(n, a.nsample, a.delay)
  if (a.delay > 0 or a.nsample > 0) and a.ctrlnum == 0:
    raise n.error(f"history and delay require an input in actuator '{a.name}'")
  if (((a.gaintype == 0 and a.gainprm[0] == -a.biasprm[1]) or a.gaintype == t.mjtGain.PID)
      and a.biastype == 1 and a.inheritrange > 0):
    if a.dyntype in (0, 3, 6):
      rng = "ctrlrange"
    elif a.dyntype == 1:
      rng = "actrange"
    else:
      raise n.error("inheritrange only available for position and intvelocity actuators")
    if a.trntype not in (0, 1, 3):
      raise n.error("inheritrange needs a joint or tendon transmission")
    if a.trntype in (0, 1):
      j = c.all_joints()[a.trnid[0]]
      if j.type not in (2, 3):
        raise n.error("inheritrange can only be used with hinge and slide joints")
      target = j.range
    else:
      target = c.tendons[a.trnid[0]].range
    if target[0] == target[1]:
      raise n.error("inheritrange used but target has no range defined")
    mean = 0.5 * (target[1] + target[0])
    radius = 0.5 * (target[1] - target[0]) * a.inheritrange
    a[rng] = [mean - radius, mean + radius]
  for lim, rng in (("forcelimited", "forcerange"), ("ctrllimited", "ctrlrange"),
                   ("actlimited", "actrange")):
    if a[lim] == 2 and not c.autolimits and a[rng] != [0.0, 0.0]:
      raise n.error(f"actuator has '{rng}' but not '{lim}'; set compiler autolimits='true' "
                    f"or specify '{lim}'")
    on = a[lim] == 1 or (a[lim] == 2 and a[rng][0] < a[rng][1])
    a["is_" + lim] = on
    if on and a[rng][0] >= a[rng][1]:
      raise n.error(f"invalid {rng} for actuator")
  if a.is_actlimited and a.dyntype == 0:
    raise n.error("actrange specified but dyntype is 'none' in actuator")
  if a.plugin is None:   # a plugin's state size is the plugin's (engine/mjcf/_plugin.py)
    if a.actdim > 1 and a.dyntype not in (5, 7) and not a.so3 and a.gaintype != t.mjtGain.PID:
      raise n.error("actdim > 1 is only allowed for dyntype 'user' and 'dcmotor'")
    if a.actdim == 1 and a.dyntype == 0:
      raise n.error("invalid actdim 1 in stateless actuator")
    if a.actdim == 0 and a.dyntype not in (0, 5):
      raise n.error("invalid actdim 0 in stateful actuator")
  if a.actdim < 0:
    a.actdim = int(a.dyntype not in (0, 5))
  a.ctrlranges = control_ranges(a)
