"""Our image against MuJoCo's own renderer (mujoco.Renderer on EGL, run in a subprocess so its
GL backend is chosen before `mujoco` is imported): same camera, same geoms, same colours."""
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
from tests.render.mujoco_ref import mujoco_image, mujoco_stepped, our_camera, our_image, save_pair

W, H = 320, 240
SCENE = """<mujoco><worldbody>
<light pos="1 -1 3" dir="-0.3 0.3 -1" directional="true" castshadow="false" diffuse=".5 .5 .5"/>
<body pos="0 0 0.3" euler="20 30 40"><freejoint/><geom type="capsule" size=".08 .2" rgba="1 0 0 1"/></body>
<body pos="0.4 0.2 0.1" euler="10 50 0"><freejoint/><geom type="box" size=".1 .15 .05" rgba="0 1 0 1"/></body>
<body pos="-0.3 0.3 0.2" euler="0 70 20"><freejoint/><geom type="cylinder" size=".07 .12" rgba="0 0 1 1"/></body>
<body pos="-0.2 -0.3 0.0"><freejoint/><geom type="ellipsoid" size=".15 .08 .05" euler="30 0 10" rgba="1 1 0 1"/></body>
<body pos="0.3 -0.3 0.3"><freejoint/><geom type="sphere" size=".1" rgba="0 1 1 1"/></body>
</worldbody></mujoco>"""

COLOURS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1)]


def _mask(img, col):
  x, c = img.astype(int), np.array(col)
  on = x[..., c == 1].min(-1)
  off = x[..., c == 0].max(-1)
  return (on > 20) & (off < 0.5 * on)


@pytest.mark.parametrize("azimuth,elevation,transparent", [
    (60, -30, False), (-120, -60, False), (10, -5, False), (60, -30, True)])
def test_same_picture_as_mujoco(tmp_path, azimuth, elevation, transparent):
  """Each geom covers the pixels MuJoCo's renderer gives it (IoU > 0.9) with its colour and
  lighting (mean difference under 8 of 255 where both draw it), also in transparent mode."""
  path = tmp_path / "scene.xml"
  path.write_text(SCENE)
  cam = dict(azimuth=azimuth, elevation=elevation)
  ref = mujoco_image(path, cam, W, H, vis={"mjVIS_TRANSPARENT": int(transparent)})
  img = our_image(path, cam, W, H, VisOptions(shadows=False, background=(0, 0, 0),
                                              transparency=transparent))
  save_pair(f"vs_mujoco_{azimuth}_{elevation}_{int(transparent)}.png", ref, img)
  for col in COLOURS:
    a, b = _mask(ref, col), _mask(img, col)
    if a.sum() < 30:       # hidden behind another geom from this side
      continue
    iou = (a & b).sum() / (a | b).sum()
    assert iou > (0.85 if transparent else 0.9), f"geom of colour {col}: IoU {iou:.3f}"
  a, b = ref.sum(2) > 15, img.astype(int).sum(2) > 15
  both = a & b
  assert np.abs(ref.astype(int) - img)[both].mean() < 8


DECOR_SCENE = """<mujoco>
<visual><scale jointlength="4" jointwidth="0.3" framelength="2" constraint="0.5"/></visual>
<worldbody>
<geom type="plane" size="2 2 .1" rgba=".3 .3 .3 1"/>
<body pos="0 0 0.095" euler="0 0 20"><freejoint/><geom type="box" size=".1 .1 .1" rgba=".5 .5 .5 1"/></body>
<body name="arm" pos="0.4 0.3 0.4"><joint type="hinge" axis="1 0 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.3" size=".03" rgba=".5 .5 .5 1"/></body>
<body name="slider" pos="-0.4 0.3 0.4"><joint type="slide" axis="0 1 0"/>
  <geom type="sphere" size=".05" rgba=".5 .5 .5 1"/></body>
</worldbody>
<equality><connect body1="arm" body2="slider" anchor="0 0 0.15"/></equality></mujoco>"""

# our VisOptions flag -> MuJoCo's (mjtVisFlag name, or ("frame", mjtFrame name))
DECOR = {"contact_points": "mjVIS_CONTACTPOINT", "contact_forces": "mjVIS_CONTACTFORCE",
         "joints": "mjVIS_JOINT", "com": "mjVIS_COM", "inertia": "mjVIS_INERTIA",
         "constraints": "mjVIS_CONSTRAINT", "body_frames": ("frame", "mjFRAME_BODY"),
         "contact_frames": ("frame", "mjFRAME_CONTACT")}

def test_decorations_match_mujoco(tmp_path):
  """Each decoration toggle adds the pixels MuJoCo's renderer adds for the same flag: contact
  points and forces, joint arrows, centre of mass, inertia boxes, equality anchors, body and
  contact frames (IoU of the changed pixels > 0.8, mean colour within 20/255)."""
  path = tmp_path / "decor.xml"
  path.write_text(DECOR_SCENE)
  view = dict(lookat=(0, 0.15, 0.15), distance=1.2, azimuth=60, elevation=-35)
  variants = [{}] + [{"frame": f[1]} if isinstance(f, tuple) else {f: 1} for f in DECOR.values()]
  imgs, _ = mujoco_stepped(path, 0, view, W, H, variants)
  ref = dict(zip(["none"] + list(DECOR), imgs))
  m = numjoco.load_model(str(path))
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  assert d.ncon == 4
  hr = HeadlessRenderer(m, W, H)
  cam = our_camera(m, view)
  snap = Snapshot(m, d)
  base = hr.render(snap, cam, VisOptions(shadows=False))
  os.makedirs(os.path.join(tempfile.gettempdir(), "render-tests"), exist_ok=True)
  rows = []
  for name in DECOR:
    img = hr.render(snap, cam, VisOptions(shadows=False, **{name: True}))
    a = np.abs(ref[name].astype(int) - ref["none"]).sum(2) > 40
    b = np.abs(img.astype(int) - base).sum(2) > 40
    rows.append(np.concatenate([ref[name], img], 1))
    save_png(os.path.join(tempfile.gettempdir(), "render-tests", "vs_mujoco_decor.png"),
             np.concatenate(rows, 0))
    assert a.sum() > 20, name
    iou = (a & b).sum() / (a | b).sum()
    assert iou > 0.8, f"{name}: IoU {iou:.3f} ({a.sum()} pixels in MuJoCo's, {b.sum()} in ours)"
    colour = np.abs(ref[name][a].mean(0) - img[b].mean(0)).max()
    assert colour < 20, f"{name}: mean colour differs by {colour:.0f}/255"
  hr.release()


_MUJOCO_FLOOR = """
import os, sys
os.environ["MUJOCO_GL"] = "egl"
import mujoco, numpy as np
m = mujoco.MjModel.from_xml_path(sys.argv[1])
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, %d, %d)
cam = mujoco.MjvCamera()
mujoco.mjv_defaultFreeCamera(m, cam)
cam.elevation, cam.distance = -60, cam.distance * 1.5
r.update_scene(d, cam)
np.save(sys.argv[2], r.render())
""" % (H, W)


def test_checker_floor_matches_mujoco_texture(tmp_path):
  """pile64's floor (a builtin checker material, texrepeat 4) has MuJoCo's squares: same size,
  same phase, same two colours, seen in the floor rows of both images."""
  from numjoco.assets import DEMO_MODEL
  path = os.path.join(os.path.dirname(DEMO_MODEL), "pile64.xml")
  ref_file = tmp_path / "floor.npy"
  res = subprocess.run([sys.executable, "-c", _MUJOCO_FLOOR, path, str(ref_file)],
                       capture_output=True, text=True, timeout=120)
  assert res.returncode == 0, res.stderr[-2000:]
  ref = np.load(ref_file).astype(int)
  m = numjoco.load_model(path)
  hr = HeadlessRenderer(m, W, H)
  cam = Camera.default_for(m)
  cam.elevation, cam.distance = -60, cam.distance * 1.5
  img = hr.render(Snapshot(m), cam, VisOptions(shadows=False)).astype(int)
  hr.release()
  rows = slice(int(0.8 * H), H)            # floor only, below the pile
  a, b = ref[rows].sum(2), img[rows].sum(2)
  light_a, light_b = a > 0.5 * (a.min() + a.max()), b > 0.5 * (b.min() + b.max())
  assert 0.3 < light_a.mean() < 0.7
  assert (light_a == light_b).mean() > 0.9
  for mask_a, mask_b in ((light_a, light_b), (~light_a, ~light_b)):
    np.testing.assert_allclose(ref[rows][mask_a].mean(0), img[rows][mask_b].mean(0), atol=16)
