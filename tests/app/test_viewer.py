"""The viewer under a real X window (Xvfb), driven by synthetic pyglet events and the panels'
command paths. Screenshots are checked for content, never for exact pixels; physics effects
are checked against MuJoCo or against physical laws."""
import numpy as np
import pytest

from tests.app.conftest import run_until
from tests.models import model_xml, write_xml

BALL = model_xml("app/viewer/ball")
ARM = model_xml("app/viewer/arm")
BLOWUP = model_xml("app/viewer/blowup")


def _key(v, symbol, modifiers=0):
  v.window.dispatch_event("on_key_press", symbol, modifiers)
  v.frame()


def _send(v, event, *args):
  """Dispatch a synthetic event (pyglet queues it until the next dispatch_events) and a frame."""
  v.window.dispatch_event(event, *args)
  v.frame()


def _changed_pixels(a, b, tol=24):
  return int((np.abs(a.astype(int) - b.astype(int)).max(axis=2) > tol).sum())


def test_demo_opens_draws_and_moves(open_viewer):
  """`numjoco` with no model: the demo is drawn (not a blank frame) and its bodies move."""
  v = open_viewer()
  img0 = v.screenshot()
  background = np.array(v.opts.background) * 255
  assert (np.abs(img0 - background).max(axis=2) > 30).mean() > 0.2   # the scene fills the view
  t0 = v.sim.status()
  run_until(v, lambda: v.sim.snapshot().__enter__().time > 0.4, "simulation time did not advance")
  img1 = v.screenshot()
  assert _changed_pixels(img0, img1) > 500                         # the pendulums swing
  ui_img = v.screenshot(ui=True)
  assert _changed_pixels(img1, ui_img) > 1000                       # the panels are drawn on top
  assert t0.error == "" and v.sim.status().error == ""


def test_labels_are_drawn_at_projected_points(open_viewer):
  """F7 cycles the labels: body names are drawn (imgui background list) next to the bodies."""
  from pyglet.window import key
  v = open_viewer(paused=True, ui=False)
  plain = v.screenshot(ui=True)
  _key(v, key.F7)
  assert v.opts.labels == "body"
  labelled = v.screenshot(ui=True)
  w, h = v.window.get_size()
  with v.sim.snapshot() as snap:
    xy = v.renderer.project(snap.xpos[1:], v.camera, w, h, snap)
  diff = np.abs(plain.astype(int) - labelled.astype(int)).max(axis=2) > 24
  for x, y in xy:   # text starts at each body's projected point
    if 0 <= x < w - 20 and 0 <= y < h - 12:
      assert diff[int(y):int(y) + 12, int(x):int(x) + 20].any()


def test_contact_overlays_toggle(open_viewer, tmp_path):
  """Keys C and F toggle contact points and force arrows: markers appear on a resting ball (both
  are under or inside the ball, seen with transparency, key T: the arrow is m g x map.force /
  meanmass = 5 cm long)."""
  from pyglet.window import key
  v = open_viewer(write_xml(tmp_path, "ball.xml", BALL))
  run_until(v, lambda: v.sim.snapshot().__enter__().ncon > 0, "the ball never touched the floor")
  _key(v, key.SPACE)
  v.sim.sync()
  assert v.sim.status().paused
  opaque = v.screenshot()
  _key(v, key.T)
  assert v.opts.transparency
  plain = v.screenshot()
  assert _changed_pixels(opaque, plain) > 100
  _key(v, key.C)
  assert v.opts.contact_points
  points = v.screenshot()
  _key(v, key.F)
  assert v.opts.contact_forces
  forces = v.screenshot()
  assert _changed_pixels(plain, points) > 20
  assert _changed_pixels(points, forces) > 20
  for k in (key.C, key.T, key.F):
    _key(v, k)
  assert _changed_pixels(opaque, v.screenshot()) == 0   # paused: toggling back restores the view


def test_control_slider_sets_actuator_force(open_viewer, tmp_path):
  """Moving the actuator slider (the panel's own path) changes the motor's actuator_force (= ctrl
  in actuator space, MuJoCo's convention) and the joint torque qfrc_actuator = gear * ctrl."""
  from numjoco.app import panels
  v = open_viewer(write_xml(tmp_path, "arm.xml", ARM))
  panels.set_ctrl(v.ui, v.commands, 0, 0.5)
  v.sim.sync()
  run_until(v, lambda: v.sim.snapshot().__enter__().extra["actuator_force"][0] != 0,
            "actuator force stayed zero")
  with v.sim.snapshot() as snap:
    assert snap.extra["ctrl"][0] == 0.5
    assert snap.extra["actuator_force"][0] == pytest.approx(0.5)
  v.sim.send("pause", True)
  v.sim.sync()
  assert v.sim.d.qfrc_actuator[0] == pytest.approx(3 * 0.5)
  v.sim.send("pause", False)
  panels.set_ctrl(v.ui, v.commands, 0, -0.25)
  v.sim.sync()
  # the snapshot shows the new ctrl at once and its actuator force after the next step
  run_until(v, lambda: abs(v.sim.snapshot().__enter__().extra["actuator_force"][0] + 0.25)
            < 1e-9, "actuator force did not follow the slider")
  with v.sim.snapshot() as snap:
    assert snap.extra["ctrl"][0] == -0.25
    assert snap.extra["actuator_force"][0] == pytest.approx(-0.25)


def test_integrator_change_while_running_matches_mujoco(open_viewer, tmp_path):
  """Switching to RK4 while running takes effect: 100 further steps equal MuJoCo's RK4 steps."""
  mujoco = pytest.importorskip("mujoco")
  path = write_xml(tmp_path, "arm.xml", ARM)
  v = open_viewer(path, key="tilted")
  run_until(v, lambda: v.sim.snapshot().__enter__().time > 0.1, "not running")
  v.sim.send("opt", "integrator", 1)   # what the Physics panel's combo sends
  v.frame()
  v.sim.send("pause", True)
  v.sim.sync()
  m, d = v.sim.m, v.sim.d
  assert m.opt.integrator == 1
  mm = mujoco.MjModel.from_xml_path(path)
  mm.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
  md = mujoco.MjData(mm)
  md.qpos[:], md.qvel[:], md.time = d.qpos, d.qvel, d.time
  v.sim.send("step", 100)
  v.sim.sync()
  mujoco.mj_step(mm, md, 100)
  np.testing.assert_allclose(d.qpos, md.qpos, rtol=1e-9, atol=1e-12)
  np.testing.assert_allclose(d.qvel, md.qvel, rtol=1e-9, atol=1e-10)


def test_solref_change_while_running(open_viewer, tmp_path):
  """A softer contact solref sent while running sinks the resting ball to MuJoCo's depth."""
  mujoco = pytest.importorskip("mujoco")
  path = write_xml(tmp_path, "ball.xml", BALL)
  v = open_viewer(path, speed=float("inf"))
  run_until(v, lambda: v.sim.snapshot().__enter__().time > 1.0, "not running")
  with v.sim.snapshot() as snap:
    z_stiff = snap.qpos[2]
  for g in (0, 1):   # what the Physics panel sends for each edited geom
    v.sim.send("model", "geom_solref", g, np.array([0.2, 1.0]))
  t_sent = []
  v.sim.send("call", lambda m, d: t_sent.append(d.time))   # the worker's time once applied
  v.sim.sync()
  t_edit = t_sent[0]
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t_edit + 3.0, "not running")
  v.sim.send("pause", True)
  v.sim.sync()
  z_soft = v.sim.d.qpos[2]
  mm = mujoco.MjModel.from_xml_path(path)
  mm.geom_solref[:] = [0.2, 1.0]
  md = mujoco.MjData(mm)
  mujoco.mj_step(mm, md, 3000)
  st = v.sim.status()
  why = (f"stiff {z_stiff}, soft {z_soft}, MuJoCo {md.qpos[2]}, t_edit {t_edit}, "
         f"now {v.sim.d.time}, worker solref {v.sim.m.geom_solref[:2].tolist()}, {st}")
  assert z_soft < z_stiff - 1e-3, why                       # visibly deeper
  assert z_soft == pytest.approx(md.qpos[2], abs=2e-4), why  # at MuJoCo's resting depth
  assert v.sim.edits[("geom_solref", 0)].tolist() == [0.2, 1.0]


def test_pause_step_reset_keys(open_viewer, tmp_path):
  """Space pauses (time stops), Right steps exactly one timestep, Backspace resets."""
  from pyglet.window import key
  v = open_viewer(write_xml(tmp_path, "arm.xml", ARM), key="tilted")
  run_until(v, lambda: v.sim.snapshot().__enter__().time > 0.05, "not running")
  _key(v, key.SPACE)
  v.sim.sync()
  t = v.sim.snapshot().__enter__().time
  for _ in range(10):
    v.frame()
  assert v.sim.snapshot().__enter__().time == t
  _key(v, key.RIGHT)
  v.sim.sync()
  assert v.sim.snapshot().__enter__().time == pytest.approx(t + 0.002)
  _key(v, key.BACKSPACE)
  v.sim.sync()
  with v.sim.snapshot() as snap:
    assert snap.time == 0.0 and snap.qpos[0] == 0.0   # qpos0, no keyframe selected
  v.ui.key = 0
  _key(v, key.BACKSPACE)
  v.sim.sync()
  assert v.sim.snapshot().__enter__().qpos[0] == 0.7  # the selected keyframe
  _key(v, key.SPACE)
  v.sim.sync()
  assert not v.sim.status().paused


def test_mouse_moves_camera_like_mujoco(open_viewer):
  """Left drag rotates (azimuth/elevation by 180 deg per window height, with simulate's signs: y
  grows upwards and it passes -dy to mjv_moveCamera), right drag pans, the
  wheel zooms by simulate's 2% of the height per click (mjv_moveCamera's ZOOM law)."""
  from pyglet.window import mouse
  v = open_viewer()
  cam = v.camera
  az, el, dist = cam.azimuth, cam.elevation, cam.distance
  h = v.window.height
  _send(v, "on_mouse_drag", 560, 200, h // 10, 0, mouse.LEFT, 0)
  assert cam.azimuth == pytest.approx(((az - 18 + 180) % 360) - 180)
  _send(v, "on_mouse_drag", 560, 200, 0, h // 20, mouse.LEFT, 0)   # upwards: simulate's -dy
  assert cam.elevation == pytest.approx(min(89, el + 9))
  lookat = cam.lookat.copy()
  _send(v, "on_mouse_drag", 560, 200, 20, 0, mouse.RIGHT, 0)
  assert np.linalg.norm(cam.lookat - lookat) > 0
  _send(v, "on_mouse_scroll", 560, 200, 0, 3)
  e = cam.extent
  assert cam.distance == pytest.approx(dist + np.log(1 + dist / e / 3) * 0.06 * 9 * e)
  img0 = v.screenshot()
  _send(v, "on_mouse_drag", 560, 200, 100, 0, mouse.LEFT, 0)
  assert _changed_pixels(img0, v.screenshot()) > 1000


def test_reload_keeps_camera_and_reads_the_file_again(open_viewer, tmp_path):
  """Ctrl+L reloads the edited file without restarting and keeps the view."""
  from pyglet.window import key, mouse
  path = write_xml(tmp_path, "ball.xml", BALL)
  v = open_viewer(path)
  _send(v, "on_mouse_drag", 560, 200, 40, 10, mouse.LEFT, 0)
  pose = (v.camera.azimuth, v.camera.elevation, v.camera.distance)
  version = v.sim.status().model_version
  (tmp_path / "ball.xml").write_text(BALL.replace('size="0.1" rgba', 'size="0.2" rgba'))
  _key(v, key.L, key.MOD_CTRL)
  run_until(v, lambda: v.sim.status().model_version > version, "model was not reloaded")
  v.frame()
  assert v.sim.model.geom_size[1, 0] == 0.2
  assert (v.camera.azimuth, v.camera.elevation, v.camera.distance) == pose
  assert v.renderer.m is v.sim.model


def test_open_by_drop_and_bad_file(open_viewer, tmp_path):
  """Dropping a file opens it in the same window; a broken file reports and keeps the old model."""
  v = open_viewer()
  arm = write_xml(tmp_path, "arm.xml", ARM)
  version = v.sim.status().model_version
  _send(v, "on_file_drop", 10, 10, [arm])
  run_until(v, lambda: v.sim.status().model_version > version, "dropped model not opened")
  v.frame()
  assert v.sim.model.nu == 1 and v.ui.m is v.sim.model
  bad = write_xml(tmp_path, "bad.xml", "<mujoco><worldbody><geom type='sphere'/></worldbody>")
  v.open(bad)
  run_until(v, lambda: v.sim.status().load_error != "", "load error not reported")
  assert "bad.xml" in v.sim.status().load_error
  assert v.sim.model.nu == 1     # the arm still runs
  v.frame()


def test_divergence_is_detected_reported_and_recovered(open_viewer, tmp_path):
  """A model that blows up: the UI status counts the divergence, Data is reset, the run goes on."""
  v = open_viewer(write_xml(tmp_path, "blowup.xml", BLOWUP), key=0)
  run_until(v, lambda: v.sim.status().divergences > 0, "divergence not detected")
  st = v.sim.status()
  assert "mjWARN_BADQ" in st.last_divergence and not st.paused and st.error == ""
  for _ in range(5):
    v.frame()
  with v.sim.snapshot() as snap:
    assert np.isfinite(snap.qpos).all()
  assert not v.sim.status().paused


def test_worker_exception_is_shown_not_swallowed(open_viewer):
  """An exception on the worker pauses it with the traceback in the UI's Errors window."""
  from imgui_bundle import imgui

  def boom(m, d):
    raise RuntimeError("boom from a test")
  v = open_viewer()
  v.sim.send("call", boom)
  run_until(v, lambda: v.sim.status().error != "", "exception not reported")
  st = v.sim.status()
  assert "RuntimeError: boom from a test" in st.error and st.paused
  v.frame()
  assert imgui.internal.find_window_by_name("Errors") is not None
  assert imgui.internal.find_window_by_name("Errors").active
  v.sim.send("clear_error")
  v.sim.send("pause", False)
  t = v.sim.snapshot().__enter__().time
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t + 0.05, "did not resume")


def test_first_start_compiles_in_a_subprocess(tmp_path, monkeypatch):
  """With a cold cache the window keeps drawing (progress screen) while a subprocess compiles."""
  monkeypatch.setenv("NUMJOCO_CACHE_DIR", str(tmp_path / "cold"))
  from numjoco.app import warmup
  from numjoco.app.viewer import Viewer
  assert not warmup.is_warm()
  v = Viewer(width=480, height=320, max_fps=0)
  try:
    assert v._warm is not None and v.sim is None
    for _ in range(20):
      v.frame()
    assert v._warm is not None and v._warm.poll() is None   # still compiling, window alive
    from imgui_bundle import imgui
    assert imgui.internal.find_window_by_name("Compiling").active   # the progress screen
  finally:
    v.close()


FLOAT = model_xml("app/viewer/float")


def _perturb_force(v):
  """Largest component of the spring force in the newest snapshot (-1 without a spring)."""
  with v.sim.snapshot() as snap:
    p = snap.extra["perturb"]
    return -1.0 if p is None else float(np.abs(p[3]).max())


def test_double_click_selects_and_ctrl_drag_pulls(open_viewer, tmp_path):
  """Double-click picks the body under the pointer; Ctrl+right drag pulls it along the drag
  (camera-aligned), the spring is drawn, and releasing leaves xfrc_applied untouched."""
  from pyglet.window import key, mouse
  v = open_viewer(write_xml(tmp_path, "float.xml", FLOAT))
  w, h = v.window.get_size()
  with v.sim.snapshot() as snap:
    x, y = v.renderer.project(snap.xpos[1], v.camera, w, h, snap)[0]
  x, y = int(x), int(h - y)          # pyglet's origin is bottom-left
  for _ in range(2):
    _send(v, "on_mouse_press", x, y, mouse.LEFT, 0)
    _send(v, "on_mouse_release", x, y, mouse.LEFT, 0)
  assert v.selected == 1 and v.renderer.highlight_body == 1
  start = v.sim.snapshot().__enter__().xpos[1].copy()
  _send(v, "on_mouse_press", x, y, mouse.RIGHT, key.MOD_CTRL)
  for _ in range(5):
    _send(v, "on_mouse_drag", x, y, 0, h // 20, mouse.RIGHT, key.MOD_CTRL)  # drag upwards
  # the snapshot shows the perturbation from perturb_start on; its force after the next step
  run_until(v, lambda: _perturb_force(v) > 0, "no spring force")
  pulling = []
  v.sim.send("call", lambda m, d: pulling.append(d.xfrc_perturb[1].copy()))
  v.sim.sync()
  assert np.abs(pulling[0]).max() > 0   # the engine's spring acts on the box while dragging
  v.draw()
  assert len(v.renderer.lines) == 1 and len(v.renderer.arrows) == 1   # spring and its force
  p0, tip = v.renderer.arrows[0][0], v.renderer.arrows[0][1]
  assert (tip - p0)[2] > 0   # the force pulls up, towards the dragged reference
  before = v.screenshot()
  t = v.sim.snapshot().__enter__().time
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t + 0.5, "not running")
  moved = v.sim.snapshot().__enter__().xpos[1] - start
  assert moved[2] > 0.05 and abs(moved[2]) > 5 * abs(moved[0])   # up: the camera's vertical
  assert _changed_pixels(before, v.screenshot()) > 100
  _send(v, "on_mouse_release", x, y, mouse.RIGHT, key.MOD_CTRL)
  v.sim.send("pause", True)
  v.sim.sync()
  d = v.sim.d
  assert not d.pert_active[0] and not d.xfrc_perturb.any() and not d.xfrc_applied.any()
  # paused, a drag moves the free box kinematically (mjv_applyPerturbPose) and nothing steps
  t, start = d.time, v.sim.snapshot().__enter__().xpos[1].copy()
  with v.sim.snapshot() as snap:
    x, y = v.renderer.project(snap.xpos[1], v.camera, w, h, snap)[0]
  x, y = int(x), int(h - y)
  _send(v, "on_mouse_press", x, y, mouse.RIGHT, key.MOD_CTRL)
  for _ in range(3):
    _send(v, "on_mouse_drag", x, y, 0, h // 20, mouse.RIGHT, key.MOD_CTRL)
  v.sim.sync()
  v.frame()
  moved = v.sim.snapshot().__enter__().xpos[1] - start
  expect = v.pert.refselpos - v._pert0[0]   # the reference's move, in world coordinates
  np.testing.assert_allclose(moved, expect, atol=1e-9)
  assert moved[2] > 0.05 and d.time == t
  _send(v, "on_mouse_release", x, y, mouse.RIGHT, key.MOD_CTRL)


HINGED = model_xml("app/viewer/hinged")


def test_ctrl_drag_turns_a_hinged_body_and_leaves_user_forces(open_viewer, tmp_path):
  """Ctrl+right drag upwards on a hinged arm: the engine's spring (d.xfrc_perturb) turns it up
  about its hinge while the drag is held; the user's xfrc_applied on another body is never
  changed; after release the perturbation is zero."""
  from pyglet.window import key, mouse
  v = open_viewer(write_xml(tmp_path, "hinged.xml", HINGED))
  user = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.01])
  v.sim.send("call", lambda m, d: d.xfrc_applied.__setitem__(2, user))
  v.sim.sync()
  w, h = v.window.get_size()
  tip = np.array([0.25, 0, 0])   # on the arm, 0.55 from the hinge
  with v.sim.snapshot() as snap:
    x, y = v.renderer.project(tip, v.camera, w, h, snap)[0]
  x, y = int(x), int(h - y)
  for _ in range(2):
    _send(v, "on_mouse_press", x, y, mouse.LEFT, 0)
    _send(v, "on_mouse_release", x, y, mouse.LEFT, 0)
  assert v.selected == 1
  q0 = v.sim.snapshot().__enter__().qpos[0]
  _send(v, "on_mouse_press", x, y, mouse.RIGHT, key.MOD_CTRL)
  for _ in range(3):
    _send(v, "on_mouse_drag", x, y, 0, h // 20, mouse.RIGHT, key.MOD_CTRL)
  t = v.sim.snapshot().__enter__().time
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t + 1.0, "not running")
  seen = []
  v.sim.send("call", lambda m, d: seen.append((d.xfrc_perturb.copy(), d.xfrc_applied.copy())))
  v.sim.sync()
  pert, applied = seen[0]
  assert np.abs(pert[1]).max() > 0 and not pert[[0, 2]].any()
  np.testing.assert_array_equal(applied[2], user)
  assert not applied[[0, 1]].any()
  # y up in the window is +z here; a rotation about +y by a positive angle lowers +x: up is < 0
  assert v.sim.snapshot().__enter__().qpos[0] < q0 - 0.1
  _send(v, "on_mouse_release", x, y, mouse.RIGHT, key.MOD_CTRL)
  v.sim.send("step", 1)
  v.sim.send("pause", True)
  v.sim.sync()
  d = v.sim.d
  assert not d.xfrc_perturb.any() and not d.pert_active[0]
  np.testing.assert_array_equal(d.xfrc_applied[2], user)


SWING = model_xml("app/viewer/swing")


def test_screenshot_key_and_button_save_pngs(open_viewer, tmp_path):
  """Ctrl+P saves the 3D view as a PNG of the window's size with the scene in it; the panel's
  Screenshot button saves another, to the viewer's output folder."""
  from PIL import Image
  from pyglet.window import key
  v = open_viewer(write_xml(tmp_path, "swing.xml", SWING), key=0, paused=True, out_dir=tmp_path)
  _key(v, key.P, key.MOD_CTRL)
  saved = v.last_saved
  assert saved and saved.endswith(".png") and saved.startswith(str(tmp_path))
  img = np.asarray(Image.open(saved).convert("RGB"))
  w, h = v.window.get_framebuffer_size()
  assert img.shape == (h, w, 3)
  background = np.array(v.opts.background) * 255
  assert (np.abs(img - background).max(axis=2) > 30).sum() > 500   # the arm is in the picture
  np.testing.assert_array_equal(img, v.screenshot())                 # the 3D view, no panels
  v.frame()
  shot = v.ui.rects.get("screenshot")
  assert shot is not None
  _click(v, (shot[0] + shot[2]) / 2, (shot[1] + shot[3]) / 2)
  assert v.last_saved != saved and v.last_saved.endswith(".png")
  assert len(list(tmp_path.glob("*.png"))) == 2
  # Ctrl+Shift+P: the same view with the panels drawn over it
  _key(v, key.P, key.MOD_CTRL | key.MOD_SHIFT)
  with_ui = np.asarray(Image.open(v.last_saved).convert("RGB"))
  assert with_ui.shape == img.shape and len(list(tmp_path.glob("*.png"))) == 3
  assert _changed_pixels(with_ui, v.screenshot()) > 5000   # the panels cover part of the view
  # the button with "with panels" ticked: taken after the frame that builds the panels
  v.ui.shot_panels = True
  _click(v, (shot[0] + shot[2]) / 2, (shot[1] + shot[3]) / 2)
  v.frame()
  assert len(list(tmp_path.glob("*.png"))) == 4
  assert _changed_pixels(np.asarray(Image.open(v.last_saved).convert("RGB")),
                         v.screenshot()) > 5000


def test_recorded_frame_is_the_window_picture(open_viewer, tmp_path):
  """Paused, a recording's first frame (the current state, drawn by the recorder's own
  numjoco.Renderer in the window's context) is the window's 3D view of that state, up to
  the video's lossy coding."""
  import av
  v = open_viewer(write_xml(tmp_path, "swing.xml", SWING), key=0, paused=True, out_dir=tmp_path)
  v.sim.sync()
  v.frame()
  shot = v.screenshot().astype(int)
  path = v.start_recording()
  v.sim.sync()
  v.frame()
  assert v.stop_recording() == path
  with av.open(path) as f:
    first = next(iter(f.decode(video=0))).to_ndarray(format="rgb24").astype(int)
  h, w = shot.shape[:2]
  assert np.abs(first[:h, :w] - shot).mean() < 3   # H.264 at the default quality
  assert np.abs(first[:h, :w] - shot[::-1]).mean() > 3 * np.abs(first[:h, :w] - shot).mean()


def test_recordings_renderer_is_kept_for_its_model_only(open_viewer, tmp_path):
  """The renderer that draws recordings (its framebuffer, the model's meshes) is reused by the
  next recording of the same model, and released when another model is opened: a session of
  recordings and model switches does not hold every model recorded."""
  v = open_viewer(write_xml(tmp_path, "swing.xml", SWING), key=0, paused=True, out_dir=tmp_path)
  v.start_recording()
  v.sim.sync()
  v.frame()
  v.stop_recording()
  rec = v._rec_renderer[1]
  v.start_recording()
  assert v.recording[1] is rec
  v.sim.sync()
  v.frame()
  v.stop_recording()
  version = v.sim.status().model_version
  v.open(write_xml(tmp_path, "ball.xml", BALL))
  run_until(v, lambda: v.sim.status().model_version > version, "the model was not opened")
  v.frame()
  assert v._rec_renderer is None and v.ui.m.nbody == 2
  assert v.start_recording() and v._rec_renderer[1] is not rec
  v.sim.sync()
  v.frame()
  assert v.stop_recording()


def test_recording_in_slow_motion_plays_at_true_speed(open_viewer, tmp_path):
  """Ctrl+R records while the simulation runs at 1/10 speed; the Record button stops it. The
  video has one frame per 1/fps of SIMULATED time (duration x fps, +-1), whatever the display
  rate, decodes with PyAV at the window's size, and consecutive frames of the swinging arm
  differ."""
  import av
  from pyglet.window import key
  v = open_viewer(write_xml(tmp_path, "swing.xml", SWING), key=0, speed=0.1, out_dir=tmp_path,
                  record_fps=30)
  _key(v, key.R, key.MOD_CTRL)
  assert v.recording is not None
  t0 = v.sim.snapshot().__enter__().time
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t0 + 0.4, "not running", 300)
  x0, y0, x1, y1 = v.ui.rects["record"]
  _click(v, (x0 + x1) / 2, (y0 + y1) / 2)
  run_until(v, lambda: v.recording is None, "the recording did not finish")
  path = v.last_saved
  assert path.endswith(".mp4") and v.sim.status().speed == 0.1
  start, stop, frames = v.sim.record_span
  assert stop - start > 0.4
  with av.open(path) as f:
    images = [fr.to_ndarray(format="rgb24") for fr in f.decode(video=0)]
  assert len(images) == frames
  assert abs(len(images) - (stop - start) * 30) <= 1
  w, h = v.window.get_framebuffer_size()
  assert images[0].shape == (h + h % 2, w + w % 2, 3)
  for a, b in zip(images, images[1:]):
    assert _changed_pixels(a, b) > 0


def _click(v, x, y, button=None):
  """A real mouse click at window pixel (x, y) measured from the top-left, as imgui sees it."""
  from pyglet.window import mouse
  button = button or mouse.LEFT
  h = v.window.height
  _send(v, "on_mouse_motion", x, h - y, 0, 0)
  _send(v, "on_mouse_press", x, h - y, button, 0)
  _send(v, "on_mouse_release", x, h - y, button, 0)
  v.frame()   # imgui sees queued input one frame late


def test_panel_button_and_slider_by_mouse(open_viewer, tmp_path):
  """Clicking the panel's Pause button pauses; clicking at 3/4 of the actuator slider sets a
  positive ctrl that reaches Data (actuator_force = ctrl for a motor)."""
  v = open_viewer(write_xml(tmp_path, "arm.xml", ARM))
  v.ui.expand.add("Controls")
  v.frame()
  v.frame()
  x0, y0, x1, y1 = v.ui.rects["run"]
  _click(v, (x0 + x1) / 2, (y0 + y1) / 2)
  v.sim.sync()
  assert v.sim.status().paused
  v.frame()    # paused, the panel shows the history slider: the sliders below it move down
  v.frame()
  x0, y0, x1, y1 = v.ui.rects["ctrl0"]
  _click(v, x0 + 0.75 * (x1 - x0), (y0 + y1) / 2)
  v.sim.sync()
  assert 0.3 < v.ui.ctrl[0] < 1.0   # the rectangle includes the label: no exact value
  v.sim.send("step", 1)
  v.sim.sync()
  assert v.sim.d.ctrl[0] == v.ui.ctrl[0]
  assert v.sim.d.actuator_force[0] == pytest.approx(v.ui.ctrl[0])


def test_camera_drags_match_mjv_moveCamera(open_viewer, tmp_path):
  """Every mouse binding moves the view exactly as simulate's calls of mjv_moveCamera do."""
  mujoco = pytest.importorskip("mujoco")
  from pyglet.window import key, mouse
  path = write_xml(tmp_path, "ball.xml", BALL)
  v = open_viewer(path, paused=True)
  mm = mujoco.MjModel.from_xml_path(path)
  cam = mujoco.MjvCamera()
  ours = v.camera
  cam.azimuth, cam.elevation, cam.distance = ours.azimuth, ours.elevation, ours.distance
  cam.lookat[:] = ours.lookat
  h = v.window.height
  M = mujoco.mjtMouse
  steps = [(mouse.LEFT, 0, 30, 20, M.mjMOUSE_ROTATE_V), (mouse.LEFT, key.MOD_SHIFT, -10, 5,
                                                          M.mjMOUSE_ROTATE_H),
           (mouse.RIGHT, 0, -15, 25, M.mjMOUSE_MOVE_V), (mouse.RIGHT, key.MOD_SHIFT, 12, -8,
                                                          M.mjMOUSE_MOVE_H),
           (mouse.MIDDLE, 0, 0, 30, M.mjMOUSE_ZOOM)]
  for button, mods, dx, dy, action in steps:
    _send(v, "on_mouse_drag", 560, 200, dx, dy, button, mods)
    mujoco.mjv_moveCamera(mm, int(action), dx / h, -dy / h, cam)
  _send(v, "on_mouse_scroll", 560, 200, 0, 2)
  mujoco.mjv_moveCamera(mm, int(M.mjMOUSE_ZOOM), 0, -0.02 * 2, cam)
  assert ours.azimuth == pytest.approx(cam.azimuth)
  assert ours.elevation == pytest.approx(cam.elevation)
  assert ours.distance == pytest.approx(cam.distance)
  np.testing.assert_allclose(ours.lookat, cam.lookat, atol=1e-9)


def test_model_cameras_cycle_and_escape_frees(open_viewer):
  """']' switches to the model's first camera (the view changes), '[' cycles back through them,
  Esc returns to the free camera (and does not close the window)."""
  from pyglet.window import key
  from numjoco.render.camera import CameraType
  from tests.models import suite_source
  path, _ = suite_source("humanoid")
  v = open_viewer(path, paused=True)
  ncam = v.sim.model.ncam
  assert ncam >= 2
  free = v.screenshot()
  _key(v, key.BRACKETRIGHT)
  assert v.camera.type == CameraType.FIXED and v.camera.fixedcamid == 0
  assert _changed_pixels(free, v.screenshot()) > 1000
  _key(v, key.BRACKETLEFT)
  assert v.camera.fixedcamid == ncam - 1
  _key(v, key.ESCAPE)
  assert v.camera.type == CameraType.FREE and not v.closed
  assert _changed_pixels(free, v.screenshot()) == 0


def test_broken_model_opens_the_window_with_the_error(tmp_path, capsys):
  """`numjoco bad.xml`: the window opens, names the file and line of the error (and prints it),
  and a good model can then be opened in the same window."""
  from numjoco.app.viewer import Viewer
  bad = write_xml(tmp_path, "bad.xml", "<mujoco>\n<worldbody>\n<joint rnage='1'/>\n</worldbody>"
               "</mujoco>")
  v = Viewer(bad, width=480, height=320, max_fps=0)
  try:
    run_until(v, lambda: v.sim is not None and v.sim.status().load_error != "", "no load error")
    run_until(v, lambda: v.ui_ready, "the panels never came up to show the error")
    for _ in range(3):
      v.frame()
    err = v.sim.status().load_error
    assert "bad.xml:3" in err
    assert "bad.xml:3" in capsys.readouterr().err
    from imgui_bundle import imgui
    assert imgui.internal.find_window_by_name("Errors").active
    v.open(write_xml(tmp_path, "ball.xml", BALL))
    run_until(v, lambda: v.first_frame_at is not None, "the good model never appeared")
  finally:
    v.close()


def test_closing_the_window_finalises_a_recording(open_viewer, tmp_path):
  """Closing the window while recording still writes every sampled frame into a playable file."""
  import av
  v = open_viewer(write_xml(tmp_path, "swing.xml", SWING), key=0, out_dir=tmp_path)
  path = v.start_recording(fps=20)
  t0 = v.sim.snapshot().__enter__().time
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t0 + 0.3, "not running")
  v.close()
  assert v.recording is None and v.last_saved == path
  start, stop, frames = v.sim.record_span
  with av.open(path) as f:
    assert sum(1 for _ in f.decode(video=0)) == frames >= 6


SENSED = """<mujoco><worldbody><body pos="0 0 1"><joint name="swing" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04"/></body></worldbody>
  <sensor><jointvel joint="swing"/><jointpos name="angle" joint="swing"/></sensor></mujoco>"""


def test_info_panel_plots_a_sensor(open_viewer, tmp_path):
  """The Info panel's sensor plot follows d.sensordata: the 'angle' (jointpos) entry is plotted,
  it swings, and it is the joint angle of the state before the last step (MuJoCo computes
  sensors in forward, before integrating)."""
  v = open_viewer(write_xml(tmp_path, "sensed.xml", SENSED))
  ui = v.ui
  assert ui.sensor_labels() == ["sensor 0", "angle"]
  ui.plot_sel.update(sensor=True)
  ui.plot_sensor = 1
  run_until(v, lambda: len(ui.plot.get("sensor", [])) > 10 and
            v.sim.snapshot().__enter__().time > 0.3, "no sensor plot")
  v.sim.send("pause", True)
  v.sim.sync()
  for _ in range(3):
    v.frame()
  with v.sim.snapshot() as snap:
    sd, qpos, qvel = snap.extra["sensordata"], snap.extra["qpos"], snap.extra["qvel"]
  assert ui.plot["sensor"][-1] == sd[1]
  h = v.sim.m.opt.timestep
  assert abs(sd[1] - qpos[0]) <= 1.5 * abs(qvel[0]) * h + 1e-12 and sd[1] != qpos[0]
  assert np.ptp(ui.plot["sensor"]) > 0.01   # it swings


def test_actuator_group_checkbox_disables_and_greys_its_controls(open_viewer, tmp_path):
  """Clicking group 1's checkbox in the Controls panel disables that group (opt.disableactuator,
  exported by the option edits); its sliders are greyed (a click on one changes nothing) while
  group 0's still works; qacc equals MuJoCo 4.0's for the same state and disabled group."""
  mujoco = pytest.importorskip("mujoco")
  from tests.app.test_sim import PLASTIC
  path = write_xml(tmp_path, "plastic.xml", PLASTIC)
  v = open_viewer(path, paused=True)
  v.ui.expand.add("Controls")
  v.frame()
  v.frame()
  x0, y0, x1, y1 = v.ui.rects["actgroup1"]
  _click(v, x0 + 8, (y0 + y1) / 2)   # the box is at the left of the item
  v.sim.sync()
  assert v.sim.m.opt.disableactuator == 1 << 1
  assert v.sim.opt_edits["disableactuator"] == 1 << 1
  for _ in range(3):
    v.frame()
  for i in (0, 1):   # m0 (group 0) moves, m1 (group 1) is greyed
    x0, y0, x1, y1 = v.ui.rects[f"ctrl{i}"]
    _click(v, x0 + 0.4 * (x1 - x0), (y0 + y1) / 2)
  v.sim.sync()
  assert v.ui.ctrl[0] != 0 and v.ui.ctrl[1] == 0
  v.sim.send("ctrl", 1, 0.8)   # a control set anyway (e.g. from a key) gives no force
  v.sim.send("step", 20)
  v.sim.sync()
  import numjoco
  v.sim.send("call", numjoco.forward)   # on the worker: qacc of the current state
  v.sim.sync()
  m, d = v.sim.m, v.sim.d
  mm = mujoco.MjModel.from_xml_path(path)
  mm.opt.disableactuator = 1 << 1
  md = mujoco.MjData(mm)
  md.qpos[:], md.qvel[:], md.act[:], md.ctrl[:] = d.qpos, d.qvel, d.act, d.ctrl
  md.plastic[:] = d.plastic
  mujoco.mj_forward(mm, md)
  assert d.actuator_force[1] == 0 and d.actuator_force[0] != 0
  np.testing.assert_allclose(d.qacc, md.qacc, rtol=1e-8, atol=1e-9)


def test_element_editor_offers_springyield_only_where_plastic(open_viewer, tmp_path):
  """Physics > Elements shows a springyield field for the plastic hinge and tendon, none for
  the elastic hinge (MuJoCo gives it no plastic state: an edit would do nothing)."""
  from numjoco.app.panels import physics
  from tests.app.test_sim import PLASTIC
  v = open_viewer(write_xml(tmp_path, "plastic.xml", PLASTIC), paused=True)
  v.ui.expand.update(("Physics", "Elements"))
  kinds = list(physics.ELEMENTS)
  shown = {}
  for kind, i in (("joint", 0), ("joint", 3), ("tendon", 0)):
    v.ui.elem_kind, v.ui.elem_id = kinds.index(kind), i
    v.frame()
    v.frame()
    shown[kind, i] = {f for f in ("jnt_springyield", "tendon_springyield", "jnt_stiffness")
                      if f"elem_{f}" in v.ui.rects}
  assert shown["joint", 0] == {"jnt_springyield", "jnt_stiffness"}
  assert shown["joint", 3] == {"jnt_stiffness"}
  assert shown["tendon", 0] == {"tendon_springyield"}


RANGEFINDER = model_xml("app/viewer/rangefinder")


def test_rangefinder_key_and_orthographic_checkbox(open_viewer, tmp_path):
  """Key Y (simulate's shortcut) hides and shows the rangefinder ray (on by default, as
  mjVIS_RANGEFINDER); the Rendering panel's "orthographic" checkbox switches the free camera's
  projection (the view changes), and a second click restores the same picture."""
  from pyglet.window import key
  v = open_viewer(write_xml(tmp_path, "ray.xml", RANGEFINDER), paused=True)
  v.sim.sync()
  assert v.opts.rangefinder
  with v.sim.snapshot() as snap:
    assert snap.sensordata[0] > 0          # the ray hits the floor
  shown = v.screenshot()
  _key(v, key.Y)
  assert not v.opts.rangefinder
  hidden = v.screenshot()
  assert _changed_pixels(shown, hidden) > 50
  _key(v, key.Y)
  assert v.opts.rangefinder and _changed_pixels(shown, v.screenshot()) == 0
  v.ui.expand.add("Rendering")
  v.frame()
  h = v.window.height
  _send(v, "on_mouse_motion", 100, h - 300, 0, 0)
  for _ in range(4):        # the Rendering section is at the panel's end: scroll down to it
    _send(v, "on_mouse_scroll", 100, h - 300, 0, -10)
  v.frame()
  x0, y0, x1, y1 = v.ui.rects["orthographic"]
  assert y1 < h - 16, "the checkbox is not in view"
  _click(v, x0 + 8, (y0 + y1) / 2)
  assert v.camera.orthographic and v.camera.is_orthographic()
  ortho = v.screenshot()
  assert _changed_pixels(shown, ortho) > 1000
  _click(v, x0 + 8, (y0 + y1) / 2)
  assert not v.camera.orthographic
  assert _changed_pixels(shown, v.screenshot()) == 0


def test_a_frame_after_the_bound_program_was_released(open_viewer):
  """A frame whose 3D pass draws nothing (a model change not yet drawn) after the program left
  bound was released: imgui's renderer restores the bound program, which must not be the
  released one (a GL error ended the viewer's loop)."""
  v = open_viewer()
  ctx = v.ctx
  prog = ctx.program(vertex_shader="#version 330\nin vec2 p;\nvoid main() { gl_Position = "
                     "vec4(p, 0.0, 1.0); }",
                     fragment_shader="#version 330\nout vec4 c;\nvoid main() { c = vec4(1.0); }")
  buf = ctx.buffer(np.zeros(6, np.float32).tobytes())
  vao = ctx.vertex_array(prog, [(buf, "2f", "p")])
  renderer, v.renderer = v.renderer, None      # this frame draws no 3D view
  try:
    vao.render()                               # leaves `prog` bound
    vao.release()
    prog.release()
    v.draw()
  finally:
    v.renderer = renderer
    buf.release()
  v.frame()


def test_nothing_is_drawn_under_the_opaque_panel(open_viewer):
  """The 3D view is left unshaded under the panel (its rectangle cleared to the near plane):
  the panel is opaque, so the window shows the same picture as with the view drawn in full."""
  v = open_viewer(paused=True)
  v.ui.expand.add("Info")
  run_until(v, lambda: v.ui.opaque, "the panel was not drawn")
  x0, y0, x1, y1 = v.ui.opaque[0]
  assert x1 - x0 > 200 and y1 - y0 > 200        # the panel, open, is what is left undrawn
  v.clock._t0 = float("inf")                     # the FPS shown stays as it is
  skipped = v.screenshot(ui=True)
  type(v).hide_under_panels = False
  try:
    full = v.screenshot(ui=True)
  finally:
    type(v).hide_under_panels = True
  assert np.array_equal(skipped, full)
  # beside the panel the window shows the view drawn in full (the 3D view alone)
  assert np.array_equal(skipped[:, int(x1) + 2:], v.screenshot()[:, int(x1) + 2:])
