"""Fluid forces (inertia-box and ellipsoid models) against MuJoCo's mj_fluid."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop, io
from tests.models import quat_adrs, suite_mjmodel

RTOL, ATOL = 1e-9, 1e-10

_BODIES = """
    <body name="box" pos="0 0 1">
      <freejoint/>
      <geom type="box" size=".1 .2 .05" {fs} mass="1.3"/>
    </body>
    <body name="sphere" pos="1 0 1">
      <freejoint/>
      <geom type="sphere" size=".15" {fs}/>
    </body>
    <body name="capsule" pos="2 0 1" quat="0.9 0.1 0.3 0.2">
      <freejoint/>
      <geom type="capsule" size=".05 .3" {fs}/>
    </body>
    <body name="cylinder" pos="3 0 1">
      <freejoint/>
      <geom type="cylinder" size=".1 .2" {fs} pos=".1 0 0" euler="10 20 30"/>
    </body>
    <body name="ellipsoid" pos="4 0 1">
      <freejoint/>
      <geom type="ellipsoid" size=".3 .1 .05" {fs}/>
    </body>
    <body name="twogeoms" pos="5 0 1">
      <freejoint/>
      <geom type="box" size=".1 .1 .1" pos="0 0 .2" {fs}/>
      <geom type="capsule" size=".05 .2" pos="0 .2 0" euler="0 90 0"/>
      <body name="child" pos="0 0 -.4">
        <joint type="ball"/>
        <geom type="ellipsoid" size=".2 .1 .1" {fs}/>
        <body name="grandchild" pos="0 0 -.3">
          <joint type="hinge" axis="0 1 0"/>
          <joint type="slide" axis="1 0 0"/>
          <geom type="box" size=".05 .1 .15" {fs}/>
        </body>
      </body>
    </body>
    <body name="static" pos="0 2 1">
      <geom type="sphere" size=".2" {fs}/>
    </body>
    <body name="mocap" mocap="true" pos="1 2 1">
      <geom type="box" size=".2 .1 .1" {fs}/>
    </body>
"""


def _model_xml(fluidshape="", option='density="1.2" viscosity="1.5e-5" wind="0.5 -1 0.3"'):
  """Free bodies of every primitive type (plus a small chain) in a fluid, geoms not colliding."""
  return f"""
  <mujoco>
    <option {option}/>
    <default><geom contype="0" conaffinity="0"/></default>
    <worldbody>{_BODIES.format(fs=fluidshape)}</worldbody>
  </mujoco>"""


_ELLIPSOID = 'fluidshape="ellipsoid"'
_COEFS = 'fluidshape="ellipsoid" fluidcoef="0.7 0.3 1.8 1.2 0.9"'

MODELS = {
    "box_model": _model_xml(),
    "box_density_only": _model_xml(option='density="1000" wind="1 2 3"'),
    "box_viscosity_only": _model_xml(option='viscosity="0.1"'),
    "ellipsoid_model": _model_xml(_ELLIPSOID),
    "ellipsoid_coefs": _model_xml(_COEFS),
    "ellipsoid_water": _model_xml(_COEFS, option='density="1000" viscosity="0.0009" wind="0 0 -.4"'),
    "ellipsoid_viscosity_only": _model_xml(_ELLIPSOID, option='viscosity="0.3"'),
}


def _fish(ellipsoid=False):
  """dm_control's fish (inertia box, density 5000); optionally with ellipsoid fluid on every geom."""
  import os
  from dm_control import suite
  from dm_control.suite import common
  path = os.path.join(os.path.dirname(suite.__file__), "fish.xml")
  with open(path) as f:
    xml = f.read()
  if ellipsoid:
    xml = xml.replace("<geom ", '<geom fluidshape="ellipsoid" ')
    xml = xml.replace('density="5000"', 'density="5000" viscosity="0.01"')
  return mujoco.MjModel.from_xml_string(xml, common.ASSETS)


def _load(name):
  if name == "swimmer":
    return suite_mjmodel("swimmer")
  if name == "fish":
    return _fish()
  if name == "fish_ellipsoid":
    return _fish(ellipsoid=True)
  return mujoco.MjModel.from_xml_string(MODELS[name])


def _random_state(mjm, mjd, rng, vel_scale):
  """Random configuration (unit quaternions) and velocity, also for mocap bodies."""
  mjd.qpos[:] = mjm.qpos0 + 0.3 * rng.standard_normal(mjm.nq)
  for adr in quat_adrs(mjm):
    q = mjd.qpos[adr:adr + 4]
    mujoco.mju_normalize4(q)
  mjd.qvel[:] = vel_scale * rng.standard_normal(mjm.nv)
  if mjm.nmocap:
    mjd.mocap_pos[:] += 0.1 * rng.standard_normal((mjm.nmocap, 3))
    quat = rng.standard_normal((mjm.nmocap, 4))
    mjd.mocap_quat[:] = quat / np.linalg.norm(quat, axis=1, keepdims=True)


def _compare(mjm, seed, vel_scale=2.0):
  """Random state: our qfrc_fluid / qfrc_passive against MuJoCo's; returns the fluid force."""
  m = interop.model_from_mujoco(mjm)
  d = io.make_data(m)
  mjd = mujoco.MjData(mjm)
  _random_state(mjm, mjd, np.random.default_rng(seed), vel_scale)
  interop.data_from_mujoco(mjd, d)
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  np.testing.assert_allclose(d.qfrc_fluid, mjd.qfrc_fluid, rtol=RTOL, atol=ATOL)
  np.testing.assert_allclose(d.qfrc_passive, mjd.qfrc_passive, rtol=RTOL, atol=ATOL)
  return mjd.qfrc_fluid.copy()


@pytest.mark.parametrize("name", list(MODELS) + ["swimmer", "fish", "fish_ellipsoid"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fluid_matches_mujoco(name, seed):
  mjm = _load(name)
  frc = _compare(mjm, seed)
  # the comparison must be meaningful: forces are really there
  assert np.abs(frc).max() > 1e-6


def test_ellipsoid_model_in_use():
  """Ellipsoid models really take the ellipsoid path, mixed with inertia-box bodies."""
  mjm = _load("ellipsoid_coefs")
  assert mjm.geom_fluid[:, 0].max() > 0 and mjm.geom_fluid[:, 0].min() == 0
  fish = _fish(ellipsoid=True)
  assert fish.geom_fluid[:, 0].min() > 0


def test_high_speed():
  """Quadratic terms dominate at high speed; still matches."""
  for name in ("box_model", "ellipsoid_coefs"):
    _compare(_load(name), seed=5, vel_scale=50.0)


def test_zero_velocity_wind_only():
  """At rest only the wind acts (and the static / mocap bodies stay unaffected)."""
  mjm = _load("ellipsoid_model")
  m = interop.model_from_mujoco(mjm)
  d = io.make_data(m)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  assert np.abs(mjd.qfrc_fluid).max() > 1e-6
  np.testing.assert_allclose(d.qfrc_fluid, mjd.qfrc_fluid, rtol=RTOL, atol=ATOL)


def test_no_fluid():
  """Without density and viscosity nothing is applied and qfrc_fluid stays zero."""
  mjm = mujoco.MjModel.from_xml_string(_model_xml(_ELLIPSOID, option='wind="1 2 3"'))
  m = interop.model_from_mujoco(mjm)
  d = io.make_data(m)
  mjd = mujoco.MjData(mjm)
  _random_state(mjm, mjd, np.random.default_rng(3), 2.0)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  assert not np.any(d.qfrc_fluid)


_SMALL = """
  <mujoco>
    <option density="1000" viscosity="0.0009" wind="0.01 0 -0.02"/>
    <default><geom contype="0" conaffinity="0" fluidshape="ellipsoid"/></default>
    <worldbody>
      <body pos="0 0 1">
        <freejoint/>
        <geom type="capsule" fromto="0 .079 0 0 .07 0" size=".005"/>
        <geom type="box" size=".002 .06 .03" pos="0 -.02 0"/>
        <body name="plate" pos="0 -.1 0">
          <joint type="ball"/>
          <geom type="ellipsoid" size=".0005 .01 .02"/>
        </body>
      </body>
    </worldbody>
  </mujoco>"""


@pytest.mark.parametrize("vel_scale", [1e-6, 1e-3, 1.0])
@pytest.mark.parametrize("wind", [True, False])
def test_small_geoms_slow_motion(vel_scale, wind):
  """mm-sized and thin geoms at low speed: MuJoCo keeps the Kutta lift's v^2 scaling."""
  mjm = mujoco.MjModel.from_xml_string(_SMALL)
  if not wind:
    mjm.opt.wind[:] = 0.0
  m = interop.model_from_mujoco(mjm)
  d = io.make_data(m)
  mjd = mujoco.MjData(mjm)
  _random_state(mjm, mjd, np.random.default_rng(7), vel_scale)
  interop.data_from_mujoco(mjd, d)
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  # forces are tiny at low speed: compare relative to their own scale
  scale = np.abs(mjd.qfrc_fluid).max()
  assert scale > 0
  np.testing.assert_allclose(d.qfrc_fluid / scale, mjd.qfrc_fluid / scale, rtol=RTOL, atol=ATOL)
