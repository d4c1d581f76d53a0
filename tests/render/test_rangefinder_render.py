"""Rangefinder rays drawn as MuJoCo's mjv_updateScene draws them (mjVIS_RANGEFINDER, on by
default): a 3-pixel line from the site along its z axis to the hit (sensordata `dist`), a
sphere at the `point` field, an arrow along the `normal` field, one line per pixel of a camera
rangefinder, and a line for a geom `fromto` sensor; compared with mujoco.Renderer's picture (EGL,
in a subprocess) by the pixels the flag adds."""
import os
import tempfile

import numpy as np
import pytest

import numjoco
from numjoco.render.headless import HeadlessRenderer, save_png
from numjoco.render.renderer import VisOptions
from numjoco.render.snapshot import Snapshot
from tests.render.mujoco_ref import mujoco_stepped, our_camera

pytest.importorskip("mujoco")

W, H = 320, 240
SCENE = """<mujoco>
<statistic meansize="0.1"/>
<visual><scale framewidth="0.3" framelength="2"/></visual>
<worldbody>
<light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false" diffuse=".5 .5 .5"/>
<geom type="plane" size="2 2 .1" rgba=".3 .3 .3 1"/>
<geom type="box" pos="0.6 0 0.3" size=".05 .4 .3" rgba=".5 .5 .5 1"/>
<body name="sensors">
  <site name="straight" pos="-0.4 -0.1 0.3" zaxis="1 0 0"/>
  <site name="slanted" pos="-0.4 0.2 0.5" zaxis="1 -0.2 -0.6"/>
  <site name="miss" pos="-0.4 0 0.3" zaxis="-1 0 1"/>
  <camera name="down" pos="-0.25 -0.6 0.9" xyaxes="1 0 0 0 1 0" resolution="4 3" fovy="50"/>
</body>
<geom name="a" type="sphere" pos="-0.5 0.5 0.15" size=".05" rgba=".2 .2 .9 1"/>
<geom name="b" type="sphere" pos="0.1 0.6 0.3" size=".05" rgba=".2 .2 .9 1"/>
</worldbody>
<sensor>  <!-- (rays skip the geoms of their own body: the sensors sit on a body of their own) -->
<rangefinder site="straight"/>
<rangefinder site="slanted" data="dist point normal"/>
<rangefinder site="miss"/>
<rangefinder camera="down" data="dist"/>
<fromto geom1="a" geom2="b" cutoff="2"/>
</sensor></mujoco>"""

def test_rangefinder_rays_match_mujoco(tmp_path):
  """The pixels the rangefinder flag adds (rays from two sites, a camera's 12 pixel rays, the
  slanted ray's hit point and normal arrow, the fromto line; the missing ray draws nothing)
  cover MuJoCo's (IoU of the changed pixels > 0.6, measured 0.79) in its colour (median within
  10/255); with the flag off nothing is drawn."""
  path = tmp_path / "rays.xml"
  path.write_text(SCENE)
  view = dict(lookat=(0, 0.1, 0.3), distance=2.2, azimuth=60, elevation=-30)
  imgs, state = mujoco_stepped(path, 0, view, W, H,
                               [{"mjVIS_RANGEFINDER": 0}, {"mjVIS_RANGEFINDER": 1}])
  ref = {"off": imgs[0], "on": imgs[1], "sensordata": state["sensordata"]}
  m = numjoco.load_model(str(path))
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  np.testing.assert_allclose(d.sensordata, ref["sensordata"], atol=1e-6)
  assert d.sensordata[m.sensor_adr[2]] == -1     # the ray that misses
  hr = HeadlessRenderer(m, W, H)
  cam = our_camera(m, view)
  snap = Snapshot(m, d)
  off = hr.render(snap, cam, VisOptions(shadows=False, rangefinder=False,
                                          background=(0, 0, 0)))
  on = hr.render(snap, cam, VisOptions(shadows=False, background=(0, 0, 0)))
  hr.release()
  out = os.path.join(tempfile.gettempdir(), "render-tests")
  os.makedirs(out, exist_ok=True)
  save_png(os.path.join(out, "rangefinder.png"),
           np.concatenate([np.concatenate([ref["off"], ref["on"]], 1),
                           np.concatenate([off, on], 1)], 0))
  a = np.abs(ref["on"].astype(int) - ref["off"]).sum(2) > 40
  b = np.abs(on.astype(int) - off).sum(2) > 40
  assert a.sum() > 200, "MuJoCo draws no rays"
  iou = (a & b).sum() / (a | b).sum()
  assert iou > 0.6, f"IoU {iou:.3f} ({a.sum()} pixels in MuJoCo's, {b.sum()} in ours)"
  # the median: MuJoCo's multisampled line edges blend into the background
  colour = np.abs(np.median(ref["on"][a], 0) - np.median(on[b], 0)).max()
  assert colour < 10, f"median colour differs by {colour:.0f}/255"


CAMERAS = """<mujoco>
<worldbody>
<geom type="plane" size="2 2 .1"/>
<geom type="box" pos="0.3 0.2 0.2" size=".2 .1 .2" euler="0 0 30"/>
<body name="rig" pos="0 0 1.2" euler="15 -10 5">
  <camera name="persp" resolution="5 4" fovy="60"/>
  <camera name="ortho" resolution="6 3" projection="orthographic" fovy="0.8"/>
  <camera name="intrinsic" resolution="7 5" sensorsize="0.006 0.004" focal="0.004 0.005"
          principalpixel="1.5 -1"/>
</body>
</worldbody>
<sensor>
<rangefinder camera="persp" data="dist point"/>
<rangefinder camera="ortho" data="dist point"/>
<rangefinder camera="intrinsic" data="dist point"/>
</sensor></mujoco>"""


def test_camera_rangefinder_lines_end_at_the_sensed_points(tmp_path):
  """The line of each pixel of a perspective, an orthographic and an intrinsic (sensorsize,
  focal, principalpixel) camera rangefinder ends at the hit point the engine reports in the
  `point` field (MuJoCo's values: tests/test_sensor_rangefinder.py), so the drawn rays follow
  mju_camPixelRay; its sphere sits there too."""
  from numjoco.render.scene import BALL, Batch, SceneBuilder
  path = tmp_path / "cams.xml"
  path.write_text(CAMERAS)
  m = numjoco.load_model(str(path))
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  r = SceneBuilder(m)       # the ray geometry needs no GL
  batch = Batch(r.nkinds)
  lines, _ = r._ray_instances(Snapshot(m, d), batch)
  expect = []
  for i in range(3):
    w, h = m.cam_resolution[i]
    data = d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + 4 * w * h].reshape(-1, 4)
    assert (data[:, 0] > 0).all(), "every pixel ray hits the floor or the box"
    expect.append(data[:, 1:])
  expect = np.concatenate(expect)
  assert lines.shape == (len(expect), 10)
  np.testing.assert_allclose(lines[:, 3:6], expect, atol=1e-5)
  starts = np.asarray(lines[:, 0:3], float)
  persp = starts[:20]
  np.testing.assert_allclose(persp, np.broadcast_to(d.cam_xpos[0], persp.shape), atol=1e-6)
  ortho = starts[20:38]          # parallel rays from the image plane, 0.8 m high
  assert np.ptp(ortho @ d.cam_xmat[1].reshape(3, 3)[:, 1]) == pytest.approx(0.8 * 2 / 3, rel=1e-5)
  spheres = batch.arrays()[BALL]   # (camera sensors: the low-resolution marker sphere)
  np.testing.assert_allclose(spheres[:, 0:3], expect, atol=1e-5)
