"""Mesh geoms drawn with their triangles, against MuJoCo's own renderer (mujoco.Renderer on EGL
in a subprocess, as tests/render/test_vs_mujoco.py does): each mesh geom covers the pixels
MuJoCo gives it."""
import os

import numpy as np
import pytest

from numjoco.render.renderer import VisOptions
from tests.render.mujoco_ref import mujoco_image, our_image, save_pair
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

def _render_both(tmp_path, path, azimuth, elevation, name, distance=0.0):
  """MuJoCo's picture and ours of the file `path` from the default free camera turned to
  `azimuth`, `elevation` (and moved to `distance` when positive); saved side by side."""
  cam = dict(azimuth=azimuth, elevation=elevation, **({"distance": distance} if distance > 0
                                                      else {}))
  ref = mujoco_image(path, cam, W, H)
  img = our_image(path, cam, W, H, VisOptions(shadows=False, background=(0, 0, 0)))
  save_pair(f"{name}.png", ref, img)
  return ref, img


def assert_sdf_geoms_as_mujoco(tmp_path, xml, name):
  """Write `xml` (two sdf geoms coloured COLOURS[0] and COLOURS[1]) to `name`.xml and draw it in
  both engines from azimuth 60, elevation -30 (_render_both): each colour shows in MuJoCo's
  picture (over 100 pixels) and our pixels of it cover MuJoCo's (IoU > 0.9)."""
  path = tmp_path / f"{name}.xml"
  path.write_text(xml)
  ref, img = _render_both(tmp_path, path, 60, -30, f"{name}_vs_mujoco")
  for col in COLOURS[:2]:
    a, b = _mask(ref, col), _mask(img, col)
    assert a.sum() > 100, f"colour {col} not in view"
    iou = (a & b).sum() / (a | b).sum()
    assert iou > 0.9, f"sdf geom of colour {col}: IoU {iou:.3f}"


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
