"""Our image against MuJoCo's own renderer (mujoco.Renderer on EGL, run in a subprocess so its
GL backend is chosen before `mujoco` is imported): same camera, same geoms, same colours."""
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

W, H = 320, 240
SCENE = """<mujoco><worldbody>
<light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false" diffuse=".5 .5 .5"/>
<body pos="0 0 0.3" euler="20 30 40"><freejoint/><geom type="capsule" size=".08 .2" rgba="1 0 0 1"/></body>
<body pos="0.4 0.2 0.1" euler="10 50 0"><freejoint/><geom type="box" size=".1 .15 .05" rgba="0 1 0 1"/></body>
<body pos="-0.3 0.3 0.2" euler="0 70 20"><freejoint/><geom type="cylinder" size=".07 .12" rgba="0 0 1 1"/></body>
<body pos="-0.2 -0.3 0.0"><freejoint/><geom type="ellipsoid" size=".15 .08 .05" euler="30 0 10" rgba="1 1 0 1"/></body>
<body pos="0.3 -0.3 0.3"><freejoint/><geom type="sphere" size=".1" rgba="0 1 1 1"/></body>
</worldbody></mujoco>"""

_MUJOCO_RENDER = """
import os, sys
os.environ["MUJOCO_GL"] = "egl"
import mujoco, numpy as np
path, out, az, el = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
m = mujoco.MjModel.from_xml_path(path)
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, %d, %d)
cam = mujoco.MjvCamera()
mujoco.mjv_defaultFreeCamera(m, cam)
cam.azimuth, cam.elevation = az, el
r.update_scene(d, cam)
np.save(out, r.render())
""" % (H, W)

COLOURS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1)]


def _mask(img, col):
  x, c = img.astype(int), np.array(col)
  on = x[..., c == 1].min(-1)
  off = x[..., c == 0].max(-1)
  return (on > 20) & (off < 0.5 * on)


@pytest.mark.parametrize("azimuth,elevation", [(60, -30), (-120, -60), (10, -5)])
def test_same_picture_as_mujoco(tmp_path, azimuth, elevation):
  """Each geom covers the pixels MuJoCo's renderer gives it (IoU > 0.9) with its colour and
  lighting (mean difference under 8 of 255 where both draw it)."""
  path = tmp_path / "scene.xml"
  path.write_text(SCENE)
  ref_file = tmp_path / "ref.npy"
  res = subprocess.run([sys.executable, "-c", _MUJOCO_RENDER, str(path), str(ref_file),
                        str(azimuth), str(elevation)], capture_output=True, text=True,
                       timeout=120)
  assert res.returncode == 0, res.stderr[-2000:]
  ref = np.load(ref_file)
  m = engine.load_model(str(path))
  hr = HeadlessRenderer(m, W, H)
  cam = Camera.default_for(m)
  cam.azimuth, cam.elevation = azimuth, elevation
  img = hr.render(Snapshot(m), cam, VisOptions(shadows=False, background=(0, 0, 0)))
  hr.release()
  out = os.path.join(tempfile.gettempdir(), "render-tests")
  os.makedirs(out, exist_ok=True)
  save_png(os.path.join(out, f"vs_mujoco_{azimuth}_{elevation}.png"),
           np.concatenate([ref, img], 1))
  for col in COLOURS:
    a, b = _mask(ref, col), _mask(img, col)
    if a.sum() < 30:       # hidden behind another geom from this side
      continue
    iou = (a & b).sum() / (a | b).sum()
    assert iou > 0.9, f"geom of colour {col}: IoU {iou:.3f}"
  a, b = ref.sum(2) > 15, img.astype(int).sum(2) > 15
  both = a & b
  assert np.abs(ref.astype(int) - img)[both].mean() < 8
