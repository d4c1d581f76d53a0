"""Controls panel: actuator group enables, a slider per actuator within its ctrlrange (greyed
when its group is disabled), zero all; joint sliders (paused)."""
import math

from numjoco.app.panels.common import rect

NGROUP_SHOWN = 6   # the groups MuJoCo's simulate offers checkboxes for (0-5)


def groups_shown(m):
  """Actuator groups with an enable checkbox: 0-5 as in simulate, and any other group in 0-30
  that an actuator of the model uses or that the model disables."""
  extra = {int(g) for g in m.actuator_group if NGROUP_SHOWN <= g <= 30}
  extra |= {g for g in range(NGROUP_SHOWN, 31) if int(m.opt.disableactuator) >> g & 1}
  return list(range(NGROUP_SHOWN)) + sorted(extra)


def ctrl_disabled(m):
  """Per control: whether its actuator's group is disabled (opt.disableactuator), as MuJoCo's
  simulate greys the slider."""
  bits = int(m.opt.disableactuator)
  out = [False] * m.nu
  for a in range(m.nactuator):
    g = int(m.actuator_group[a])
    if 0 <= g <= 30 and bits >> g & 1:
      adr = int(m.actuator_ctrladr[a])
      for i in range(adr, adr + int(m.actuator_ctrlnum[a])):
        out[i] = True
  return out


def set_group(ui, cmd, group, enabled):
  """What a group checkbox does: set or clear the group's bit of opt.disableactuator."""
  bits = int(ui.m.opt.disableactuator)
  bits = (bits & ~(1 << group)) if enabled else (bits | (1 << group))
  cmd.send("opt", "disableactuator", bits)


def draw(imgui, ui, cmd, st, info):
  """The Controls section."""
  m = ui.m
  if m.nu:
    imgui.text("Actuator groups enabled")
    bits = int(m.opt.disableactuator)
    for k, g in enumerate(groups_shown(m)):
      if k % 6:
        imgui.same_line()
      changed, on = imgui.checkbox(f"{g}##actgroup{g}", not bits >> g & 1)
      rect(imgui, ui, f"actgroup{g}")
      if changed:
        set_group(ui, cmd, g, on)
    if imgui.button("Zero all"):
      ui.ctrl[:] = ui.neutral_ctrl()
      cmd.send("zero_ctrl")
    off = ctrl_disabled(m)
    for i in range(m.nu):
      lo, hi = m.actuator_ctrlrange[i] if m.actuator_ctrllimited[i] else (-1.0, 1.0)
      imgui.begin_disabled(off[i])
      changed, v = imgui.slider_float(ui.ctrl_label(i) + f"##u{i}", float(ui.ctrl[i]),
                                      float(lo), float(hi))
      imgui.end_disabled()
      rect(imgui, ui, f"ctrl{i}")
      if changed:
        set_ctrl(ui, cmd, i, v)
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
      cmd.send("qpos", adr, v)
  imgui.end_disabled()


def set_ctrl(ui, cmd, i, value):
  """What the actuator slider does: remember the value and send it to the worker."""
  ui.ctrl[i] = value
  cmd.send("ctrl", i, value)
