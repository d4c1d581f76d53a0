"""d.sensordata against MuJoCo's: the compiled sensor_* fields, one forward at random states (a
hand-written model with every supported sensor type, dm_control suite models), rollouts under
Euler and RK4, and the errors unsupported sensors give."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from numjoco.engine import types as t
from numjoco.engine.mjcf import MjcfError
from tests.conformance.test_contact import _quadruped_without_terrain
from tests.models import models_named, models_of, random_state

_XML_PATH = os.path.join(os.path.dirname(__file__), "sensor_model.xml")
_ACC = int(mujoco.mjtStage.mjSTAGE_ACC)
_SUITE = ["walker", "humanoid", "cheetah", "hopper", "humanoid_CMU", "fish", "quadruped"]


def _model_xml():
  with open(_XML_PATH) as f:
    return f.read()


def _load(name):
  """(ours, MuJoCo's) for the hand-written model or a suite model, constraints enabled."""
  if name == "sensors":
    return models_of(_model_xml())
  if name == "quadruped":
    xml, assets = _quadruped_without_terrain()
    return models_of(xml, assets=assets)
  return models_named(name, quiet=False)


def _compare(m, mjm, d, mjd, where, rtol_acc=1e-6, atol_acc=1e-6):
  """Sensor by sensor: 1e-9 relative for position/velocity sensors, rtol_acc for acc-stage."""
  assert d.sensordata.shape == (mjm.nsensordata,)
  for i in range(mjm.nsensor):
    a, n = mjm.sensor_adr[i], mjm.sensor_dim[i]
    acc = mjm.sensor_needstage[i] == _ACC
    rtol, atol = (rtol_acc, atol_acc) if acc else (1e-9, 1e-9)
    name = mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_SENSOR, i) or ""
    kind = mujoco.mjtSensor(mjm.sensor_type[i]).name
    np.testing.assert_allclose(d.sensordata[a:a + n], mjd.sensordata[a:a + n], rtol=rtol,
                               atol=atol, err_msg=f"{where}: sensor {i} {kind} {name!r}")


@pytest.mark.parametrize("name", ["sensors"] + _SUITE)
def test_sensor_model_fields(name):
  """nsensor, nsensordata, every sensor_* field and the sensor names equal MuJoCo's."""
  m, mjm = _load(name)
  assert (m.nsensor, m.nsensordata) == (mjm.nsensor, mjm.nsensordata)
  assert m.nsensor > 0
  for fname, _, _ in t.MODEL_TABLE:
    if fname.startswith("sensor_"):
      np.testing.assert_array_equal(getattr(m, fname), getattr(mjm, fname), err_msg=fname)
  names = [mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_SENSOR, i) or ""
           for i in range(mjm.nsensor)]
  assert [numjoco.id2name(m, "sensor", i) or "" for i in range(m.nsensor)] == names


def test_sensor_model_covers_supported_types():
  """The hand-written model has every sensor type the compiler accepts (but tactile and the
  touch-grid plugin, which tests/test_sensor_tactile.py checks on models of their own)."""
  from numjoco.engine.mjcf import _sensor
  m, _ = _load("sensors")
  supported = {int(st) for st, _ in _sensor.TAGS.values()} - {int(_sensor.S.TACTILE),
                                                              int(_sensor.S.PLUGIN)}
  assert supported <= set(int(x) for x in m.sensor_type)
  assert np.any(m.sensor_reftype > 0) and np.any(m.sensor_cutoff > 0)


def test_sensordata_forward():
  """Random states of the hand-written model with the box pressed into the floor (contacts for
  touch/force/torque), a connect constraint, joint limits, applied forces."""
  m, mjm = _load("sensors")
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  touch = mjm.sensor_adr[mjm.sensor_type == int(mujoco.mjtSensor.mjSENS_TOUCH)]
  touched = np.zeros(len(touch), int)
  inside = mjm.sensor_adr[mjm.sensor_type == int(mujoco.mjtSensor.mjSENS_INSIDESITE)]
  inside_hits = np.zeros(len(inside), int)
  for seed in range(8):
    random_state(mjm, mjd, seed, scale=0.3)
    mjd.qpos[2] = 0.09
    interop.data_from_mujoco(mjd, d)
    d.sensordata[:] = np.nan
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    assert mjd.ncon > 0 and d.ncon == mjd.ncon
    touched += mjd.sensordata[touch] > 0
    inside_hits += mjd.sensordata[inside] > 0
    _compare(m, mjm, d, mjd, f"seed {seed}")
    for f in ("cacc", "cfrc_int", "cfrc_ext"):
      np.testing.assert_allclose(getattr(d, f), getattr(mjd, f), rtol=1e-6, atol=1e-6,
                                 err_msg=f"seed {seed}: {f}")
    # e_potential/e_kinetic fill d.energy as MuJoCo's lazy energy does, energy flag off
    np.testing.assert_allclose(d.energy, mjd.energy, rtol=1e-9, atol=1e-12, err_msg="energy")
  # every touch site but the small imu sphere (box, capsule, cylinder, ellipsoid zones) reads
  assert np.sum(touched >= 2) >= 4, f"touch sensors read too little: {touched}"
  # insidesite: each zone type both holds and misses its object at some state
  assert np.sum((inside_hits > 0) & (inside_hits < 8)) >= 3, f"insidesite hits {inside_hits}"


@pytest.mark.parametrize("name", _SUITE)
def test_sensordata_suite(name):
  """Suite models at random states and a few steps into a fall (contacts for touch sensors)."""
  m, mjm = _load(name)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  random_state(mjm, mjd, 0, scale=0.1)
  for k in range(60):
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    _compare(m, mjm, d, mjd, f"{name} step {k}")
    mujoco.mj_step(mjm, mjd)


def test_sensors_disabled():
  """The sensor disable flag leaves sensordata untouched, as MuJoCo."""
  m, mjm = _load("sensors")
  d = numjoco.make_data(m)
  m.opt.disableflags = m.opt.disableflags | int(numjoco.mjtDisableBit.SENSOR)
  d.sensordata[:] = 7.0
  numjoco.forward(m, d)
  assert np.all(d.sensordata == 7.0)


def test_energy_sensor_only_kinetic():
  """An e_kinetic sensor alone: sensordata holds the kinetic energy, d.energy stays zero."""
  xml = """<mujoco><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody>
    <sensor><e_kinetic/></sensor></mujoco>"""
  m, mjm = models_of(xml)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  mjd.qvel[:] = [1, 2, 3, 0.5, -1, 2]
  interop.data_from_mujoco(mjd, d)
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  assert mjd.sensordata[0] > 1
  np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-12)
  np.testing.assert_array_equal(d.energy, mjd.energy)


@pytest.mark.parametrize("integrator", [0, 1])
def test_sensordata_rollout(integrator):
  """300 steps of the hand-written model falling onto the floor, Euler and RK4 (whose inner
  stages skip sensors): sensordata after every step."""
  m, mjm = _load("sensors")
  mjm.opt.integrator = integrator
  m.opt.integrator = integrator
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = random_state(mjm, mjd, 5, scale=0.1)
  mjd.qpos[2] = 0.15
  mjd.xfrc_applied[:] = 0.0
  interop.data_from_mujoco(mjd, d)
  touched = 0
  for k in range(300):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    np.testing.assert_allclose(d.qpos, mjd.qpos, rtol=1e-6, atol=1e-7, err_msg=f"step {k}")
    _compare(m, mjm, d, mjd, f"step {k}", rtol_acc=1e-5, atol_acc=1e-5)
    touched += mjd.ncon > 0
  assert touched > 50, "the box never landed: contact sensors untested"


# --------------------------------------------------------------------------------- errors

_ERR_XML = """<mujoco><worldbody><body name="b"><joint name="j" type="hinge"/>
  <geom size="0.1"/><site name="s"/></body></worldbody>
  <sensor>
    {}
  </sensor></mujoco>"""


_ERRORS = [
    ('<camprojection site="s" camera="c"/>', "unknown camera 'c'"),
    ('<insidesite objtype="body" objname="b"/>', "missing attribute 'site'"),
    ('<distance geom1="g" geom2="h"/>', "unknown geom 'g'"),
    ('<tactile geom="g" mesh="m"/>', "unknown geom 'g'"),
    ('<user dim="2"/>', "sensor <user> is not supported"),
    ('<plugin plugin="x"/>', "plugin 'x' is not supported"),
    ('<bogus site="s"/>', "unknown element <bogus> in <sensor>"),
    ('<jointpos joint="nope"/>', "unknown joint 'nope'"),
    ('<jointpos site="s"/>', "unknown attribute 'site'"),
    ('<jointlimitpos joint="j"/>', "joint must be limited"),
    ('<ballquat joint="j"/>', "joint must be ball"),
    ('<framepos objtype="joint" objname="j"/>', "attribute 'objtype'"),
    ('<framepos objname="b"/>', "missing attribute 'objtype'"),
    ('<framequat objtype="body" objname="b" cutoff="1"/>', "cutoff applied to axis or quat"),
    ('<gyro site="s" noise="-1"/>', "negative noise"),
    ('<gyro site="s" delay="0.1"/>', "delay > 0 without a history buffer"),
    ('<rangefinder camera="c"/>', "unknown camera 'c'"),
    ('<clock name="a"/><clock name="a"/>', "duplicate sensor name 'a'"),
]


@pytest.mark.parametrize("elem, message", _ERRORS)
def test_sensor_errors(elem, message):
  """Unsupported or invalid sensors fail at load time naming file, line and element."""
  with pytest.raises(MjcfError, match=message) as e:
    numjoco.load_model(_ERR_XML.format(elem))
  assert ":4: <" in str(e.value)


