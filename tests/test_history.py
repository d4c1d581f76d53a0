"""Control and sensor history (MuJoCo 4's nsample / interp / delay / interval) against the
installed MuJoCo 4.0.

MuJoCo's own test model (test/testdata/delay.xml) and a small arm whose actuators (motor,
position, affine-gain, integrator, filter, 3-input PID, history-only motor) and sensors
(position, velocity, acceleration stages; interval sensors with and without phase and delay) use
every interp kind and delays that are not multiples of the timestep, and a contact scene
(delayed touch, force, torque, quaternion, subtree, energy and limit sensors; delayed muscle and
DC motor). Checked: compiled fields and d.history after reset and keyframe reset; 250-step
rollouts under Euler, implicit, implicitfast and RK4 with a new random control every step, free-
running and teacher-forced, comparing qpos, qvel, act, sensordata and the buffers themselves;
the Python helpers (read_ctrl, read_sensor, init_ctrl_history, init_sensor_history) against
mj_readCtrl & co; time moved backwards (the out-of-order insert); MuJoCo's load errors for bad
values.
"""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import history
from numjoco.engine.mjcf import MjcfError
from tests.models import arm_chain, assert_close, models_of

_DELAY_XML = "/tmp/lead/mjtree/test/testdata/delay.xml"
_DELAY_INLINE = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body name="body">
      <joint name="slide" type="slide"/>
      <geom size=".1"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="motor0" joint="slide" delay="0.05" nsample="6"/>
  </actuator>
  <sensor>
    <jointpos name="jointpos0" joint="slide" delay="0.025" interp="linear" nsample="4"/>
    <jointpos name="jointpos1" joint="slide" interval="0.025" nsample="3"/>
    <framepos name="framepos0" objtype="body" objname="body" nsample="5"/>
  </sensor>
</mujoco>
"""

ARM = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <default>
    <geom type="capsule" size="0.03"/>
    <default class="late"><motor nsample="3" delay="0.0035" interp="cubic"/></default>
  </default>
  <worldbody>
""" + arm_chain(in_b3='          <site name="tip" pos="0.05 0.01 0"/>') + """\
  </worldbody>
  <actuator>
    <motor name="a0" joint="h1" gear="2" nsample="3" delay="0.006"/>
    <position joint="h2" kp="20" kv="1" nsample="4" delay="0.005" interp="linear"
              ctrlrange="-1 1"/>
    <general joint="s3" gaintype="affine" gainprm="1 0 -0.4" nsample="3" delay="0.0035"
             interp="cubic"/>
    <intvelocity joint="h1" kp="5" nsample="2" delay="0.003" interp="linear" actrange="-1 1"/>
    <general joint="h2" dyntype="filter" dynprm="0.01" nsample="5" delay="0.0071"/>
    <pid joint="s3" kp="30" kv="2" ki="3" input="pos vel ff" nsample="3" delay="0.004"
         interp="linear"/>
    <motor joint="h2" nsample="5"/>
    <motor class="late" joint="s3"/>
  </actuator>
  <sensor>
    <jointpos joint="h1" nsample="4" delay="0.005" interp="linear"/>
    <jointvel joint="h2" nsample="3" delay="0.004" interp="cubic"/>
    <framepos objtype="site" objname="tip" nsample="3" interval="0.005"/>
    <accelerometer site="tip" nsample="4" delay="0.004" interval="0.006 -0.002"/>
    <actuatorfrc actuator="a0" nsample="2"/>
    <clock nsample="3" delay="0.003" interp="linear"/>
    <framelinvel objtype="site" objname="tip" nsample="6" delay="0.0093" interp="cubic"
                 interval="0.003"/>
    <jointpos joint="s3"/>
  </sensor>
  <keyframe>
    <key name="k" time="0.3" qpos="0.1 -0.2 0.05" ctrl="0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1"/>
  </keyframe>
</mujoco>
"""

_MODEL_FIELDS = ("actuator_history", "actuator_historyadr", "actuator_delay", "sensor_history",
                 "sensor_historyadr", "sensor_delay", "sensor_interval")


def _arm(integrator="Euler"):
  xml = ARM.format(integrator=integrator)
  return models_of(xml)


def _delay_model():
  xml = open(_DELAY_XML).read() if os.path.exists(_DELAY_XML) else _DELAY_INLINE
  return models_of(xml)


def _check_fields(m, mjm):
  assert m.nhistory == mjm.nhistory
  for f in _MODEL_FIELDS:
    assert_close(getattr(m, f), getattr(mjm, f), f, 0, 0)


def test_compiled_fields_delay_xml():
  """MuJoCo's delay.xml: nhistory, actuator_/sensor_ history, historyadr, delay, interval."""
  _check_fields(*_delay_model())


def test_compiled_fields_arm():
  """The arm: a 3-input PID stores 3 values per sample, defaults carry nsample/delay/interp,
  sensors of dim 1 and 3, interval with a phase."""
  m, mjm = _arm()
  _check_fields(m, mjm)
  assert m.actuator_history[7].tolist() == [3, 2]   # from the default class
  assert m.nhistory > 0


@pytest.mark.parametrize("which", ["delay.xml", "arm"])
def test_reset_buffers(which):
  """make_data, reset_data and a keyframe reset leave d.history as mj_resetData and
  mj_resetDataKeyframe do (timestamps before t = 0, interval sensors on their period grid,
  phase in the user slot), also after steps moved it."""
  m, mjm = _delay_model() if which == "delay.xml" else _arm()
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  assert_close(d.history, mjd.history, "make_data", 0, 1e-15)
  assert np.any(d.history != 0)
  numjoco.step(m, d, 7)
  numjoco.reset_data(m, d)
  assert_close(d.history, mjd.history, "reset_data", 0, 1e-15)
  if mjm.nkey:
    numjoco.step(m, d, 7)
    numjoco.reset_data(m, d, "k")
    mujoco.mj_resetDataKeyframe(mjm, mjd, 0)
    assert_close(d.history, mjd.history, "keyframe reset", 0, 1e-15)
    assert d.time == mjd.time == 0.3


def _copy_state(mjd, d):
  """MuJoCo's full physics state (mjSTATE_INTEGRATION incl. mjSTATE_HISTORY) into ours."""
  from numjoco.engine import interop
  interop.data_from_mujoco(mjd, d)
  d.history[:] = mjd.history


def _rollout(m, mjm, steps, seed, teacher):
  rng = np.random.default_rng(seed)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  keys = ("qpos", "qvel", "act", "sensordata", "history", "actuator_force")
  ours, theirs = [], []
  for _ in range(steps):
    ctrl = rng.uniform(-1.5, 1.5, mjm.nu)   # beyond ctrlrange: clamped, but stored raw
    mjd.ctrl[:] = ctrl
    if teacher:
      _copy_state(mjd, d)
    d.ctrl[:] = ctrl
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    ours.append({k: np.array(getattr(d, k)) for k in keys})
    theirs.append({k: np.array(getattr(mjd, k)) for k in keys})
  return ours, theirs


@pytest.mark.parametrize("teacher", [False, True], ids=["free", "teacher"])
@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_rollout_arm(integrator, teacher):
  """250 steps with a new random control every step: qpos, qvel, act, actuator_force,
  sensordata and d.history follow MuJoCo 4.0 to 1e-9 (relative to each field's scale)."""
  m, mjm = _arm(integrator)
  ours, theirs = _rollout(m, mjm, 250, seed=5, teacher=teacher)
  for k in ours[0]:
    a = np.array([o[k] for o in ours])
    b = np.array([o[k] for o in theirs])
    scale = max(1.0, np.abs(b).max())
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * scale,
                               err_msg=f"{integrator} {k}")
    assert np.abs(b).max() > 0, f"{k} never moved"


def test_rollout_delay_xml():
  """MuJoCo's delay.xml, 200 Euler steps of random motor controls."""
  m, mjm = _delay_model()
  ours, theirs = _rollout(m, mjm, 200, seed=1, teacher=False)
  for k in ours[0]:
    a = np.array([o[k] for o in ours])
    b = np.array([o[k] for o in theirs])
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(b).max(initial=0)),
                               err_msg=k)


def test_delay_is_physical():
  """Independent of MuJoCo: a motor delayed by 0.006 s (3 steps) on a free slider gives the
  force of the control set 3 steps earlier, zero before (the buffer starts at zero)."""
  xml = """<mujoco><option timestep="0.002" gravity="0 0 0"/><worldbody><body>
    <joint type="slide"/><geom size=".1" mass="2"/></body></worldbody>
    <actuator><motor joint="0" nsample="3" delay="0.006"/></actuator></mujoco>"""
  xml = xml.replace('joint="0"', 'joint="j"').replace('<joint type', '<joint name="j" type')
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  u = [1.0, -2.0, 3.0, 0.5, 4.0, -1.0]
  forces = []
  for c in u:
    d.ctrl[0] = c
    numjoco.step(m, d)
    forces.append(d.actuator_force[0])
  assert forces == [0.0, 0.0, 0.0] + u[:3]


def test_forward_without_step():
  """forward at reset reads the delayed sensors and controls from the initial buffers."""
  m, mjm = _arm()
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  d.ctrl[:] = mjd.ctrl[:] = np.linspace(-1, 1, mjm.nu)
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  assert_close(d.sensordata, mjd.sensordata, "sensordata", 1e-10, 1e-10)
  assert_close(d.actuator_force, mjd.actuator_force, "actuator_force", 1e-10, 1e-10)


def _stepped_pair(steps=23):
  m, mjm = _arm()
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(2)
  for _ in range(steps):
    d.ctrl[:] = mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert_close(d.history, mjd.history, "history", 1e-10, 1e-10)
  d.history[:] = mjd.history   # the helpers below are compared on identical buffers
  return m, mjm, d, mjd


def test_read_helpers():
  """read_ctrl / read_sensor equal mj_readCtrl / mj_readSensor for every interp, at times
  on, between and outside the stored samples."""
  m, mjm, d, mjd = _stepped_pair()
  times = d.time + np.array([-0.1, -0.0123, -0.006, -0.0051, -0.003, -0.0007, 0.0, 0.004,
                             0.05])
  for interp in (-1, 0, 1, 2):
    for t in times:
      for i in range(mjm.nactuator):
        want = np.zeros(mjm.actuator_ctrlnum[i])
        ptr = mujoco.mj_readCtrl(mjm, mjd, i, t, want, interp)
        want = np.array(ptr if ptr is not None else want).ravel()
        assert_close(history.read_ctrl(m, d, i, t, interp), want, f"ctrl {i} {t} {interp}",
                     1e-12, 1e-12)
      for i in range(mjm.nsensor):
        want = np.zeros(mjm.sensor_dim[i])
        ptr = mujoco.mj_readSensor(mjm, mjd, i, t, want, interp)
        want = np.array(ptr if ptr is not None else want).ravel()
        assert_close(history.read_sensor(m, d, i, t, interp), want,
                     f"sensor {i} {t} {interp}", 1e-12, 1e-12)
  with pytest.raises(ValueError, match="invalid actuator id"):
    history.read_ctrl(m, d, mjm.nactuator, d.time)
  with pytest.raises(ValueError, match="interp"):
    history.read_sensor(m, d, 0, d.time, 3)


def test_init_helpers():
  """init_ctrl_history / init_sensor_history write the buffers as mj_initCtrlHistory /
  mj_initSensorHistory (times kept when None, phase in the user slot); the rollout then goes
  on as MuJoCo's."""
  m, mjm, d, mjd = _stepped_pair()
  pid = 5
  n, dim = mjm.actuator_history[pid, 0], mjm.actuator_ctrlnum[pid]
  vals = np.arange(n * dim, dtype=float).reshape(n, dim) * 0.1
  times = d.time + np.array([-0.01, -0.004, -0.001])
  mujoco.mj_initCtrlHistory(mjm, mjd, pid, times, vals)
  history.init_ctrl_history(m, d, pid, times, vals)
  mujoco.mj_initCtrlHistory(mjm, mjd, 0, None, np.ones((3, 1)))
  history.init_ctrl_history(m, d, 0, None, np.ones((3, 1)))
  sid = 3
  n, dim = mjm.sensor_history[sid, 0], mjm.sensor_dim[sid]
  svals = np.linspace(-1, 1, n * dim).reshape(n, dim)
  mujoco.mj_initSensorHistory(mjm, mjd, sid, None, svals, d.time - 0.001)
  history.init_sensor_history(m, d, sid, None, svals, d.time - 0.001)
  assert_close(d.history, mjd.history, "after init", 0, 0)
  for _ in range(20):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert_close(d.history, mjd.history, "history", 1e-10, 1e-10)
  assert_close(d.qpos, mjd.qpos, "qpos", 1e-10, 1e-10)
  with pytest.raises(ValueError, match="strictly increasing"):
    history.init_ctrl_history(m, d, 0, [0.0, 0.0, 1.0], None)
  with pytest.raises(ValueError, match="no history buffer"):
    history.init_sensor_history(m, d, 7, None, [0.0], 0.0)


def test_time_moved_back():
  """Setting d.time back (a user rewinding) makes the step insert older samples out of order
  and overwrite samples at equal times, as mju_historyInsert does."""
  m, mjm, d, mjd = _stepped_pair()
  for back in (0.0031, 0.004, 0.1):
    d.time = mjd.time = mjd.time - back
    for _ in range(2):
      d.ctrl[:] = mjd.ctrl[:] = np.linspace(-0.5, 0.7, mjm.nu)
      mujoco.mj_step(mjm, mjd)
      numjoco.step(m, d)
    assert_close(d.history, mjd.history, f"history after going back {back}", 1e-10, 1e-10)
    assert_close(d.sensordata, mjd.sensordata, "sensordata", 1e-9, 1e-9)


_BASE = """<mujoco><option timestep="{ts}"/>
<worldbody><body><joint name="j" type="slide"/><geom size=".1" mass="1"/></body></worldbody>
<actuator>{act}</actuator><sensor>{sen}</sensor></mujoco>"""

BAD = [
    (dict(act='<motor joint="j" delay="0.05"/>'), "delay > 0 without a history buffer"),
    (dict(act='<motor joint="j" nsample="2.5"/>'), "expected an integer"),
    (dict(act='<motor joint="j" nsample="2" interp="quad"/>'), "invalid value 'quad'"),
    (dict(act='<motor joint="j" nsample="16777217"/>'), "at most 2^24 samples"),
    (dict(act='<motor joint="j" nsample="2"/>', ts="0"), "require positive timestep"),
    (dict(act='<dcmotor joint="j" nsample="2" motorconst="1" resistance="1" input="none"/>'),
     "history and delay require an input"),
    (dict(sen='<jointpos joint="j" delay="0.05"/>'), "delay > 0 without a history buffer"),
    (dict(sen='<jointpos joint="j" interval="-0.05" nsample="2"/>'), "negative interval"),
    (dict(sen='<jointpos joint="j" interval="0.05 0.01" nsample="2"/>'), "positive phase"),
    (dict(sen='<jointpos joint="j" interval="0.05 -0.05" nsample="2"/>'),
     "phase must be greater than -period"),
    (dict(sen='<jointpos joint="j" interval="0.05 -0.03 1" nsample="2"/>'), "interval"),
    (dict(sen='<jointpos joint="j" nsample="2" interp="1"/>'), "invalid value '1'"),
]


@pytest.mark.parametrize("case,msg", BAD, ids=[b[1] for b in BAD])
def test_bad_values(case, msg):
  """Each is rejected by MuJoCo 4.0 too; ours is an MjcfError saying what is wrong."""
  kw = dict(ts="0.01", act="", sen="")
  kw.update(case)
  xml = _BASE.format(**kw)
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError) as e:
    numjoco.load_model(xml)
  assert msg in str(e.value), str(e.value)


def test_negative_nsample_refused():
  """A negative nsample (4.0 loads it, then indexes a buffer that does not exist) is an
  error here, not a crash later."""
  with pytest.raises(MjcfError, match="nsample cannot be negative"):
    numjoco.load_model(_BASE.format(ts="0.01", act='<motor joint="j" nsample="-1"/>', sen=""))


ACCEPTED = [
    dict(act='<motor joint="j" delay="-0.05" nsample="2"/>'),
    dict(act='<motor joint="j" delay="-0.05"/>'),
    dict(sen='<jointpos joint="j" delay="-0.05" nsample="2"/>'),
    dict(sen='<jointpos joint="j" interval="0.05"/>'),
    dict(sen='<jointpos joint="j" interval="0 -0.03" nsample="2"/>'),
    dict(sen='<jointpos joint="j" nsample="0" interp="cubic"/>'),
]


@pytest.mark.parametrize("case", ACCEPTED, ids=[str(c) for c in ACCEPTED])
def test_accepted_like_mujoco(case):
  """Values MuJoCo 4.0 loads (a negative delay reads the newest sample; interval or interp
  without a buffer does nothing) load here with the same fields and the same trajectory."""
  kw = dict(ts="0.01", act="", sen="")
  kw.update(case)
  xml = _BASE.format(**kw)
  m, mjm = models_of(xml)
  _check_fields(m, mjm)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  for s in range(30):
    d.ctrl[:] = mjd.ctrl[:] = np.sin(s)
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert_close(d.qpos, mjd.qpos, "qpos", 1e-10, 1e-10)
  assert_close(d.sensordata, mjd.sensordata, "sensordata", 1e-10, 1e-10)
  assert_close(d.history, mjd.history, "history", 1e-10, 1e-10)


CONTACT = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.3">
      <freejoint/>
      <geom type="box" size="0.1 0.08 0.05" mass="1"/>
      <site name="s" type="box" size="0.11 0.09 0.06"/>
      <body pos="0 0 0.1">
        <joint name="h" type="hinge" axis="0 1 0" limited="true" range="-1 1" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.2"/>
        <site name="arm" pos="0.2 0 0"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <muscle joint="h" nsample="3" delay="0.005" interp="linear" ctrlrange="0 1"/>
    <dcmotor joint="h" motorconst="0.05" resistance="2" input="pos" controller="2 0.5 0.1 0 0 0"
             nsample="4" delay="0.006" interp="cubic"/>
  </actuator>
  <sensor>
    <touch site="s" nsample="3" delay="0.004"/>
    <force site="arm" nsample="4" delay="0.005" interp="linear"/>
    <torque site="arm" nsample="3" interval="0.005 -0.001"/>
    <framequat objtype="body" objname="box" nsample="3" delay="0.003" interp="linear"
               interval="0.004"/>
    <subtreelinvel body="box" nsample="5" delay="0.007" interp="cubic"/>
    <e_potential nsample="2" delay="0.002"/>
    <jointlimitfrc joint="h" nsample="3" delay="0.004"/>
  </sensor>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
def test_rollout_contact(integrator):
  """A box landing on a plane with a muscle- and DC-motor-driven arm: delayed touch, force,
  torque (interval with phase), framequat, subtreelinvel, e_potential and joint-limit force
  sensors, delayed muscle and DC-motor controls; 200 steps follow MuJoCo 4.0."""
  xml = CONTACT.format(integrator=integrator)
  m, mjm = models_of(xml)
  _check_fields(m, mjm)
  ours, theirs = _rollout(m, mjm, 200, seed=7, teacher=False)
  for k in ours[0]:
    a = np.array([o[k] for o in ours])
    b = np.array([o[k] for o in theirs])
    scale = max(1.0, np.abs(b).max())
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-7 * scale, err_msg=f"{integrator} {k}")
  touch = np.array([o["sensordata"][0] for o in theirs])
  assert touch.max() > 0   # the box landed while the test ran
