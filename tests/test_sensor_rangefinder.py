"""Rangefinders against MuJoCo 4.0: every `data` field combination (dist, dir, origin, point,
normal, depth) on sites and on perspective / orthographic / intrinsic cameras (one ray per
pixel), rays hitting and missing every geom type (plane, sphere, capsule, ellipsoid,
cylinder, box, mesh, height field) on moving bodies, the compiled fields, and the errors."""
import itertools
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from numjoco.engine import types as t
from numjoco.engine.mjcf import MjcfError
from tests.models import models_of

_DATA = os.path.join(os.path.dirname(__file__), "data", "sensor")
_FIELDS = ("dist", "dir", "origin", "point", "normal", "depth")
_ELEV = " ".join("%.3f" % x for x in np.random.default_rng(7).uniform(0, 1, 6 * 7))

# every geom type on its own body; the rig carries the cameras and sites and turns
_SCENE = """<mujoco>
  <option gravity="0 0 0" timestep="0.005"/>
  <asset>
    <mesh name="ss" builtin="supersphere" params="10 .3 .4" scale=".3 .32 .35"/>
    <hfield name="h" nrow="6" ncol="7" size="2.5 2 .4 .1" elevation="{elev}"/>
    <material name="clear" rgba="1 1 1 0"/>
  </asset>
  <worldbody>
    <geom type="plane" size="0 0 1" pos="0 0 -1.2"/>
    <geom type="plane" size=".6 .4 1" pos="2.2 1.8 -.6" euler="10 -20 0"/>
    <geom type="hfield" hfield="h" pos="0 0 -.7" euler="0 0 15"/>
    <geom type="sphere" size=".5" pos="0 0 .3" rgba="1 1 1 0"/>
    <geom type="box" size=".5 .5 .5" pos=".6 .6 .3" material="clear"/>
    <body pos=".9 .2 .1"><joint type="hinge" axis="1 .3 .2"/><joint type="slide" axis="0 1 0"/>
      <geom type="sphere" size=".3" pos=".1 0 0"/></body>
    <body pos="-.8 .6 .2" euler="20 30 0"><joint type="ball"/>
      <geom type="capsule" size=".2 .35" pos="0 .1 0"/></body>
    <body pos="-.5 -.7 .1"><joint type="hinge" axis="0 1 .4"/>
      <geom type="ellipsoid" size=".35 .25 .2" euler="0 40 10"/></body>
    <body pos=".6 -.8 .2"><joint type="hinge" axis="1 0 0"/>
      <geom type="cylinder" size=".25 .3" euler="30 0 20" pos="0 .05 0"/></body>
    <body pos="0 .1 -.1"><joint type="hinge" axis="0 .2 1"/>
      <geom type="box" size=".3 .2 .15" pos=".1 0 0" euler="10 20 30"/></body>
    <body pos="1.4 -.3 .3"><joint type="hinge" axis="0 0 1"/>
      <geom type="mesh" mesh="ss" euler="20 0 30"/></body>
    <body name="rig" pos="0 0 2.4"><joint name="yaw" type="hinge" axis="0 0 1"/>
      <joint name="tilt" type="hinge" axis="1 0 0"/>
      <geom type="box" size=".1 .1 .1" pos="0 0 -.2"/>
      <camera name="persp" resolution="16 12" fovy="75"/>
      <camera name="ortho" resolution="12 9" fovy="4" projection="orthographic"
              euler="0 15 0"/>
      <camera name="intr" resolution="10 8" sensorsize=".004 .003" focal=".0025 .0028"
              principal=".0003 -.0002" euler="-10 0 5"/>
      {sites}
    </body>
  </worldbody>
  <sensor>{sensors}</sensor>
</mujoco>"""


def _subsets():
  """Every non-empty ordered subset of the data fields, as `data` strings."""
  return [" ".join(c) for k in range(1, 7) for c in itertools.combinations(_FIELDS, k)]


def _scene(site_data, cam_sensors):
  """The scene with one site rangefinder per entry of site_data (sites in varied
  directions, a few pointing at the sky) and the given camera rangefinders."""
  rng = np.random.default_rng(1)
  sites, sensors = [], []
  for i, data in enumerate(site_data):
    z = rng.normal(size=3)
    z[2] = -abs(z[2]) * 1.5 if i % 7 else abs(z[2])   # mostly downwards, some at the sky
    cutoff = ' cutoff="1.5"' if i % 11 == 5 else ""
    noise = ' noise=".1"' if i % 13 == 3 else ""
    sites.append(f'<site name="s{i}" pos="{" ".join("%.3f" % x for x in rng.uniform(-.3, .3, 3))}" '
                 f'zaxis="{" ".join("%.3f" % x for x in z)}"/>')
    sensors.append(f'<rangefinder site="s{i}" data="{data}"{cutoff}{noise}/>')
  return _SCENE.format(elev=_ELEV, sites="\n      ".join(sites),
                       sensors="\n    ".join(sensors + cam_sensors))


_ALL = "dist dir origin point normal depth"
_CAMS = [f'<rangefinder camera="persp" data="{_ALL}"/>',
         f'<rangefinder camera="ortho" data="{_ALL}"/>',
         f'<rangefinder camera="intr" data="{_ALL}"/>',
         '<rangefinder camera="persp" data="depth"/>',
         '<rangefinder camera="ortho" data="dir point" cutoff="2"/>',
         '<rangefinder camera="intr"/>']


def _check_fields(m, mjm):
  assert (m.nsensor, m.nsensordata) == (mjm.nsensor, mjm.nsensordata)
  for fname, _, _ in t.MODEL_TABLE:
    if fname.startswith("sensor_") or fname in ("cam_projection", "cam_resolution"):
      np.testing.assert_array_equal(getattr(m, fname), getattr(mjm, fname), err_msg=fname)
    elif fname.startswith("cam_"):
      np.testing.assert_allclose(getattr(m, fname), getattr(mjm, fname), rtol=1e-6,
                                 atol=1e-12, err_msg=fname)


def _sensor_name(mjm, i):
  st = mujoco.mjtSensor(mjm.sensor_type[i]).name
  obj = mujoco.mj_id2name(mjm, mjm.sensor_objtype[i], mjm.sensor_objid[i])
  return f"sensor {i} {st} on {obj!r}"


def _compare(m, mjm, d, mjd, where):
  for i in range(mjm.nsensor):
    a, n = mjm.sensor_adr[i], mjm.sensor_dim[i]
    np.testing.assert_allclose(d.sensordata[a:a + n], mjd.sensordata[a:a + n], rtol=1e-9,
                               atol=1e-9, err_msg=f"{where}: {_sensor_name(mjm, i)}")


def test_rangefinder_compiled_fields():
  """sensor_dim/intprm/objtype/... of site rangefinders with each of the 63 data subsets and
  of camera rangefinders (dim = fields x width x height), and cam_projection, equal 4.0's."""
  m, mjm = models_of(_scene(_subsets(), _CAMS))
  assert mjm.nsensor == 63 + len(_CAMS)
  assert set(mjm.sensor_intprm[:63, 0]) == set(range(1, 64))
  _check_fields(m, mjm)
  assert list(mjm.cam_projection) == [0, 1, 0]


def _geom_type_hits(mjm, mjd):
  """Geom types MuJoCo's rays from the cameras hit (for coverage), and the number of misses."""
  types, misses = set(), 0
  for cam in range(mjm.ncam):
    w, h = mjm.cam_resolution[cam]
    gid = np.zeros(1, np.int32)
    for row in range(0, h, 2):
      for col in range(0, w, 2):
        org, vec = np.zeros(3), np.zeros(3)
        _pixel_ray(mjm, mjd, cam, col, row, org, vec)
        x = mujoco.mj_ray(mjm, mjd, org, vec, None, 1, mjm.cam_bodyid[cam], gid, None)
        if x < 0:
          misses += 1
        else:
          types.add(int(mjm.geom_type[gid[0]]))
  return types, misses


def _pixel_ray(mjm, mjd, cam, col, row, org, vec):
  """A pixel's ray as MuJoCo's camera rangefinder casts it (for the coverage count only)."""
  w, h = mjm.cam_resolution[cam]
  mat = mjd.cam_xmat[cam].reshape(3, 3)
  if mjm.cam_projection[cam]:
    half = mjm.cam_fovy[cam] / 2
    org[:] = mjd.cam_xpos[cam] + mat @ [(col + .5 - w / 2) / (w / 2) * half,
                                        -(row + .5 - h / 2) / (h / 2) * half, 0]
    vec[:] = -mat[:, 2]
    return
  ss, it = mjm.cam_sensorsize[cam], mjm.cam_intrinsic[cam]
  if ss[0]:
    fx, fy = it[0] / ss[0] * w, it[1] / ss[1] * h
    cx, cy = it[2] / ss[0] * w, it[3] / ss[1] * h
  else:
    fx = fy = 0.5 / np.tan(mjm.cam_fovy[cam] * np.pi / 360) * h
    cx, cy = w / 2, h / 2
  org[:] = mjd.cam_xpos[cam]
  v = mat @ [(col + .5 - cx) / fx, -(row + .5 - cy) / fy, -1.0]
  vec[:] = v / np.linalg.norm(v)


def test_rangefinder_rollout_every_field_and_geom():
  """300 steps with the rig turning and every body moving: all 63 site data subsets and the
  perspective, orthographic and intrinsic camera rangefinders equal MuJoCo's each step (our
  state set from MuJoCo's before each step); the rays hit every geom type and miss too."""
  m, mjm = models_of(_scene(_subsets(), _CAMS))
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(0)
  mjd.qvel[:] = rng.normal(size=mjm.nv) * 1.5
  mjd.qvel[mjm.jnt_dofadr[mjm.joint("yaw").id]] = 1.3
  mjd.qvel[mjm.jnt_dofadr[mjm.joint("tilt").id]] = 1.5   # ends looking at the sky
  hit_types, misses, site_hits, cam_misses = set(), 0, 0, 0
  dist_adr = mjm.sensor_adr[:63][mjm.sensor_intprm[:63, 0] & 1 == 1]
  persp = mjd.sensordata[mjm.sensor_adr[63]:mjm.sensor_adr[63] + mjm.sensor_dim[63]]
  for k in range(300):
    interop.data_from_mujoco(mjd, d)
    d.sensordata[:] = np.nan
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    _compare(m, mjm, d, mjd, f"step {k}")
    site_hits += int(np.sum(mjd.sensordata[dist_adr] > 0))
    cam_misses += int(np.sum(persp[::14] == -1))
    if k % 30 == 0:
      types, miss = _geom_type_hits(mjm, mjd)
      hit_types |= types
      misses += miss
  assert hit_types == {int(g) for g in t.mjtGeom if g != t.mjtGeom.SDF}, hit_types
  assert misses > 0 and cam_misses > 100 and site_hits > 300 * 10


def test_rangefinder_states_random():
  """Random poses of every body (the rig looking anywhere): the site and camera rangefinders
  equal MuJoCo's after mj_forward."""
  m, mjm = models_of(_scene(_subsets()[::3], _CAMS))
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  for seed in range(12):
    rng = np.random.default_rng(seed)
    mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * 1.2
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    _compare(m, mjm, d, mjd, f"seed {seed}")


def test_rfcamera_model():
  """MuJoCo's own test model (rfcamera.xml: mocap perspective and orthographic cameras over
  a height field, a supersphere mesh and primitives): fields and sensordata after a step,
  and for moved mocap bodies."""
  path = os.path.join(_DATA, "rfcamera.xml")
  m, mjm = models_of(path)
  _check_fields(m, mjm)
  assert list(mjm.sensor_dim) == [112, 112]
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(2)
  for k in range(20):
    if k:
      mjd.mocap_pos[:] += rng.normal(size=mjd.mocap_pos.shape) * 0.1
      mjd.mocap_quat[:] += rng.normal(size=mjd.mocap_quat.shape) * 0.1
      mjd.mocap_quat[:] /= np.linalg.norm(mjd.mocap_quat, axis=1)[:, None]
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
    _compare(m, mjm, d, mjd, f"step {k}")
  assert np.sum(mjd.sensordata[::7] > 0) > 4


def test_rangefinder_camera_layout_analytic():
  """MuJoCo's RangefinderCamera test as an analytic check: a 3x3 perspective camera 2 above
  a plane reads dist = 2 sqrt(1 + dx^2 + dy^2) and depth 2 for every pixel, rows first."""
  xml = """<mujoco><worldbody><geom type="plane" size="10 10 .1"/>
    <body pos="0 0 2"><camera name="persp" resolution="3 3" fovy="90"/>
    <camera name="ortho" euler="0 45 0" resolution="3 3" projection="orthographic" fovy="2"/>
    </body></worldbody><sensor><rangefinder camera="persp" data="dist depth"/>
    <rangefinder camera="ortho" data="dist dir origin point"/></sensor></mujoco>"""
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  assert m.nsensordata == 108
  off = np.array([-1.0, 0.0, 1.0]) / 1.5
  got = d.sensordata[:18].reshape(3, 3, 2)
  want = 2 * np.sqrt(1 + off[None, :] ** 2 + off[:, None] ** 2)
  np.testing.assert_allclose(got[..., 0], want, rtol=1e-12)
  np.testing.assert_allclose(got[..., 1], 2.0, rtol=1e-12)
  ortho = d.sensordata[18:].reshape(3, 3, 10)
  px = (np.arange(3) + 0.5 - 1.5) / 1.5
  s = np.sqrt(0.5)
  np.testing.assert_allclose(ortho[..., 0], ((2 - px * s) / s)[None, :].repeat(3, 0),
                             rtol=1e-12)
  np.testing.assert_allclose(ortho[..., 7:], ortho[..., 4:7] + ortho[..., 1:4] * ortho[..., :1],
                             atol=1e-12)


# --------------------------------------------------------------------------------- errors

_ERR_XML = """<mujoco><worldbody><body name="b"><geom size="0.1"/><site name="s"/>
  <camera name="c" resolution="4 3"/><camera name="z" resolution="0 3"/></body></worldbody>
  <sensor>
    {}
  </sensor></mujoco>"""


@pytest.mark.parametrize("elem, message", [
    ('<rangefinder site="s" data="point origin"/>',
     "data attributes must be in order: dist, dir, origin, point, normal, depth"),
    ('<rangefinder camera="c" data="depth normal"/>', "data attributes must be in order"),
    ('<rangefinder site="s" data="dist dist"/>', "duplicate keyword 'dist'"),
    ('<rangefinder site="s" data="dist range"/>', "'range' is not one of dist, dir"),
    ('<rangefinder site="s" camera="c"/>', "at most one of 'site', 'camera'"),
    ('<rangefinder/>', "one of 'site', 'camera' must be specified"),
    ('<rangefinder camera="nope"/>', "unknown camera 'nope'"),
    ('<rangefinder camera="z"/>', "requires positive camera resolution"),
    ('<rangefinder site="s" data="dist" fov="3"/>', "unknown attribute 'fov'"),
])
def test_rangefinder_errors(elem, message, tmp_path):
  """Bad rangefinders fail at load time naming the file, line and element; MuJoCo 4.0
  rejects each of them too."""
  xml = _ERR_XML.format(elem)
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml)
  path = tmp_path / "bad.xml"
  path.write_text(xml)
  with pytest.raises(MjcfError, match=message) as e:
    numjoco.load_model(str(path))
  assert "bad.xml:4: <rangefinder" in str(e.value)


def test_rangefinder_data_empty_is_dist():
  """An empty `data` is the default distance, as MuJoCo reads it."""
  xml = _ERR_XML.format('<rangefinder site="s" data=" "/>')
  m, mjm = models_of(xml)
  _check_fields(m, mjm)


def test_rangefinder_from_inside_geoms():
  """Rays starting inside each geom type still see its surface (normals pointing outward,
  away from the ray's origin side), as MuJoCo 4.0 reports them."""
  geoms = [('sphere', '.3', ''), ('capsule', '.2 .3', ''), ('ellipsoid', '.3 .2 .25', ''),
           ('cylinder', '.25 .3', ''), ('box', '.3 .2 .25', ''), ('mesh', '', 'mesh="ss"')]
  bodies = "".join(
      f'<body pos="{2 * k} 0 0" euler="{10 * k} 20 0"><geom type="{g}" {extra} '
      + (f'size="{size}"' if size else "") + "/></body>"
      + f'<body pos="{2 * k} 0 0"><joint type="ball"/><geom size=".01" rgba="1 1 1 0"/>'
      + f'<site name="s{k}" pos=".02 .01 0"/></body>'
      for k, (g, size, extra) in enumerate(geoms))
  sens = "".join(f'<rangefinder site="s{k}" data="{_ALL}"/>' for k in range(len(geoms)))
  xml = f"""<mujoco><asset><mesh name="ss" builtin="supersphere" params="10 .3 .4"
    scale=".3 .32 .35"/></asset><worldbody>{bodies}</worldbody>
    <sensor>{sens}</sensor></mujoco>"""
  m, mjm = models_of(xml)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(4)
  for trial in range(20):
    mjd.qpos[:] = rng.normal(size=mjm.nq)
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_forward(mjm, mjd)
    numjoco.forward(m, d)
    _compare(m, mjm, d, mjd, f"trial {trial}")
    out = mjd.sensordata.reshape(len(geoms), 14)
    assert np.all(out[:, 0] > 0)
    # outward: the normal points along the ray (the hit is on the far side)
    assert np.all(np.sum(out[:, 1:4] * out[:, 10:13], axis=1) > 0)
