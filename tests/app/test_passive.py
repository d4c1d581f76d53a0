"""numjoco.viewer.launch_passive, driven as a script drives mujoco.viewer.launch_passive: the
test's thread owns Model and Data and steps them; the window runs on its own thread (under
Xvfb) and its input is posted to that thread as pyglet events."""
import numpy as np
import pytest

import numjoco
import numjoco.viewer

FLOAT = """
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <geom type="plane" size="2 2 .1" pos="0 0 -1" rgba=".3 .3 .3 1"/>
    <body name="box" pos="0 0 0"><freejoint/>
      <geom type="box" size=".15 .15 .15" rgba=".2 .4 .9 1"/></body>
  </worldbody>
</mujoco>
"""


def _post(h, fn):
  """Run fn(viewer) on the window's thread and return its result."""
  return h._viewer.post(fn).result(30)


def _pixel(h, point):
  """Window pixel (pyglet: origin bottom-left) and image pixel (row, col) of a world point."""
  def proj(v):
    w, hh = v.window.get_size()
    with v.sim.snapshot() as snap:   # (x, y), y from the top
      x, y = v.renderer.project(np.asarray(point, float), v.camera, w, hh, snap)[0]
    return int(x), int(hh - y), int(y), int(x)
  x, y, row, col = _post(h, proj)
  return (x, y), (row, col)


def _run(h, m, d, n, chunk=5):
  for _ in range(n):
    numjoco.step(m, d, chunk)
    h.sync()


@pytest.fixture
def passive():
  """launch_passive(m, d, key_callback) on FLOAT: (handle, m, d, keys pressed); closed after."""
  m = numjoco.load_model(FLOAT)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  keys = []
  h = numjoco.viewer.launch_passive(m, d, key_callback=keys.append, show_left_ui=False,
                                    show_right_ui=False)
  yield h, m, d, keys
  h.close()


def test_script_steps_drag_moves_its_data_keys_and_user_geoms(passive):
  """The script steps and syncs; a Ctrl+right drag in the window pulls the box up in the
  script's own Data (the engine's spring through d.pert_*, xfrc_applied untouched); a key press
  reaches key_callback with GLFW's code; a user sphere appears where it was put; closing the
  window ends is_running()."""
  from pyglet.window import key, mouse
  h, m, d, keys = passive
  assert h.is_running()
  _run(h, m, d, 3)
  (x, y), _ = _pixel(h, d.xpos[1])
  for _ in range(2):       # double-click selects
    _post(h, lambda v: v.on_mouse_press(x, y, mouse.LEFT, 0))
    _post(h, lambda v: v.on_mouse_release(x, y, mouse.LEFT, 0))
  assert h.pert.select == 1
  z0 = float(d.xpos[1, 2])
  _post(h, lambda v: v.on_mouse_press(x, y, mouse.RIGHT, key.MOD_CTRL))
  wh = _post(h, lambda v: v.window.get_size()[1])
  for _ in range(5):
    _post(h, lambda v: v.on_mouse_drag(x, y, 0, wh // 20, mouse.RIGHT, key.MOD_CTRL))
  assert h.pert.active == 1
  h.sync()                  # the drag reaches the script's Data here
  assert d.pert_active[0] and d.pert_select[0] == 1
  _run(h, m, d, 60)         # 0.6 s of the script's own stepping
  assert d.xpos[1, 2] - z0 > 0.05
  assert abs(d.xpos[1, 0]) < 0.2 * (d.xpos[1, 2] - z0)
  assert not d.xfrc_applied.any()
  _post(h, lambda v: v.on_mouse_release(x, y, mouse.RIGHT, key.MOD_CTRL))
  h.sync()
  assert not d.pert_active[0] and not d.xfrc_perturb.any()

  for sym in (key.A, key.SPACE, key.UP, key.F5):
    _post(h, lambda v, s=sym: v.on_key_press(s, 0))
  assert keys == [65, 32, 265, 294]        # GLFW_KEY_A, SPACE, UP, F5
  t = d.time
  h.sync()                 # Space asked to pause: the script's to do, nothing else happened
  assert d.time == t and any("pause" in n for n in h.notes)

  target = np.array([0.5, 0.0, 0.0])
  _, (row, col) = _pixel(h, target)
  before = h.screenshot()
  with h.lock():
    h.user_scn.add_geom("sphere", [0.08], target, rgba=(1, 0, 0, 1))
    h.user_scn.add_connector("arrow", 0.02, [-0.5, 0, 0], [-0.5, 0, 0.3],
                                 rgba=(0, 1, 0, 1))
  assert h.user_scn.ngeom == 2
  img = h.screenshot()
  patch = img[row - 2:row + 3, col - 2:col + 3].reshape(-1, 3).astype(int)
  assert (patch[:, 0] > 150).all() and (patch[:, 1:] < 80).all()   # the red sphere
  assert (np.abs(before[row, col].astype(int) - img[row, col]).max()) > 100
  green = (img[:, :, 1] > 150) & (img[:, :, 0] < 80) & (img[:, :, 2] < 80)
  assert green.sum() > 50 and not ((before[:, :, 1] > 150) & (before[:, :, 0] < 80)
                                   & (before[:, :, 2] < 80)).any()
  with h.lock():
    h.user_scn.clear()
  assert np.abs(h.screenshot().astype(int) - before).max() < 30    # the same frame again

  _post(h, lambda v: v.on_close())          # the user closes the window
  h._thread.join(10)
  assert not h.is_running()
  h.sync()                                  # a sync after the close does nothing
  _run(h, m, d, 1)


def test_panel_edits_reach_the_scripts_model_at_sync(passive):
  """An edit from the panels (the viewer's command path) changes the script's Model at the
  next sync, not before; a refused edit is shown, the script goes on."""
  h, m, d, _ = passive
  f0 = m.geom_friction[1].copy()
  _post(h, lambda v: v.execute("model", "geom_friction", (1, 0), 0.25))
  assert m.geom_friction[1, 0] == f0[0]
  h.sync()
  assert m.geom_friction[1, 0] == 0.25
  _post(h, lambda v: v.execute("opt", "timestep", 0.004))
  h.sync()
  assert m.opt.timestep == 0.004
  _post(h, lambda v: v.execute("model", "body_name", 0, 1.0))   # not editable
  h.sync()
  assert "not editable" in h._sim.status().error
  _run(h, m, d, 2)
  assert d.time == pytest.approx(0.04)


def test_texts_figures_camera_and_options(passive):
  """set_texts / set_figures reach the panels' state; the handle's cam and opt are the
  window's: a camera change changes the picture."""
  h, m, d, _ = passive
  h.set_texts([("bottomleft", "time", "0.00"), "hello"])
  h.set_figures([("energy", {"kinetic": ([0, 1, 2], [1.0, 2.0, 1.5]), "n": [3, 1]})])
  ui = _post(h, lambda v: v._ui_state())
  assert ui.user_texts == [("bottomleft", "time", "0.00"), ("topleft", "hello", "")]
  assert [t for t, _ in ui.user_figures] == ["energy"]
  np.testing.assert_array_equal(ui.user_figures[0][1]["n"][0], [0, 1])
  with pytest.raises(ValueError, match="text position"):
    h.set_texts([("middle", "a", "b")])
  before = h.screenshot()
  with h.lock():
    h.cam.distance *= 2
    h.opt.shadows = False
  assert _post(h, lambda v: (v.camera.distance, v.opts.shadows)) == (h.cam.distance, False)
  assert np.abs(h.screenshot().astype(int) - before).max() > 100
  with pytest.raises(ValueError, match="user geom type"):
    h.user_scn.add_geom("torus", [1], [0, 0, 0])


def test_close_from_the_script():
  """handle.close() closes the window and is_running() turns false; the context manager too."""
  m = numjoco.load_model(FLOAT)
  d = numjoco.make_data(m)
  with numjoco.viewer.launch_passive(m, d) as h:
    assert h.is_running()
    h.sync()
  assert not h.is_running() and not h._thread.is_alive()


def test_launch_runs_the_viewer_from_the_given_state():
  """numjoco.viewer.launch(m, d) blocks while its own worker steps the model from d's state
  (time and qpos carried over), and returns when the window closes."""
  import threading
  from numjoco.app.viewer import Viewer
  m = numjoco.load_model(FLOAT)
  d = numjoco.make_data(m)
  d.qpos[2], d.qvel[2], d.time = 0.4, 0.5, 3.0
  seen = []

  def opened(v):
    def check(v):
      seen.append((v.sim.status().model_version, v.sim.d.time, v.sim.d.qpos[2]))
      v.on_close()
    threading.Thread(target=lambda: (v.sim.sync(), v.post(check)), daemon=True).start()
  Viewer.on_open.append(opened)
  try:
    done = threading.Event()
    t = threading.Thread(target=lambda: (numjoco.viewer.launch(m, d, width=320, height=240),
                                         done.set()), daemon=True)
    t.start()
    assert done.wait(120), "launch did not return after the window closed"
  finally:
    Viewer.on_open.remove(opened)
  (_, t_sim, z), = seen
  assert t_sim >= 3.0 and z > 0.4 - 1e-9      # from d's state, rising at 0.5 m/s (no gravity)


def test_module_form_opens_a_model_file(tmp_path):
  """`python -m numjoco.viewer --mjcf=FILE` (as python -m mujoco.viewer): the window comes up on
  that file and runs its model (the viewer prints nothing; the run is checked through a hook
  that closes it after the physics has stepped)."""
  import subprocess
  import sys
  path = tmp_path / "float.xml"
  path.write_text(FLOAT)
  code = (
      "import sys, threading, time, numjoco.viewer\n"
      "from numjoco.app.viewer import Viewer\n"
      "def opened(v):\n"
      "  def check(v):\n"
      "    print('MODEL', v.sim.status().path, v.sim.d.time > 0, flush=True)\n"
      "    v.on_close()\n"
      "  def wait():\n"
      "    while v.sim is None:    # the boot thread makes it\n"
      "      time.sleep(0.02)\n"
      "    v.sim.wait_until(lambda s: s.physics and s.rtf > 0, 120)\n"
      "    v.post(check)\n"
      "  threading.Thread(target=wait, daemon=True).start()\n"
      "Viewer.on_open.append(opened)\n"
      "sys.argv = ['numjoco.viewer', '--mjcf=' + sys.argv[1]]\n"
      "import runpy; runpy.run_module('numjoco.viewer', run_name='__main__')\n")
  out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       timeout=300)
  assert f"MODEL {path} True" in out.stdout, out.stderr[-2000:]
  help_out = subprocess.run([sys.executable, "-m", "numjoco.viewer", "--help"],
                            capture_output=True, text=True, timeout=120)
  assert help_out.returncode == 0 and "--mjcf" in help_out.stdout
