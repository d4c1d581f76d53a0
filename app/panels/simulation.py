"""Simulation panel: run/pause/step/reset/reload, screenshot/record, speed, keyframes, time and
rates, open."""
from numjoco.app.panels.common import SPEEDS, YELLOW, has_dialog, rect, speed_label


def draw(imgui, ui, cmd, st, info):
  """The Simulation section (always open, at the top of the panel)."""
  imgui.text(st.path if len(st.path) < 48 else "..." + st.path[-45:])
  if st.loading:
    imgui.same_line()
    imgui.text_colored(YELLOW, "loading...")
  if st.compiling:   # units a new model or an option edit needs (engine/build.py)
    imgui.text_colored(YELLOW, st.compile_note[-60:] or "compiling engine units...")
  clicked = imgui.button("Run" if st.paused else "Pause")
  rect(imgui, ui, "run")
  if clicked:
    cmd.send("pause", not st.paused)
  imgui.same_line()
  if imgui.button("Step"):
    cmd.send("step", 1)
  imgui.same_line()
  if imgui.button("Reset"):
    cmd.send("reset", ui.key if ui.key >= 0 else None)
  imgui.same_line()
  if imgui.button("Reload"):
    cmd.send("reload")
  clicked = imgui.button("Screenshot")
  rect(imgui, ui, "screenshot")
  if clicked:
    cmd.send("screenshot", ui.shot_panels)
  imgui.same_line()
  _, ui.shot_panels = imgui.checkbox("with panels", ui.shot_panels)
  imgui.same_line()
  clicked = imgui.button("Stop recording" if ui.recording_frames is not None else "Record")
  rect(imgui, ui, "record")
  if clicked:
    cmd.send("toggle_recording")
  if ui.recording_frames is not None:
    imgui.same_line()
    imgui.text_colored(YELLOW, f"REC {ui.recording_frames} frames")
  speeds = SPEEDS if st.speed in SPEEDS else tuple(sorted(SPEEDS + (st.speed,)))
  changed, i = imgui.combo("speed", speeds.index(st.speed), [speed_label(x) for x in speeds])
  if changed:
    cmd.send("speed", speeds[i])
  m = ui.m
  if m is not None and m.nkey:
    keys = ["(none)"] + [ui.name("key", k) for k in range(m.nkey)]
    changed, i = imgui.combo("keyframe", ui.key + 1, keys)
    if changed:
      ui.key = i - 1
    imgui.same_line()
    if imgui.button("Load") and ui.key >= 0:
      cmd.send("reset", ui.key)
  if m is not None and imgui.button("Copy state as <key>"):
    def copy(mm, d):
      from numjoco.app.sim import key_snippet   # the engine is loaded by now
      ui.clipboard = key_snippet(mm, d)
    cmd.send("call", copy)
  clip = getattr(ui, "clipboard", None)
  if clip:
    imgui.set_clipboard_text(clip)
    ui.message = "copied: " + clip[:60] + "..."
    ui.clipboard = None
  if st.paused and st.history > 1:     # steps back through the last states (simulate's)
    changed, back = imgui.slider_int("history", -st.history_back, 1 - st.history, 0,
                                     "%d steps")
    rect(imgui, ui, "history")
    if changed:
      cmd.send("history", -back)
  t = info["time"] if info else 0.0
  imgui.text(f"time {t:.3f} s   real-time factor {st.rtf:.2f}   FPS {ui.fps:.0f}")
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
    cmd.send("open", ui.open_path.strip())
  if has_dialog():
    imgui.same_line()
    if imgui.button("Browse"):
      from imgui_bundle import portable_file_dialogs as pfd
      ui.dialog = pfd.open_file("Open model", "", ["MJCF or URDF", "*.xml *.urdf"])
  dlg = getattr(ui, "dialog", None)
  if dlg is not None and dlg.ready():
    res = dlg.result()
    ui.dialog = None
    if res:
      cmd.send("open", res[0])
