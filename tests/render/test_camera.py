"""The camera and the model statistics against MuJoCo's (mjv_updateScene, mjv_moveCamera,
mjv_defaultFreeCamera, mjStatistic)."""
import math

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.assets import DEMO_MODEL
from numjoco.render.camera import Camera, CameraType, Mouse
from numjoco.render.snapshot import Snapshot
from numjoco.render.visual import visual_for
from tests.models import models_named, models_of, suite_source

CAMERA_XML = """
<mujoco>
  <visual><global fovy="60" azimuth="30" elevation="-20"/><map znear="0.02" zfar="40"/></visual>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <camera name="fixed" pos="1 -2 1.5" xyaxes="1 0.5 0 -0.2 0.4 1" fovy="50"/>
    <body name="ball" pos="0.3 0.1 0.5">
      <freejoint/><geom type="sphere" size=".1"/>
      <body pos="0 0 -0.3"><joint type="hinge"/><geom type="capsule" size=".05 .1"/></body>
    </body>
  </worldbody>
</mujoco>
"""


def _both(which):
  if which == "demo":
    return numjoco.load_model(str(DEMO_MODEL)), mujoco.MjModel.from_xml_path(str(DEMO_MODEL))
  if which == "camera_xml":
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".xml")   # a file, so <visual> is read from the source
    with os.fdopen(fd, "w") as f:
      f.write(CAMERA_XML)
    return numjoco.load_model(path), mujoco.MjModel.from_xml_string(CAMERA_XML)
  return models_named(which, quiet=False)


MODELS = ["demo", "camera_xml", "humanoid", "cartpole", "cheetah"]


@pytest.fixture(scope="module", params=MODELS)
def models(request):
  return _both(request.param)


def test_statistic_matches_mujoco(models):
  """center, extent, meansize and meanmass as mj_setConst computes them (and <statistic>)."""
  m, mjm = models
  st = visual_for(m).stat
  np.testing.assert_allclose(st.center, mjm.stat.center, rtol=1e-6, atol=1e-9)
  np.testing.assert_allclose(st.extent, mjm.stat.extent, rtol=1e-6)
  np.testing.assert_allclose(st.meansize, mjm.stat.meansize, rtol=1e-6)
  np.testing.assert_allclose(st.meanmass, mjm.stat.meanmass, rtol=1e-6)


def test_visual_read_from_source(models):
  """<visual> settings the camera uses equal MuJoCo's compiled mjVisual."""
  m, mjm = models
  vis = visual_for(m)
  for ours, theirs in ((vis.global_.fovy, mjm.vis.global_.fovy),
                       (vis.global_.azimuth, mjm.vis.global_.azimuth),
                       (vis.global_.elevation, mjm.vis.global_.elevation),
                       (vis.map.znear, mjm.vis.map.znear), (vis.map.zfar, mjm.vis.map.zfar),
                       (vis.map.force, mjm.vis.map.force),
                       (bool(vis.headlight.active), bool(mjm.vis.headlight.active))):
    assert ours == pytest.approx(theirs, rel=1e-6)
  np.testing.assert_allclose(vis.headlight.diffuse, mjm.vis.headlight.diffuse, rtol=1e-6)


def test_default_free_camera(models):
  """Camera.default_for is mjv_defaultFreeCamera."""
  m, mjm = models
  cam = Camera.default_for(m)
  ref = mujoco.MjvCamera()
  mujoco.mjv_defaultFreeCamera(mjm, ref)
  np.testing.assert_allclose(cam.lookat, ref.lookat, rtol=1e-6, atol=1e-9)
  assert cam.distance == pytest.approx(ref.distance, rel=1e-6)
  assert cam.azimuth == pytest.approx(ref.azimuth)
  assert cam.elevation == pytest.approx(ref.elevation)


def _scene_camera(mjm, mjd, ref):
  """MuJoCo's OpenGL camera after mjv_updateScene: (eye, forward, up, near, far, top)."""
  scn = mujoco.MjvScene(mjm, maxgeom=1000)
  mujoco.mjv_updateScene(mjm, mjd, mujoco.MjvOption(), mujoco.MjvPerturb(), ref,
                         int(mujoco.mjtCatBit.mjCAT_ALL), scn)
  c0, c1 = scn.camera[0], scn.camera[1]
  eye = 0.5 * (np.array(c0.pos) + np.array(c1.pos))    # the two eyes straddle the head by ipd
  return (eye, np.array(c0.forward), np.array(c0.up), c0.frustum_near, c0.frustum_far,
          c0.frustum_top)


def _compare(cam, snap, mjm, mjd, ref):
  eye, fwd, up, near, far, top = _scene_camera(mjm, mjd, ref)
  e, f, u = cam.pose(snap)
  np.testing.assert_allclose(e, eye, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(f, fwd, atol=1e-6)
  np.testing.assert_allclose(u, up, atol=1e-6)
  n, fa = cam.clip()
  assert n == pytest.approx(near, rel=1e-5) and fa == pytest.approx(far, rel=1e-5)
  assert n * math.tan(math.radians(cam.fovy_deg()) / 2) == pytest.approx(top, rel=1e-5)


@pytest.mark.parametrize("lookat,distance,azimuth,elevation", [
    ((0, 0, 0), 3.0, 90, -45), ((0.5, -1, 0.2), 1.2, -30, -10), ((1, 2, 3), 7.5, 170, 60),
    ((0, 0, 1), 0.4, 0, -89)])
def test_free_camera_pose_matches_update_scene(models, lookat, distance, azimuth, elevation):
  """Eye, forward, up and the frustum of a free camera equal mjv_updateScene's scn.camera."""
  m, mjm = models
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  ref = mujoco.MjvCamera()
  ref.type = mujoco.mjtCamera.mjCAMERA_FREE
  ref.lookat[:], ref.distance, ref.azimuth, ref.elevation = lookat, distance, azimuth, elevation
  cam = Camera(m)
  cam.lookat, cam.distance, cam.azimuth, cam.elevation = (np.array(lookat, float), distance,
                                                          azimuth, elevation)
  _compare(cam, None, mjm, mjd, ref)


def test_tracking_and_fixed_cameras():
  """A tracking camera follows the body's subtree com; a fixed camera is the model's camera."""
  m, mjm = _both("camera_xml")
  mjd = mujoco.MjData(mjm)
  mjd.qpos[:3] += (0.2, -0.4, 0.3)
  mjd.qpos[7] = 0.7
  mujoco.mj_forward(mjm, mjd)
  d = numjoco.make_data(m)
  from numjoco.engine import interop
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  snap = Snapshot(m)
  snap.capture(m, d)
  ref = mujoco.MjvCamera()
  ref.type = mujoco.mjtCamera.mjCAMERA_TRACKING
  ref.trackbodyid, ref.distance, ref.azimuth, ref.elevation = 1, 2.0, 45, -30
  cam = Camera(m)
  cam.type, cam.trackbodyid, cam.distance, cam.azimuth, cam.elevation = (
      CameraType.TRACKING, 1, 2.0, 45, -30)
  _compare(cam, snap, mjm, mjd, ref)
  np.testing.assert_allclose(cam.lookat, mjd.subtree_com[1], atol=1e-9)
  ref = mujoco.MjvCamera()
  ref.type, ref.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, 0
  cam = Camera(m)
  cam.type, cam.fixedcamid = CameraType.FIXED, 0
  _compare(cam, snap, mjm, mjd, ref)


@pytest.mark.parametrize("action", list(Mouse)[1:])
@pytest.mark.parametrize("dx,dy", [(0.1, -0.05), (-0.3, 0.2), (0.9, 0.8)])
def test_move_camera_matches_mujoco(models, action, dx, dy):
  """Camera.move applies mjv_moveCamera's rule for each mouse action (with its clamps)."""
  m, mjm = models
  ref = mujoco.MjvCamera()
  mujoco.mjv_defaultFreeCamera(mjm, ref)
  ref.azimuth, ref.elevation = 170.0, -80.0     # near the wrap-around and the clamp
  cam = Camera.default_for(m)
  cam.azimuth, cam.elevation = 170.0, -80.0
  for _ in range(3):
    mujoco.mjv_moveCamera(mjm, int(action), dx, dy, ref)
    cam.move(action, dx, dy)
  # MuJoCo evaluates the frustum height in float32
  np.testing.assert_allclose(cam.lookat, ref.lookat, rtol=1e-6, atol=1e-7)
  assert cam.distance == pytest.approx(ref.distance, rel=1e-9)
  assert cam.azimuth == pytest.approx(ref.azimuth, abs=1e-9)
  assert cam.elevation == pytest.approx(ref.elevation, abs=1e-9)


def test_ray_goes_through_projected_point():
  """ray(x, y) through the pixel where `project` puts a world point passes through that point."""
  from numjoco.render.scene import SceneBuilder
  m, _ = _both("demo")
  cam = Camera.default_for(m)
  cam.azimuth, cam.elevation = 33, -25
  w, h = 640, 480
  proj = SceneBuilder(m).project      # the scene builder's: no GL
  pts = np.array([[0.3, -0.2, 0.1], [-1.0, 0.5, -1.2], cam.lookat])
  xy = proj(pts, cam, w, h)
  for p, (x, y) in zip(pts, xy):
    o, d = cam.ray(x / w, 1 - y / h, w / h)
    closest = o + d * np.dot(p - o, d)
    np.testing.assert_allclose(closest, p, atol=1e-9)
  np.testing.assert_allclose(xy[2], (w / 2, h / 2), atol=1e-9)
  o, d = cam.ray(0.5, 0.5, w / h)
  np.testing.assert_allclose(d, cam.pose()[1], atol=1e-12)


def test_bad_camera_input_gives_clear_errors():
  """Unknown actions and camera ids are named in the error."""
  m, _ = _both("demo")
  cam = Camera.default_for(m)
  with pytest.raises(ValueError, match="Mouse"):
    cam.move("spin", 0.1, 0.1)
  cam.move("rotate_h", 0.1, 0.0)     # names work as well as MuJoCo's ints
  cam.type, cam.fixedcamid = CameraType.FIXED, 3
  snap = Snapshot(m)
  with pytest.raises(ValueError, match="fixed camera 3"):
    cam.pose(snap)


def test_builtin_textures_read_like_mujoco():
  """The floor's checker colours and repeat, and the skybox gradient, are MuJoCo's: the colours
  appear in MuJoCo's baked texture pixels, texrepeat/texuniform equal its material's."""
  src, _ = suite_source("humanoid")
  m, mjm = models_of(src)
  vis = visual_for(m)
  for name, tex in vis.materials.items():
    k = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_MATERIAL, name)
    np.testing.assert_allclose(tex["texrepeat"], mjm.mat_texrepeat[k])
    assert tex["texuniform"] == bool(mjm.mat_texuniform[k])
    t = mjm.mat_texid[k][1]       # mjTEXROLE_RGB
    a, w, h, c = mjm.tex_adr[t], mjm.tex_width[t], mjm.tex_height[t], mjm.tex_nchannel[t]
    pixels = np.unique(np.asarray(mjm.tex_data[a:a + w * h * c]).reshape(-1, c)[:, :3], axis=0)
    for rgb in (tex["rgb1"], tex["rgb2"]):
      assert np.abs(pixels.astype(float) - 255 * np.asarray(rgb)).max(1).min() <= 1
  assert "grid" in vis.materials
  t = next(i for i in range(mjm.ntex) if mjm.tex_type[i] == mujoco.mjtTexture.mjTEXTURE_SKYBOX)
  a, w, c = mjm.tex_adr[t], mjm.tex_width[t], mjm.tex_nchannel[t]
  data = np.asarray(mjm.tex_data[a:a + mjm.tex_width[t] * mjm.tex_height[t] * c]).reshape(-1, c)
  top = data[(w * w) * 2 + w * (w // 2) + w // 2, :3]     # centre of the +z face (third of six)
  np.testing.assert_allclose(top / 255, vis.skybox[0][:3], atol=0.02)
