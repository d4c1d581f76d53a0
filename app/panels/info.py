"""Info panel: contacts, constraint rows, solver statistics, energy, live implot plots."""
import math

import numpy as np

PLOT_LEN = 600


def record(ui, st, info):
  """Append the newest values to the plot buffers (once per simulated time)."""
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
  sd = info.get("sensordata")
  if sd is not None and len(sd):
    vals["sensor"] = float(sd[min(ui.plot_sensor, len(sd) - 1)])
  for k, v in vals.items():
    ui.plot.setdefault(k, []).append(v)
  if len(ui.plot_t) > PLOT_LEN:
    del ui.plot_t[0]
    for v in ui.plot.values():
      del v[0]


def draw(imgui, ui, cmd, st, info):
  """The Info section."""
  from imgui_bundle import implot
  if info is None:
    imgui.text("waiting for the first snapshot")
    return
  imgui.text(f"ncon {info['ncon']}   nefc {info['nefc']}   islands {info['nisland']}")
  from numjoco.engine.types import mjtEnableBit
  if int(ui.m.opt.enableflags) & mjtEnableBit.SLEEP and "awake" in info:
    awake, ntree = info["awake"]
    imgui.same_line()
    imgui.text(f"   asleep {ntree - awake} of {ntree} trees")
  imgui.text(f"solver iterations {info['niter']}   residual {info['residual']:.3g}")
  from numjoco.engine.types import mjtEnableBit
  flags = int(ui.m.opt.enableflags)
  changed, on = imgui.checkbox("energy", bool(flags & mjtEnableBit.ENERGY))
  if changed:   # the engine fills d.energy (mj_energyPos/Vel) while the flag is set
    cmd.send("opt", "enableflags",
             flags | mjtEnableBit.ENERGY if on else flags & ~mjtEnableBit.ENERGY)
  e = info["energy"]
  imgui.same_line()
  if on:
    imgui.text(f"potential {e[0]:.4g}  kinetic {e[1]:.4g}  total {e[0] + e[1]:.4g}")
  else:
    imgui.text_disabled("(off)")
  for k in ui.plot_sel:
    if k == "sensor" and not ui.m.nsensor:
      continue
    imgui.same_line() if k != "energy" else None
    _, ui.plot_sel[k] = imgui.checkbox(k + "##plot", ui.plot_sel[k])
  if ui.plot_sel.get("joint") and ui.m.njnt:
    _, ui.plot_joint = imgui.combo("plotted joint", ui.plot_joint,
                                   [ui.name("joint", j) for j in range(ui.m.njnt)])
  if ui.plot_sel.get("sensor") and ui.m.nsensor:
    changed, ui.plot_sensor = imgui.combo("plotted sensor", ui.plot_sensor, ui.sensor_labels())
    if changed:
      ui.plot.pop("sensor", None)
      ui.plot_t, ui.plot = [], {}
  if len(ui.plot_t) > 1 and implot.begin_plot("##plots", (-1, 180)):
    implot.setup_axes("time (s)", "", implot.AxisFlags_.auto_fit, implot.AxisFlags_.auto_fit)
    t = np.array(ui.plot_t)
    for k, on in ui.plot_sel.items():
      if on and k in ui.plot:
        implot.plot_line("log10 residual" if k == "residual" else k, t, np.array(ui.plot[k]))
    implot.end_plot()
