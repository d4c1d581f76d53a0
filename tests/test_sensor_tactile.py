"""The tactile sensor (mjSENS_TACTILE) and the touch-grid sensor plugin
(mujoco.sensor.touch_grid) vs MuJoCo 4.0: compiled sensor and plugin fields, sensordata along
4.0's trajectories of MuJoCo's example models (teacher-forced: our state set to 4.0's), at random
poses against every geom kind a tactile sensor can touch, with cutoffs and other plugin
settings, and the errors for bad input. Models: MuJoCo's model/tactile/tactile.xml,
model/plugin/sensor/touch_grid.xml and test/plugin/sensor/testdata/touch_grid_test.xml
(tests/assets/mujoco_models, unmodified)."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from numjoco.engine.mjcf import MjcfError
from numjoco.engine.mjcf import compile_model
from tests.models import models_and_data

_DIR = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")
TACTILE = os.path.join(_DIR, "model", "tactile", "tactile.xml")
GRID = os.path.join(_DIR, "model", "plugin", "sensor", "touch_grid.xml")
GRID_TEST = os.path.join(_DIR, "test", "plugin", "sensor", "testdata", "touch_grid_test.xml")
_TOL = 1e-6


def _same_ncon(d, mjd, what):
  assert d.ncon == mjd.ncon, f"{what}: ncon"


def _forced(m, d, mjm, mjd, what, contacts=_same_ncon):
  """Our sensordata from 4.0's current state equals 4.0's (relative 1e-6, absolute 1e-6 of
  the largest value) where our contacts agree with 4.0's as `contacts` checks; returns the
  number of nonzero values."""
  mujoco.mj_forward(mjm, mjd)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  contacts(d, mjd, what)
  scale = max(1.0, np.abs(mjd.sensordata).max(initial=0.0))
  np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=_TOL, atol=_TOL * scale,
                             err_msg=what)
  return int(np.count_nonzero(mjd.sensordata))


# ---------------------------------------------------------------------------- compiled fields

_FIELDS = ("sensor_type", "sensor_datatype", "sensor_needstage", "sensor_objtype",
           "sensor_objid", "sensor_reftype", "sensor_refid", "sensor_dim", "sensor_adr",
           "sensor_intprm", "sensor_cutoff", "sensor_plugin", "sensor_history", "plugin",
           "plugin_stateadr", "plugin_statenum", "plugin_attr", "plugin_attradr",
           "mesh_normaladr", "mesh_normalnum", "mesh_normal")


@pytest.mark.parametrize("path", [TACTILE, GRID, GRID_TEST], ids=os.path.basename)
def test_compiled_fields(path):
  """The sensor and plugin fields as 4.0 compiles them (tactile: mesh objtype, geom reftype,
  3 values per vertex, velocity stage; touch grid: a plugin sensor on a site, nchannel x size
  values, acceleration stage); tests/test_mujoco_models.py compares every other field."""
  sizes, A, _ = compile_model(path)
  mjm = mujoco.MjModel.from_xml_path(path)
  for k in ("nsensor", "nsensordata", "nplugin", "npluginattr", "npluginstate", "nmeshnormal"):
    assert sizes.get(k, 0) == getattr(mjm, k), k
  for k in _FIELDS:
    np.testing.assert_array_equal(np.asarray(A[k]), np.asarray(getattr(mjm, k)), err_msg=k)


def test_discardvisual_keeps_what_a_tactile_sensor_names(tmp_path):
  """compiler discardvisual drops non-colliding geoms and unused meshes, but not a tactile
  sensor's geom, nor its mesh when no geom is left that uses it: fields as 4.0's."""
  from tests.models import assert_compiles_as_mujoco
  xml = open(TACTILE).read().replace(
      '<compiler autolimits="true"/>', '<compiler autolimits="true" discardvisual="true"/>'
  ).replace('<tactile geom="finger" mesh="box"/>', '<tactile geom="ball" mesh="box"/>')
  path = tmp_path / "tactile.xml"
  path.write_text(xml)
  ours, mjm = assert_compiles_as_mujoco(str(path), ("jnt_stiffness", "dof_damping"))
  assert mjm.ngeom == 5 and mjm.nmesh == 3   # the finger's mesh geom went, its mesh stayed


def test_model_from_mujoco_knows_the_touch_grid():
  """interop.model_from_mujoco reads the touch grid's parameters from 4.0's config strings:
  the same plugin_kind / plugin_param our compiler makes."""
  for path in (GRID, GRID_TEST, TACTILE):
    _, A, _ = compile_model(path)
    m = interop.model_from_mujoco(mujoco.MjModel.from_xml_path(path))
    np.testing.assert_array_equal(m.plugin_kind, A["plugin_kind"])
    np.testing.assert_array_equal(m.plugin_param, A["plugin_param"])


# ------------------------------------------------------------------------------ tactile

def test_tactile_model_teacher_forced():
  """MuJoCo's tactile.xml (a wedge and a plate of taxels on a ball and a box falling onto an
  SDF gear): every 10th of 400 steps of 4.0's trajectory, with random pushes, our sensordata
  from 4.0's state equals 4.0's (depths and sliding speeds)."""
  m, d, mjm, mjd = models_and_data(TACTILE)
  rng = np.random.default_rng(0)
  nonzero = 0
  for i in range(400):
    mjd.xfrc_applied[1:, :3] = rng.normal(size=(mjm.nbody - 1, 3)) * 0.2
    mujoco.mj_step(mjm, mjd)
    if i % 10 == 9:
      nonzero += _forced(m, d, mjm, mjd, f"step {i}", _same_pairs)
  nv = mjm.mesh_vertnum[mjm.sensor_objid]
  assert nonzero > 1000 and nonzero > 3 * nv.sum()   # depths and speeds seen on many taxels


# a pad of taxels (plate) on a free box, a free ball and every geom kind fixed in the world
_KINDS_XML = """<mujoco>
  <extension><plugin plugin="mujoco.sdf.torus"><instance name="torus"/></plugin></extension>
  <asset>
    <hfield name="h" nrow="3" ncol="3" size=".5 .5 .1 .1" elevation="0 1 0 1 0 1 0 1 0"/>
    <mesh name="plate" builtin="plate" params="15 15" scale=".2 .2 .05"/>
    <mesh name="wedge" builtin="wedge" params="9 9 45 45 0" scale=".2 .2 .2"/>
    <mesh name="tet" vertex="0 0 0  .4 0 0  0 .4 0  0 0 .4"/>
    <mesh name="torus"><plugin instance="torus"/></mesh>
  </asset>
  <worldbody>
    <geom name="plane" type="plane" size="5 5 .1" pos="0 0 -5" euler="10 0 0"/>
    <geom name="box" type="box" size=".3 .3 .3" pos="0 3 0" euler="0 10 20"/>
    <geom name="capsule" type="capsule" size=".2 .3" pos="0 -3 0" euler="30 0 0"/>
    <geom name="cylinder" type="cylinder" size=".2 .3" pos="-3 0 0"/>
    <geom name="ellipsoid" type="ellipsoid" size=".3 .2 .4" pos="-3 3 0"/>
    <geom name="mesh" type="mesh" mesh="tet" pos="3 3 0"/>
    <geom name="sphere" type="sphere" size=".3" pos="-3 -3 0"/>
    <geom name="sdf" type="sdf" mesh="torus" pos="3 -3 0" euler="0 0 30">
      <plugin instance="torus"/>
    </geom>
    <body name="pad" pos="0 0 2">
      <freejoint/>
      <geom type="box" size=".2 .2 .05" mass=".1"/>
      <geom name="surf" type="mesh" mesh="plate" contype="0" conaffinity="0" mass="0"/>
      <geom name="dome" type="mesh" mesh="wedge" contype="0" conaffinity="0" mass="0"
            pos="0 0 -.1"/>
    </body>
    <body name="ball" pos="0 0 4">
      <freejoint/>
      <geom type="sphere" size=".15" mass=".1"/>
    </body>
  </worldbody>
  <sensor>
    <tactile geom="surf" mesh="plate"/>
    <tactile geom="dome" mesh="wedge" {cutoff}/>
  </sensor>
</mujoco>"""


# where the pad goes, from the target geom's position (the torus: over its ring)
_SPOT = {"plane": (0.0, 0.0, 0.0), "sdf": (0.35, 0.0, 0.1), "hf": (0.0, 0.0, 0.1),
         "mesh": (0.05, 0.05, 0.2)}


def _pose(mjm, mjd, rng, target, lift):
  """The pad `lift` above its spot on `target` (for 'ball': the ball that far into the pad's
  top), random tilt and velocities."""
  q = np.array([1.0, 0, 0, 0]) + rng.normal(size=4) * 0.2
  mjd.qpos[3:7] = q / np.linalg.norm(q)
  mjd.qvel[:] = rng.normal(size=mjm.nv)
  noise = [rng.normal() * 0.05, rng.normal() * 0.05, 0.0]
  if target == "ball":
    mjd.qpos[0:3] = [0, 0, 2]
    mjd.qpos[7:10] = np.array([0, 0, 2.15 - lift]) + noise
    return
  g = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, target)
  spot = _SPOT.get(target, (0.0, 0.0, 0.3))
  mjd.qpos[0:3] = mjm.geom_pos[g] + spot + noise + [0, 0, lift]
  mjd.qpos[7:10] = [0, 0, 10]


def _same_pairs(d, mjd, what):
  """The same touching geom pairs as 4.0 (what a tactile sensor reads of the contacts)."""
  ours = {(int(a), int(b)) for a, b in zip(d.contact_geom1[:d.ncon], d.contact_geom2[:d.ncon])}
  ref = {(int(c.geom1), int(c.geom2)) for c in (mjd.contact[k] for k in range(mjd.ncon))}
  assert ours == ref, f"{what}: touching geom pairs"


@pytest.mark.parametrize("cutoff", ["", 'cutoff="0.02"'])
@pytest.mark.parametrize("target", ["plane", "box", "capsule", "cylinder", "ellipsoid",
                                    "sphere", "sdf", "mesh", "ball"])
def test_tactile_against_each_geom_kind(target, cutoff):
  """A plate and a wedge of taxels pressed into each geom kind at random tilts, velocities and
  depths (against a free ball: the other body moves too): sensordata equals 4.0's; mesh geoms,
  which MJCF gives no SDF octree, leave the sensor at zero as in 4.0. A cutoff clamps the
  values as 4.0 does."""
  m, d, mjm, mjd = models_and_data(_KINDS_XML.format(cutoff=cutoff))
  rng = np.random.default_rng(1)
  nonzero = touching = 0
  for k in range(6):
    _pose(mjm, mjd, rng, target, 0.03 * k - 0.02)
    nonzero += _forced(m, d, mjm, mjd, f"{target} pose {k}", _same_pairs)
    touching += mjd.ncon > 0
  assert touching >= 3
  if target == "mesh":
    assert nonzero == 0
  else:
    assert nonzero > 100


def test_tactile_height_field_is_skipped():
  """Where 4.0 stops with 'sdf collisions not available for geom type 1' (a height field
  touching the sensor's body), the engine leaves the height field out of the sensor."""
  xml = _KINDS_XML.format(cutoff="").replace(
      '<geom name="sphere"', '<geom name="hf" type="hfield" hfield="h" pos="6 0 0"/><geom '
      'name="sphere"')
  m, d, mjm, mjd = models_and_data(xml)
  _pose(mjm, mjd, np.random.default_rng(2), "hf", 0.0)
  with pytest.raises(mujoco.FatalError, match="geom type 1"):
    mujoco.mj_forward(mjm, mjd)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  assert d.ncon > 0 and not d.sensordata.any()


def test_tactile_history():
  """A delayed tactile sensor (nsample, delay) reads 4.0's values from its history buffer."""
  xml = open(TACTILE).read().replace('<tactile geom="ball" mesh="sphere"/>',
                                     '<tactile geom="ball" mesh="sphere" nsample="4" '
                                     'delay="0.004" interp="linear"/>')
  cwd = os.getcwd()
  os.chdir(os.path.dirname(TACTILE))
  try:
    m, d, mjm, mjd = models_and_data(xml)
  finally:
    os.chdir(cwd)
  nonzero = 0
  for i in range(300):
    mujoco.mj_step(mjm, mjd)
    if i % 20 == 19:
      nonzero += _forced(m, d, mjm, mjd, f"step {i}", _same_pairs)
  assert nonzero > 0


# ---------------------------------------------------------------------------- touch grid

@pytest.mark.parametrize("path", [GRID, GRID_TEST], ids=os.path.basename)
def test_touch_grid_models_teacher_forced(path):
  """MuJoCo's touch-grid models (an ellipsoid on a height field; a box on a plane seen from
  far above): every 10th of 500 steps of 4.0's trajectory, with random pushes, our sensordata
  from 4.0's state equals 4.0's."""
  m, d, mjm, mjd = models_and_data(path)
  rng = np.random.default_rng(0)
  nonzero = 0
  for i in range(500):
    mjd.xfrc_applied[-1, :3] = rng.normal(size=3) * 0.3
    mujoco.mj_step(mjm, mjd)
    if i % 10 == 9:
      nonzero += _forced(m, d, mjm, mjd, f"step {i}")
  assert nonzero > 100


_GRID_XML = """<mujoco>
  <option cone="{cone}"/>
  <extension><plugin plugin="mujoco.sensor.touch_grid">
    <instance name="grid">
      <config key="nchannel" value="{nchannel}"/><config key="size" value="{size}"/>
      <config key="fov" value="{fov}"/><config key="gamma" value="{gamma}"/>
    </instance>
  </plugin></extension>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body name="pad" pos="0 0 .2">
      <freejoint/>
      <geom type="box" size=".2 .15 .05" condim="{condim}" mass=".2"/>
      <site name="eye" pos="0 0 .3" euler="{euler}"/>
      <body name="arm" pos=".1 0 0">
        <geom type="capsule" size=".03" fromto="0 0 0 .25 0 -.1" condim="{condim}"/>
      </body>
    </body>
    <body name="ball" pos=".05 .02 .4">
      <freejoint/>
      <geom type="sphere" size=".06" condim="{condim}" mass=".05"/>
    </body>
  </worldbody>
  <sensor>
    <plugin instance="grid" objtype="site" objname="eye" {extra}/>
  </sensor>
</mujoco>"""
_GRID_CASES = {
    "torques": dict(nchannel=6, size="5 4", fov="60 40", gamma=0, condim=6, cone="elliptic",
                    euler="0 0 0", extra=""),
    "fovea": dict(nchannel=3, size="9 7", fov="170 85", gamma=0.6, condim=4, cone="pyramidal",
                  euler="20 -10 5", extra=""),
    "cutoff": dict(nchannel=2, size="3 3", fov="120 80", gamma=1, condim=3, cone="pyramidal",
                   euler="0 0 0", extra='cutoff="0.05" reftype="body" refname="ball"'),
}


@pytest.mark.parametrize("case", list(_GRID_CASES))
def test_touch_grid_settings(case):
  """A pad (with a welded arm: contacts of the weld body count) on a plane, a ball dropped on
  it, the grid's site on the pad: 6 channels with torques (condim 6, elliptic cones), a foveal
  grid (gamma) seen from a tilted site, a cutoff (and a reference frame, which the plugin
  ignores); every 5th of 300 steps of 4.0's trajectory our sensordata equals 4.0's."""
  m, d, mjm, mjd = models_and_data(_GRID_XML.format(**_GRID_CASES[case]))
  rng = np.random.default_rng(3)
  nonzero = 0
  for i in range(300):
    mjd.xfrc_applied[1, :3] = rng.normal(size=3) * 0.5
    mjd.xfrc_applied[1, 3:] = rng.normal(size=3) * 0.02
    mujoco.mj_step(mjm, mjd)
    if i % 5 == 4:
      nonzero += _forced(m, d, mjm, mjd, f"{case} step {i}")
  assert nonzero > 50


# --------------------------------------------------------------------------------- errors

_ERR_BASE = """<mujoco><extension><plugin plugin="mujoco.sensor.touch_grid"/>
  <plugin plugin="mujoco.sdf.torus"><instance name="torus"/></plugin></extension>
  <asset><mesh name="plate" builtin="plate" params="5 5"/></asset>
  <worldbody><body name="b"><freejoint/><geom name="g" size=".1"/>
  <geom name="v" type="mesh" mesh="plate" contype="0" conaffinity="0"/><site name="s"/></body>
  <body name="c"><freejoint/><geom name="n" type="mesh" mesh="plate" contype="0"
  conaffinity="0"/></body></worldbody>
  <sensor>{}</sensor></mujoco>"""
_GRID = ('<plugin plugin="mujoco.sensor.touch_grid" objtype="site" objname="s">'
         '<config key="size" value="{}"/><config key="fov" value="{}"/>{}</plugin>')


@pytest.mark.parametrize("elem, message", [
    ('<tactile geom="v"/>', "missing attribute 'mesh'"),
    ('<tactile mesh="plate"/>', "missing attribute 'geom'"),
    ('<tactile geom="v" mesh="nope"/>', "unknown mesh 'nope'"),
    ('<tactile geom="nope" mesh="plate"/>', "unknown geom 'nope'"),
    ('<tactile geom="v" mesh="plate" noise="1"/>', "unknown attribute 'noise'"),
    ('<tactile geom="n" mesh="plate"/>', "requires a body with at least one collision geom"),
    (_GRID.format("7", "45 45", ""), "Both horizontal and vertical resolutions"),
    (_GRID.format("0 3", "45 45", ""), "resolutions must be positive"),
    (_GRID.format(" 3 3", "45 45", ""), "Both horizontal and vertical resolutions"),
    (_GRID.format("3 3", "45", ""), "Both horizontal and vertical fields of view"),
    (_GRID.format("3 3", "190 45", ""), r"`fov\[0\]` must be a float between \(0, 180\]"),
    (_GRID.format("3 3", "45 95", ""), r"`fov\[1\]` must be a float between \(0, 90\]"),
    (_GRID.format("3 3", "45 45", '<config key="gamma" value="2"/>'), "`gamma` must be"),
    (_GRID.format("3 3", "45 45", '<config key="gamma" value="x"/>'), "Invalid or missing"),
    (_GRID.format("3 3", "45 45", '<config key="nchannel" value="7"/>'), "between 1 and 6"),
    (_GRID.format("3 3", "45 45", '<config key="bogus" value="7"/>'), "unknown config key"),
    ('<plugin plugin="mujoco.sensor.touch_grid" objtype="body" objname="b"><config key="size" '
     'value="3 3"/><config key="fov" value="9 9"/></plugin>', "must be attached to a site"),
    ('<plugin plugin="mujoco.sensor.touch_grid" objtype="site"><config key="size" '
     'value="3 3"/><config key="fov" value="9 9"/></plugin>', "objname is not"),
    ('<plugin instance="torus" objtype="site" objname="s"/>', "does not support sensors"),
    ('<plugin plugin="mujoco.elasticity.cable" objtype="site" objname="s"/>', "not supported"),
    ('<plugin plugin="mujoco.sensor.touch_grid" objtype="site" objname="s" noise="1"/>',
     "unknown attribute 'noise'"),
])
def test_bad_input(elem, message):
  """Bad tactile or touch-grid input: a clear error naming what is wrong, with its line; 4.0
  refuses it too (when compiling, or when making MjData for the plugin's own checks)."""
  xml = _ERR_BASE.format(elem)
  with pytest.raises(MjcfError, match=message) as e:
    compile_model(xml)
  assert e.value.line
  with pytest.raises(Exception):
    mujoco.MjData(mujoco.MjModel.from_xml_string(xml))


def test_touch_grid_instance_is_not_an_sdf():
  """A touch-grid instance where an SDF is expected is refused by name."""
  xml = ('<mujoco><extension><plugin plugin="mujoco.sensor.touch_grid"><instance name="t">'
         '<config key="size" value="3 3"/><config key="fov" value="9 9"/></instance></plugin>'
         '</extension><worldbody><geom type="sdf"><plugin instance="t"/></geom></worldbody>'
         '</mujoco>')
  with pytest.raises(MjcfError, match="is a sensor plugin, not an SDF"):
    compile_model(xml)


# ---------------------------------------------------------------------------------- drawing

@pytest.mark.parametrize("path", [TACTILE, GRID], ids=os.path.basename)
def test_viewer_draws_the_models(path):
  """The renderer draws the models after some steps (it draws no taxels or grid cells: those
  are MuJoCo's decorations) and lists no rays for these sensors."""
  from numjoco.render.camera import Camera
  from numjoco.render.headless import HeadlessRenderer
  from numjoco.render.scene import VisOptions, ray_sensors
  from numjoco.render.snapshot import Snapshot
  m = numjoco.load_model(path)
  d = numjoco.make_data(m)
  numjoco.step(m, d, 50)
  assert ray_sensors(m) == []
  hr = HeadlessRenderer(m, 64, 48)
  img = hr.render(Snapshot(m, d), Camera.default_for(m), VisOptions(shadows=False))
  hr.release()
  assert img.shape == (48, 64, 3) and img.any()
