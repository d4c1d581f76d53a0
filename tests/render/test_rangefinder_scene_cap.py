"""A high-resolution camera rangefinder draws what MuJoCo's mjv_updateScene puts in its scene:
a line, a sphere and an arrow per ray in row-major order, every ray while the scene has room
(mjvScene.maxgeom), the rest left out once it is full (MuJoCo warns mjWARN_VGEOMFULL)."""
import numpy as np
import pytest

import numjoco
from numjoco.render.camera import Camera
from numjoco.render.headless import HeadlessRenderer
from numjoco.render.scene import BALL, TIP, Batch, VisOptions
from numjoco.render.snapshot import Snapshot
from tests.render.bench_fps import RANGEFINDER64

mujoco = pytest.importorskip("mujoco")


def _mujoco_counts(maxgeom):
  """(lines, spheres, arrows) of the sensor in MuJoCo's scene, and its geoms before them."""
  m = mujoco.MjModel.from_xml_string(RANGEFINDER64)
  d = mujoco.MjData(m)
  mujoco.mj_forward(m, d)
  scn = mujoco.MjvScene(m, maxgeom)
  mujoco.mjv_updateScene(m, d, mujoco.MjvOption(), None, mujoco.MjvCamera(),
                         mujoco.mjtCatBit.mjCAT_ALL, scn)
  types = np.array([scn.geoms[i].type for i in range(scn.ngeom)])
  sensor = np.array([scn.geoms[i].objtype == mujoco.mjtObj.mjOBJ_SENSOR
                     for i in range(scn.ngeom)])
  t = mujoco.mjtGeom
  return ((int(np.sum(sensor & (types == t.mjGEOM_LINE))),
           int(np.sum(sensor & (types == t.mjGEOM_SPHERE))),
           int(np.sum(sensor & (types == t.mjGEOM_ARROW1)))), int(np.sum(~sensor)))


@pytest.mark.parametrize("maxgeom", [100000, 10000, 5000])
def test_markers_of_a_64x64_rangefinder_are_mujocos(maxgeom):
  """Lines, spheres and arrows drawn for a 64x64 camera rangefinder (dist point normal) are as
  many as MuJoCo's scene holds with the same capacity: all 3 x 3840 hits with simulate's 100000,
  the first 9998 markers with mujoco.Renderer's 10000 (two model geoms come first)."""
  want, before = _mujoco_counts(maxgeom)
  m = numjoco.load_model(RANGEFINDER64)
  snap = Snapshot(m)
  hr = HeadlessRenderer(m, 64, 48)
  try:
    r = hr.renderer
    batch = Batch(r.builder.nkinds)
    lines, _ = r.builder._ray_instances(snap, batch, maxgeom - before)
    spheres = sum(len(a) for a in batch.parts[BALL])
    arrows = sum(len(a) for a in batch.parts[TIP])
    assert (len(lines), spheres, arrows) == want
    assert r.scene_full == (sum(want) < 3 * 3840)
    # the same through a frame: the scene's own geoms counted before the rays
    r.max_geom = maxgeom
    hr.render(snap, Camera.default_for(m), VisOptions(shadows=False))
    assert len(r.scene.wide_lines) == want[0] and r.scene_full == (sum(want) < 3 * 3840)
  finally:
    hr.release()

