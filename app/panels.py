"""The viewer's imgui panels: Simulation, Physics, Controls, Info (with implot plots), Rendering,
and the F1 help overlay.

Panels read the newest snapshot's `extra` dict and the Model's constants, and change anything
only by sending commands to the Simulation worker (which applies them between chunks).
"""
import math
import shutil

import numpy as np

from app import export
from app.sim import SPEEDS, key_snippet

INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")
SOLVERS = ("PGS", "CG", "Newton")
CONES = ("pyramidal", "elliptic")
PLOT_LEN = 600
RED = (1.0, 0.35, 0.3, 1.0)
YELLOW = (1.0, 0.8, 0.3, 1.0)

# element kind -> (mjtObj name for names, count attribute, [(label, field, width)])
ELEMENTS = {
    "geom": ("geom", "ngeom", [("solref", "geom_solref", 2), ("solimp", "geom_solimp", 5),
                               ("friction", "geom_friction", 3), ("margin", "geom_margin", 1),
                               ("gap", "geom_gap", 1), ("solmix", "geom_solmix", 1),
                               ("rgba", "geom_rgba", 4)]),
    "joint": ("joint", "njnt", [("solreflimit", "jnt_solref", 2),
                                ("solimplimit", "jnt_solimp", 5),
                                ("stiffness", "jnt_stiffness", 1)]),
    "dof": ("joint", "nv", [("damping", "dof_damping", 1), ("frictionloss", "dof_frictionloss", 1),
                            ("armature", "dof_armature", 1)]),
    "equality": ("equality", "neq", [("solref", "eq_solref", 2), ("solimp", "eq_solimp", 5)]),
    "body": ("body", "nbody", [("mass", "body_mass", 1), ("gravcomp", "body_gravcomp", 1)]),
    "actuator": ("actuator", "nu", [("gear", "actuator_gear", 6),
                                    ("ctrlrange", "actuator_ctrlrange", 2)]),
}


class UiState:
  """What the panels remember between frames."""

  def __init__(self):
    self.show_panels = True
    self.show_help = False
    self.key = -1                   # selected keyframe (-1: none)
    self.error = ""                 # UI-side error (compile failure, export failure)
    self.message = ""               # last export/clipboard message
    self.open_path = ""
    self.save_path = ""
    self.ctrl = np.zeros(0)
    self.elem_kind = 0
    self.elem_id = 0
    self.plot_t = []
    self.plot = {}                  # name -> list of values
    self.plot_sel = {"energy": True, "residual": False, "joint": False, "rtf": False}
    self.plot_joint = 0
    self.names = {}
    self.m = None
    self.expand = set()             # sections to open at the next frame
    self.rects = {}                 # widget name -> (x0, y0, x1, y1) in window pixels, top-left

  def on_model(self, m):
    """A new model was loaded: reset per-model state."""
    from engine.types import mjtObj
    self.m = m
    self.ctrl = np.zeros(m.nu)
    self.key = min(self.key, m.nkey - 1)
    self.elem_id = 0
    self.plot_t, self.plot = [], {}
    self.plot_joint = 0
    self.names = {k: [m.names.get(mjtObj[k.upper()], [""] * 0) for _ in (0,)][0]
                  for k in ("body", "joint", "geom", "actuator", "equality", "camera", "key")}
    if not self.open_path:
      self.open_path = ""

  def name(self, kind, i):
    """Name of object `i` of `kind` ('body', 'joint', ...), or 'kind i'."""
    names = self.names.get(kind, [])
    return names[i] if i < len(names) and names[i] else f"{kind} {i}"

  def change_speed(self, viewer, direction):
    """One step slower (-1) or faster (+1) along SPEEDS (keys - and =)."""
    st = viewer.sim.status()
    i = min(range(len(SPEEDS)), key=lambda k: abs(math.log(SPEEDS[k]) - math.log(st.speed))
            if math.isfinite(SPEEDS[k]) and math.isfinite(st.speed) else
            (0 if SPEEDS[k] == st.speed else 99))
    i = max(0, min(len(SPEEDS) - 1, i + direction))
    viewer.sim.send("speed", SPEEDS[i])

  def cycle_camera(self, viewer, direction):
    """Next (+1) or previous (-1) camera of the model (keys ] and [)."""
    from render.camera import CameraType
    cam, m = viewer.camera, self.m
    if cam is None or m is None or m.ncam == 0:
      return
    if cam.type != CameraType.FIXED:
      cam.fixedcamid = 0 if direction > 0 else m.ncam - 1
    else:
      cam.fixedcamid = (cam.fixedcamid + direction) % m.ncam
    cam.type = CameraType.FIXED


_DIALOG = []


def _has_dialog():
  """Whether portable_file_dialogs can show a dialog here (it needs zenity or kdialog on X)."""
  if not _DIALOG:
    _DIALOG.append(bool(shutil.which("zenity") or shutil.which("kdialog")))
  return _DIALOG[0]


def _speed_label(s):
  if math.isinf(s):
    return "as fast as possible"
  if s >= 1 or abs(1 / s - round(1 / s)) > 1e-9:
    return f"{s:.3g}x"
  return f"1/{round(1 / s)}x"


def _vec_input(imgui, label, value):
  """A text field of space-separated numbers; returns the new array on Enter, else None."""
  v = np.atleast_1d(np.asarray(value, float))
  text = " ".join(f"{x:.6g}" for x in v)
  changed, new = imgui.input_text(label, text, imgui.InputTextFlags_.enter_returns_true)
  if not changed:
    return None
  try:
    out = np.array([float(x) for x in new.replace(",", " ").split()])
  except ValueError:
    return None
  return out if out.size == v.size else None


def compile_progress(viewer):
  """The first-start screen: the engine compiles in a subprocess while the window stays live."""
  from imgui_bundle import imgui
  import time
  from app import warmup
  done, expect = warmup.progress()
  io = imgui.get_io()
  imgui.set_next_window_pos((io.display_size.x * 0.5, io.display_size.y * 0.5),
                            imgui.Cond_.always, (0.5, 0.5))
  imgui.begin("Compiling", None, imgui.WindowFlags_.always_auto_resize)
  imgui.text("First start: compiling the physics engine (cached for the next starts)")
  frac = min(done / expect, 0.99) if expect else 0.0
  imgui.progress_bar(frac, (420, 0), f"{done} kernels" + (f" of ~{expect}" if expect else ""))
  imgui.text(f"{time.perf_counter() - viewer._warm_t0:.0f} s")
  if viewer._warm_log:
    imgui.text_disabled(viewer._warm_log[-1][:80])
  imgui.end()


def draw(viewer, st, info):
  """All panels for one frame (`st`: worker Status, `info`: newest snapshot.extra or None)."""
  from imgui_bundle import imgui
  ui = viewer.ui
  if info is not None:
    _record(ui, st, info)
  if ui.show_panels:
    imgui.set_next_window_pos((8, 8), imgui.Cond_.first_use_ever)
    imgui.set_next_window_size((380, min(680, imgui.get_io().display_size.y - 16)),
                               imgui.Cond_.first_use_ever)
    imgui.begin("numjoco")
    _simulation(imgui, viewer, st, info)
    if ui.m is not None:
      if _header(imgui, ui, "Physics"):
        _physics(imgui, viewer)
      if _header(imgui, ui, "Controls"):
        _controls(imgui, viewer, st, info)
      if _header(imgui, ui, "Info", imgui.TreeNodeFlags_.default_open):
        _info(imgui, viewer, st, info)
      if _header(imgui, ui, "Rendering"):
        _rendering(imgui, viewer)
    imgui.end()
  _errors(imgui, viewer, st)
  if ui.show_help:
    _help(imgui)


def _header(imgui, ui, name, flags=0):
  """A collapsing section; `ui.expand` names sections to open (keyboard-less scripting, tests)."""
  if name in ui.expand:
    imgui.set_next_item_open(True)
    ui.expand.discard(name)
  return imgui.collapsing_header(name, flags)


def _rect(imgui, ui, name):
  """Remember the last widget's screen rectangle under `name` (tests click on it)."""
  a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
  ui.rects[name] = (a.x, a.y, b.x, b.y)


def _record(ui, st, info):
  t = info["time"]
  if ui.plot_t and t < ui.plot_t[-1]:
    ui.plot_t, ui.plot = [], {}
  if ui.plot_t and t == ui.plot_t[-1]:
    return
  ui.plot_t.append(t)
  vals = {"energy": sum(info["energy"]), "residual": math.log10(max(info["residual"], 1e-15)),
          "rtf": st.rtf}
  m = ui.m
  if m is not None and m.njnt:
    j = min(ui.plot_joint, m.njnt - 1)
    vals["joint"] = float(info["qpos"][m.jnt_qposadr[j]])
  for k, v in vals.items():
    ui.plot.setdefault(k, []).append(v)
  if len(ui.plot_t) > PLOT_LEN:
    del ui.plot_t[0]
    for v in ui.plot.values():
      del v[0]


def _errors(imgui, viewer, st):
  """Worker exceptions, load failures and divergences: always visible until dismissed."""
  ui = viewer.ui
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
        viewer.sim.send("clear_error")
        viewer.sim.send("pause", False)
      imgui.same_line()
      if imgui.button("Reset and resume"):
        viewer.sim.send("clear_error")
        viewer.sim.send("reset")
        viewer.sim.send("pause", False)
    elif kind == "ui" and imgui.button("Dismiss"):
      ui.error = ""
    imgui.separator()
  imgui.end()


def _simulation(imgui, viewer, st, info):
  ui, sim = viewer.ui, viewer.sim
  imgui.text(st.path if len(st.path) < 48 else "..." + st.path[-45:])
  if st.loading:
    imgui.same_line()
    imgui.text_colored(YELLOW, "loading...")
  clicked = imgui.button("Run" if st.paused else "Pause")
  _rect(imgui, ui, "run")
  if clicked:
    sim.send("pause", not st.paused)
  imgui.same_line()
  if imgui.button("Step"):
    sim.send("step", 1)
  imgui.same_line()
  if imgui.button("Reset"):
    sim.send("reset", ui.key if ui.key >= 0 else None)
  imgui.same_line()
  if imgui.button("Reload"):
    viewer.reload()
  speeds = SPEEDS if st.speed in SPEEDS else tuple(sorted(SPEEDS + (st.speed,)))
  changed, i = imgui.combo("speed", speeds.index(st.speed), [_speed_label(x) for x in speeds])
  if changed:
    sim.send("speed", speeds[i])
  m = ui.m
  if m is not None and m.nkey:
    keys = ["(none)"] + [ui.name("key", k) for k in range(m.nkey)]
    changed, i = imgui.combo("keyframe", ui.key + 1, keys)
    if changed:
      ui.key = i - 1
    imgui.same_line()
    if imgui.button("Load") and ui.key >= 0:
      sim.send("reset", ui.key)
  if m is not None and imgui.button("Copy state as <key>"):
    def copy(mm, d):
      ui.clipboard = key_snippet(mm, d)
    sim.send("call", copy)
  clip = getattr(ui, "clipboard", None)
  if clip:
    imgui.set_clipboard_text(clip)
    ui.message = "copied: " + clip[:60] + "..."
    ui.clipboard = None
  t = info["time"] if info else 0.0
  imgui.text(f"time {t:.3f} s   real-time factor {st.rtf:.2f}   FPS {viewer.clock.fps:.0f}")
  imgui.text(f"steps/s {st.steps_per_s:.0f}   " + ("PAUSED" if st.paused else "running"))
  if st.divergences:
    imgui.text_colored(YELLOW, f"diverged {st.divergences}x: {st.last_divergence}")
  for w in st.warnings[-2:]:
    imgui.text_colored(YELLOW, "warning: " + w)
  if ui.message:
    imgui.text_disabled(ui.message[:80])
  _, ui.open_path = imgui.input_text("##open", ui.open_path)
  imgui.same_line()
  if imgui.button("Open model") and ui.open_path.strip():
    viewer.open(ui.open_path.strip())
  if _has_dialog():
    imgui.same_line()
    if imgui.button("Browse"):
      from imgui_bundle import portable_file_dialogs as pfd
      ui.dialog = pfd.open_file("Open model", "", ["MJCF", "*.xml"])
  dlg = getattr(ui, "dialog", None)
  if dlg is not None and dlg.ready():
    res = dlg.result()
    ui.dialog = None
    if res:
      viewer.open(res[0])


def _opt_float(imgui, viewer, m, name, label=None, fmt="%.6g"):
  v = float(getattr(m.opt, name))
  changed, new = imgui.input_float(label or name, v, 0.0, 0.0, fmt,
                                   imgui.InputTextFlags_.enter_returns_true)
  if changed and new != v:
    viewer.sim.send("opt", name, new)


def _opt_vec(imgui, viewer, m, name):
  new = _vec_input(imgui, name, getattr(m.opt, name))
  if new is not None:
    viewer.sim.send("opt", name, new)


def _physics(imgui, viewer):
  from engine.types import mjtDisableBit, mjtEnableBit
  ui, m, sim = viewer.ui, viewer.ui.m, viewer.sim
  _opt_float(imgui, viewer, m, "timestep")
  for name, items in (("integrator", INTEGRATORS), ("solver", SOLVERS), ("cone", CONES)):
    cur = int(getattr(m.opt, name))
    changed, i = imgui.combo(name, cur, list(items))
    if changed:
      sim.send("opt", name, i)
  changed, it = imgui.input_int("iterations", int(m.opt.iterations))
  if changed and it >= 1:
    sim.send("opt", "iterations", it)
  for name in ("tolerance", "impratio", "density", "viscosity"):
    _opt_float(imgui, viewer, m, name)
  for name in ("gravity", "wind"):
    _opt_vec(imgui, viewer, m, name)
  if imgui.tree_node("Disable flags"):
    flags = int(m.opt.disableflags)
    for bit in mjtDisableBit:
      changed, on = imgui.checkbox(bit.name.lower(), bool(flags & bit))
      if changed:
        sim.send("opt", "disableflags", (flags | bit) if on else (flags & ~bit))
    imgui.tree_pop()
  if imgui.tree_node("Enable flags"):
    flags = int(m.opt.enableflags)
    for bit in mjtEnableBit:
      changed, on = imgui.checkbox(bit.name.lower() + "##en", bool(flags & bit))
      if changed:
        sim.send("opt", "enableflags", (flags | bit) if on else (flags & ~bit))
    imgui.tree_pop()
  if imgui.tree_node("Contact override"):
    imgui.text_disabled("used when the 'override' enable flag is on")
    _opt_float(imgui, viewer, m, "o_margin")
    _opt_vec(imgui, viewer, m, "o_solref")
    _opt_vec(imgui, viewer, m, "o_solimp")
    imgui.tree_pop()
  if imgui.tree_node("Elements"):
    kinds = list(ELEMENTS)
    _, ui.elem_kind = imgui.combo("kind", ui.elem_kind, kinds)
    kind = kinds[ui.elem_kind]
    objname, count, fields = ELEMENTS[kind]
    n = getattr(m, count)
    if n:
      def label(i):
        if kind == "dof":
          return f"dof {i} ({ui.name('joint', int(m.dof_jntid[i]))})"
        return f"{i}: {ui.name(objname, i)}"
      ui.elem_id = min(ui.elem_id, n - 1)
      _, ui.elem_id = imgui.combo("element", ui.elem_id, [label(i) for i in range(n)])
      for lab, field, _w in fields:
        new = _vec_input(imgui, f"{lab}##{field}", getattr(m, field)[ui.elem_id])
        if new is not None:
          sim.send("model", field, ui.elem_id, new if new.size > 1 else new[0])
    else:
      imgui.text_disabled(f"the model has no {kind}")
    imgui.tree_pop()
  if imgui.tree_node("Export edits"):
    if imgui.button("Copy MJCF diff to clipboard"):
      def diff(mm, d):
        ui.clipboard = export.mjcf_diff(mm, dict(sim.edits), dict(sim.opt_edits), sim.opt0)
      sim.send("call", diff)
    _, ui.save_path = imgui.input_text("##save", ui.save_path or "edited.xml")
    imgui.same_line()
    if imgui.button("Save copy"):
      path = ui.save_path

      def save(mm, d):
        try:
          skipped = export.save_copy(mm, dict(sim.edits), dict(sim.opt_edits), path, sim.opt0)
          ui.message = f"saved {path}" + (f"; not written: {'; '.join(skipped)}"
                                          if skipped else "")
        except (ValueError, OSError) as e:
          ui.error = f"cannot save a copy: {e}"
      sim.send("call", save)
    imgui.tree_pop()


def _controls(imgui, viewer, st, info):
  ui, m, sim = viewer.ui, viewer.ui.m, viewer.sim
  if m.nu:
    if imgui.button("Zero all"):
      ui.ctrl[:] = 0
      sim.send("zero_ctrl")
    for i in range(m.nu):
      lo, hi = m.actuator_ctrlrange[i] if m.actuator_ctrllimited[i] else (-1.0, 1.0)
      changed, v = imgui.slider_float(ui.name("actuator", i) + f"##u{i}", float(ui.ctrl[i]),
                                      float(lo), float(hi))
      _rect(imgui, ui, f"ctrl{i}")
      if changed:
        set_ctrl(viewer, i, v)
  else:
    imgui.text_disabled("no actuators")
  imgui.separator()
  imgui.text("Joints" + ("" if st.paused else " (pause to edit)"))
  if info is None:
    return
  imgui.begin_disabled(not st.paused)
  for j in range(m.njnt):
    t = int(m.jnt_type[j])
    if t not in (2, 3):   # slide, hinge: one scalar qpos
      continue
    adr = int(m.jnt_qposadr[j])
    if m.jnt_limited[j]:
      lo, hi = m.jnt_range[j]
    else:
      lo, hi = (-math.pi, math.pi) if t == 3 else (-1.0, 1.0)
    changed, v = imgui.slider_float(ui.name("joint", j) + f"##q{j}", float(info["qpos"][adr]),
                                    float(lo), float(hi))
    if changed:
      sim.send("qpos", adr, v)
  imgui.end_disabled()


def set_ctrl(viewer, i, value):
  """What the actuator slider does: remember the value and send it to the worker."""
  viewer.ui.ctrl[i] = value
  viewer.sim.send("ctrl", i, value)


def _info(imgui, viewer, st, info):
  from imgui_bundle import implot
  ui = viewer.ui
  if info is None:
    imgui.text("waiting for the first snapshot")
    return
  imgui.text(f"ncon {info['ncon']}   nefc {info['nefc']}   islands {info['nisland']}")
  imgui.text(f"solver iterations {info['niter']}   residual {info['residual']:.3g}")
  e = info["energy"]
  imgui.text(f"energy potential {e[0]:.4g}  kinetic {e[1]:.4g}  total {e[0] + e[1]:.4g}")
  if not int(ui.m.opt.enableflags) & 2:
    imgui.text_disabled("(energy is computed when the 'energy' enable flag is on)")
  for k in ui.plot_sel:
    imgui.same_line() if k != "energy" else None
    _, ui.plot_sel[k] = imgui.checkbox(k + "##plot", ui.plot_sel[k])
  if ui.plot_sel.get("joint") and ui.m.njnt:
    _, ui.plot_joint = imgui.combo("plotted joint", ui.plot_joint,
                                   [ui.name("joint", j) for j in range(ui.m.njnt)])
  if len(ui.plot_t) > 1 and implot.begin_plot("##plots", (-1, 180)):
    implot.setup_axes("time (s)", "", implot.AxisFlags_.auto_fit, implot.AxisFlags_.auto_fit)
    t = np.array(ui.plot_t)
    for k, on in ui.plot_sel.items():
      if on and k in ui.plot:
        implot.plot_line("log10 residual" if k == "residual" else k, t, np.array(ui.plot[k]))
    implot.end_plot()


def _rendering(imgui, viewer):
  import dataclasses
  from render.camera import CameraType
  from render.renderer import LABELS
  ui, o, cam, m = viewer.ui, viewer.opts, viewer.camera, viewer.ui.m
  for f in dataclasses.fields(o):
    v = getattr(o, f.name)
    if isinstance(v, bool):
      _, nv = imgui.checkbox(f.name.replace("_", " "), v)
      setattr(o, f.name, nv)
  imgui.text("geom groups")
  for g in range(len(o.geom_groups)):
    imgui.same_line()
    _, o.geom_groups[g] = imgui.checkbox(f"{g}##gg", o.geom_groups[g])
  _, li = imgui.combo("labels", LABELS.index(o.labels), list(LABELS))
  o.labels = LABELS[li]
  if cam is None:
    return
  names = ["free", "tracking"] + [f"camera {ui.name('camera', c)}" for c in range(m.ncam)]
  cur = 0 if cam.type == CameraType.FREE else 1 if cam.type == CameraType.TRACKING else \
      2 + cam.fixedcamid
  changed, i = imgui.combo("camera", cur, names)
  if changed:
    if i == 0:
      cam.type = CameraType.FREE
    elif i == 1:
      cam.type = CameraType.TRACKING
      cam.trackbodyid = max(cam.trackbodyid, 1 if m.nbody > 1 else 0)
    else:
      cam.type, cam.fixedcamid = CameraType.FIXED, i - 2
  if cam.type == CameraType.TRACKING:
    _, b = imgui.combo("track body", cam.trackbodyid,
                       [ui.name("body", b) for b in range(m.nbody)])
    cam.trackbodyid = b
  if imgui.button("Reset view"):
    from render.camera import Camera
    viewer.camera = Camera.default_for(m)


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
  from app.viewer import HELP
  return HELP
