"""numjoco.Renderer against mujoco.Renderer (EGL, in a subprocess: tests/render/mujoco_ref.py) on
the same model, state and camera: the pixels each draws overlap, the depth images agree, the
segmentation images name the same objects; and the API a mujoco.Renderer user relies on
(shapes and dtypes, cameras by id and name, `out`, modes, close and the context manager,
MuJoCo's errors)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import numjoco
from numjoco.render.camera import Camera
from numjoco.render.scene import VisOptions
from tests.render.mujoco_ref import mujoco_renderer_images, save_pair

pytest.importorskip("mujoco")

W, H = 320, 240

# every primitive geom type, a mesh, a half-transparent geom, sites (one drawn over the sphere)
# and a tendon between them, a free sphere that falls on the floor, a hinge, a model camera
SHAPES = """<mujoco>
  <asset>
    <mesh name="pyramid" vertex="0 0 .3  .2 .2 0  -.2 .2 0  -.2 -.2 0  .2 -.2 0"/>
  </asset>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/>
    <camera name="fixed" pos="1.4 -1.2 1.0" xyaxes=".65 .76 0 -.35 .3 .89"/>
    <geom name="floor" type="plane" size="2 2 .1" rgba=".4 .4 .4 1"/>
    <body name="a" pos="0 0 .3">
      <freejoint/>
      <geom type="sphere" size=".12" rgba="1 0 0 1"/>
      <site name="s1" type="box" size=".05 .05 .05" pos=".14 0 .1" rgba="0 0 1 1"/>
    </body>
    <body name="b" pos=".45 .2 .25" euler="30 20 0">
      <geom type="capsule" size=".06 .15" rgba="0 1 0 1"/>
      <site name="s2" pos="0 0 .2" size=".03"/>
    </body>
    <body pos="-.4 .3 .2" euler="0 60 10">
      <joint type="hinge" axis="0 1 0" pos="0 0 .12" damping="1"/>
      <geom type="cylinder" size=".08 .12" rgba="0 0 1 1"/>
    </body>
    <body pos="-.3 -.35 .15"><geom type="ellipsoid" size=".16 .08 .06" rgba="1 1 0 1"/></body>
    <body pos=".35 -.35 .12" euler="0 0 30"><geom type="box" size=".1 .12 .08" rgba="0 1 1 1"/></body>
    <body pos="0 .5 .05"><geom type="mesh" mesh="pyramid" rgba="1 0 1 1"/></body>
    <geom type="box" size=".05 .05 .3" pos="-.6 -.6 .3" rgba=".3 .6 .9 .4"/>
  </worldbody>
  <tendon><spatial width=".01" rgba=".9 .9 .1 1"><site site="s1"/><site site="s2"/></spatial></tendon>
</mujoco>"""

# a skin, a flex cloth and a rangefinder ray with its hit point and normal arrow
SURFACES = """<mujoco>
  <asset>
    <skin name="skin" rgba="0.2 0.8 0.3 1" inflate="0.02" vertex="0 0 0  .3 0 0  0 .3 0  0 0 .3"
          face="0 2 1  0 1 3  0 3 2  1 2 3">
      <bone body="b1" bindpos="0 0 0" bindquat="1 0 0 0" vertid="0 1 2 3" vertweight="1 1 1 1"/>
    </skin>
  </asset>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <geom type="plane" size="2 2 .1" rgba=".8 .8 .8 1"/>
    <body name="b1" pos="-0.6 -0.3 0.2" euler="10 20 30"><freejoint/>
      <geom type="sphere" size=".02" rgba="1 0 0 1"/></body>
    <flexcomp type="grid" count="6 6 1" spacing=".1 .1 .1" pos="0.3 0.2 .5" radius=".01"
              rgba=".2 .3 .9 1" name="cloth" dim="2" mass="1">
      <edge equality="true"/>
      <pin id="0 5"/>
    </flexcomp>
    <body name="sensors">
      <site name="ray" pos="-0.4 0.4 0.3" zaxis="1 0 -.3"/>
    </body>
  </worldbody>
  <sensor><rangefinder site="ray" data="dist point normal"/></sensor>
</mujoco>"""

FREE = dict(azimuth=60.0, elevation=-35.0, distance=2.2, lookat=(0.0, 0.0, 0.2))


def _suite(name):
  from tests.models import suite_source
  pytest.importorskip("dm_control")
  return suite_source(name)[0]


# decorations: our VisOptions flags and MuJoCo's mjtVisFlag ones
DECOR = ({"joints": True, "contact_points": True, "com": True},
         {"mjVIS_JOINT": 1, "mjVIS_CONTACTPOINT": 1, "mjVIS_COM": 1})

# name: (model file or MJCF text, free camera fields, model camera name or None, steps,
# (our VisOptions fields, MuJoCo's mjtVisFlag entries) or None for the defaults)
CASES = {
    "humanoid free camera": (lambda: _suite("humanoid"),
                             dict(azimuth=120.0, elevation=-20.0, distance=3.0,
                                  lookat=(0.0, 0.0, 1.0)), None, 100, None),
    "cheetah camera side": (lambda: _suite("cheetah"), {}, "side", 50, None),
    "shapes free camera": (lambda: SHAPES, FREE, None, 0, None),
    "shapes camera fixed": (lambda: SHAPES, {}, "fixed", 0, None),
    "shapes decorations": (lambda: SHAPES, FREE, None, 200, DECOR),
    "skin flex rangefinder": (lambda: SURFACES, FREE, None, 0, None),
}


def _source(tmp_path, case):
  """The model file of a case (an MJCF text written to tmp_path)."""
  src = CASES[case][0]()
  if src.lstrip().startswith("<"):
    path = tmp_path / "model.xml"
    path.write_text(src)
    return str(path)
  return src


def _ours(path, cam, camera, state, opts=None):
  """Our RGB, depth and segmentation images of `path` in MuJoCo's state (qpos, act; then
  forward), from the free camera with the fields of `cam` or the model camera `camera`, with
  VisOptions `opts`."""
  m = numjoco.load_model(path)
  d = numjoco.make_data(m)
  d.qpos[:] = state["qpos"]
  d.act[:] = state["act"]
  numjoco.forward(m, d)
  if camera is None:
    camera = Camera.default_for(m)
    for k, v in cam.items():
      setattr(camera, k, np.asarray(v, float) if k == "lookat" else v)
  out = {}
  with numjoco.Renderer(m, H, W) as r:
    r.update_scene(d, camera, opts)
    out["rgb"] = r.render()
    r.enable_depth_rendering()
    out["depth"] = r.render()
    r.enable_segmentation_rendering()
    out["seg"] = r.render()
  far = m.vis.map.zfar * m.stat.extent
  return out, far


@pytest.mark.parametrize("case", list(CASES))
def test_images_match_mujoco_renderer(tmp_path, case):
  """Same model, state, camera and scene option as mujoco.Renderer: the pixels
  showing something overlap (IoU > 0.998; measured 0.9997-1.0), segmentation gives the same
  [objid, objtype] on 99.9 % of the pixels both draw (measured 99.93-99.98 %, the rest on
  silhouettes) and the same set of objects (geoms, sites, tendon, skin, flex, sensor, joints,
  contacts, centres of mass, as mjv_updateScene labels them), depth agrees where the segmentation does (median relative
  difference < 1e-5, measured <= 1.4e-7; 99th percentile < 2e-3, measured <= 7e-4: MuJoCo
  linearises in float32) and is the far clip distance where nothing is drawn (MuJoCo's within
  1e-3, measured <= 2.6e-4), and the RGB images differ by under 6 of 255 on average where both
  draw (measured 0.4-3.3)."""
  path = _source(tmp_path, case)
  _, cam, camera, nstep, flags = CASES[case]
  ours_flags, their_flags = flags or ({}, {})
  ref = mujoco_renderer_images(path, cam, W, H, camera=camera, nstep=nstep, vis=their_flags)
  ours, far = _ours(path, cam, camera, ref, VisOptions(**ours_flags))
  save_pair(f"offscreen_{case.replace(' ', '_')}.png", ref["rgb"], ours["rgb"])
  assert ours["rgb"].shape == (H, W, 3) and ours["rgb"].dtype == np.uint8
  assert ours["depth"].shape == (H, W) and ours["depth"].dtype == np.float32
  assert ours["seg"].shape == (H, W, 2) and ours["seg"].dtype == np.int32
  theirs_fg, ours_fg = ref["seg"][..., 1] >= 0, ours["seg"][..., 1] >= 0
  assert theirs_fg.sum() > 5000, f"MuJoCo draws only {theirs_fg.sum()} pixels"
  both = theirs_fg & ours_fg
  iou = both.sum() / (theirs_fg | ours_fg).sum()
  assert iou > 0.998, f"foreground IoU {iou:.4f}"
  same = (ref["seg"] == ours["seg"]).all(-1) & both
  assert same.sum() / both.sum() >= 0.999, f"segmentation agrees on {same.sum() / both.sum():.4f}"
  seen_theirs = set(map(tuple, ref["seg"][theirs_fg].tolist()))
  seen_ours = set(map(tuple, ours["seg"][ours_fg].tolist()))
  assert seen_ours == seen_theirs, f"objects only MuJoCo's / only ours show: " \
      f"{seen_theirs - seen_ours} / {seen_ours - seen_theirs}"
  rel = np.abs(ours["depth"] - ref["depth"])[same] / ref["depth"][same]
  assert np.median(rel) < 1e-5 and np.percentile(rel, 99) < 2e-3, \
      (np.median(rel), np.percentile(rel, 99))
  background = ~theirs_fg & ~ours_fg
  assert (ours["depth"][background] == np.float32(far)).all()
  assert np.abs(ref["depth"][background] / far - 1).max() < 1e-3
  diff = np.abs(ref["rgb"].astype(int) - ours["rgb"])[both].mean()
  assert diff < 6, f"RGB mean difference {diff:.2f}"


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
  """The SHAPES model and its Data after forward."""
  path = tmp_path_factory.mktemp("shapes") / "shapes.xml"
  path.write_text(SHAPES)
  m = numjoco.load_model(str(path))
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  return str(path), m, d


def test_modes_shapes_and_out(shapes):
  """RGB, depth and segmentation images have mujoco.Renderer's shapes and dtypes; enabling one
  of depth and segmentation turns the other off, disabling it returns to RGB; `out` is filled
  (cast to its dtype) and returned, and one of the wrong shape is refused."""
  _, m, d = shapes
  with numjoco.Renderer(m, 60, 80) as r:
    assert (r.height, r.width, r.model) == (60, 80, m)
    r.update_scene(d)
    rgb = r.render()
    assert rgb.shape == (60, 80, 3) and rgb.dtype == np.uint8
    r.enable_depth_rendering()
    depth = r.render()
    assert depth.shape == (60, 80) and depth.dtype == np.float32
    r.enable_segmentation_rendering()
    seg = r.render()
    assert seg.shape == (60, 80, 2) and seg.dtype == np.int32
    r.enable_depth_rendering()
    assert r.render().shape == (60, 80)
    r.disable_depth_rendering()
    np.testing.assert_array_equal(r.render(), rgb)
    out = np.zeros((60, 80, 3), np.float64)
    assert r.render(out=out) is out
    np.testing.assert_array_equal(out, rgb)
    with pytest.raises(ValueError, match="Expected `out.shape == \\(60, 80, 3\\)`"):
      r.render(out=np.zeros((60, 80)))
    r.enable_segmentation_rendering()
    out = np.zeros((60, 80, 2), np.int32)
    assert r.render(out=out) is out
    np.testing.assert_array_equal(out, seg)


def test_cameras_by_id_name_and_object(shapes):
  """update_scene's camera: -1 is the default free camera (mjv_defaultFreeCamera), a model
  camera by id and by name give one image, a render.Camera is used as given; a bad name or id
  raises MuJoCo's ValueError, another type a TypeError."""
  _, m, d = shapes
  with numjoco.Renderer(m, 60, 80) as r:
    r.update_scene(d, 0)
    by_id = r.render()
    r.update_scene(d, "fixed")
    np.testing.assert_array_equal(r.render(), by_id)
    r.update_scene(d, np.int64(0))
    np.testing.assert_array_equal(r.render(), by_id)
    r.update_scene(d)
    free = r.render()
    r.update_scene(d, Camera.default_for(m))
    np.testing.assert_array_equal(r.render(), free)
    assert np.abs(free.astype(int) - by_id).mean() > 5       # another view
    with pytest.raises(ValueError, match='The camera "nope" does not exist.'):
      r.update_scene(d, "nope")
    with pytest.raises(ValueError, match=r"The camera id 1 is out of range \[-1, 1\)."):
      r.update_scene(d, 1)
    with pytest.raises(ValueError, match=r"The camera id -2 is out of range \[-1, 1\)."):
      r.update_scene(d, -2)
    with pytest.raises(TypeError, match="camera must be"):
      r.update_scene(d, 0.5)


def test_scene_is_the_state_at_update_scene(shapes):
  """As MuJoCo's, render draws the scene of the last update_scene: Data changed afterwards
  shows only after the next update_scene; before any, the model at qpos0 from the default free
  camera; `scene` is that Scene."""
  _, m, d = shapes
  with numjoco.Renderer(m, 60, 80) as r:
    assert r.scene is None
    initial = r.render()
    r.update_scene(d)
    np.testing.assert_array_equal(r.render(), initial)
    assert r.scene is not None and r.scene.ngeom > 0
    d2 = numjoco.make_data(m)
    d2.qpos[2] = 0.6          # the free sphere up
    numjoco.forward(m, d2)
    r.update_scene(d)
    before = r.render()
    r.update_scene(d2)
    moved = r.render()
    assert np.abs(moved.astype(int) - before).max() > 100
    d2.qpos[2] = 0.3
    numjoco.forward(m, d2)
    np.testing.assert_array_equal(r.render(), moved)


def test_close_and_context_manager(shapes):
  """The context manager closes the renderer; render and update_scene after close raise
  MuJoCo's RuntimeError; close may be called again."""
  _, m, d = shapes
  with numjoco.Renderer(m, 30, 40) as r:
    r.update_scene(d)
    r.render()
  with pytest.raises(RuntimeError, match="render cannot be called after close."):
    r.render()
  with pytest.raises(RuntimeError, match="update_scene cannot be called after close."):
    r.update_scene(d)
  r.close()


def test_given_context_is_kept(shapes):
  """With ctx=, the renderer draws in that moderngl context (the same image as in its own
  EGL one) and leaves it open when closed."""
  from numjoco.render.headless import create_context
  _, m, d = shapes
  with numjoco.Renderer(m, 60, 80) as r:
    r.update_scene(d)
    own = r.render()
  ctx = create_context()
  try:
    with numjoco.Renderer(m, 60, 80, ctx=ctx) as r:
      r.update_scene(d)
      np.testing.assert_array_equal(r.render(), own)
    ctx.buffer(reserve=16).release()      # still usable
  finally:
    ctx.release()


_MUJOCO_SIZE_ERRORS = """
import json, os, sys
os.environ["MUJOCO_GL"] = "egl"
import mujoco
m = mujoco.MjModel.from_xml_path(sys.argv[1])
out = []
for h, w in ((100, 641), (481, 100)):
  try:
    mujoco.Renderer(m, h, w).close()
    out.append(None)
  except ValueError as e:
    out.append(str(e))
print(json.dumps(out))
"""


def test_size_beyond_the_offscreen_buffer_raises_as_mujoco(shapes):
  """An image wider or taller than the model's offscreen buffer (640 x 480 by default) raises
  the ValueError mujoco.Renderer raises, word for word; check_size=False draws any size."""
  path, m, d = shapes
  res = subprocess.run([sys.executable, "-c", _MUJOCO_SIZE_ERRORS, path], capture_output=True,
                       text=True, timeout=120)
  assert res.returncode == 0, res.stderr[-2000:]
  theirs = json.loads(res.stdout.strip().splitlines()[-1])
  for (h, w), msg in zip(((100, 641), (481, 100)), theirs):
    assert msg is not None
    with pytest.raises(ValueError) as e:
      numjoco.Renderer(m, h, w)
    assert str(e.value) == msg
  with numjoco.Renderer(m, 481, 100, check_size=False) as r:
    r.update_scene(d)
    assert r.render().shape == (481, 100, 3)
