"""Controls panel: a slider per actuator within its ctrlrange, zero all; joint sliders (paused)."""
import math

from app.panels.common import rect


def draw(imgui, viewer, st, info):
  """The Controls section."""
  ui, m, sim = viewer.ui, viewer.ui.m, viewer.sim
  if m.nu:
    if imgui.button("Zero all"):
      ui.ctrl[:] = ui.neutral_ctrl()
      sim.send("zero_ctrl")
    for i in range(m.nu):
      lo, hi = m.actuator_ctrlrange[i] if m.actuator_ctrllimited[i] else (-1.0, 1.0)
      changed, v = imgui.slider_float(ui.ctrl_label(i) + f"##u{i}", float(ui.ctrl[i]),
                                      float(lo), float(hi))
      rect(imgui, ui, f"ctrl{i}")
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
