"""Headless images (EGL): geoms are where `project` says, move with their bodies, and every
toggle (contacts, transparency, shadows, wireframe, decorations) changes what it should."""
import os
import tempfile

import numpy as np
import pytest

import numjoco
from numjoco.render.camera import Camera
from numjoco.render.headless import HeadlessRenderer, save_png
from numjoco.render.renderer import VisOptions
from numjoco.render.snapshot import Snapshot

W, H = 320, 240
SCENE = """
<mujoco>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="3 3 .25" rgba=".6 .6 .6 1"/>
    <body name="ball" pos="0 0 0.6">
      <freejoint/><geom name="ball" type="sphere" size=".15" rgba="1 0 0 1"/>
    </body>
    <body name="crate" pos="0.8 0.6 0.1">
      <freejoint/><geom name="crate" type="box" size=".1 .1 .1" rgba="0 .8 0 1"/>
    </body>
    <body name="arm" pos="0.5 -0.8 0.6">
      <joint type="hinge" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size=".03" rgba=".9 .9 .2 1"/>
    </body>
    <body name="glass" pos="-0.7 0.2 0.5">
      <geom name="glass" type="box" size=".2 .2 .2" rgba="0 0 1 0.3" group="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def _model(xml):
  fd, path = tempfile.mkstemp(suffix=".xml")
  with os.fdopen(fd, "w") as f:
    f.write(xml)
  return numjoco.load_model(path)


def _posed(xml, ctx):
  """(m, d, snapshot, renderer) of the MJCF `xml` after forward at its initial state."""
  m = _model(xml)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  snap = Snapshot(m)
  snap.capture(m, d)
  return m, d, snap, HeadlessRenderer(m, W, H, ctx=ctx)


@pytest.fixture(scope="module")
def scene(ctx):
  m, d, snap, hr = _posed(SCENE, ctx)
  cam = Camera.default_for(m)
  cam.lookat[:] = (0, 0, 0.3)
  cam.distance, cam.azimuth, cam.elevation = 3.0, 90, -30
  yield m, d, snap, hr, cam
  hr.release()


def _px(img, xy):
  x, y = int(round(xy[0])), int(round(xy[1]))
  return img[y, x].astype(int)


def _save(name, img):
  out = "/tmp/render-tests"
  os.makedirs(out, exist_ok=True)
  save_png(os.path.join(out, name + ".png"), img)


def test_image_shape_and_sphere_where_projected(scene):
  """The pixel at the sphere's projected centre has the sphere's colour (red)."""
  m, d, snap, hr, cam = scene
  img = hr.render(snap, cam, VisOptions())
  _save("scene", img)
  assert img.shape == (H, W, 3) and img.dtype == np.uint8
  r, g, b = _px(img, hr.project(snap.geom_xpos[1], cam)[0])
  assert r > 80 and r > 3 * g and r > 3 * b
  r, g, b = _px(img, hr.project(snap.geom_xpos[2], cam)[0])   # the green crate
  assert g > 80 and g > 3 * r and g > 3 * b


def _red_centroid(img):
  img = img.astype(int)
  red = (img[..., 0] > 80) & (img[..., 0] > 3 * img[..., 1]) & (img[..., 0] > 3 * img[..., 2])
  ys, xs = np.nonzero(red)
  assert len(xs) > 20
  return np.array([xs.mean(), ys.mean()])


def test_moving_body_moves_its_pixels(scene):
  """Moving the ball moves its red pixels to where `project` puts the new position."""
  m, d, snap, hr, cam = scene
  d2 = numjoco.make_data(m)
  d2.qpos[:] = d.qpos
  d2.qpos[0] += 0.6
  d2.qpos[2] += 0.2
  numjoco.forward(m, d2)
  s2 = Snapshot(m)
  s2.capture(m, d2)
  ia, ib = hr.render(snap, cam, VisOptions()), hr.render(s2, cam, VisOptions())
  _save("moved_before", ia)
  _save("moved_after", ib)
  a, b = _red_centroid(ia), _red_centroid(ib)
  want = hr.project(s2.geom_xpos[1], cam)[0]
  assert np.linalg.norm(b - a) > 30
  assert np.linalg.norm(b - want) < 4


def test_contact_markers_only_with_toggle(ctx):
  """Contact points are drawn, at the contacts, only when the toggle is on."""
  m, d, snap, hr = _posed(SCENE.replace('pos="0.8 0.6 0.1"', 'pos="0 0 0.095"').replace(
      'pos="0 0 0.6"', 'pos="5 5 5"'), ctx)
  assert d.ncon == 4
  cam = Camera.default_for(m)
  cam.lookat[:] = (0, 0, 0)
  cam.distance, cam.azimuth, cam.elevation = 1.0, 60, -35
  off = hr.render(snap, cam, VisOptions())
  on = hr.render(snap, cam, VisOptions(contact_points=True))
  forces = hr.render(snap, cam, VisOptions(contact_forces=True))
  _save("contacts_on", on)
  diff = np.abs(on.astype(int) - off).sum(2) > 30
  assert diff.sum() > 30
  ys, xs = np.nonzero(diff)
  pts = hr.project(snap.contact_pos[:snap.ncon], cam)
  dist = np.min(np.linalg.norm(np.stack([xs, ys], 1)[:, None] - pts[None], axis=2), axis=1)
  assert np.percentile(dist, 95) < 25      # the changed pixels sit at the contacts
  assert (np.abs(forces.astype(int) - off).sum(2) > 30).sum() > 30
  hr.release()


def test_transparent_geom_shows_the_floor(scene):
  """A geom with alpha 0.3 mixes its colour with the floor behind it."""
  m, d, snap, hr, cam = scene
  xy = hr.project(snap.geom_xpos[4], cam)[0]
  groups = [True] * 6
  hidden = [True, False, True, True, True, True]
  glass = _px(hr.render(snap, cam, VisOptions(geom_groups=groups)), xy)
  floor = _px(hr.render(snap, cam, VisOptions(geom_groups=hidden)), xy)
  m.geom_rgba[4, 3] = 1.0
  hr.renderer.set_model(m)
  try:
    opaque = _px(hr.render(snap, cam, VisOptions(geom_groups=groups)), xy)
  finally:
    m.geom_rgba[4, 3] = 0.3
    hr.renderer.set_model(m)
  assert opaque[0] < 10 and opaque[1] < 10           # opaque blue: no floor grey
  assert glass[0] > opaque[0] + 20                    # the floor's red shows through
  assert glass[2] - glass[0] > floor[2] - floor[0] + 20   # tinted blue by the glass
  # blending weights: MuJoCo draws transparent geoms twice, the floor keeps (1 - 0.3)^2
  assert abs(glass[0] - 0.49 * floor[0]) < 25


def test_shadow_darkens_floor_under_body(scene):
  """The floor right under the ball is darker with shadows on; elsewhere it is unchanged."""
  m, d, snap, hr, cam = scene
  with_s = hr.render(snap, cam, VisOptions(shadows=True))
  without = hr.render(snap, cam, VisOptions(shadows=False))
  _save("shadows", with_s)
  under = hr.project(np.array([0.0, 0.0, 0.0]), cam)[0]
  far = hr.project(np.array([0.3, -0.6, 0.0]), cam)[0]
  a, b = _px(with_s, under), _px(without, under)
  assert not (a[0] > 3 * a[1])                      # the floor, not the ball, is visible there
  assert a.sum() < 0.8 * b.sum()
  assert abs(_px(with_s, far).sum() - _px(without, far).sum()) < 6


def test_wireframe_changes_image(scene):
  """Wireframe mode draws edges instead of filled triangles."""
  m, d, snap, hr, cam = scene
  solid = hr.render(snap, cam, VisOptions())
  wire = hr.render(snap, cam, VisOptions(wireframe=True))
  _save("wireframe", wire)
  changed = (np.abs(solid.astype(int) - wire).sum(2) > 30).mean()
  assert changed > 0.05


@pytest.mark.parametrize("flag", ["joints", "body_frames", "com", "inertia", "contact_frames"])
def test_each_decoration_toggle_draws_something(scene, flag):
  """Each decoration toggle adds pixels (the scene has joints, bodies, contacts)."""
  m, d, snap, hr, cam = scene
  base = hr.render(snap, cam, VisOptions())
  img = hr.render(snap, cam, VisOptions(**{flag: True}))
  if flag == "contact_frames":
    assert snap.ncon > 0
  assert (np.abs(img.astype(int) - base).sum(2) > 30).sum() > 10


def test_equality_anchors(ctx):
  """A connect equality draws its two anchor spheres when `constraints` is on."""
  xml = """
  <mujoco><worldbody>
    <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/></body>
    <body name="b" pos="0.5 0 1"><freejoint/><geom size=".1"/></body>
  </worldbody>
  <equality><connect body1="a" body2="b" anchor="0.25 0 0"/></equality></mujoco>"""
  m, d, snap, hr = _posed(xml, ctx)
  cam = Camera.default_for(m)
  base = hr.render(snap, cam, VisOptions())
  img = hr.render(snap, cam, VisOptions(constraints=True))
  diff = np.abs(img.astype(int) - base).sum(2) > 30
  ys, xs = np.nonzero(diff)
  assert len(xs) > 5
  anchor = hr.project(np.array([0.25, 0, 1.0]), cam)[0]
  assert np.min(np.hypot(xs - anchor[0], ys - anchor[1])) < 3
  hr.release()


def test_labels_and_highlight(scene):
  """Labels name bodies at their projected positions; the highlighted body is brighter."""
  m, d, snap, hr, cam = scene
  labels = hr.renderer.labels(snap, cam, VisOptions(labels="body"), W, H)
  names = {t for _, _, t in labels}
  assert {"ball", "crate", "glass"} <= names
  xy = hr.project(snap.geom_xpos[2], cam)[0]
  before = _px(hr.render(snap, cam, VisOptions()), xy)
  hr.renderer.highlight_body = 2
  try:
    after = _px(hr.render(snap, cam, VisOptions()), xy)
  finally:
    hr.renderer.highlight_body = -1
  assert after.sum() > before.sum() + 20


def test_app_hooks_lines_and_arrows(scene):
  """renderer.lines and renderer.arrows are drawn each frame."""
  m, d, snap, hr, cam = scene
  base = hr.render(snap, cam, VisOptions())
  hr.renderer.lines = [((-1, -1, 0.5), (1, 1, 0.5), (1, 1, 0, 1))]
  hr.renderer.arrows = [((0, -1, 0.2), (0, -1, 1.0), (1, 0, 1, 1))]
  try:
    img = hr.render(snap, cam, VisOptions())
  finally:
    hr.renderer.lines, hr.renderer.arrows = [], []
  tip = hr.project(np.array([0, -1, 0.6]), cam)[0]
  assert np.abs(_px(img, tip) - _px(base, tip)).sum() > 60
  assert (np.abs(img.astype(int) - base).sum(2) > 30).sum() > 50


def test_bad_options_give_clear_errors(scene):
  """Wrong toggles, label modes and sizes are reported by name."""
  m, d, snap, hr, cam = scene
  with pytest.raises(ValueError, match="geom_groups"):
    hr.render(snap, cam, VisOptions(geom_groups=[True, False]))
  with pytest.raises(ValueError, match="labels"):
    hr.renderer.labels(snap, cam, VisOptions(labels="tendon"), W, H)
  with pytest.raises(ValueError, match="size"):
    HeadlessRenderer(m, 0, 10, ctx=hr.ctx)


LIGHTS = """
<mujoco>
  <visual><headlight active="{head}"/></visual>
  <asset>
    <material name="mat" rgba="0 0 1 1"/>
  </asset>
  <worldbody>
    <light pos="0 0 2" dir="0 0 -1" cutoff="20" exponent="1" castshadow="false"/>
    <geom type="plane" size="0 0 .5" rgba=".6 .6 .6 1"/>
    <geom name="own" type="box" pos="-0.6 1.2 0.3" size=".1 .1 .1" material="mat" rgba="1 0 0 1"/>
    <geom name="frommat" type="box" pos="0.6 1.2 0.3" size=".1 .1 .1" material="mat"/>
  </worldbody>
</mujoco>
"""


def _lights_scene(ctx, head):
  m, d, snap, hr = _posed(LIGHTS.format(head=head), ctx)
  cam = Camera(m)
  cam.lookat[:] = (0, 0.5, 0)
  cam.distance, cam.azimuth, cam.elevation = 4.0, 90, -50
  return m, snap, hr, cam


def test_spot_light_cone_headlight_and_material_colour(ctx):
  """The spot light brightens the floor inside its cone only; the headlight adds light
  everywhere; a geom with a material takes the material's colour unless it sets its own rgba."""
  m, snap, hr, cam = _lights_scene(ctx, 1)
  img = hr.render(snap, cam, VisOptions(shadows=False))
  _save("spot", img)
  inside = _px(img, hr.project(np.array([0.0, 0.0, 0.0]), cam)[0]).sum()
  out = np.array([1.2, 0.6, 0.0])
  outside = _px(img, hr.project(out, cam)[0]).sum()
  r0 = np.tan(np.radians(20)) * 2          # cone radius on the floor
  assert np.linalg.norm(out) > r0 + 0.5
  assert inside > outside + 60
  own = _px(img, hr.project(np.array([-0.6, 1.2, 0.4]), cam)[0])
  mat = _px(img, hr.project(np.array([0.6, 1.2, 0.4]), cam)[0])
  assert own[0] > 3 * own[2] and mat[2] > 3 * mat[0]
  hr.release()
  m2, snap2, hr2, cam2 = _lights_scene(ctx, 0)
  dark = hr2.render(snap2, cam2, VisOptions(shadows=False))
  assert _px(dark, hr2.project(out, cam2)[0]).sum() < outside - 30
  hr2.release()


def test_infinite_plane_covers_the_view(ctx):
  """An infinite plane reaches the horizon: every pixel below it is floor, at any lookat."""
  m, snap, hr, cam = _lights_scene(ctx, 1)
  cam.elevation = -10
  for x in (0.0, 37.0, -120.0):
    cam.lookat[:] = (x, 0.3 * x, 0)
    img = hr.render(snap, cam, VisOptions(shadows=False))
    bg = np.array([round(c * 255) for c in VisOptions().background])
    bottom = img[H // 2 + 20:].reshape(-1, 3).astype(int)
    assert (np.abs(bottom - bg).sum(1) < 6).mean() < 0.01
  hr.release()


def test_no_shadow_variant_matches_shadow_program_with_zero_shadow_strength(scene):
  """Without shadows the renderer draws with a program variant that never reads the shadow map
  (llvmpipe pays for the lookup even behind a false branch); it must light the scene exactly as
  the shadow program does when the shadow has no effect (Renderer.shadow_strength 0), where
  the shadow light's separately clamped pass (MuJoCo's) changes nothing: no colour here
  saturates."""
  m, d, snap, hr, cam = scene
  try:
    hr.renderer.shadow_strength = 0.0
    with_prog = hr.render(snap, cam, VisOptions(shadows=True)).astype(int)
  finally:
    hr.renderer.shadow_strength = 1.0
  without = hr.render(snap, cam, VisOptions(shadows=False)).astype(int)
  shadowed = hr.render(snap, cam, VisOptions(shadows=True)).astype(int)
  assert np.abs(with_prog - without).max() <= 1
  assert np.abs(shadowed - without).max() > 20     # the shadow itself is drawn (test can fail)


def test_hidden_rectangle_is_left_at_the_background(scene):
  """A rectangle an opaque UI covers (`hidden`) is cleared to the background with the near
  plane's depth, so nothing is shaded there; the rest of the image is unchanged."""
  m, d, snap, hr, cam = scene
  opts = VisOptions()
  full = hr.render(snap, cam, opts)
  x, y, w, h = 40, 60, 150, 120        # pixels from the bottom left, as GL's viewport
  r = hr.renderer
  scene_ = r.update_scene(snap, cam, opts)
  r.draw(scene_, cam.view_matrix(snap), cam.projection, opts, W, H, fbo=hr.fbo,
         hidden=[(x, y, w, h)])
  part = hr._read(hr.fbo, 3, "f1")
  inside = np.zeros((H, W), bool)
  inside[H - y - h:H - y, x:x + w] = True
  background = np.round(np.array(opts.background) * 255)
  assert np.abs(part[inside] - background).max() <= 1
  assert np.array_equal(part[~inside], full[~inside])
  assert (np.abs(full[inside] - background).max(1) > 30).mean() > 0.5   # the scene was there


def test_multisample_resolve_equals_gl_blit(ctx):
  """A multisampled image is resolved by a shader pass (llvmpipe's blit is about 5x slower);
  it must give exactly what GL's own resolve, glBlitFramebuffer, gives: every edge pixel is a
  mean of samples, so a wrong sample count, weight or rounding shows."""
  m, d, snap, _ = _posed(SCENE, ctx)
  hr = HeadlessRenderer(m, W, H, samples=4, ctx=ctx)
  try:
    cam = Camera.default_for(m)
    cam.lookat[:] = (0, 0, 0.3)
    cam.distance, cam.azimuth, cam.elevation = 3.0, 90, -30
    ours = hr.render(snap, cam)
    ctx.copy_framebuffer(hr.fbo, hr._ms[0])           # GL's resolve of the same samples
    gl = hr._read(hr.fbo, 3, "f1")
    assert np.array_equal(ours, gl)
    flat = HeadlessRenderer(m, W, H, samples=0, ctx=ctx)
    try:    # the test can fail: multisampling changed the edges (means of 4 samples)
      assert (np.abs(flat.render(snap, cam).astype(int) - ours).max(2) > 20).sum() > 100
    finally:
      flat.release()
  finally:
    hr.release()
