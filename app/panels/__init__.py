"""The viewer's imgui panels: Simulation, Physics, Controls, Info (with implot plots), Constraints
(the constraint inspector), Rendering, and the F1 help overlay.

Panels draw a UiState (what they display: the Model, the viewer's VisOptions and Camera, its
recording and frame rate, and what the panels remember between frames), the newest snapshot's
`extra` dict and the worker's Status; they change anything only through a command sink
(`cmd.send(name, *args)`, the viewer's Viewer.execute: its own commands, or the Simulation
worker's, which applies them between chunks). They know nothing of the Viewer.
"""
import numpy as np

from numjoco.app import keys
from numjoco.app.panels import constraints, controls, physics, rendering, simulation
from numjoco.app.panels import info as info_panel
from numjoco.app.panels.common import RED
from numjoco.app.panels.controls import set_ctrl  # noqa: F401  (the slider's command path, for tests)


class CommandSink:
  """Where the panels' commands go: `send(name, *args)` calls `run(name, *args)` (the viewer's
  execute), or keeps them in `sent` when there is no `run`."""

  def __init__(self, run=None):
    self.run = run
    self.sent = []

  def send(self, name, *args):
    if self.run is None:
      self.sent.append((name, *args))
    else:
      self.run(name, *args)


class UiState:
  """What the panels display and remember between frames (the viewer fills the display part
  before each frame)."""

  def __init__(self):
    # shown, set by the viewer: its VisOptions and Camera (edited in place by the panels), the
    # frames of the recording under way (None: not recording), the display rate, the scene
    self.opts = None
    self.camera = None
    self.recording_frames = None
    self.fps = 0.0
    self.scene_full = False
    self.max_geom = 0
    # remembered
    self.show_panels = True
    self.show_left = True           # the Simulation and Info sections (MuJoCo's left UI)
    self.show_right = True          # the Physics, Controls, Rendering sections (its right UI)
    self.user_texts = []            # a script's texts (gridpos, text1, text2), app/passive.py
    self.user_figures = []          # a script's figures (title, {label: (x, y)})
    self.show_help = False
    self.key = -1                   # selected keyframe (-1: none)
    self.error = ""                 # UI-side error (compile failure, export failure)
    self.message = ""               # last export/clipboard message
    self.shot_panels = False        # the Screenshot button includes the panels
    self.open_path = ""
    self.save_path = ""
    self.ctrl = np.zeros(0)
    self.elem_kind = 0
    self.elem_id = 0
    self.plot_t = []
    self.plot = {}                  # name -> list of values
    self.plot_sel = {"energy": True, "residual": False, "joint": False, "sensor": False,
                     "rtf": False}
    self.plot_joint = 0
    self.plot_sensor = 0            # index into d.sensordata
    self.names = {}
    self.m = None
    self.expand = set()             # sections to open at the next frame
    self.rects = {}                 # widget name -> (x0, y0, x1, y1) in window pixels, top-left
    self.opaque = []                # this frame's opaque panels: (x0, y0, x1, y1) as in rects
    self.inspector = constraints.InspectorState()   # the Constraints section's selection

  def on_model(self, m):
    """A new model was loaded: reset per-model state."""
    from numjoco.engine.types import mjtObj
    self.m = m
    self.ctrl = self.neutral_ctrl()
    self.key = min(self.key, m.nkey - 1)
    self.elem_id = 0
    self.plot_t, self.plot = [], {}
    self.plot_joint = 0
    self.plot_sensor = 0
    active, self.inspector = self.inspector.active, constraints.InspectorState()
    self.inspector.active = active    # the worker's flag outlives the model
    self.names = {k: [m.names.get(mjtObj[k.upper()], [""] * 0) for _ in (0,)][0]
                  for k in ("body", "joint", "geom", "actuator", "equality", "camera", "key",
                            "sensor", "tendon")}
    if not self.open_path:
      self.open_path = ""

  def sensor_labels(self):
    """One label per entry of d.sensordata: 'name' or 'name[k]' for multi-dimensional ones."""
    m, out = self.m, []
    for i in range(m.nsensor):
      dim, base = int(m.sensor_dim[i]), self.name("sensor", i)
      out += [base] if dim == 1 else [f"{base}[{k}]" for k in range(dim)]
    return out

  def neutral_ctrl(self):
    """The controls a reset gives (mj_resetCtrl): zero, the identity for quaternion-commanded
    SO3 servos."""
    from numjoco.engine.types import mjtChart, mjtGain
    m = self.m
    ctrl = np.zeros(m.nu)
    for a in range(m.nactuator):
      if m.actuator_gaintype[a] == mjtGain.SO3 and m.actuator_ctrlspec[a] == mjtChart.QUAT:
        ctrl[m.actuator_ctrladr[a]] = 1.0
    return ctrl

  def ctrl_label(self, i):
    """Label of control i: its actuator's name, with the input's index for actuators that
    take several controls (MuJoCo 4's pid, dcmotor, SO3 servos)."""
    m = self.m
    for a in range(m.nactuator):
      adr, num = int(m.actuator_ctrladr[a]), int(m.actuator_ctrlnum[a])
      if adr <= i < adr + num:
        return self.name("actuator", a) + (f"[{i - adr}]" if num > 1 else "")
    return f"control {i}"

  def name(self, kind, i):
    """Name of object `i` of `kind` ('body', 'joint', ...), or 'kind i'."""
    names = self.names.get(kind, [])
    return names[i] if i < len(names) and names[i] else f"{kind} {i}"


def compile_progress(log, t0):
  """The first-start screen: the engine compiles in a subprocess while the window stays live
  (`log`: its output lines so far, `t0`: when it started, time.perf_counter)."""
  from imgui_bundle import imgui
  import time
  from numjoco.app import warmup
  done, expect = warmup.progress(log)
  io = imgui.get_io()
  imgui.set_next_window_pos((io.display_size.x * 0.5, io.display_size.y * 0.5),
                            imgui.Cond_.always, (0.5, 0.5))
  imgui.begin("Compiling", None, imgui.WindowFlags_.always_auto_resize)
  imgui.text("First start: compiling the physics engine (cached for the next starts)")
  frac = min(done / expect, 0.99) if expect else 0.0
  imgui.progress_bar(frac, (420, 0), f"{done} of {expect} units" if expect else "starting")
  imgui.text(f"{time.perf_counter() - t0:.0f} s")
  if log:
    imgui.text_disabled(log[-1][:80])
  imgui.end()


def draw(ui, cmd, st, info):
  """All panels for one frame (`st`: worker Status, `info`: newest snapshot.extra or None)."""
  from imgui_bundle import imgui
  if info is not None:
    info_panel.record(ui, st, info)
    constraints.record(ui, info)
  if st.compiling and not ui.show_panels:   # the Simulation panel shows it otherwise
    h = imgui.get_io().display_size.y
    imgui.get_background_draw_list().add_text(
        (10, h - 24), imgui.IM_COL32(255, 255, 120, 255), st.compile_note[-90:])
  size = imgui.get_io().display_size
  view = [0.0, size.x]       # the 3D view's columns right of the panel
  # MuJoCo's left UI (simulation, info) and right UI (physics, controls, rendering) are the
  # two groups of sections of one panel here
  if ui.show_panels and (ui.show_left or ui.show_right):
    imgui.set_next_window_pos((8, 8), imgui.Cond_.first_use_ever)
    imgui.set_next_window_size((380, min(680, size.y - 16)), imgui.Cond_.first_use_ever)
    imgui.set_next_window_bg_alpha(1.0)   # opaque whatever the style: the 3D view skips it
    imgui.begin("numjoco")
    if ui.show_left:
      simulation.draw(imgui, ui, cmd, st, info)
    if ui.m is not None:
      if ui.show_right and _header(imgui, ui, "Physics"):
        physics.draw(imgui, ui, cmd)
      if ui.show_right and _header(imgui, ui, "Controls"):
        controls.draw(imgui, ui, cmd, st, info)
      if ui.show_left and _header(imgui, ui, "Info", imgui.TreeNodeFlags_.default_open):
        info_panel.draw(imgui, ui, cmd, st, info)
      inspecting = ui.show_left and _header(imgui, ui, "Constraints")
      constraints.set_active(ui, cmd, inspecting)
      if inspecting:
        constraints.draw(imgui, ui, cmd, info)
      if ui.show_right and _header(imgui, ui, "Rendering"):
        rendering.draw(imgui, ui, cmd)
    pos, wsize = imgui.get_window_pos(), imgui.get_window_size()
    ui.rects["panels"] = (pos.x, pos.y, pos.x + wsize.x, pos.y + wsize.y)
    if not imgui.is_window_collapsed():   # (a collapsed title bar is translucent)
      ui.opaque.append(ui.rects["panels"])
    view[0] = pos.x + wsize.x
    imgui.end()
  else:
    constraints.set_active(ui, cmd, False)   # nobody looks: the worker builds no table
  _script_overlay(imgui, ui, view)
  _errors(imgui, ui, cmd, st)
  if ui.show_help:
    _help(imgui)


def _script_overlay(imgui, ui, view):
  """A script's texts at their grid positions in the 3D view beside the panel (`view`: its
  left and right column; two columns of text, as mjr_overlay) and its figures, one plot each,
  in a window at the bottom right."""
  size = imgui.get_io().display_size
  x0, x1 = view
  dl = imgui.get_foreground_draw_list()      # over the panels, as mjr_overlay over the view
  col = imgui.IM_COL32(255, 255, 255, 235)
  for pos, text1, text2 in ui.user_texts:
    rows1, rows2 = text1.split("\n"), text2.split("\n")
    w1 = max(imgui.calc_text_size(r).x for r in rows1)
    w2 = max(imgui.calc_text_size(r).x for r in rows2) if text2 else 0.0
    lh = imgui.get_text_line_height_with_spacing()
    w, h = w1 + (w2 + 16 if text2 else 0), lh * max(len(rows1), len(rows2))
    x = {"left": x0 + 8, "right": x1 - w - 8}.get(pos.replace("top", "").replace("bottom", ""),
                                                  (x0 + x1 - w) / 2)
    y = (8 if pos.startswith("top") else size.y - h - 8 if pos.startswith("bottom")
         else (size.y - h) / 2)
    dl.add_rect_filled((x - 4, y - 4), (x + w + 4, y + h + 4), imgui.IM_COL32(0, 0, 0, 140))
    for k, r in enumerate(rows1):
      dl.add_text((x, y + k * lh), col, r)
    for k, r in enumerate(rows2 if text2 else ()):
      dl.add_text((x + w1 + 16, y + k * lh), col, r)
  if not ui.user_figures:
    return
  from imgui_bundle import implot
  imgui.set_next_window_pos((size.x - 8, size.y - 8), imgui.Cond_.first_use_ever, (1.0, 1.0))
  imgui.set_next_window_size((420, 220 * len(ui.user_figures) + 40), imgui.Cond_.first_use_ever)
  imgui.begin("Figures")
  for title, series in ui.user_figures:
    if implot.begin_plot(title, (-1, 200)):
      implot.setup_axes("", "", implot.AxisFlags_.auto_fit, implot.AxisFlags_.auto_fit)
      for label, (x, y) in series.items():
        implot.plot_line(label, np.ascontiguousarray(x), np.ascontiguousarray(y))
      implot.end_plot()
  imgui.end()


def draw_loading(ui, cmd, st):
  """While the model on screen is its preview and the engine still loads: a status line (the
  panels need the engine's Model), and any load error."""
  from imgui_bundle import imgui
  if not (st.load_error or st.error):
    text = st.compile_note[-90:] if st.compiling else "loading physics..."
    imgui.get_background_draw_list().add_text((10, 8), imgui.IM_COL32(255, 255, 255, 220), text)
  _errors(imgui, ui, cmd, st)


def _header(imgui, ui, name, flags=0):
  """A collapsing section; `ui.expand` names sections to open (keyboard-less scripting, tests)."""
  if name in ui.expand:
    imgui.set_next_item_open(True)
    ui.expand.discard(name)
  return imgui.collapsing_header(name, flags)


def _errors(imgui, ui, cmd, st):
  """Worker exceptions, load failures and divergences: always visible until dismissed."""
  msgs = []
  if st is not None:
    if st.error:
      msgs.append(("Simulation error (worker paused)", st.error, "error"))
    if st.load_error:
      msgs.append(("Load failed", st.load_error, None))
  if ui.error:
    msgs.append(("Error", ui.error, "ui"))
  if not msgs:
    return
  io = imgui.get_io()
  imgui.set_next_window_pos((io.display_size.x - 8, 8), imgui.Cond_.always, (1.0, 0.0))
  imgui.set_next_window_size_constraints((300, 0), (io.display_size.x * 0.6, 500))
  imgui.begin("Errors", None, imgui.WindowFlags_.always_auto_resize)
  for title, text, kind in msgs:
    imgui.text_colored(RED, title)
    imgui.text_wrapped(text.strip()[-1500:])
    if kind == "error":
      if imgui.button("Resume"):
        cmd.send("clear_error")
        cmd.send("pause", False)
      imgui.same_line()
      if imgui.button("Reset and resume"):
        cmd.send("clear_error")
        cmd.send("reset")
        cmd.send("pause", False)
    elif kind == "ui" and imgui.button("Dismiss"):
      ui.error = ""
    imgui.separator()
  imgui.end()


def _help(imgui):
  io = imgui.get_io()
  imgui.set_next_window_pos((io.display_size.x * 0.5, io.display_size.y * 0.5),
                            imgui.Cond_.always, (0.5, 0.5))
  imgui.set_next_window_bg_alpha(0.85)
  imgui.begin("Help (F1)", None, imgui.WindowFlags_.always_auto_resize)
  if imgui.begin_table("keys", 2):
    for k, what in _help_rows():
      imgui.table_next_row()
      imgui.table_next_column()
      imgui.text(k)
      imgui.table_next_column()
      imgui.text(what)
    imgui.end_table()
  imgui.end()


def _help_rows():
  return keys.HELP
