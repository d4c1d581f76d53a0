"""Mesh geoms drawn with their triangles, against MuJoCo's own renderer (mujoco.Renderer on EGL
in a subprocess, as tests/render/test_vs_mujoco.py does): each mesh geom covers the pixels
MuJoCo gives it."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import numjoco
from numjoco.render.camera import Camera
from numjoco.render.headless import HeadlessRenderer, save_png
from numjoco.render.renderer import VisOptions
from numjoco.render.snapshot import Snapshot
from tests.render.test_vs_mujoco import COLOURS, _mask

W, H = 320, 240
_RNG = np.random.default_rng(3)
_BLOB = " ".join("%.5f" % x for x in (_RNG.normal(size=(40, 3)) * [0.15, 0.1, 0.08]).ravel())
# a non-convex L prism: drawn from its faces, not its hull
_L = ("0 0 0  .3 0 0  .3 .1 0  .1 .1 0  .1 .3 0  0 .3 0  "
      "0 0 .1  .3 0 .1  .3 .1 .1  .1 .1 .1  .1 .3 .1  0 .3 .1")
_LF = ("0 1 7  0 7 6  1 2 8  1 8 7  2 3 9  2 9 8  3 4 10  3 10 9  4 5 11  4 11 10  5 0 6  "
       "5 6 11  0 2 1  0 3 2  0 5 3  3 5 4  6 7 8  6 8 9  6 9 11  9 10 11")
SCENE = f"""<mujoco><asset><mesh name="blob" vertex="{_BLOB}"/>
<mesh name="L" vertex="{_L}" face="{_LF}" scale="1.5 1.5 1.5"/></asset><worldbody>
<light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false" diffuse=".5 .5 .5"/>
<body pos="0 0 0.3" euler="20 30 40"><freejoint/><geom type="mesh" mesh="blob" rgba="1 0 0 1"/></body>
<body pos="0.3 -0.4 0.1" euler="10 50 0"><freejoint/><geom type="mesh" mesh="L" rgba="0 1 0 1"/></body>
<body pos="-0.4 0.3 0.2" euler="0 70 20"><freejoint/><geom type="mesh" mesh="L" rgba="0 0 1 1"/></body>
<body pos="-0.2 -0.4 0.0"><freejoint/><geom type="mesh" mesh="blob" euler="30 0 10" rgba="1 1 0 1"/></body>
</worldbody></mujoco>"""

_MUJOCO_RENDER = """
import os, sys
os.environ["MUJOCO_GL"] = "egl"
import mujoco, numpy as np
path, out, az, el, dist = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
m = mujoco.MjModel.from_xml_path(path)
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, %d, %d)
cam = mujoco.MjvCamera()
mujoco.mjv_defaultFreeCamera(m, cam)
cam.azimuth, cam.elevation = az, el
if dist > 0:
  cam.distance = dist
r.update_scene(d, cam, mujoco.MjvOption())
np.save(out, r.render())
""" % (H, W)


def _render_both(tmp_path, path, azimuth, elevation, name, distance=0.0):
  ref_file = tmp_path / "ref.npy"
  res = subprocess.run([sys.executable, "-c", _MUJOCO_RENDER, str(path), str(ref_file),
                        str(azimuth), str(elevation), str(distance)],
                       capture_output=True, text=True, timeout=120)
  assert res.returncode == 0, res.stderr[-2000:]
  ref = np.load(ref_file)
  m = numjoco.load_model(str(path))
  hr = HeadlessRenderer(m, W, H)
  cam = Camera.default_for(m)
  cam.azimuth, cam.elevation = azimuth, elevation
  if distance > 0:
    cam.distance = distance
  img = hr.render(Snapshot(m), cam, VisOptions(shadows=False, background=(0, 0, 0)))
  hr.release()
  out = os.path.join(tempfile.gettempdir(), "render-tests")
  os.makedirs(out, exist_ok=True)
  save_png(os.path.join(out, f"{name}.png"), np.concatenate([ref, img], 1))
  return ref, img


@pytest.mark.parametrize("azimuth,elevation", [(60, -30), (-120, -60), (10, -5)])
def test_mesh_geoms_match_mujoco(tmp_path, azimuth, elevation):
  """Each mesh geom (convex blob, non-convex L, scaled, rotated) covers MuJoCo's pixels for it
  (IoU > 0.9), and colours agree where both draw (mean difference under 10 of 255)."""
  path = tmp_path / "scene.xml"
  path.write_text(SCENE)
  ref, img = _render_both(tmp_path, path, azimuth, elevation,
                          f"mesh_vs_mujoco_{azimuth}_{elevation}")
  checked = 0
  for col in COLOURS[:4]:
    a, b = _mask(ref, col), _mask(img, col)
    if a.sum() < 30:
      continue
    checked += 1
    iou = (a & b).sum() / (a | b).sum()
    assert iou > 0.9, f"mesh geom of colour {col}: IoU {iou:.3f}"
  assert checked >= 3
  a, b = ref.sum(2) > 15, img.astype(int).sum(2) > 15
  assert np.abs(ref.astype(int) - img)[a & b].mean() < 10


def test_jaco_arm_silhouette(tmp_path):
  """dm_control's jaco arm (STL meshes): our silhouette covers MuJoCo's (IoU > 0.9); the
  side-by-side picture is saved in $TMPDIR/render-tests/jaco.png."""
  dm = pytest.importorskip("dm_control")
  path = os.path.join(os.path.dirname(dm.__file__), "third_party/kinova/jaco_arm.xml")
  ref, img = _render_both(tmp_path, path, 130, -20, "jaco", distance=0.8)
  a, b = ref.astype(int).sum(2) > 6, img.astype(int).sum(2) > 6   # the arm is dark
  assert a.sum() > 2000, "the arm is not in view"
  iou = (a & b).sum() / (a | b).sum()
  assert iou > 0.9, f"silhouette IoU {iou:.3f}"
