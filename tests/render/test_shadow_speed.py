"""The renderer's shortcuts draw the same image as the plain way: floors drawn in pieces (the
shadow-map lookup only inside the light's footprint, a spot light only inside its cone), the
shadow map fitted to the casters, the shadow pass skipped while nothing moved, and the skybox
drawn only beside the floor."""
import os
import tempfile

import numpy as np
import pytest

import numjoco
from numjoco.render.camera import Camera
from numjoco.render.headless import HeadlessRenderer
from numjoco.render.renderer import VisOptions
from numjoco.render.snapshot import Snapshot
from tests.models import model_xml

W, H = 320, 240
SCENE = model_xml("render/shadow_speed/scene")
# directional straight down, directional slanted, spot light; finite and infinite floors
LIGHTS = (("0 0 -1", 'directional="true"', "3 3 .25"),
          ("0.4 0.3 -1", 'directional="true"', "0 0 .25"),
          ("-0.1 0.05 -1", 'cutoff="25"', "0 0 .25"))


# the floor's look: a grey colour, or a white textured material under which the lights' sum
# saturates (the shadow light must be clamped apart, as MuJoCo's pass of its own)
LOOKS = {"grey": 'rgba=".6 .6 .6 1"', "textured": 'material="tiles"'}


def _setup(ctx, light, extra=None, look="grey"):
  fd, path = tempfile.mkstemp(suffix=".xml")
  with os.fdopen(fd, "w") as f:
    f.write(SCENE.format(dir=light[0], kind=light[1], floor=light[2], look=LOOKS[look]))
  m = numjoco.load_model(path)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  snap = Snapshot(m, d)
  hr = HeadlessRenderer(m, W, H, ctx=ctx)
  cam = Camera.default_for(m)
  cam.lookat[:] = (0, 0, 0.2)
  cam.distance, cam.azimuth, cam.elevation = 2.5, 60, -35
  return m, d, snap, hr, cam


@pytest.mark.parametrize("look", sorted(LOOKS))
@pytest.mark.parametrize("light", LIGHTS)
def test_floor_in_pieces_equals_floor_in_one_draw(ctx, light, look):
  """The clipped floor pieces (the shadow program inside the footprint, the spot light only
  inside its cone) give the image of one floor draw with the shadow program everywhere, shadows
  included and without cracks; textured floors too."""
  m, d, snap, hr, cam = _setup(ctx, light, look=look)
  try:
    r = hr.renderer
    r.split_floor = True
    drawn = []
    draw_pieces = r._draw_pieces
    r._draw_pieces = lambda pieces, *a: (drawn.append(len(pieces)), draw_pieces(pieces, *a))
    pieces = hr.render(snap, cam, VisOptions()).astype(int)
    del r._draw_pieces
    # the floor was drawn in pieces: five, nine around a spot light's cone wider than the map
    assert drawn == [9 if "cutoff" in light[1] else 5]
    r.split_floor = False
    whole = hr.render(snap, cam, VisOptions()).astype(int)
    plain = hr.render(snap, cam, VisOptions(shadows=False)).astype(int)
    # equal but for a few edge pixels (checker edges, contact lines: clipped triangles
    # interpolate a hair differently); no crack shows the background through the floor
    assert (np.abs(pieces - whole).max(2) > 2).mean() < 1e-3
    bg = np.round(np.array(VisOptions().background) * 255)
    assert ((np.abs(pieces - bg).sum(2) < 4) & (np.abs(whole - bg).sum(2) >= 4)).sum() == 0
    # the comparison can fail: the shadows are there, on the floor, in both
    dark = (plain - whole).sum(2) > 30
    assert dark.sum() > 200
    r.split_floor = True
    again = hr.render(snap, cam, VisOptions(shadows=False)).astype(int)
    assert np.abs(again - plain).max() <= 1     # no clip planes left behind for later draws
  finally:
    hr.release()


def test_shadow_map_is_redrawn_when_casters_move(ctx):
  """Drawing a moved scene after a still one (the shadow pass skipped in between) gives the image
  a fresh renderer draws of the moved scene; the moved shadow differs from the old one."""
  m, d, snap, hr, cam = _setup(ctx, LIGHTS[1])
  m2, d2, _, fresh, _ = _setup(ctx, LIGHTS[1])
  try:
    before = hr.render(snap, cam, VisOptions()).astype(int)
    assert np.abs(hr.render(snap, cam, VisOptions()).astype(int) - before).max() == 0
    d.qpos[0] += 0.3              # the ball moves sideways
    numjoco.forward(m, d)
    snap.capture(m, d)
    moved = hr.render(snap, cam, VisOptions()).astype(int)
    reference = fresh.render(snap, cam, VisOptions()).astype(int)
    assert np.abs(moved - reference).max() <= 1
    assert (np.abs(moved - before).sum(2) > 30).sum() > 200
  finally:
    hr.release()
    fresh.release()


SKY = """
<mujoco>
  <asset>
    <texture name="sky" type="skybox" builtin="gradient" rgb1=".3 .5 .7" rgb2="0 0 0"
             width="64" height="384"/>
  </asset>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="{floor}" rgba=".5 .5 .5 1"/>
    <geom name="crate" type="box" size=".2 .2 .2" pos="0 0 .2" rgba="0 .8 0 1"/>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("floor", ["3 3 .25", "0 0 .25"])
def test_sky_drawn_beside_the_floor_only_equals_sky_everywhere(ctx, floor):
  """The skybox drawn only outside the floor's outline on screen (renderer.sky_edges) gives the
  image of the sky drawn over the whole screen behind everything: looking down at the floor
  (no sky drawn at all), at the horizon with a finite floor's edge in view, from below the
  floor, and from afar."""
  from numjoco.render import renderer as renderer_module
  fd, path = tempfile.mkstemp(suffix=".xml")
  with os.fdopen(fd, "w") as f:
    f.write(SKY.format(floor=floor))
  m = numjoco.load_model(path)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  snap = Snapshot(m, d)
  hr = HeadlessRenderer(m, W, H, ctx=ctx)
  got = []
  edges = renderer_module.sky_edges
  renderer_module.sky_edges = lambda *a: got.append(edges(*a)) or got[-1]
  try:
    r = hr.renderer
    cam = Camera.default_for(m)
    cam.lookat[:] = (0, 0, 0.2)
    poses = ((2.0, 45, -80), (4.0, 30, -8), (4.0, 30, 15), (60.0, 30, -5))
    for distance, azimuth, elevation in poses:
      cam.distance, cam.azimuth, cam.elevation = distance, azimuth, elevation
      r.clip_sky = True
      clipped = hr.render(snap, cam, VisOptions()).astype(int)
      r.clip_sky = False
      whole = hr.render(snap, cam, VisOptions()).astype(int)
      assert (np.abs(clipped - whole).max(2) > 2).mean() < 1e-3, (distance, elevation)
      bg = np.round(np.array(VisOptions().background) * 255)
      assert ((np.abs(clipped - bg).sum(2) < 4) & (np.abs(whole - bg).sum(2) >= 4)).sum() == 0
    # the shortcut was taken: looking down, the floor fills the view and no sky is drawn; at
    # the horizon the sky is drawn beside the floor
    assert got[0] == [] and len(got[1]) >= 1
  finally:
    renderer_module.sky_edges = edges
    hr.release()
