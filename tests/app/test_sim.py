"""The simulation worker without a window: pacing, the snapshot hand-over, command semantics."""
import contextlib
import time

import numpy as np
import pytest

import numjoco
from numjoco.app import sim as simmod
from numjoco.app.sim import Simulation

PENDULUM = """<mujoco><worldbody><body pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/></body></worldbody>
  <actuator><motor joint="j" ctrlrange="-1 1"/></actuator></mujoco>"""


@contextlib.contextmanager
def running(model=None, **kw):
  """A started Simulation(model, **kw), stopped when the block ends (also when it fails)."""
  s = Simulation(model, **kw).start()
  try:
    yield s
  finally:
    s.stop()


@pytest.fixture
def model():
  """The small actuated pendulum."""
  return numjoco.load_model(PENDULUM)


def test_slow_motion_never_runs_ahead_of_wall_time(model):
  """At speed 1/10 simulated time stays within wall time / 10 (plus one step): pacing holds
  the worker back however fast it could go; it also advances (the worker runs)."""
  with running(model, speed=0.1) as s:
    s.sync()    # loaded, first snapshot published (loading the kernels may take a while)
    t0 = time.perf_counter()
    with s.snapshot() as snap:
      start = snap.time
    time.sleep(1.0)
    with s.snapshot() as snap:
      t_sim = snap.time - start
    wall = time.perf_counter() - t0
    assert 0 < t_sim <= 0.1 * wall + 2 * model.opt.timestep


def test_as_fast_as_possible_outruns_real_time_pacing(model):
  """Speed inf steps without pacing: more simulated time than at 1x in the same wall time."""
  with running(model, speed=float("inf")) as s:
    s.wait_until(lambda st: st.model_version > 0)
    s.sync()
    t0 = time.perf_counter()
    start = s.snapshot().__enter__().time
    time.sleep(0.5)
    advanced = s.snapshot().__enter__().time - start
    assert advanced > time.perf_counter() - t0   # the pendulum is far cheaper than real time


def test_commands_apply_in_order_between_chunks(model):
  """ctrl, zero_ctrl, qpos and opt edits reach Data/Model in the order sent."""
  with running(model, paused=True) as s:
    s.send("ctrl", 0, 0.7)
    s.send("qpos", 0, 0.3)
    s.send("opt", "timestep", 0.001)
    s.sync()
    assert s.d.ctrl[0] == 0.7 and s.d.qpos[0] == 0.3 and s.m.opt.timestep == 0.001
    s.send("zero_ctrl")
    s.send("step", 10)
    s.sync()
    assert s.d.ctrl[0] == 0.0 and s.d.time == pytest.approx(0.01)
    assert s.opt_edits["timestep"] == 0.001


def test_snapshot_being_read_is_never_rewritten():
  """The double buffer: a reader's snapshot is not handed back to the writer until released."""
  made = []

  def factory():
    made.append(object())
    return made[-1]
  b = simmod._Buffers(factory)
  first = b.back()
  b.publish(first)
  held = b.acquire()
  assert held is first
  for _ in range(5):   # the writer keeps publishing while the reader holds `first`
    nxt = b.back()
    assert nxt is not first
    b.publish(nxt)
  b.release(held)
  assert len(made) <= 3    # buffers are recycled, not allocated per publish


# a soft block (3D elasticity) that can touch a cylinder: loads under the default options
FLEX_BLOCK = """<mujoco><worldbody><geom type="cylinder" size=".1 .1" pos="0 0 -.2"/>
  <flexcomp name="f" type="grid" dim="3" count="3 3 3" spacing=".1 .1 .1" mass="1">
  <contact selfcollide="none"/><elasticity young="1e3"/></flexcomp></worldbody></mujoco>"""


@pytest.mark.parametrize("field,value,why", [
    ("disableflags", int(numjoco.mjtDisableBit.NATIVECCD), "through libccd"),
    ("integrator", int(numjoco.mjtIntegrator.DISCRETE), "under the discrete integrator"),
])
def test_option_edit_refused_where_loading_would_be(field, value, why):
  """An option under which load_model refuses this model (flex collisions needing GJK with
  nativeccd disabled, flex elasticity under the discrete integrator: both not simulated) is
  refused as a live edit too, with an error naming the option, which keeps its value; a
  harmless edit of the same option goes through."""
  m = numjoco.load_model(FLEX_BLOCK)
  with running(m, paused=True) as s:
    before = int(getattr(m.opt, field))
    s.send("opt", field, value)
    st = s.wait_until(lambda st: st.error != "")
    assert f"opt.{field}" in st.error and why in st.error
    assert int(getattr(s.m.opt, field)) == before and field not in s.opt_edits
    s.send("clear_error")
    harmless = (before | int(numjoco.mjtDisableBit.WARMSTART) if field == "disableflags"
                else int(numjoco.mjtIntegrator.RK4))
    s.send("opt", field, harmless)
    s.sync()
    assert s.status().error == "" and int(getattr(s.m.opt, field)) == harmless


def test_unknown_command_is_an_error_shown_in_status(model):
  """A bad command names itself in status.error and pauses the worker (never swallowed)."""
  with running(model) as s:
    s.send("frobnicate")
    st = s.wait_until(lambda st: st.error != "")
    assert "frobnicate" in st.error and st.paused
    s.send("clear_error")
    s.send("pause", False)
    st = s.wait_until(lambda st: st.error == "" and not st.paused)
    assert st.error == ""


def test_divergence_in_a_step_command_is_counted_and_reset(model):
  """A blown-up state inside a chunk is counted once in status, Data is reset and finite."""
  with running(model, paused=True) as s:
    s.sync()

    def poison(m, d):
      d.qvel[0] = 1e300   # the engine detects this one itself
    s.send("call", poison)
    s.send("step", 5)
    st = s.wait_until(lambda st: st.divergences > 0)
    assert st.divergences == 1 and "mjWARN_BADQVEL at dof 0" in st.last_divergence
    s.sync()
    fresh = numjoco.make_data(model)   # reset, and the step finished from there (mj_step)
    numjoco.step(model, fresh)
    np.testing.assert_array_equal(s.d.qpos, fresh.qpos)
    np.testing.assert_array_equal(s.d.qvel, fresh.qvel)
    assert s.d.time == fresh.time and s.status().history == 1


def test_recording_samples_at_fixed_simulation_times(model):
  """While recording, the worker hands over one snapshot per 1/fps of simulated time, whatever
  its chunk sizes (here as fast as possible, with a consumer slower than the worker): frame k
  shows time t0 + k/fps and the same state as an independent run stepped straight to it; the
  end marker follows the last frame and record_span counts them."""
  from numjoco.app.record import frame_step
  fps = 25.0
  with running(model, paused=True, speed=float("inf")) as sim:
    sim.send("ctrl", 0, 0.5)
    sim.send("record_start", fps)
    sim.send("pause", False)
    frames, ended = [], False
    t_end = time.perf_counter() + 60
    while not ended and time.perf_counter() < t_end:
      for item in sim.recorded():
        if item is None:
          ended = True
          break
        k, snap = item
        frames.append((k, snap.time, snap.qpos.copy(), snap.xpos.copy()))
        sim.recycle(snap)
      if len(frames) >= 20 and not ended:
        sim.send("record_stop")
      time.sleep(0.01)
    assert ended
    start, stop, count = sim.record_span
    assert count == len(frames) >= 20 and start == 0.0
    assert [k for k, *_ in frames] == list(range(count))
    d = numjoco.make_data(model)
    d.ctrl[0] = 0.5
    done = 0
    for k, t, qpos, xpos in frames:
      n = frame_step(k, fps, model.opt.timestep)
      numjoco.step(model, d, n - done)
      done = n
      numjoco.forward(model, d)
      assert t == pytest.approx(k / fps, abs=1e-9)
      np.testing.assert_array_equal(qpos, d.qpos)
      np.testing.assert_allclose(xpos, d.xpos, atol=1e-12)


MULTI_INPUT = """<mujoco><worldbody>
  <body pos="0 0 1"><joint name="ball" type="ball"/><geom type="box" size=".1 .05 .02"/>
    <site name="tip" pos=".1 0 0"/>
    <body pos=".2 0 0"><joint name="h" axis="0 1 0"/><geom type="capsule" size=".02 .1"/></body>
  </body><site name="ref" pos="0 0 1"/></worldbody>
  <actuator>
    <motor name="m" joint="h"/>
    <pid name="p" joint="h" kp="2" kv="0.1" input="pos vel"/>
    <orientation name="o" site="tip" refsite="ref" kp="0.5" input="quat"/>
  </actuator></mujoco>"""


def test_multi_input_controls_labels_and_neutral_values():
  """MuJoCo 4's multi-input actuators: one control slider per input, labelled by its actuator
  (name[k]); 'zero all' gives mj_resetCtrl's neutral controls (the identity quaternion of a
  quat-commanded SO3 servo, as MuJoCo's reset), on the worker and in the panel alike."""
  import mujoco
  from numjoco.app.panels import UiState
  m = numjoco.load_model(MULTI_INPUT)
  mjm = mujoco.MjModel.from_xml_string(MULTI_INPUT)
  mjd = mujoco.MjData(mjm)
  assert m.nu == mjm.nu == 7 and m.nactuator == 3   # 1 + 2 + 4 controls
  ui = UiState()
  ui.on_model(m)
  assert [ui.ctrl_label(i) for i in range(m.nu)] == ["m", "p[0]", "p[1]", "o[0]", "o[1]",
                                                     "o[2]", "o[3]"]
  np.testing.assert_array_equal(ui.neutral_ctrl(), mjd.ctrl)
  with running(m, paused=True) as s:
    s.send("ctrl", 3, 0.5)
    s.send("zero_ctrl")
    s.sync()
    np.testing.assert_array_equal(s.d.ctrl, mjd.ctrl)


# MuJoCo 4's plastic springs (hinge, ball, fixed tendon) and motors in three actuator groups,
# one of them stateful (intvelocity integrates an activation)
PLASTIC = """<mujoco>
  <compiler angle="degree"/>
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" stiffness="4" springyield="10" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body name="tip" pos=".3 0 0">
        <joint name="ball" type="ball" stiffness="1" springyield="5" damping="0.02"/>
        <geom type="box" size=".05 .1 .02" pos=".05 0 0"/>
      </body>
    </body>
    <body name="slider" pos="1 0 1">
      <joint name="slide" type="slide" axis="1 0 0" stiffness="20" damping="0.5"/>
      <geom type="sphere" size=".05"/>
    </body>
    <body name="plain" pos="2 0 1">
      <joint name="elastic" type="hinge" axis="1 0 0" stiffness="2"/>
      <geom type="sphere" size=".05" pos="0 0 .1"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t" stiffness="30" springyield="0.02"><joint joint="slide" coef="1"/></fixed>
  </tendon>
  <actuator>
    <motor name="m0" joint="hinge" group="0"/>
    <motor name="m1" joint="slide" group="1"/>
    <motor name="m2" joint="hinge" group="2" gear="0.5"/>
    <intvelocity name="iv" joint="elastic" kp="3" actrange="-1 1" group="1"/>
  </actuator>
</mujoco>"""


def _mj_plastic():
  mujoco = pytest.importorskip("mujoco")
  mm = mujoco.MjModel.from_xml_string(PLASTIC)
  return mujoco, mm, mujoco.MjData(mm)


def test_springyield_edit_mid_run_follows_mujoco():
  """A hinge's and a tendon's springyield edited between chunks (what the Physics panel sends)
  give MuJoCo 4.0's trajectory and plastic state after the same field edits; the edit changes
  the plastic drift (the run without it ends elsewhere)."""
  mujoco, mm, md = _mj_plastic()
  m = numjoco.load_model(PLASTIC)
  ctrl = np.array([1.5, 1.0, 0.0, 0.5])
  with running(m, paused=True) as s:
    for i, u in enumerate(ctrl):
      s.send("ctrl", i, u)
    s.send("step", 150)
    s.send("model", "jnt_springyield", 0, 0.02)
    s.send("model", "tendon_springyield", 0, 0.005)
    s.send("step", 250)
    s.sync()
    md.ctrl[:] = ctrl
    mujoco.mj_step(mm, md, 150)
    plastic_mid = md.plastic.copy()
    mm.jnt_springyield[0] = 0.02
    mm.tendon_springyield[0] = 0.005
    mujoco.mj_step(mm, md, 250)
    d = s.d
    np.testing.assert_allclose(d.plastic, md.plastic, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.qpos, md.qpos, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.qvel, md.qvel, rtol=1e-7, atol=1e-9)
    assert s.edits[("jnt_springyield", 0)] == 0.02
    # the edit mattered: without it MuJoCo's plastic state ends elsewhere
    mm2 = mujoco.MjModel.from_xml_string(PLASTIC)
    md2 = mujoco.MjData(mm2)
    md2.ctrl[:] = ctrl
    mujoco.mj_step(mm2, md2, 400)
    assert np.abs(md2.plastic - md.plastic).max() > 1e-3
    assert np.abs(plastic_mid - md.plastic).max() > 1e-3   # it kept flowing after the edit


@pytest.mark.parametrize("field,index,value,why", [
    ("jnt_springyield", 3, 0.1, "elastic"),     # joint 'elastic' has no plastic state
    ("jnt_springyield", 0, -0.1, ">= 0"),
])
def test_springyield_edit_refused_where_mujoco_would_ignore_it(field, index, value, why):
  """springyield on an elastic joint (no d.plastic entry: MuJoCo ignores it) or a negative one is
  an error naming the field, not a silent no-op."""
  with running(numjoco.load_model(PLASTIC), paused=True) as s:
    s.send("model", field, index, value)
    st = s.wait_until(lambda st: st.error != "")
    assert field in st.error and why in st.error


@pytest.mark.parametrize("groups", [(1,), (0, 2), (0, 1, 2)])
def test_disabled_actuator_groups_give_mujoco_qacc(groups):
  """opt.disableactuator set through the option edit path (what the Controls panel's group
  checkboxes send) while running: the disabled motors give no force, the stateful intvelocity's
  activation stops integrating, and qacc, act and actuator_force equal MuJoCo 4.0's."""
  mujoco, mm, md = _mj_plastic()
  m = numjoco.load_model(PLASTIC)
  ctrl = np.array([1.5, 1.0, 0.7, 0.5])
  bits = sum(1 << g for g in groups)
  with running(m, paused=True) as s:
    for i, u in enumerate(ctrl):
      s.send("ctrl", i, u)
    s.send("step", 50)
    s.send("opt", "disableactuator", bits)
    s.send("step", 100)
    s.sync()
    md.ctrl[:] = ctrl
    mujoco.mj_step(mm, md, 50)
    enabled_force = md.actuator_force.copy()
    mm.opt.disableactuator = bits
    mujoco.mj_step(mm, md, 100)
    d = s.d
    assert s.opt_edits["disableactuator"] == bits
    np.testing.assert_allclose(d.qacc, md.qacc, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(d.act, md.act, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d.actuator_force, md.actuator_force, rtol=1e-8, atol=1e-10)
    off = [a for a in range(m.nu) if m.actuator_group[a] in groups]
    assert np.all(d.actuator_force[off] == 0) and np.all(enabled_force[off] != 0)


BELT = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="belt" type="box" size="1 .3 .05" surfacevel=".01 0 0 0 0 0" adhesion=".01"/>
    <body pos="-.5 0 .151"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/></body>
    <body pos="0 .8 .5"><freejoint/><geom type="mesh" mesh="tet"/></body>
  </worldbody>
  <asset><mesh name="tet" vertex="0 0 0 .2 0 0 0 .2 0 0 0 .2"/></asset>
</mujoco>"""


def test_adhesion_and_surfacevel_edits_follow_mujoco(tmp_path):
  """The Physics panel's geom adhesion and surfacevel edits mid-run (a belt starts moving and
  turns sticky) give MuJoCo 4.0's trajectory after the same field edits, and the saved copy
  carries them. Refused: surfacevel of a mesh geom (stored in the mesh's frame), and either edit
  on a model loaded without any (MuJoCo 4.0 ignores it then: flg_adhesion, flg_surfacevel)."""
  from numjoco.app import export
  mujoco = pytest.importorskip("mujoco")
  mm = mujoco.MjModel.from_xml_string(BELT)
  md = mujoco.MjData(mm)
  path = tmp_path / "belt.xml"
  path.write_text(BELT)
  m = numjoco.load_model(str(path))
  with running(m, paused=True) as s:
    s.send("step", 100)
    s.send("model", "geom_surfacevel", 0, np.array([0.4, 0, 0, 0, 0, 0.5]))
    s.send("model", "geom_adhesion", 0, 2.0)
    s.send("step", 200)
    s.sync()
    mujoco.mj_step(mm, md, 100)
    mm.geom_surfacevel[0] = [0.4, 0, 0, 0, 0, 0.5]
    mm.geom_adhesion[0] = 2.0
    mujoco.mj_step(mm, md, 200)
    d = s.d
    np.testing.assert_allclose(d.qpos, md.qpos, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d.qvel, md.qvel, rtol=1e-6, atol=1e-8)
    assert md.qvel[0] > 0.1      # the belt carries the box: the edit mattered
    out = tmp_path / "copy.xml"
    export.save_copy(m, dict(s.edits), dict(s.opt_edits), out, s.opt0)
    saved = mujoco.MjModel.from_xml_path(str(out))
    np.testing.assert_allclose(saved.geom_surfacevel[0], [0.4, 0, 0, 0, 0, 0.5])
    assert saved.geom_adhesion[0] == 2.0
    s.send("model", "geom_surfacevel", 2, np.ones(6))   # geom 2: the tetrahedron
    st = s.wait_until(lambda st: st.error != "")
    assert "is a mesh" in st.error
  plain = BELT.replace(' surfacevel=".01 0 0 0 0 0" adhesion=".01"', "")
  for field, value in (("geom_adhesion", 2.0), ("geom_surfacevel", np.ones(6))):
    mp = mujoco.MjModel.from_xml_string(plain)
    assert not getattr(mp, "flg_" + field[5:])    # what makes 4.0 ignore the edit
    with running(numjoco.load_model(plain), paused=True) as s:
      s.send("model", field, 0, value)
      st = s.wait_until(lambda st: st.error != "")
      assert "loaded without any" in st.error and field in st.error


POLY = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" stiffness="1"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body pos=".3 0 0">
        <joint name="slide" type="slide" axis="1 0 0" damping=".5"/>
        <geom type="box" size=".05 .05 .05"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="t" stiffness=".2" damping=".1">
    <joint joint="hinge" coef="1"/><joint joint="slide" coef="2"/></fixed></tendon>
  <actuator>
    <motor joint="hinge" gear="2" damping=".3"/>
    <motor joint="slide"/>
  </actuator>
</mujoco>"""

# (field, index, value): every polynomial term, linear tendon/actuator damping, and the damping
# of an actuator that had none when loaded (it reaches the slide once mj_setConst runs)
POLY_EDITS = (("jnt_stiffnesspoly", 0, np.array([2.0, 3.0])), ("dof_damping", 1, 1.0),
              ("dof_dampingpoly", 1, np.array([0.5, 0.2])),
              ("tendon_stiffnesspoly", 0, np.array([0.4, 0.1])), ("tendon_damping", 0, 0.3),
              ("tendon_dampingpoly", 0, np.array([0.2, 0.1])), ("actuator_damping", 0, 0.6),
              ("actuator_dampingpoly", 0, np.array([0.1, 0.05])), ("actuator_damping", 1, 0.4))


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_polynomial_stiffness_and_damping_edits_follow_mujoco(tmp_path, integrator):
  """Physics > Elements edits of the polynomial spring and damper terms (joint, dof, tendon,
  actuator) mid-run give MuJoCo 4.0's trajectory after the same field edits and mj_setConst
  (which routes an actuator's damping to its joint); the saved copy loads in 4.0 with the same
  fields, written as MJCF's stiffness="a b c" / damping="a b c"."""
  from numjoco.app import export
  mujoco = pytest.importorskip("mujoco")
  xml = POLY.replace('timestep="0.002"', f'timestep="0.002" integrator="{integrator}"')
  path = tmp_path / "poly.xml"
  path.write_text(xml)
  mm = mujoco.MjModel.from_xml_path(str(path))
  md = mujoco.MjData(mm)
  plain = mujoco.MjData(mm)
  m = numjoco.load_model(str(path))
  with running(m, paused=True) as s:
    s.send("qpos", 0, 0.8)
    s.send("qpos", 1, 0.2)
    s.send("step", 100)
    for field, i, value in POLY_EDITS:
      s.send("model", field, i, value)
    s.send("step", 300)
    s.sync()
    for dd in (md, plain):
      dd.qpos[:2] = 0.8, 0.2
      mujoco.mj_step(mm, dd, 100)
    mujoco.mj_step(mujoco.MjModel.from_xml_path(str(path)), plain, 300)
    for field, i, value in POLY_EDITS:
      getattr(mm, field)[i] = value
    mujoco.mj_setConst(mm, mujoco.MjData(mm))   # (its Data is scratch: qpos0 and forward)
    mujoco.mj_step(mm, md, 300)
    d = s.d
    np.testing.assert_allclose(d.qpos, md.qpos, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d.qvel, md.qvel, rtol=1e-6, atol=1e-8)
    assert np.abs(md.qpos - plain.qpos).max() > 1e-2    # the edits mattered
    assert mm.jnt_actuatorid[1] == 1                    # the slide's damper, via mj_setConst
    out = tmp_path / "copy.xml"
    export.save_copy(m, dict(s.edits), dict(s.opt_edits), out, s.opt0)
    saved = mujoco.MjModel.from_xml_path(str(out))
    for name in ("jnt_stiffness", "jnt_stiffnesspoly", "dof_damping", "dof_dampingpoly",
                 "tendon_stiffness", "tendon_stiffnesspoly", "tendon_damping",
                 "tendon_dampingpoly", "actuator_damping", "actuator_dampingpoly",
                 "jnt_actuatorid"):
      np.testing.assert_allclose(getattr(saved, name), getattr(mm, name), err_msg=name)
    diff = export.mjcf_diff(m, dict(s.edits), dict(s.opt_edits), s.opt0)
    assert '<joint name="hinge" stiffness="1 2 3"/>' in diff
    assert '<tendon name="t" stiffness="0.2 0.4 0.1" damping="0.3 0.2 0.1"/>' in diff


def test_polynomial_field_in_the_editor_sends_each_changed_part():
  """The editor's "a b c" field: typing one number keeps the linear term and zeroes the rest
  (MJCF's reading); only the parts that changed are sent, each to its Model field."""
  from types import SimpleNamespace

  from numjoco.app.panels import physics

  class Imgui:
    class InputTextFlags_:
      enter_returns_true = 0

    def __init__(self, typed):
      self.typed, self.shown = typed, None

    def input_text(self, label, text, flags):
      self.shown = text
      return True, self.typed

    def get_item_rect_min(self):
      return SimpleNamespace(x=0, y=0)

    get_item_rect_max = get_item_rect_min

  m = numjoco.load_model(POLY)
  sent = []
  sim = SimpleNamespace(send=lambda *a: sent.append(a))
  ui = SimpleNamespace(elem_id=0, rects={})
  m.jnt_stiffnesspoly[0] = 2, 3
  gui = Imgui("1")
  physics._poly_input(gui, ui, sim, m, "stiffness", "jnt_stiffness")
  assert gui.shown == "1 2 3" and "elem_jnt_stiffness" in ui.rects
  assert len(sent) == 1 and sent[0][:3] == ("model", "jnt_stiffnesspoly", 0)
  np.testing.assert_array_equal(sent[0][3], [0, 0])
  sent.clear()
  physics._poly_input(Imgui("4 2 3"), ui, sim, m, "stiffness", "jnt_stiffness")
  assert sent == [("model", "jnt_stiffness", 0, 4.0)]
  sent.clear()
  physics._poly_input(Imgui("1 x"), ui, sim, m, "stiffness", "jnt_stiffness")
  assert sent == []


@pytest.mark.parametrize("field,index,value,why", [
    ("jnt_stiffnesspoly", 0, [1.0, 2.0, 3.0], "expected 2 finite numbers"),
    ("dof_dampingpoly", 5, [1.0, 2.0], "the model has 2 entries"),
    ("tendon_damping", 0, float("nan"), "expected 1 finite numbers")])
def test_polynomial_edit_of_wrong_shape_is_a_clear_error(field, index, value, why):
  """A polynomial edit with the wrong count of terms, a missing element or a non-finite value
  is refused with a message naming the field (the Model is left as it was)."""
  m = numjoco.load_model(POLY)
  before = getattr(m, field).copy()
  with running(m, paused=True) as s:
    s.send("model", field, index, value)
    st = s.wait_until(lambda st: st.error != "")
    assert field in st.error and why in st.error
    np.testing.assert_array_equal(getattr(m, field), before)


_OPTION_COMPILE = r"""
import json, sys, time
from numjoco.app.sim import Simulation
from numjoco.engine import _jit
from numjoco.engine.types import mjtIntegrator
sim = Simulation(path=sys.argv[1], paused=False).start()
sim.wait_until(lambda st: st.physics and st.steps_per_s > 0, timeout=120)
rk4 = _jit.units()["numjoco.engine.step.rk4"]
linked_before = rk4.linked
sim.send("opt", "integrator", int(mjtIntegrator.RK4))
notes = set()
t0 = time.time()
while time.time() - t0 < 300:
  st = sim.status()
  if st.compiling:
    notes.add(st.compile_note)
  if rk4.linked and sim.m.opt.integrator == int(mjtIntegrator.RK4) and not st.compiling:
    break
  time.sleep(0.005)
time.sleep(0.3)
st = sim.wait_until(lambda st: st.steps_per_s > 0, timeout=30)
sim.stop()
print(json.dumps({"linked_before": linked_before, "linked": rk4.linked,
                  "hits": rk4.disp._cache.hits, "notes": sorted(notes),
                  "error": st.error, "running": st.steps_per_s > 0}))
"""


def test_an_option_edit_compiles_its_missing_unit_in_another_process(tmp_path):
  """The RK4 stage is not in the cache: switching the integrator compiles it with
  `python -m numjoco.engine.build` while the worker waits (status.compiling, its progress line),
  and the worker then loads it from the cache: compiled on its own thread, it would hold the
  GIL and stall the window for seconds."""
  import json
  import os
  import shutil
  import subprocess
  import sys

  from numjoco.assets import DEMO_MODEL
  from numjoco.engine import _cache
  src = _cache.cache_dir()
  dst = tmp_path / "kernels"
  dst.mkdir()
  for name in os.listdir(src):
    if name.startswith("numjoco.engine.step.rk4-"):
      continue                               # the unit itself; its helpers stay cached
    try:
      os.link(os.path.join(src, name), dst / name)
    except OSError:
      shutil.copy2(os.path.join(src, name), dst / name)
  env = dict(os.environ, NUMJOCO_CACHE_DIR=str(tmp_path))
  r = subprocess.run([sys.executable, "-c", _OPTION_COMPILE, str(DEMO_MODEL)], env=env,
                     capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-3000:]
  out = json.loads(r.stdout.strip().splitlines()[-1])
  assert not out["linked_before"] and out["linked"]
  assert out["hits"] >= 1                   # loaded from the cache, not compiled here
  assert "compiling engine units [0/1]" in out["notes"], out["notes"]
  assert out["error"] == "" and out["running"]
