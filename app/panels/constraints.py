"""Constraints panel: the constraint inspector. A table of the active constraints (app/inspector.py
builds it on the worker while this section is open), and for the selected one its rows, its
solref/solimp as stored and as used, the impedance curve d(r) with the operating point, its force
over the last seconds, and solref/solimp fields that send the "model" (or "opt") command.

app/inspector.py is imported when the section is first drawn or a constraint selected (it needs
the engine's enums: the window comes up before the engine is imported).

The selection is an identity (inspector.key: a contact's geom pair, else the element), followed
from table to table: a contact among its pair's contacts by nearest position. The force history
is kept here, per selection, over the last HISTORY_SECONDS of simulated time.
"""
import numpy as np

from numjoco.app.panels.common import YELLOW, rect, vec_input

HISTORY_SECONDS = 5.0
TABLE_HEIGHT = 180
COLUMNS = ("#", "kind", "objects", "pos", "margin", "d(r)", "R", "aref", "force", "state")
ROW_COLUMNS = ("row", "efc_pos", "margin", "vel", "R", "aref", "force", "state")


class InspectorState:
  """What the inspector remembers between frames."""

  def __init__(self):
    self.active = False      # the section is open: the worker publishes the table
    self.key = None          # identity of the selected constraint (inspector.key)
    self.point = None        # the selected contact's last position (to follow it)
    self.current = -1        # its index in the newest table, -1 when it is not active
    self.table = None        # the newest table seen
    self.target = -1         # chosen edit target (-1: the default; len(targets): all of them)
    self.t = []              # force history: simulated times ...
    self.series = {}         # ... and label -> values

  def select(self, key, point=None):
    """Select the constraint with identity `key` (a contact: the one nearest `point`)."""
    from numjoco.app import inspector
    if key != self.key:
      self.t, self.series, self.target = [], {}, -1
    self.key, self.point = key, None if point is None else np.asarray(point, float)
    self.current = -1 if self.table is None else inspector.find(self.table, key, self.point)


def set_active(ui, cmd, on):
  """The section opened or closed: the worker publishes the table only while it is open."""
  if on != ui.inspector.active:
    ui.inspector.active = on
    cmd.send("inspect", on)


def record(ui, info):
  """Follow the selection into the newest table and add its forces to the history."""
  st = ui.inspector
  table = info.get("constraints") if info is not None else None
  if table is None or table is st.table:
    return
  from numjoco.app import inspector
  st.table = table
  if st.key is None:
    return
  k = st.current = inspector.find(table, st.key, st.point)
  if k >= 0 and st.key[0] == "contact":
    st.point = inspector.contact_point(table, k)
  if st.t and table.time <= st.t[-1]:
    if table.time == st.t[-1]:
      return
    st.t, st.series = [], {}     # time went back: a reset, a load, the history
  if k < 0 and not st.series:
    return                       # not active since it was selected: nothing to plot yet
  # an inactive constraint pulls with no force
  vals = inspector.forces(table, k) if k >= 0 else dict.fromkeys(st.series, 0.0)
  st.t.append(table.time)
  for name, v in vals.items():
    st.series.setdefault(name, [0.0] * (len(st.t) - 1)).append(v)
  for v in st.series.values():
    v.extend([0.0] * (len(st.t) - len(v)))
  drop = int(np.searchsorted(st.t, table.time - HISTORY_SECONDS))
  if drop:
    del st.t[:drop]
    for v in st.series.values():
      del v[:drop]


def edit(ui, cmd, what, value):
  """Send an edit of the selected constraint's `what` ('solref' or 'solimp') to the chosen
  target (or to every target: a contact's two geoms)."""
  from numjoco.app import inspector
  st = ui.inspector
  if st.table is None or st.current < 0:
    return
  targets, best, _ = inspector.targets(ui.m, st.table, st.current)
  choice = best if st.target < 0 else st.target
  for t in targets if choice >= len(targets) else targets[choice:choice + 1]:
    field = getattr(t, what)
    if t.command == "opt":
      cmd.send("opt", field, np.asarray(value, float))
    else:
      cmd.send("model", field, t.index, np.asarray(value, float))


def draw(imgui, ui, cmd, info):
  """The Constraints section."""
  st = ui.inspector
  table = info.get("constraints") if info is not None else None
  if table is None:
    imgui.text_disabled("collecting the constraints...")
    return
  imgui.text(f"{len(table)} constraints, {table.nefc} rows")
  imgui.same_line()
  imgui.text_disabled("(click a contact point in the view, C shows them)")
  _table(imgui, ui, table)
  if st.key is None:
    imgui.text_disabled("select a constraint in the table")
    return
  k = st.current
  if k < 0:
    imgui.text_colored(YELLOW, f"{st.key[0]} {st.key[1:]}: not active now")
  else:
    _details(imgui, ui, table, k)
    _curve(imgui, table, k)
  _history(imgui, st)
  if k >= 0:
    _editor(imgui, ui, cmd, table, k)


def _fmt(x):
  return f"{x:.4g}"


def _table(imgui, ui, table):
  """The active constraints, one selectable row each (clipped to the visible rows)."""
  from numjoco.app import inspector
  st = ui.inspector
  if not imgui.begin_table("##constraints", len(COLUMNS), _flags(imgui, True), (0, TABLE_HEIGHT)):
    return
  imgui.table_setup_scroll_freeze(1, 1)
  for c in COLUMNS:
    imgui.table_setup_column(c)
  imgui.table_headers_row()
  clip = imgui.ListClipper()
  clip.begin(len(table))
  efc = table.efc
  while clip.step():
    for k in range(clip.display_start, clip.display_end):
      a = int(table.adr[k])
      imgui.table_next_row()
      imgui.table_next_column()
      clicked, _ = imgui.selectable(f"{k}##c{k}", k == st.current,
                                    imgui.SelectableFlags_.span_all_columns)
      if clicked:
        st.select(inspector.key(table, k), inspector.contact_point(table, k))
      cells = (inspector.KINDS[int(table.type[k])].replace("_", " "),
               inspector.objects(ui.m, table, k), _fmt(efc["pos"][a]), _fmt(efc["margin"][a]),
               _fmt(efc["KBIP"][a, 2]), _fmt(efc["R"][a]), _fmt(efc["aref"][a]),
               _fmt(inspector.force(table, k)), inspector.state(table, k))
      for text in cells:
        imgui.table_next_column()
        imgui.text(text)
  imgui.end_table()


def _flags(imgui, scroll_y):
  """A table with borders and columns as wide as their content, scrolled sideways."""
  f = imgui.TableFlags_
  return (f.borders | f.row_bg | f.resizable | f.sizing_fixed_fit | f.scroll_x
          | (f.scroll_y if scroll_y else 0))


def _details(imgui, ui, table, k):
  """The selected constraint: what it is, its rows, its impedance and solver parameters."""
  from numjoco.app import inspector
  a, n = int(table.adr[k]), int(table.nrow[k])
  kb = table.efc["KBIP"][a]
  imgui.text(f"{inspector.KINDS[int(table.type[k])].replace('_', ' ')}: "
             f"{inspector.objects(ui.m, table, k)}")
  bodies = inspector.bodies(ui.m, table, k)
  if bodies:
    imgui.text_disabled(f"bodies {bodies}")
  ref, reff, imp = inspector.solparams(table, k)
  imgui.text(f"r = pos - margin = {_fmt(table.r[k])}   d(r) = {kb[2]:.6g}")
  imgui.text(f"stiffness k = {_fmt(kb[0])}   damping b = {_fmt(kb[1])}")
  imgui.text(f"solref {_vec(table.solref[k])}   (used: {_vec(ref)})")
  if np.any(table.solreffriction[k]):
    imgui.text(f"solreffriction {_vec(table.solreffriction[k])}   (used: {_vec(reff)})")
  used = "" if np.array_equal(imp, table.solimp[k]) else f"   (used: {_vec(imp)})"
  imgui.text(f"solimp {_vec(table.solimp[k])}{used}")
  height = (imgui.get_text_line_height_with_spacing() * (n + 1)
            + imgui.get_style().scrollbar_size + 8)
  if imgui.begin_table("##rows", len(ROW_COLUMNS), _flags(imgui, False), (0, height)):
    for c in ROW_COLUMNS:
      imgui.table_setup_column(c)
    imgui.table_headers_row()
    efc = table.efc
    for r in range(a, a + n):
      imgui.table_next_row()
      cells = (str(r), _fmt(efc["pos"][r]), _fmt(efc["margin"][r]), _fmt(efc["vel"][r]),
               _fmt(efc["R"][r]), _fmt(efc["aref"][r]), _fmt(efc["force"][r]),
               inspector.STATES.get(int(efc["state"][r]), "?"))
      for text in cells:
        imgui.table_next_column()
        imgui.text(text)
    imgui.end_table()


def _vec(v):
  return " ".join(f"{x:.4g}" for x in np.ravel(v))


def plots():
  """implot (imported when first drawn)."""
  from imgui_bundle import implot
  return implot


def _curve(imgui, table, k):
  """The impedance curve d(r) of the solimp in use, with the constraint's operating point."""
  from numjoco.app import inspector
  implot = plots()
  imp = inspector.solparams(table, k)[2]
  r = abs(float(table.r[k]))
  span = max(1.5 * imp[2], 1.2 * r, 1e-9)
  x = np.linspace(0.0, span, 200)
  if implot.begin_plot("impedance d(r)##imp", (-1, 150)):
    implot.setup_axes("|r| = |pos - margin|", "d", implot.AxisFlags_.auto_fit,
                      implot.AxisFlags_.auto_fit)
    implot.plot_line("d(r)", x, inspector.impedance(imp, x))
    implot.plot_scatter("now", np.array([r]), np.array([table.efc["KBIP"][table.adr[k], 2]]),
                        implot.Spec(marker=implot.Marker_.circle, marker_size=5))
    implot.end_plot()


def _history(imgui, st):
  """The selected constraint's force over the last seconds."""
  implot = plots()
  if len(st.t) < 2:
    return
  if implot.begin_plot("force##hist", (-1, 150)):
    implot.setup_axes("time (s)", "force", implot.AxisFlags_.auto_fit, 0)
    lo = min(0.0, *(min(v) for v in st.series.values()))
    hi = max(0.0, *(max(v) for v in st.series.values()))
    pad = 0.1 * (hi - lo) or 1.0      # a margin around the lines (a constant force too)
    implot.setup_axis_limits(implot.ImAxis_.y1, lo - pad, hi + pad, implot.Cond_.always)
    t = np.array(st.t)
    for name, v in st.series.items():
      implot.plot_line(name, t, np.array(v))
    implot.end_plot()


def _editor(imgui, ui, cmd, table, k):
  """solref / solimp of the element the constraint takes them from, sent as edits."""
  from numjoco.app import inspector
  st = ui.inspector
  targets, best, note = inspector.targets(ui.m, table, k)
  if note:
    imgui.text_wrapped(note)
  if not targets:
    return
  names = [f"{t.label} (weight {t.weight:.3g})" if len(targets) > 1 else t.label
           for t in targets]
  if len(targets) > 1:
    names.append("both")
  choice = best if st.target < 0 else min(st.target, len(names) - 1)
  if len(names) > 1:
    changed, choice = imgui.combo("edit##insp_target", choice, names)
    if changed:
      st.target = choice
  else:
    imgui.text(f"edits go to {names[0]}")
  shown = targets[min(choice, len(targets) - 1)]
  for what in ("solref", "solimp"):
    field = getattr(shown, what)
    cur = getattr(ui.m.opt, field) if shown.command == "opt" else getattr(ui.m, field)[shown.index]
    new = vec_input(imgui, f"{what}##insp_{what}", cur)
    rect(imgui, ui, f"insp_{what}")
    if new is not None:
      edit(ui, cmd, what, new)
