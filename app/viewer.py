"""The viewer window: pyglet + moderngl 3D view of the simulation, imgui-bundle panels on top.

The main thread owns the window, the GL context, the camera and the UI state; it never touches
Model or Data (the `Simulation` worker thread owns them and is their only writer): it sends
commands and draws the newest published snapshot. `Viewer.frame()` runs one iteration of the
loop (events, draw, flip), which tests drive deterministically; `Viewer.run()` loops it.

Screenshots (Ctrl+P) and recordings (Ctrl+R) render the 3D view into an offscreen framebuffer
(never the window's: reading its own buffer leaves a GL error that pyglet raises later). A recording's frames are the worker's
samples at k / fps of simulated time (app/sim.py), encoded by render/video.py's VideoWriter on
its own thread, so the video plays at true speed whatever the display rate or slow motion.
"""
import math
import os
import subprocess
import sys
import threading
import time

import numpy as np

from numjoco.app import keys, warmup

UI_WAIT = 10.0         # seconds after which the panels come up even without a model on screen
LOADING_SLEEP = 0.02   # seconds each frame yields while the model loads (nothing moves yet)
LOADING_REDRAW = 0.25  # seconds between the frames drawn while the model loads
LOADING_INPUT = 0.5    # seconds after an input event during which the preview draws every frame
FRAMES = ("none", "body", "contact")   # what F6 cycles through
CONTACT_PICK = 8.0     # pixels from a contact point's projection that a click picks it
RECORD_PER_FRAME = 2   # recorded samples rendered per displayed frame: when the recorder falls
                       # behind, the worker waits for it (the simulation slows, the video stays
                       # at true speed) instead of the window freezing


class FrameClock:
  """Frame timer: delta for imgui and a smoothed FPS."""

  def __init__(self):
    self.last = time.perf_counter()
    self.dt = 1 / 60
    self.fps = 0.0
    self._n, self._t0 = 0, self.last

  def tick(self):
    """Start a frame: returns the seconds since the previous one."""
    now = time.perf_counter()
    self.dt = max(now - self.last, 1e-4)
    self.last = now
    self._n += 1
    if now - self._t0 >= 0.5:
      self.fps = self._n / (now - self._t0)
      self._n, self._t0 = 0, now
    return self.dt


class Viewer:
  """A window showing one Simulation. `path=None` opens the bundled demo."""

  on_open = []    # callables fn(viewer) run when a viewer's window is up (tools, tests)
  hide_under_panels = True   # leave the 3D view unshaded under the opaque panel

  def __init__(self, path=None, *, width=1280, height=720, visible=True, speed=1.0,
               paused=False, key=None, max_fps=60.0, ui=True, title="numjoco", out_dir=None,
               record_fps=30, sim=None, key_callback=None, overlay=None, show_left_ui=True,
               show_right_ui=True):
    """Open the window. `out_dir` is where screenshots and videos go (default: the current
    folder); `record_fps` the frames per simulated second of recordings.

    A script's viewer (app/passive.py) gives its own `sim` (the model is then loaded already:
    no compile step, no boot thread), `key_callback(keycode)` called with GLFW's key code of
    every key pressed (as mujoco.viewer's), and `overlay` (app.passive.ScriptOverlay: its user
    geoms, texts and figures). `show_left_ui` / `show_right_ui`: the panel on the left (the
    simulation, physics, info and rendering sections) and on the right (the controls)."""
    from numjoco.assets import DEMO_MODEL
    self.out_dir = os.fspath(out_dir) if out_dir is not None else os.getcwd()
    self.record_fps = record_fps
    self.recording = None          # (VideoWriter, numjoco.Renderer, model version) meanwhile
    self.last_saved = ""           # path of the last screenshot or video
    self.path = str(path or DEMO_MODEL)
    self.max_fps = max_fps
    self.sim = sim
    self.key_callback = key_callback
    self._posted = []              # (fn, Future) to run on the window's thread (post)
    self._rec_renderer = None      # ((model version, w, h), numjoco.Renderer) of recordings
    self.overlay = overlay
    self._warm = None
    self._start = dict(speed=speed, paused=paused, key=key)
    self.t_created = time.perf_counter()
    self._boot = None
    self._boot_error = ""
    self._printed = ""
    if sim is None and warmup.is_warm():   # import the engine and load the model meanwhile
      self._boot = threading.Thread(target=self._start_sim, name="numjoco-boot", daemon=True)
      self._boot.start()
    import pyglet
    if "pyglet.window" not in sys.modules:
      pyglet.options["shadow_window"] = False   # one context is enough: no hidden second one
    import pyglet.window
    config = pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True,
                              double_buffer=True, depth_size=24)
    self.window = pyglet.window.Window(width, height, caption=title, resizable=True,
                                       config=config, visible=visible, vsync=False,
                                       file_drops=True)
    import moderngl
    self.ctx = moderngl.create_context()
    self.window.push_handlers(on_key_press=self.on_key_press, on_mouse_drag=self.on_mouse_drag,
                              on_mouse_press=self.on_mouse_press,
                              on_mouse_release=self.on_mouse_release,
                              on_mouse_scroll=self.on_mouse_scroll,
                              on_file_drop=self.on_file_drop, on_close=self.on_close,
                              on_draw=self.on_draw, on_resize=self.on_resize)
    # imgui-bundle (with PyOpenGL for its renderer) takes 0.5-1 s to import: the panels come up
    # after the model's first frame, imported on a thread meanwhile (_poll_ui)
    self.impl = None
    self._imgui_ctx = self._implot_ctx = None
    self._ui_import = None
    self._ui_import_error = ""
    self._shown = False
    self._in_ui_frame = False      # the panels are being built (imgui's frame is open)
    self._idle_drawn = 0.0
    self._input_at = -1e9          # perf_counter of the last input event (see _loading_idle)
    from numjoco.app import panels
    self.ui = panels.UiState()
    self.ui.show_panels = ui
    self.ui.show_left, self.ui.show_right = bool(show_left_ui), bool(show_right_ui)
    self.commands = panels.CommandSink(self.execute)   # the panels' commands, run here
    self.clock = FrameClock()
    self.closed = False
    self.renderer = None
    self.camera = None
    from numjoco.render.scene import VisOptions
    self.opts = VisOptions()
    self.frame_mode = 0
    self.selected = -1             # body picked by double-click (-1: none)
    self._sel_local = None         # grab point in the selected body's frame
    self.pert = None               # app.perturb.Perturb while a Ctrl+drag is active
    self._pert0 = None             # (refselpos, refquat) when the drag started
    self._last_press = (0.0, 0, 0, 0)
    self._press_at = None          # (x, y, button, modifiers) of the press a release ends
    self._model_version = 0
    self._keep_camera = False
    self.first_frame_at = None     # perf_counter of the first frame that drew the model
    from numjoco.render.renderer import SceneRenderer
    self._gl_ready = SceneRenderer(self.ctx, None)   # programs and buffers while the model loads
    if self._boot is None and sim is None:
      model = [str(self.path)] if self.path and os.path.isfile(str(self.path)) else []
      self._warm = subprocess.Popen(
          [sys.executable, "-m", "numjoco.app.warmup", *model], stdout=subprocess.PIPE,
          stderr=subprocess.STDOUT, text=True, cwd=str(warmup.ENGINE.parent),
          env=dict(os.environ, PYTHONUNBUFFERED="1"))
      self._warm_t0 = time.perf_counter()
      self._warm_log = []
      os.set_blocking(self._warm.stdout.fileno(), False)
      self._init_ui()   # the compile screen is an imgui window
    for fn in list(Viewer.on_open):
      fn(self)

  # ------------------------------------------------------------------ panels (imgui)
  @property
  def ui_ready(self):
    """True once imgui and the panels are up (the first frames may draw the 3D view alone)."""
    return self.impl is not None

  def _import_ui(self):
    """Thread: import imgui-bundle and its pyglet renderer (pure imports, no GL calls)."""
    try:
      from imgui_bundle import imgui, implot  # noqa: F401
      from imgui_bundle.python_backends import pyglet_backend  # noqa: F401
    except Exception as e:  # noqa: BLE001 - shown on the terminal, the 3D view keeps going
      self._ui_import_error = f"cannot load the panels (imgui-bundle): {e}"

  def _init_ui(self):
    """Create the imgui and implot contexts and imgui's renderer (main thread, GL current)."""
    if self.impl is not None:
      return
    if self._ui_import is not None:
      self._ui_import.join()
    from imgui_bundle import imgui, implot
    from imgui_bundle.python_backends.pyglet_backend import create_renderer
    _clear_gl_errors()
    self._imgui_ctx = imgui.create_context()
    self._implot_ctx = implot.create_context()
    imgui.get_io().config_flags |= imgui.ConfigFlags_.nav_enable_keyboard
    imgui.get_io().set_ini_filename("")
    self.impl = create_renderer(self.window)   # pushes its handlers above ours

  def _poll_ui(self):
    """Bring the panels up without delaying the first frame: start importing imgui once the
    model is on screen with its physics (or once there is nothing to wait for: a load error),
    create it once imported."""
    if self.impl is not None:
      return
    if self._ui_import is None:
      st = self.sim.status() if self.sim is not None else None
      failed = self._boot_error or (st is not None and (st.load_error or st.error))
      waited = time.perf_counter() - self.t_created > UI_WAIT
      # after the model's first frame and its physics (the panels need the engine's Model; the
      # import would share the GIL with the engine's)
      ready = self._shown and (st is None or st.physics)
      if not ready and not failed and not waited:
        return
      self._ui_import = threading.Thread(target=self._import_ui, name="numjoco-ui", daemon=True)
      self._ui_import.start()
    if self._ui_import.is_alive():
      return
    if self._ui_import_error:
      if self._ui_import_error != self._printed:
        print(f"numjoco: {self._ui_import_error}", file=sys.stderr)
        self._printed = self._ui_import_error
      return
    self._init_ui()

  # ------------------------------------------------------------------ simulation
  def _start_sim(self):
    try:
      from numjoco.app.sim import Simulation
      sys.setswitchinterval(0.001)   # the simulation worker must get the GIL back quickly between frames
      sim = Simulation(path=self.path, wait_shown=True, preview=True, **self._start)
      sim.start()
      self.sim = sim
    except Exception:  # noqa: BLE001 - shown in the window (draw picks it up)
      import traceback
      self._boot_error = "cannot start the simulation:\n" + traceback.format_exc()

  def _poll_warmup(self):
    """Collect the compile subprocess's output; start the simulation when it is done."""
    try:
      out = self._warm.stdout.read()
    except (BlockingIOError, TypeError):
      out = None
    if out:
      self._warm_log.extend(out.splitlines())
    rc = self._warm.poll()
    if rc is None:
      return
    if rc != 0:
      self.ui.error = "compiling the engine failed:\n" + "\n".join(self._warm_log[-30:])
    self._warm = None
    self._start_sim()

  def _sync_model(self):
    """Make renderer and camera follow the worker's current model (load, reload, open)."""
    st = self.sim.status()
    m = self.sim.model
    if st.model_version == self._model_version:
      if m is not None and m is not self.ui.m and self.renderer is not None:
        self._adopt(m, st)   # the engine's Model of the previewed one
      return st
    if m is None:
      return st
    from numjoco.render.camera import Camera
    from numjoco.render.renderer import SceneRenderer
    if self.renderer is None:
      self.renderer, self._gl_ready = self._gl_ready or SceneRenderer(self.ctx, None), None
      self.renderer.max_geom = 100000    # the scene of MuJoCo's simulate (kMaxGeom)
    self.renderer.set_model(m)
    if self.camera is None or not self._keep_camera:
      self.camera = Camera.default_for(m)
    else:
      self.camera.set_model(m)
    self._keep_camera = False
    self.selected, self.pert = -1, None
    self.renderer.highlight_body = self.renderer.highlight_skin = -1
    self._model_version = st.model_version
    self._drop_stale_recorder()
    self.ui.on_model(m)
    self._caption(st)
    return st

  def _drop_stale_recorder(self):
    """Close the recordings' renderer of a model no longer shown (it holds that model's meshes
    and a framebuffer), unless a recording still holds it."""
    r = self._rec_renderer
    if r is not None and r[0][0] != self._model_version and (
        self.recording is None or self.recording[1] is not r[1]):
      r[1].close()
      self._rec_renderer = None

  def _adopt(self, m, st):
    """The worker replaced the model's preview (engine/preview.py) by the engine's Model of the
    same arrays: draw and edit through it; nothing to upload again, the camera stays."""
    self.renderer.m = m
    self.ui.on_model(m)
    self._caption(st)

  def _caption(self, st):
    name = os.path.basename(st.path) or "model"
    self.window.set_caption(f"numjoco - {name}" + ("" if st.physics else " (loading physics...)"))

  def reload(self):
    """Reload the model file from disk, keeping the camera."""
    self._keep_camera = True
    self.sim.send("reload")

  def open(self, path):
    """Open another model file in this window."""
    self._keep_camera = False
    self.path = str(path)
    self.sim.send("load", str(path))

  # ------------------------------------------------------------------ loop
  def post(self, fn):
    """Run fn(viewer) on the window's thread before its next frame (from any thread); returns a
    concurrent.futures.Future of the result."""
    from concurrent.futures import Future
    fut = Future()
    self._posted.append((fn, fut))
    return fut

  def _run_posted(self):
    while self._posted:
      fn, fut = self._posted.pop(0)
      try:
        fut.set_result(fn(self))
      except Exception as e:  # noqa: BLE001 - the caller gets it from the Future
        fut.set_exception(e)

  def frame(self):
    """One iteration: events, draw, flip."""
    import pyglet
    pyglet.clock.tick()
    self.window.dispatch_events()
    if self.closed:
      return False
    self._run_posted()
    if self._loading_idle():
      self._yield_to_boot()
      return not self.closed
    self._poll_ui()
    self.window.dispatch_event("on_draw")
    self.window.flip()
    if not self._shown and self.first_frame_at is not None:
      self._shown = True            # the model's first frame is on screen: physics may start
      self.sim.first_shown.set()
    if self.first_frame_at is None and self._boot is not None:
      self._yield_to_boot()
    return not self.closed

  def _loading_idle(self):
    """True while the model or its physics loads with nothing new to show: the frame is skipped
    (no clear, no flip, a few every LOADING_REDRAW s keep the window painted) so that the
    loading gets the CPU (50 empty 1280x720 frames a second cost about as much CPU as the
    loading itself). Input (a camera drag over the preview) draws at the full rate."""
    if self._boot is None or self._boot_error:
      return False
    if self.first_frame_at is not None:   # the preview is drawn: redraw it only when moved
      if self.sim is None or time.perf_counter() - self._input_at < LOADING_INPUT:
        return False
    if self.sim is not None:
      st = self.sim.status()
      if st.physics and self.first_frame_at is not None:
        return False
      if (st.model_version != self._model_version or st.load_error or st.error
          or (st.physics and self.sim.model is not self.ui.m)):
        return False
    now = time.perf_counter()
    if now - self._idle_drawn < LOADING_REDRAW:
      return True
    self._idle_drawn = now
    return False

  def _yield_to_boot(self):
    """While the model loads, sleep up to LOADING_SLEEP (the boot thread needs the GIL more than
    a frame with nothing moving), waking as soon as the worker has published the model."""
    t_end = time.perf_counter() + LOADING_SLEEP
    while time.perf_counter() < t_end:
      if self.sim is not None and self.sim.status().model_version != self._model_version:
        return
      time.sleep(0.01)

  def run(self):
    """Loop frames until the window closes (capped at max_fps to leave CPU to physics)."""
    try:
      while self.frame():
        if self.max_fps:
          wait = self.clock.last + 1 / self.max_fps - time.perf_counter()
          if wait > 0:
            time.sleep(wait)
    finally:
      self.close()

  def close(self):
    """Stop the worker and free the window (a recording in progress is finalised)."""
    if self._boot is not None:
      self._boot.join(30)
    if self.recording is not None and self.sim is not None:
      self.stop_recording()
    if self.sim is not None:
      self.sim.stop()
    if self._warm is not None:
      self._warm.kill()
      self._warm = None
    for r in (self.renderer, self._gl_ready):
      if r is not None:
        r.release()
    if self._rec_renderer is not None:
      self._rec_renderer[1].close()
      self._rec_renderer = None
    self.renderer = self._gl_ready = None
    if self._ui_import is not None:
      self._ui_import.join(30)     # never leave a thread importing at interpreter exit
    if not self.closed:
      self.closed = True
      if self.impl is not None:
        self.window.pop_handlers()   # imgui's
      self.window.pop_handlers()   # ours: no weak references left to die at interpreter exit
      self.window.close()
      if self.impl is not None:
        from imgui_bundle import imgui, implot
        implot.destroy_context(self._implot_ctx)
        imgui.destroy_context(self._imgui_ctx)

  # ------------------------------------------------------------------ drawing
  def on_draw(self):
    """pyglet: draw a frame."""
    self.draw()

  def draw(self, fbo=None):
    """Draw the 3D view and the UI into `fbo` (default: the window). The UI's frame is built
    first: the 3D view is not shaded under its opaque panel."""
    dt = self.clock.tick()
    if self.recording is not None:
      self._encode_recorded()
    target = fbo or self.ctx.screen
    target.use()
    w, h = self.window.get_framebuffer_size()
    ww, wh = self.window.get_size()
    self.ctx.viewport = (0, 0, w, h)
    if self._warm is not None:
      self._poll_warmup()
    if self._boot_error:
      self.ui.error, self._boot_error = self._boot_error, ""
    st = self._sync_model() if self.sim is not None else None
    if st is not None and st.load_error and st.load_error != self._printed:
      print(f"numjoco: {st.load_error}", file=sys.stderr)   # also for the terminal
      self._printed = st.load_error
    hidden = self._ui_frame(dt, st, ww, wh) if self.impl is not None else ()
    hidden = hidden if self.hide_under_panels else ()
    target.use()
    self.ctx.viewport = (0, 0, w, h)
    if self.renderer is not None:
      with self.sim.snapshot() as snap:
        if snap is not None and snap.extra.get("model_version") != self._model_version:
          snap = None   # published for a model the renderer does not have yet (a load race)
        if snap is not None:
          pert = snap.extra.get("perturb")
          show = pert is not None and self.opts.perturb
          # the spring (grab point to reference) and the force it applies, scaled as MuJoCo
          # scales force arrows (vis.map.force / stat.meanmass)
          self.renderer.lines, self.renderer.arrows = [], []
          self._take_user_geoms()
          if show:
            vis, stat = self.renderer.m.vis, self.renderer.m.stat
            tip = pert[1] + pert[3] * (vis.map.force / max(stat.meanmass, 1e-10))
            self.renderer.lines = [(pert[1], pert[2], (1.0, 0.5, 0.5, 1.0))]
            self.renderer.arrows = [(pert[1], tip, tuple(vis.rgba.force))]
          sx, sy = w / max(ww, 1), h / max(wh, 1)
          self.renderer.render(snap, self.camera, self.opts, w, h, fbo=target,
                               hidden=[_gl_rect(r, sx, sy, h) for r in hidden])
          if self.first_frame_at is None:
            self.first_frame_at = time.perf_counter()
    else:
      target.clear(*self.opts.background, 1.0)
    if self.impl is None:
      return
    from imgui_bundle import imgui
    imgui.render()
    # imgui's renderer restores the program bound before it; the one our 3D pass left bound
    # may have been released since (a model change while no frame of the new model was drawn
    # yet), and restoring a deleted program is a GL error: leave none bound
    from OpenGL import GL
    GL.glUseProgram(0)
    _clear_gl_errors()
    self.impl.render(imgui.get_draw_data())

  def _ui_frame(self, dt, st, ww, wh):
    """Build this frame's UI (imgui's new frame: labels, panels; drawn after the 3D view) from the
    newest snapshot; returns the rectangles (x0, y0, x1, y1, window points from the top left)
    its opaque panels cover."""
    from imgui_bundle import imgui
    from numjoco.app import panels
    info, labels = None, []
    if self.renderer is not None:
      with self.sim.snapshot() as snap:
        if snap is not None and snap.extra.get("model_version") == self._model_version:
          info = dict(snap.extra)
          if self.opts.labels != "none":
            labels = self.renderer.labels(snap, self.camera, self.opts, ww, wh)
    io = imgui.get_io()
    io.delta_time = dt
    io.display_size = (ww, wh)
    imgui.new_frame()
    dl = imgui.get_background_draw_list()
    col = imgui.IM_COL32(255, 255, 255, 230)
    for x, y, text in labels:
      dl.add_text((x, y), col, text)
    if self.selected > 0 and self.renderer is not None:
      import numjoco   # already loaded once a renderer exists
      name = numjoco.id2name(self.renderer.m, "body", self.selected)
      dl.add_text((ww * 0.5 - 80, 8), imgui.IM_COL32(255, 255, 120, 255),
                  f"selected: {name or 'body'} ({self.selected})")
    self.ui.opaque = []
    self._in_ui_frame = True
    try:
      if self._warm is not None:
        panels.compile_progress(self._warm_log, self._warm_t0)
      elif st is not None and st.physics:
        panels.draw(self._ui_state(), self.commands, st, info)
      elif st is not None:
        panels.draw_loading(self.ui, self.commands, st)
    finally:
      self._in_ui_frame = False
    return list(self.ui.opaque)

  def _ui_state(self):
    """The UiState with what the panels show this frame: the viewer's options, camera,
    recording, frame rate and scene."""
    ui, r = self.ui, self.renderer
    ui.opts, ui.camera, ui.fps = self.opts, self.camera, self.clock.fps
    ui.recording_frames = self.recording[0].frames if self.recording is not None else None
    ui.scene_full = r is not None and r.scene_full
    ui.max_geom = r.max_geom if r is not None else 0
    if self.overlay is not None:
      with self.overlay.lock:
        ui.user_texts, ui.user_figures = list(self.overlay.texts), list(self.overlay.figures)
    return ui

  def screenshot(self, ui=False):
    """The window's content as an (h, w, 3) uint8 image, top row first; the 3D view only unless
    `ui`. Drawn into an offscreen framebuffer (reading the window's own buffer leaves a GL error
    that pyglet raises later)."""
    w, h = self.window.get_framebuffer_size()
    if ui:
      self._init_ui()
    color, depth = self.ctx.renderbuffer((w, h), 4), self.ctx.depth_renderbuffer((w, h))
    fbo = self.ctx.framebuffer([color], depth)
    try:
      if ui:
        self.draw(fbo=fbo)
      else:
        with self.sim.snapshot() as snap:
          self._render_to(fbo, snap, w, h)
      img = self._read(fbo, w, h)
    finally:
      for o in (fbo, color, depth):   # a framebuffer's release leaves its attachments
        o.release()
      self.ctx.screen.use()
    return img

  def _take_user_geoms(self):
    """The script's user geoms (launch_passive's user_scn) for the renderer's next scenes."""
    if self.overlay is not None:
      with self.overlay.lock:
        self.renderer.user_geoms = list(self.overlay.user_scn.geoms)

  def _render_to(self, fbo, snap, w, h):
    self._take_user_geoms()
    fbo.use()
    self.ctx.viewport = (0, 0, w, h)
    self.renderer.render(snap, self.camera, self.opts, w, h, fbo=fbo)

  @staticmethod
  def _read(fbo, w, h):
    return np.frombuffer(fbo.read(components=3), np.uint8).reshape(h, w, 3)[::-1].copy()

  def _out_path(self, ext):
    """A new file in out_dir named after the model and the time (never overwrites)."""
    base = os.path.splitext(os.path.basename(self.path))[0] or "numjoco"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, i = os.path.join(self.out_dir, f"{base}-{stamp}.{ext}"), 1
    while os.path.exists(path):
      path, i = os.path.join(self.out_dir, f"{base}-{stamp}-{i}.{ext}"), i + 1
    return path

  def save_screenshot(self, path=None, ui=False):
    """Save the 3D view (with the panels when `ui`) as a PNG; returns its path ('' when no
    model is on screen yet). Errors (e.g. an unwritable folder) are shown in the panel."""
    if self.renderer is None or self.sim is None:
      return ""
    from numjoco.render.headless import save_png
    path = path or self._out_path("png")
    try:
      save_png(path, self.screenshot(ui=ui))
    except (OSError, ValueError) as e:
      self.ui.message = f"cannot save the screenshot: {e}"
      return ""
    self.last_saved = path
    self.ui.message = f"screenshot saved: {path}"
    return path

  def start_recording(self, path=None, fps=None):
    """Record the 3D view to a video (H.264 .mp4 by default) at `fps` frames per simulated
    second (default record_fps); returns the path ('' when it could not start)."""
    if self.recording is not None or self.renderer is None or self.sim is None:
      return ""
    from numjoco.render.video import VideoWriter
    fps = float(fps or self.record_fps)
    path = path or self._out_path("mp4")
    w, h = self.window.get_framebuffer_size()
    try:
      writer = VideoWriter(path, w, h, fps)
    except (OSError, ValueError) as e:
      self.ui.message = f"cannot record: {e}"
      return ""
    self.recording = (writer, self._recorder(w, h), self._model_version)
    self.sim.send("record_start", fps)
    self.ui.message = f"recording to {path}"
    return path

  def _recorder(self, w, h):
    """The numjoco.Renderer that draws recordings in this window's context (no multisampling,
    as the window), kept for the next recording of the same model and size."""
    import numjoco
    key = (self._model_version, w, h)
    if self._rec_renderer is not None and self._rec_renderer[0] != key:
      self._rec_renderer[1].close()
      self._rec_renderer = None
    if self._rec_renderer is None:
      self._rec_renderer = (key, numjoco.Renderer(self.renderer.m, h, w, ctx=self.ctx,
                                                  samples=0, check_size=False))
    return self._rec_renderer[1]

  def stop_recording(self, timeout=30.0):
    """Stop recording: encode the frames still queued and finalise the file; returns its path."""
    if self.recording is None:
      return ""
    self.sim.send("record_stop")
    t_end = time.perf_counter() + timeout
    while self.recording is not None and time.perf_counter() < t_end:
      if not self._encode_recorded(None):
        time.sleep(0.01)
    if self.recording is not None:   # the worker did not answer: finalise what we have
      self._finish_recording()
    return self.last_saved

  def _encode_recorded(self, limit=RECORD_PER_FRAME):
    """Render up to `limit` of the worker's recorded samples into the recording framebuffer and
    queue them for the encoder; True when there were any."""
    items = self.sim.recorded(limit)
    writer, rec, version = self.recording
    for item in items:
      if item is None:
        self._finish_recording()
        break
      _, snap = item
      if snap.extra.get("model_version") == version == self._model_version:
        self._take_user_geoms()
        for name in ("lines", "arrows", "user_geoms"):   # the spring and the script's geoms
          setattr(rec.scene_renderer, name, getattr(self.renderer, name))
        rec.update_scene(snap, self.camera, self.opts)
        try:
          writer.write(rec.render())
        except (OSError, ValueError) as e:
          self.ui.message = f"recording failed: {e}"
          self.sim.send("record_stop")
      self.sim.recycle(snap)
    self.ctx.screen.use()
    return bool(items)

  def _finish_recording(self):
    writer, _, _ = self.recording
    self.recording = None
    self._drop_stale_recorder()
    why = self.sim.record_stopped_by if self.sim is not None else ""
    try:
      writer.close()
      if writer.frames == 0:   # e.g. stopped by a model change before its first frame was drawn
        saved = "no frame was recorded: no video saved"
      else:
        self.last_saved = writer.path
        saved = f"video saved: {writer.path} ({writer.frames} frames)"
      self.ui.message = (f"{why}: recording stopped. " if why else "") + saved
    except (OSError, ValueError) as e:
      self.ui.message = f"recording failed: {e}"

  def toggle_recording(self):
    """Start or stop a recording (Ctrl+R, the panel's Record button)."""
    if self.recording is None:
      self.start_recording()
    else:
      self.stop_recording()

  # ------------------------------------------------------------------ input
  def _ui_wants(self, what):
    if self.impl is None:    # the panels are not up yet
      return False
    from imgui_bundle import imgui
    io = imgui.get_io()
    return io.want_capture_mouse if what == "mouse" else io.want_text_input

  def on_key_press(self, symbol, modifiers):
    """MuJoCo's keyboard shortcuts: the command app/keys.py binds the key to (the table the help
    panel lists), unless imgui is taking text."""
    self._input_at = time.perf_counter()
    from pyglet.window import key
    if self._ui_wants("keyboard") or self.sim is None:
      return
    if self.key_callback is not None:
      code = keys.glfw_code(symbol)
      if code is not None:
        try:
          self.key_callback(code)
        except Exception:  # noqa: BLE001 - the script's bug is shown, the window goes on
          import traceback
          self.ui.error = "key_callback raised:\n" + traceback.format_exc()
    hit = keys.find(_key_name(symbol), bool(modifiers & key.MOD_CTRL),
                    bool(modifiers & key.MOD_SHIFT))
    if hit is not None:
      self.execute(hit[0], *hit[1])
    return True   # handled (pyglet would close the window on Escape)

  # ------------------------------------------------------------------ commands
  def execute(self, name, *args):
    """The command sink of the key bindings and the panels: run the viewer's own command
    `name` (a `_cmd_<name>` method), or send it to the simulation worker (pause, step, reset,
    speed, opt, model, ctrl, qpos, zero_ctrl, call, clear_error)."""
    own = getattr(self, "_cmd_" + name, None)
    if own is not None:
      return own(*args)
    self.sim.send(name, *args)

  def _cmd_toggle_pause(self):
    self.sim.send("pause", not self.sim.status().paused)

  def _cmd_step_paused(self):
    """Paused: one step forward through the history after going back, else one new step."""
    st = self.sim.status()
    if st.paused:
      self.sim.send(*(("history", st.history_back - 1) if st.history_back else ("step", 1)))

  def _cmd_history_back(self):
    """Paused: show the state one step before the one on display (the history's)."""
    st = self.sim.status()
    if st.paused and st.history_back + 1 < st.history:
      self.sim.send("history", st.history_back + 1)

  def _cmd_reset_to_key(self):
    self.sim.send("reset", self.ui.key if self.ui.key >= 0 else None)

  def _cmd_reload(self):
    self.reload()

  def _cmd_open(self, path):
    self.open(path)

  def _cmd_screenshot(self, ui=False):
    if ui and self._in_ui_frame:     # a panel's button: the panels are being built; after it
      self.post(lambda v: v.save_screenshot(ui=True))
    else:
      self.save_screenshot(ui=bool(ui))

  def _cmd_toggle_recording(self):
    self.toggle_recording()

  def _cmd_speed_step(self, direction):
    """One step slower (-1) or faster (+1) along the panels' SPEEDS."""
    from numjoco.app.panels.common import SPEEDS
    st = self.sim.status()
    i = min(range(len(SPEEDS)), key=lambda k: abs(math.log(SPEEDS[k]) - math.log(st.speed))
            if math.isfinite(SPEEDS[k]) and math.isfinite(st.speed) else
            (0 if SPEEDS[k] == st.speed else 99))
    i = max(0, min(len(SPEEDS) - 1, i + direction))
    self.sim.send("speed", SPEEDS[i])

  def _cmd_camera_step(self, direction):
    """Next (+1) or previous (-1) camera of the model."""
    from numjoco.render.camera import CameraType
    cam, m = self.camera, self.ui.m
    if cam is None or m is None or m.ncam == 0:
      return
    if cam.type != CameraType.FIXED:
      cam.fixedcamid = 0 if direction > 0 else m.ncam - 1
    else:
      cam.fixedcamid = (cam.fixedcamid + direction) % m.ncam
    cam.type = CameraType.FIXED

  def _cmd_free_camera(self):
    from numjoco.render.camera import CameraType
    if self.camera is not None:
      self.camera.type = CameraType.FREE

  def _cmd_reset_view(self):
    from numjoco.render.camera import Camera
    if self.ui.m is not None:
      self.camera = Camera.default_for(self.ui.m)

  def _cmd_copy_mjcf_diff(self):
    """The edits so far as an MJCF diff, to the clipboard (the Simulation panel copies it)."""
    from numjoco.app import export
    sim, ui = self.sim, self.ui

    def diff(mm, d):
      ui.clipboard = export.mjcf_diff(mm, dict(sim.edits), dict(sim.opt_edits), sim.opt0)
    sim.send("call", diff)

  def _cmd_save_copy(self, path):
    """The model with the edits so far saved as MJCF at `path`."""
    from numjoco.app import export
    sim, ui = self.sim, self.ui

    def save(mm, d):
      try:
        skipped = export.save_copy(mm, dict(sim.edits), dict(sim.opt_edits), path, sim.opt0)
        ui.message = f"saved {path}" + (f"; notes: {'; '.join(skipped)}" if skipped else "")
      except (ValueError, OSError) as e:
        ui.error = f"cannot save a copy: {e}"
    sim.send("call", save)

  def _cmd_toggle_panels(self):
    self.ui.show_panels = not self.ui.show_panels

  def _cmd_toggle_help(self):
    self.ui.show_help = not self.ui.show_help

  def _cmd_cycle_frames(self):
    self.frame_mode = (self.frame_mode + 1) % len(FRAMES)
    self.opts.body_frames = FRAMES[self.frame_mode] == "body"
    self.opts.contact_frames = FRAMES[self.frame_mode] == "contact"

  def _cmd_cycle_labels(self):
    from numjoco.render.scene import LABELS
    o = self.opts
    o.labels = LABELS[(LABELS.index(o.labels) + 1) % len(LABELS)]

  def _cmd_toggle_option(self, name):
    setattr(self.opts, name, not getattr(self.opts, name))

  def _cmd_toggle_geom_group(self, g):
    self.opts.geom_groups[g] = not self.opts.geom_groups[g]

  def pick(self, x, y):
    """Body, world point and skin (-1: none) under window pixel (x, y) (pyglet coordinates),
    or (-1, None, -1)."""
    from numjoco.app import perturb
    w, h = self.window.get_size()
    with self.sim.snapshot() as snap:
      if snap is None or self.ui.m is None:
        return -1, None, -1
      origin, direction = self.camera.ray(x / w, y / h, w / h, snap)
      m = self.ui.m
      skins = self._skins_of(m)
      return perturb.select(m, snap, origin, direction, self.opts.geom_groups, skins=skins,
                            skin_visible=skins.visible(self.opts), return_skin=True)

  def _skins_of(self, m):
    """The skins of model `m` laid out for picking (render.skin.SkinModel, kept per model)."""
    from numjoco.render.skin import SkinModel
    got = getattr(self, "_skin_model", None)
    if got is None or got[0] is not m:
      got = self._skin_model = (m, SkinModel(m))
    return got[1]

  def select_at(self, x, y):
    """Double-click: select the body under the pointer (highlighted: its geoms, and the skin
    picked, as MuJoCo's simulate sets pert.select and pert.skinselect), or clear it."""
    body, point, skin = self.pick(x, y)
    self.selected = body
    self._sel_local = None
    if body > 0:
      with self.sim.snapshot() as snap:
        self._sel_local = snap.xmat[body].reshape(3, 3).T @ (point - snap.xpos[body])
    if self.renderer is not None:
      self.renderer.highlight_body = body
      self.renderer.highlight_skin = skin if body > 0 else -1

  def select_contact_at(self, x, y):
    """A click on a drawn contact point (within CONTACT_PICK pixels of its projection) selects
    that contact in the constraint inspector and opens its section; returns whether one was."""
    from numjoco.app import inspector
    if self.renderer is None or not (self.opts.contact_points or self.opts.contact_forces):
      return False
    w, h = self.window.get_size()
    with self.sim.snapshot() as snap:
      if snap is None or not snap.ncon:
        return False
      n = snap.ncon
      xy = self.renderer.project(snap.contact_pos[:n], self.camera, w, h, snap)
      xy[snap.contact_efc_address[:n] < 0] = np.nan    # in the margin's gap: no constraint
      j = inspector.pick_contact(xy, (x, h - y), CONTACT_PICK)
      if j < 0:
        return False
      g1, g2 = (int(g) for g in snap.contact_geom[j])
      self.ui.inspector.select(("contact", g1, g2), snap.contact_pos[j].copy())
    self.ui.expand.add("Constraints")
    return True

  def on_mouse_press(self, x, y, button, modifiers):
    """Double-click selects; Ctrl+press on a selected body starts a perturbation."""
    self._input_at = time.perf_counter()
    import time as _t
    from pyglet.window import key, mouse
    self._press_at = None
    if self._ui_wants("mouse") or self.camera is None or self.sim is None:
      return
    now = _t.perf_counter()
    t0, x0, y0, b0 = self._last_press
    self._last_press = (now, x, y, button)
    self._press_at = (x, y, button, modifiers)
    if button == mouse.LEFT and b0 == button and now - t0 < 0.35 and abs(x - x0) + abs(y - y0) < 6:
      self.select_at(x, y)
      return
    if modifiers & key.MOD_CTRL and self.selected > 0 and self._sel_local is not None:
      from numjoco.app import perturb
      b = self.selected
      with self.sim.snapshot() as snap:
        selpos = snap.xmat[b].reshape(3, 3) @ self._sel_local + snap.xpos[b]
        eye, forward, _ = self.camera.pose(snap)
        xiquat = perturb.quat_mul(self._xquat(snap, b), self.ui.m.body_iquat[b])
      top = self.camera.frustum_height()       # mjv_frustumHeight
      if self.camera.is_orthographic():
        top *= 0.15      # as mjv_initPerturb
      active = perturb.ROTATE if button == mouse.LEFT else perturb.TRANSLATE
      self.pert = perturb.Perturb(select=b, localpos=self._sel_local, refselpos=selpos,
                                  refquat=xiquat, active=active,
                                  scale=top * float((selpos - eye) @ forward))
      self._pert0 = (selpos.copy(), xiquat.copy())
      self.sim.send("perturb_start", b, self._sel_local, active)

  @staticmethod
  def _xquat(snap, b):
    """Body orientation from a snapshot (xquat if it carries one, else from xmat)."""
    if hasattr(snap, "xquat"):
      return np.asarray(snap.xquat[b], float)
    from scipy.spatial.transform import Rotation
    x, y, z, w = Rotation.from_matrix(snap.xmat[b].reshape(3, 3)).as_quat()
    return np.array([w, x, y, z])

  def on_mouse_release(self, x, y, button, modifiers):
    """End a perturbation; a left click that did not drag picks a contact point."""
    from pyglet.window import key, mouse
    press, self._press_at = self._press_at, None
    if self.pert is not None:
      self.pert = None
      self.sim.send("perturb_stop")
    elif (press is not None and button == press[2] == mouse.LEFT
          and not press[3] & (key.MOD_CTRL | key.MOD_SHIFT)
          and abs(x - press[0]) + abs(y - press[1]) < 4):
      self.select_contact_at(x, y)

  def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
    """Move the perturbation reference, or the camera as simulate's bindings do."""
    self._input_at = time.perf_counter()
    from pyglet.window import key, mouse
    from numjoco.render.camera import Mouse
    shift = modifiers & key.MOD_SHIFT
    h = max(self.window.height, 1)
    if self.pert is not None:
      from numjoco.app import perturb
      b = self.pert.select
      with self.sim.snapshot() as snap:
        _, forward, _ = self.camera.pose(snap)
        xiquat = perturb.quat_mul(self._xquat(snap, b), self.ui.m.body_iquat[b])
      if self.pert.active & perturb.ROTATE:
        action = Mouse.ROTATE_H if shift else Mouse.ROTATE_V
      else:
        action = Mouse.MOVE_H if shift else Mouse.MOVE_V
      self.pert.move(action, dx / h, -dy / h, forward, xiquat)   # simulate passes -dy
      p0, q0 = self._pert0   # the worker applies the move to its own starting reference
      self.sim.send("perturb_ref", self.pert.refselpos - p0,
                    perturb.quat_mul(self.pert.refquat, perturb.conj(q0)))
      return
    if self._ui_wants("mouse") or self.camera is None:
      return
    if buttons & mouse.RIGHT:
      action = Mouse.MOVE_H if shift else Mouse.MOVE_V
    elif buttons & mouse.LEFT:
      action = Mouse.ROTATE_H if shift else Mouse.ROTATE_V
    else:
      action = Mouse.ZOOM
    self.camera.move(action, dx / h, -dy / h)   # y up; simulate passes -dy as well

  def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
    """Zoom as simulate does (2% of the height per wheel click)."""
    self._input_at = time.perf_counter()
    from numjoco.render.camera import Mouse
    if self._ui_wants("mouse") or self.camera is None:
      return
    self.camera.move(Mouse.ZOOM, 0.0, -0.02 * scroll_y)   # simulate's zoom_increment

  def on_file_drop(self, x, y, paths):
    """Open the first dropped file."""
    if paths and self.sim is not None:
      self.open(paths[0])

  def on_resize(self, width, height):
    """Nothing to do: every frame reads the framebuffer size."""
    self._input_at = time.perf_counter()
    return None

  def on_close(self):
    """The window was closed: stop the worker too."""
    self.close()
    return True


def _gl_rect(r, sx, sy, h):
  """A UI rectangle (x0, y0, x1, y1 in window points from the top left) as the framebuffer
  pixels (x, y, w, h from the bottom left) wholly inside it: its one-pixel border, blended,
  is left out."""
  x0, x1 = math.ceil((r[0] + 1) * sx), math.floor((r[2] - 1) * sx)
  top, bottom = math.ceil((r[1] + 1) * sy), math.floor((r[3] - 1) * sy)
  return (x0, h - bottom, max(x1 - x0, 0), max(bottom - top, 0))


def _clear_gl_errors():
  """Take GL's pending error flags (moderngl does not read them; e.g. a draw into the window
  before X has mapped it leaves GL_INVALID_FRAMEBUFFER_OPERATION): imgui's renderer goes through
  PyOpenGL, which raises any flag it finds, whoever set it."""
  from OpenGL import GL
  for _ in range(16):
    if GL.glGetError() == GL.GL_NO_ERROR:
      return


def _key_name(symbol):
  """The app/keys.py name (pyglet.window.key.<name>) of a key symbol, or None if unbound."""
  if not _KEY_NAMES:
    from pyglet.window import key
    _KEY_NAMES.update({getattr(key, n): n for b in keys.BINDINGS for n in b.keys})
  return _KEY_NAMES.get(symbol)


_KEY_NAMES = {}     # key symbol -> name, of the bound keys
