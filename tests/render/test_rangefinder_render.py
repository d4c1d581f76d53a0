"""Rangefinder rays drawn as MuJoCo's mjv_updateScene draws them (mjVIS_RANGEFINDER, on by
default): a 3-pixel line from the site along its z axis to the hit (sensordata `dist`), a
sphere at the `point` field, an arrow along the `normal` field, one line per pixel of a camera
rangefinder, and a line for a geom `fromto` sensor; compared with mujoco.Renderer's picture (EGL,
in a subprocess) by the pixels the flag adds."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import engine
from render.camera import Camera
from render.headless import HeadlessRenderer, save_png
from render.renderer import VisOptions
from render.snapshot import Snapshot

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

_MUJOCO = """
import os, sys
os.environ["MUJOCO_GL"] = "egl"
import mujoco, numpy as np
m = mujoco.MjModel.from_xml_path(sys.argv[1])
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, %d, %d)
cam = mujoco.MjvCamera()
mujoco.mjv_defaultFreeCamera(m, cam)
cam.lookat[:], cam.distance, cam.azimuth, cam.elevation = (0, 0.1, 0.3), 2.2, 60, -30
imgs = {}
for flag in (0, 1):
  opt = mujoco.MjvOption()
  opt.flags[mujoco.mjtVisFlag.mjVIS_RANGEFINDER] = flag
  r.update_scene(d, cam, opt)
  imgs["on" if flag else "off"] = r.render().copy()
np.savez(sys.argv[2], sensordata=d.sensordata, **imgs)
""" % (H, W)


def test_rangefinder_rays_match_mujoco(tmp_path):
  """The pixels the rangefinder flag adds (rays from two sites, a camera's 12 pixel rays, the
  slanted ray's hit point and normal arrow, the fromto line; the missing ray draws nothing)
  cover MuJoCo's (IoU of the changed pixels > 0.6, measured 0.79) in its colour (median within
  10/255); with the flag off nothing is drawn."""
  path = tmp_path / "rays.xml"
  path.write_text(SCENE)
  ref_file = tmp_path / "ref.npz"
  res = subprocess.run([sys.executable, "-c", _MUJOCO, str(path), str(ref_file)],
                       capture_output=True, text=True, timeout=120)
  assert res.returncode == 0, res.stderr[-2000:]
  ref = np.load(ref_file)
  m = engine.load_model(str(path))
  d = engine.make_data(m)
  engine.forward(m, d)
  np.testing.assert_allclose(d.sensordata, ref["sensordata"], atol=1e-6)
  assert d.sensordata[m.sensor_adr[2]] == -1     # the ray that misses
  hr = HeadlessRenderer(m, W, H)
  cam = Camera.default_for(m)
  cam.lookat[:], cam.distance, cam.azimuth, cam.elevation = (0, 0.1, 0.3), 2.2, 60, -30
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
