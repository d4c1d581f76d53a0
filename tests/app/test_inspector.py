"""The constraint inspector (app/inspector.py, app/panels/constraints.py): its numbers against
MuJoCo's efc_* fields for the same state, its impedance curve against MuJoCo's impedances and the
formula of MuJoCo's documentation, and in the window: a click on a contact point selects it, an
edit from the inspector reaches the Model, the force history grows."""
import numpy as np
import pytest

from tests.app.conftest import run_until

# a box resting on a plane (mixed solref/solimp, solmix 2, a margin), a ball that touches the
# plane only through an explicit <pair>, a hinge at its limit, a slide with friction loss, a
# body hanging from a connect
SCENE = """
<mujoco>
  <option timestep="0.002" cone="{cone}"/>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1"/>
    <body name="box" pos="0 0 0.12"><freejoint/>
      <geom name="box" type="box" size="0.1 0.1 0.1" margin="0.001" solmix="2"
            solref="0.05 0.8" solimp="0.8 0.95 0.002 0.4 3"/></body>
    <body name="ball" pos="0.5 0 0.06"><freejoint/>
      <geom name="ball" type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
    <body name="arm" pos="1 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" range="-20 20" solreflimit="0.003 1.2"
             solimplimit="0.85 0.99 0.01 0.5 2"/>
      <geom name="arm" type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
      <body name="tip" pos="0.4 0 0"><joint name="slide" type="slide" frictionloss="0.5"/>
        <geom name="tip" type="sphere" size="0.05"/></body>
    </body>
    <body name="hanging" pos="-1 0 1"><freejoint/><geom type="sphere" size="0.05"/></body>
  </worldbody>
  <contact><pair name="ballfloor" geom1="ball" geom2="floor" condim="4" solref="0.03 1"/></contact>
  <equality>
    <connect name="hook" body1="hanging" body2="world" anchor="0 0 0.1" solref="0.04 1"
             solimp="0.7 0.9 0.02 0.5 2"/>
  </equality>
</mujoco>
"""


def _same_state(xml, steps=300):
  """MuJoCo stepped `steps` times and forwarded, and our Model/Data forwarded at its state."""
  mujoco = pytest.importorskip("mujoco")
  import numjoco
  from numjoco.engine import interop
  mm = mujoco.MjModel.from_xml_string(xml)
  md = mujoco.MjData(mm)
  mujoco.mj_step(mm, md, steps)
  mujoco.mj_forward(mm, md)
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(md, d)
  numjoco.forward(m, d)
  return mujoco, mm, md, m, d


def _mujoco_constraint_starts(mm, md):
  """First row of each constraint, from MuJoCo's rows: a contact's efc_address, a connect's
  first of 3 rows, every row of the one-row kinds."""
  starts, i = [], 0
  while i < md.nefc:
    starts.append(i)
    t = md.efc_type[i]
    if t == 0:                               # mjCNSTR_EQUALITY, connect here
      i += 3
    elif t in (6, 7):                        # pyramidal, elliptic
      dim = md.contact.dim[md.efc_id[i]]
      i += 2 * (dim - 1) if t == 6 else dim
    else:
      i += 1
  return starts


def _mujoco_r(mm, md, a, n):
  """MuJoCo's violation for the impedance (getposdim): the norm of a connect's rows, else the
  row's pos; minus the margin."""
  pos = np.linalg.norm(md.efc_pos[a:a + n]) if md.efc_type[a] == 0 else md.efc_pos[a]
  return pos - md.efc_margin[a]


def _kb(solref, dmax):
  """k and b of a solref as MuJoCo's documentation gives them (Solver parameters: positive
  timeconst and dampratio, or negative stiffness and damping)."""
  if solref[0] > 0:
    tau, zeta = solref
    return 1 / (dmax ** 2 * tau ** 2 * zeta ** 2), 2 / (dmax * tau)
  return -solref[0] / dmax ** 2, -solref[1] / dmax


def _close(a, b, what):
  a, b = np.asarray(a, float), np.asarray(b, float)
  np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(b).max(initial=0)),
                             err_msg=what)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_the_numbers_shown_are_mujocos(cone):
  """Every number the inspector shows for each constraint (rows grouped as MuJoCo groups them)
  equals MuJoCo's for the same state: efc_pos, margin, d(r), k, b, R, aref, force, state, the
  contact's normal force, solref/solimp; the box's contact selected by its geom pair and point."""
  from numjoco.app import inspector
  from numjoco.app.panels.constraints import InspectorState
  mujoco, mm, md, m, d = _same_state(SCENE.format(cone=cone))
  table = inspector.build(m, d)
  np.testing.assert_array_equal(table.adr, _mujoco_constraint_starts(mm, md))
  box, floor = (mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_GEOM, n) for n in ("box", "floor"))
  kinds = set()
  for k in range(len(table)):
    a, n = int(table.adr[k]), int(table.nrow[k])
    rows = slice(a, a + n)
    t, i = int(md.efc_type[a]), int(md.efc_id[a])
    assert (int(table.type[k]), int(table.id[k])) == (t, i)
    kinds.add(inspector.KINDS[t])
    for field in ("pos", "margin", "vel", "R", "aref", "force", "KBIP"):
      _close(table.efc[field][rows], getattr(md, "efc_" + field)[rows], f"{k} efc_{field}")
    np.testing.assert_array_equal(table.efc["state"][rows], md.efc_state[rows])
    assert inspector.state(table, k) == "/".join(dict.fromkeys(
        mujoco.mjtConstraintState(s).name[len("mjCNSTRSTATE_"):].lower()
        for s in md.efc_state[rows]))
    _close(table.r[k], _mujoco_r(mm, md, a, n), f"{k} r")
    # the element's solref/solimp, and as used: the impedance and k, b they give are MuJoCo's
    if t >= 5:
      src_ref, src_imp = md.contact.solref[i], md.contact.solimp[i]
      frc = np.zeros(6)
      mujoco.mj_contactForce(mm, md, i, frc)
      _close(inspector.force(table, k), frc[0], f"{k} normal force")
    else:
      field = {0: "eq", 1: "dof", 3: "jnt"}[t]
      src_ref, src_imp = getattr(mm, field + "_solref")[i], getattr(mm, field + "_solimp")[i]
    _close(table.solref[k], src_ref, f"{k} solref")
    _close(table.solimp[k], src_imp, f"{k} solimp")
    ref, _, imp = inspector.solparams(table, k)
    _close(inspector.impedance(imp, table.r[k]), md.efc_KBIP[a, 2], f"{k} d(r)")
    kb = _kb(ref, imp[1])
    _close(md.efc_KBIP[a, 1], kb[1], f"{k} b")
    if t != 1:   # a friction row has no stiffness
      _close(md.efc_KBIP[a, 0], kb[0], f"{k} k")
  assert kinds == {"equality", "friction_dof", "limit_joint", "contact_" + cone}
  # the box's contact nearest its first contact point, as a click on that point selects it
  c = next(c for c in range(md.ncon) if {md.contact.geom[c][0], md.contact.geom[c][1]}
           == {box, floor})
  st = InspectorState()
  st.table = table
  st.select(("contact", *map(int, md.contact.geom[c])), md.contact.pos[c])
  k = st.current
  assert int(table.id[k]) == c and inspector.objects(m, table, k) == "floor / box"
  assert inspector.bodies(m, table, k) == "world / box"


def test_contact_edit_targets_follow_mj_contactParam():
  """A geom contact of equal priority offers both geoms with their solmix weights (default:
  the heavier), an explicit pair its pair, the override flag the options; the mixed solref and
  solimp MuJoCo stores for the contact are the weighted sums of the offered geoms' values."""
  from numjoco.app import inspector
  mujoco, mm, md, m, d = _same_state(SCENE.format(cone="pyramidal"))
  table = inspector.build(m, d)
  by_objects = {inspector.objects(m, table, k): k for k in range(len(table))}
  k = by_objects["floor / box"]
  targets, best, _ = inspector.targets(m, table, k)
  assert [(t.solref, t.index) for t in targets] == [("geom_solref", 0), ("geom_solref", 1)]
  assert targets[best].index == 1          # the box: solmix 2 against the floor's 1
  mixed = sum(t.weight * mm.geom_solimp[t.index] for t in targets)
  _close(md.contact.solimp[table.id[k]], mixed, "mixed solimp")
  mixed = sum(t.weight * mm.geom_solref[t.index] for t in targets)
  _close(md.contact.solref[table.id[k]], mixed, "mixed solref")
  targets, _, _ = inspector.targets(m, table, by_objects["floor / ball"])
  assert [(t.solref, t.solimp, t.index) for t in targets] == [("pair_solref", "pair_solimp", 0)]
  assert inspector.targets(m, table, by_objects["hinge"])[0][0].solref == "jnt_solref"
  from numjoco.engine.types import mjtEnableBit
  m.opt.enableflags = int(m.opt.enableflags) | int(mjtEnableBit.OVERRIDE)
  targets, _, _ = inspector.targets(m, inspector.build(m, d), k)
  assert [(t.command, t.solref) for t in targets] == [("opt", "o_solref")]


@pytest.mark.parametrize("solimp", [(0.2, 0.95, 0.05, 0.3, 3), (0.5, 0.9, 0.04, 0.5, 1),
                                    (0.9, 0.99, 0.02, 0.7, 2), (0.6, 0.6, 0.03, 0.5, 2)])
def test_impedance_curve_matches_mujoco_and_its_formula(solimp):
  """d(r) at several violations of a joint limit (with a margin) equals MuJoCo's efc_KBIP
  impedance; and the formula of MuJoCo's documentation: dmin at 0, dmax from the width on,
  dmin + midpoint (dmax - dmin) at the midpoint, and the power law below it."""
  mujoco = pytest.importorskip("mujoco")
  from numjoco.app import inspector
  xml = f"""<mujoco><worldbody><body><joint name="j" type="slide" range="-1 1" margin="0.01"
    solimplimit="{' '.join(map(str, solimp))}"/><geom size="0.1"/></body></worldbody></mujoco>"""
  mm = mujoco.MjModel.from_xml_string(xml)
  md = mujoco.MjData(mm)
  r_all, d_all = [], []
  for over in np.linspace(-0.009, 0.08, 23):
    md.qpos[0] = 1 + over
    mujoco.mj_forward(mm, md)
    assert md.nefc == 1
    r_all.append(md.efc_pos[0] - md.efc_margin[0])
    d_all.append(md.efc_KBIP[0, 2])
  _close(inspector.impedance(inspector.used_solimp(solimp), r_all), d_all, "d(r) vs MuJoCo")
  dmin, dmax, width, mid, power = solimp
  d = inspector.impedance(solimp, [0.0, width, 2 * width, -mid * width, 0.5 * mid * width])
  expect = [dmin, dmax, dmax, dmin + mid * (dmax - dmin),
            dmin + (dmax - dmin) * (0.5 * mid) ** power / mid ** (power - 1)]
  if dmin == dmax:
    expect = [dmin] * 5
  _close(d, expect, "d(r) vs the documented formula")


def test_the_panel_draws_the_selected_constraint(monkeypatch):
  """The Constraints section of the selected hinge limit shows MuJoCo's numbers (as formatted
  for display) and an edit from its solref field sends the "model" command for jnt_solref."""
  from numjoco.app import inspector, panels
  from numjoco.app.panels import constraints
  mujoco, mm, md, m, d = _same_state(SCENE.format(cone="pyramidal"))
  ui = panels.UiState()
  ui.on_model(m)
  table = inspector.build(m, d)
  hinge = next(k for k in range(len(table)) if int(table.type[k]) == 3)
  ui.inspector.select(inspector.key(table, hinge))
  cmd = panels.CommandSink()
  monkeypatch.setattr(constraints, "plots", lambda: _Imgui({}))   # no implot context here
  constraints.record(ui, {"constraints": table})
  fake = _Imgui({"solref##insp_solref": "0.05 1.5"})
  constraints.draw(fake, ui, cmd, {"constraints": table})
  a = int(table.adr[hinge])
  for value in (md.efc_pos[a], md.efc_R[a], md.efc_aref[a], md.efc_force[a]):
    assert f"{value:.4g}" in fake.texts
  assert f"{md.efc_KBIP[a, 2]:.6g}" in " ".join(fake.texts)
  assert cmd.sent == [("model", "jnt_solref", int(md.efc_id[a]), pytest.approx([0.05, 1.5]))]


class _Imgui:
  """Enough of imgui for a panel to draw into: texts are kept, input_text returns `typed`."""

  def __init__(self, typed):
    self.typed, self.texts = typed, []

  def text(self, s):
    self.texts.append(s)

  text_disabled = text_wrapped = text

  def text_colored(self, col, s):
    self.texts.append(s)

  def begin_table(self, *a):
    return True

  def begin_plot(self, *a):
    return False

  def selectable(self, label, sel, *a):
    return False, sel

  def input_text(self, label, text, *a):
    return (True, self.typed[label]) if label in self.typed else (False, text)

  def combo(self, label, cur, items):
    return False, cur

  def get_item_rect_min(self):
    from types import SimpleNamespace
    return SimpleNamespace(x=0, y=0)

  get_item_rect_max = get_item_rect_min

  def __getattr__(self, name):   # flags, enums, drawing calls: accepted, draw nothing
    return _Clipper if name == "ListClipper" else _Anything()


class _Anything:
  """Any attribute, call, flag combination or sum of sizes."""

  def __getattr__(self, name):
    return self

  def __call__(self, *a, **k):
    return self

  def __or__(self, other):
    return self

  __add__ = __radd__ = __mul__ = __rmul__ = __or__


class _Clipper:
  def begin(self, n):
    self.n, self.done = n, False

  def step(self):
    self.display_start, self.display_end = 0, self.n
    self.done, was = True, self.done
    return not was


def _frames(v, n):
  for _ in range(n):
    v.frame()


def test_click_a_contact_edit_it_and_watch_its_force(open_viewer, tmp_path):
  """With contact points shown (C), a click on the resting ball's contact point selects that
  contact in the inspector (its section opens, the worker publishes the table); its normal force
  is the ball's weight and its history grows as the simulation runs; a solref typed into the
  inspector's field reaches the ball geom's geom_solref (the default target: the moving geom,
  same solmix as the floor)."""
  from pyglet.window import key, mouse
  from numjoco.app import inspector
  from tests.app.test_viewer import BALL
  path = tmp_path / "ball.xml"
  path.write_text(BALL)
  v = open_viewer(str(path), width=900, height=760)
  run_until(v, lambda: v.sim.snapshot().__enter__().time > 0.5, "the ball never settled")
  v.window.dispatch_event("on_key_press", key.C, 0)
  v.frame()
  w, h = v.window.get_size()
  with v.sim.snapshot() as snap:
    assert snap.ncon == 1
    x, y = v.renderer.project(snap.contact_pos[0], v.camera, w, h, snap)[0]
    geoms = tuple(int(g) for g in snap.contact_geom[0])
  for event in ("on_mouse_press", "on_mouse_release"):   # right of the panel, 2 px off
    v.window.dispatch_event(event, int(round(x)) + 2, int(round(h - y)), mouse.LEFT, 0)
    v.frame()
  st = v.ui.inspector
  assert st.key == ("contact", *geoms)
  run_until(v, lambda: st.active and st.current >= 0 and len(st.t) > 5, "no inspector table",
            timeout=60)
  assert inspector.objects(v.ui.m, st.table, st.current) == "floor / ball"
  weight = float(v.sim.m.body_mass[1]) * 9.81
  assert st.series["normal"][-1] == pytest.approx(weight, rel=0.02)
  n0, t0 = len(st.t), st.t[-1]
  run_until(v, lambda: st.t[-1] > t0 + 0.2, "the force history stopped", timeout=60)
  assert len(st.t) > n0
  # the inspector's solref field: scroll the panel until it is in view, then type into it
  run_until(v, lambda: "insp_solref" in v.ui.rects, "no solref field", timeout=30)
  for _ in range(40):
    if v.ui.rects["insp_solref"][3] < v.ui.rects["panels"][3] - 10:
      break
    v.window.dispatch_event("on_mouse_motion", 100, h - 200, 0, 0)
    v.window.dispatch_event("on_mouse_scroll", 100, h - 200, 0, -3)
    _frames(v, 2)
  x0, y0, x1, y1 = v.ui.rects["insp_solref"]
  cx, cy = int(x0 + 20), int(h - (y0 + y1) / 2)
  v.window.dispatch_event("on_mouse_motion", cx, cy, 0, 0)
  v.frame()
  v.window.dispatch_event("on_mouse_press", cx, cy, mouse.LEFT, 0)
  v.frame()
  v.window.dispatch_event("on_mouse_release", cx, cy, mouse.LEFT, 0)
  _frames(v, 2)
  for symbol, event in ((key.LCTRL, "on_key_press"), (key.A, "on_key_press"),
                        (key.A, "on_key_release"), (key.LCTRL, "on_key_release")):
    v.window.dispatch_event(event, symbol, key.MOD_CTRL)   # Ctrl+A: select the field's text
    v.frame()
  v.window.dispatch_event("on_text", "0.1 1")
  v.frame()
  v.window.dispatch_event("on_key_press", key.ENTER, 0)
  v.frame()
  v.window.dispatch_event("on_key_release", key.ENTER, 0)
  _frames(v, 2)
  v.sim.sync()
  assert v.sim.m.geom_solref[1].tolist() == [0.1, 1.0]
  assert v.sim.m.geom_solref[0].tolist() == [0.02, 1.0]      # the floor keeps its own
  assert v.sim.edits[("geom_solref", 1)].tolist() == [0.1, 1.0]


EDITED = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="a" pos="0 0 1"><joint type="slide" frictionloss="0.1"/>
      <geom name="ga" type="sphere" size="0.1"/><site name="sa"/></body>
    <body name="b" pos="1 0 1"><freejoint/><geom name="gb" type="sphere" size="0.1"/>
      <site name="sb"/></body>
  </worldbody>
  <contact><pair geom1="gb" geom2="ga"/><pair name="af" geom1="ga" geom2="floor"/></contact>
  <tendon>
    <spatial name="t" limited="true" range="0 2" frictionloss="0.2">
      <site site="sa"/><site site="sb"/></spatial>
  </tendon>
</mujoco>
"""


def test_fields_only_the_inspector_edits_are_exported(tmp_path):
  """pair, dof friction and tendon limit/friction solref/solimp edits go through the worker's
  "model" command into the MJCF diff and a saved copy that MuJoCo loads with the edited values
  (the compiler sorts pairs by their bodies: pair 1 is the document's first <pair>)."""
  mujoco = pytest.importorskip("mujoco")
  from numjoco.app import export
  from numjoco.app.sim import Simulation
  path = tmp_path / "edited.xml"
  path.write_text(EDITED)
  sim = Simulation(path=str(path), paused=True).start()
  try:
    sim.wait_until(lambda st: st.model_version > 0)
    edits = {("pair_solref", 1): [0.05, 0.9], ("pair_solimp", 0): [0.8, 0.9, 0.01, 0.4, 3],
             ("dof_solref", 0): [0.03, 1.1], ("tendon_solref_lim", 0): [0.06, 1.3],
             ("tendon_solimp_fri", 0): [0.7, 0.8, 0.02, 0.5, 2]}
    for (field, i), value in edits.items():
      sim.send("model", field, i, np.array(value))
    out, diff = tmp_path / "copy.xml", []
    sim.send("call", lambda m, d: diff.append((
        export.mjcf_diff(m, dict(sim.edits), {}),
        export.save_copy(m, dict(sim.edits), {}, out))))
    sim.sync()
  finally:
    sim.stop()
  text, skipped = diff[0]
  assert skipped == []
  assert '<pair geom1="ga" geom2="gb" solref="0.05 0.9"/>' in text
  assert '<pair name="af" solimp="0.8 0.9 0.01 0.4 3"/>' in text
  mm = mujoco.MjModel.from_xml_path(str(out))
  for (field, i), value in edits.items():
    np.testing.assert_allclose(getattr(mm, field)[i], value, err_msg=field)
  orig = mujoco.MjModel.from_xml_string(EDITED)
  np.testing.assert_allclose(mm.pair_solref[0], orig.pair_solref[0])
  np.testing.assert_allclose(mm.pair_solimp[1], orig.pair_solimp[1])
