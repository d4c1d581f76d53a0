"""Orthographic cameras and the principal-point offset, against MuJoCo's own renderer
(mujoco.Renderer on EGL in a subprocess, as tests/render/test_vs_mujoco.py does): a model camera
with projection="orthographic" (fovy = the view's height in length units), the free camera
with visual/global orthographic, and a camera with sensorsize + principalpixel (MuJoCo shifts
its frustum off centre and fixes its width, so another aspect ratio stretches the image)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import numjoco
from numjoco import engine
from numjoco.render.camera import Camera, CameraType
from numjoco.render.headless import HeadlessRenderer, save_png
from numjoco.render.renderer import VisOptions
from numjoco.render.snapshot import Snapshot
from tests.render.test_vs_mujoco import COLOURS, _mask

pytest.importorskip("mujoco")

SCENE = """<mujoco>
<visual><global orthographic="%s" fovy="%s"/></visual>
<worldbody>
<light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false" diffuse=".5 .5 .5"/>
<camera name="ortho" pos="0.1 -2 0.5" xyaxes="1 0 0 0 0.3 1" projection="orthographic"
        fovy="1.2"/>
<camera name="principal" pos="0 -2 0.5" xyaxes="1 0 0 0 0.3 1" resolution="320 240"
        sensorsize="0.0048 0.0036" focal="0.004 0.004" principalpixel="40 -30"/>
<camera name="plain" pos="0 -2 0.5" xyaxes="1 0 0 0 0.3 1" fovy="40"/>
<body pos="0 0 0.3" euler="20 30 40"><geom type="capsule" size=".08 .2" rgba="1 0 0 1"/></body>
<body pos="0.4 0.2 0.1" euler="10 50 0"><geom type="box" size=".1 .15 .05" rgba="0 1 0 1"/></body>
<body pos="-0.3 0.3 0.2" euler="0 70 20">
  <geom type="cylinder" size=".07 .12" rgba="0 0 1 1"/></body>
<body pos="-0.2 -0.3 0.0">
  <geom type="ellipsoid" size=".15 .08 .05" euler="30 0 10" rgba="1 1 0 1"/></body>
<body pos="0.3 -0.3 0.3"><geom type="sphere" size=".1" rgba="0 1 1 1"/></body>
</worldbody></mujoco>"""

# views: name -> {"fixed": camera id} or {"azimuth", "elevation"} of the free camera
_MUJOCO = """
import os, sys, json
os.environ["MUJOCO_GL"] = "egl"
import mujoco, numpy as np
path, out, views = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
w, h = int(sys.argv[4]), int(sys.argv[5])
m = mujoco.MjModel.from_xml_path(path)
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, h, w)
imgs = {}
for name, v in views.items():
  cam = mujoco.MjvCamera()
  mujoco.mjv_defaultFreeCamera(m, cam)
  if "fixed" in v:
    cam.type, cam.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, v["fixed"]
  else:
    cam.azimuth, cam.elevation = v["azimuth"], v["elevation"]
  r.update_scene(d, cam, mujoco.MjvOption())
  imgs[name] = r.render().copy()
np.savez(out, **imgs)
"""


def mujoco_images(path, views, w, h):
  """MuJoCo's pictures of the model at `path` for each view (see _MUJOCO)."""
  out = os.path.join(os.path.dirname(path), "ref.npz")
  res = subprocess.run([sys.executable, "-c", _MUJOCO, path, out, json.dumps(views), str(w),
                        str(h)], capture_output=True, text=True, timeout=120)
  assert res.returncode == 0, res.stderr[-2000:]
  return dict(np.load(out))


def our_image(m, view, w, h, camera=None):
  """Our picture of model m at qpos0 for a view (see _MUJOCO), black background, no shadows."""
  cam = camera or Camera.default_for(m)
  if "fixed" in view:
    cam.type, cam.fixedcamid = CameraType.FIXED, view["fixed"]
  else:
    cam.azimuth, cam.elevation = view["azimuth"], view["elevation"]
  hr = HeadlessRenderer(m, w, h)
  img = hr.render(Snapshot(m), cam, VisOptions(shadows=False, background=(0, 0, 0)))
  hr.release()
  return img


def compare(ref, img, name):
  """(smallest IoU over the geoms' colour masks, mean |difference| where both draw); the two
  pictures side by side in $TMPDIR/render-tests/<name>.png."""
  out = os.path.join(tempfile.gettempdir(), "render-tests")
  os.makedirs(out, exist_ok=True)
  save_png(os.path.join(out, f"{name}.png"), np.concatenate([ref, img], 1))
  ious = []
  for col in COLOURS:
    a, b = _mask(ref, col), _mask(img, col)
    if a.sum() < 30:
      continue
    ious.append((a & b).sum() / (a | b).sum())
  both = (ref.astype(int).sum(2) > 15) & (img.astype(int).sum(2) > 15)
  return min(ious), float(np.abs(ref.astype(int) - img)[both].mean())


def _model(folder, orthographic="false", fovy="45"):
  """(path of the MJCF for MuJoCo, our Model of it)."""
  folder.mkdir(exist_ok=True)
  path = folder / "scene.xml"
  path.write_text(SCENE % (orthographic, fovy))
  try:
    return str(path), numjoco.load_model(str(path))
  except engine.mjcf.parse.MjcfError as e:
    if "orthographic" not in str(e):
      raise
  # the engine reads global/orthographic as a number so far: compile without it, set m.vis
  ours = folder / "ours.xml"
  ours.write_text((SCENE % (orthographic, fovy)).replace(f'orthographic="{orthographic}" ', ""))
  m = numjoco.load_model(str(ours))
  m.vis.global_.orthographic = int(orthographic == "true")
  return str(path), m


def _assert_fixed_camera_as_mujoco(folder, camera, w, h, name):
  """The scene's fixed camera `camera` drawn w x h by MuJoCo and by us (saved as `name`): geoms
  cover the same pixels (IoU > 0.9) and colours agree (mean difference under 8)."""
  path, m = _model(folder)
  view = {"fixed": camera}
  ref = mujoco_images(path, {name: view}, w, h)[name]
  iou, diff = compare(ref, our_image(m, view, w, h), name)
  assert iou > 0.9, f"IoU {iou:.3f}"
  assert diff < 8, f"mean colour difference {diff:.1f}"


@pytest.mark.parametrize("w,h", [(320, 240), (240, 240)])
def test_orthographic_model_camera(tmp_path, w, h):
  """projection="orthographic": parallel projection, fovy 1.2 = the view's height in metres,
  the width from the aspect ratio (the old perspective drawing, a 1.2 degree field of view,
  covers none of MuJoCo's geom pixels)."""
  _assert_fixed_camera_as_mujoco(tmp_path, 0, w, h, f"ortho_camera_{w}x{h}")


def test_orthographic_free_camera_and_toggle(tmp_path):
  """visual/global orthographic="true" (fovy 1.5 m): the free camera is orthographic, as
  MuJoCo's; the same model drawn with Camera.orthographic set (the viewer's toggle) on a
  perspective model gives the same picture, and turning it off gives the perspective one."""
  path, m = _model(tmp_path, "true", "1.5")
  view = {"azimuth": 60, "elevation": -30}
  ref = mujoco_images(path, {"free": view}, 320, 240)["free"]
  iou, diff = compare(ref, our_image(m, view, 320, 240), "ortho_free")
  assert iou > 0.9 and diff < 8, (iou, diff)
  _, m2 = _model(tmp_path / "perspective", "false", "1.5")
  cam = Camera.default_for(m2)
  assert not cam.orthographic
  cam.orthographic = True
  iou, diff = compare(ref, our_image(m2, view, 320, 240, cam), "ortho_free_toggle")
  assert iou > 0.9 and diff < 8, (iou, diff)
  cam.orthographic = False
  iou, _ = compare(ref, our_image(m2, view, 320, 240, cam), "ortho_free_off")
  assert iou < 0.5


@pytest.mark.parametrize("w,h", [(320, 240), (320, 180)])
def test_principal_point_and_sensor_size(tmp_path, w, h):
  """sensorsize + focal + principalpixel (40, -30): MuJoCo's off-centre frustum of fixed width
  (a 320x180 image is squeezed vertically); drawn symmetric, as before, the geoms sit 40 px
  off (IoU well under 0.9)."""
  _assert_fixed_camera_as_mujoco(tmp_path, 1, w, h, f"principal_{w}x{h}")


def test_orthographic_ray_and_projection_agree(tmp_path):
  """Camera.ray through the pixel where the scene builder's project (the Renderer's) puts a point
  passes through it, for an orthographic free camera (parallel rays along the view) and the
  off-centre camera; the perturbation scale follows mjv_frustumHeight (the view's height when
  orthographic)."""
  from numjoco.render.scene import SceneBuilder
  _, m = _model(tmp_path, "true", "1.5")
  snap = Snapshot(m)
  proj = SceneBuilder(m).project
  w, h = 400, 300
  pts = np.array([[0.3, -0.2, 0.1], [-0.5, 0.4, 0.3], [0.0, 0.0, 0.2]])
  for setup in ("ortho", "principal"):
    cam = Camera.default_for(m)
    if setup == "principal":
      cam.type, cam.fixedcamid = CameraType.FIXED, 1
    xy = proj(pts, cam, w, h, snap)
    for p, (x, y) in zip(pts, xy):
      o, d = cam.ray(x / w, 1 - y / h, w / h, snap)
      np.testing.assert_allclose(o + d * np.dot(p - o, d), p, atol=1e-9)
  cam = Camera.default_for(m)
  assert cam.is_orthographic() and cam.frustum_height() == pytest.approx(1.5)
  o1, d1 = cam.ray(0.2, 0.3, w / h)
  o2, d2 = cam.ray(0.7, 0.9, w / h)
  np.testing.assert_allclose(d1, d2)
  np.testing.assert_allclose(np.linalg.norm(o2 - o1), np.hypot(0.5 * 1.5 * w / h, 0.6 * 1.5))
