"""What the viewer writes out: `<key>` snippets and edited models, read back by MuJoCo itself."""
import numpy as np
import pytest

import numjoco
from numjoco.app import export
from numjoco.app.sim import Simulation, key_snippet

mujoco = pytest.importorskip("mujoco")

XML = """
<mujoco>
  <compiler angle="degree"/>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="a" pos="0 0 1">
      <joint name="h1" type="hinge" axis="0 1 0" range="-90 90" limited="true"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
      <body name="b" pos="0 0 -0.4">
        <joint type="hinge" axis="1 0 0"/>
        <geom name="tip" type="sphere" size="0.07"/>
      </body>
      <geom name="second" type="box" size="0.05 0.05 0.05" pos="0.1 0 0"/>
    </body>
    <body name="free" pos="1 0 0.3">
      <freejoint/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      <geom type="sphere" size="0.1"/>
    </body>
  </worldbody>
  <actuator><motor joint="h1" gear="2"/></actuator>
</mujoco>
"""


def _run(sim, fn):
  out = []
  sim.send("call", lambda m, d: out.append(fn(m, d)))
  sim.sync()
  return out[0]


def _paused(path, xml):
  """A paused worker on `xml` written to `path` (export needs a source path), model loaded."""
  path.write_text(xml)
  s = Simulation(path=str(path), paused=True).start()
  s.wait_until(lambda st: st.model_version > 0)
  return s


@pytest.fixture
def sim(tmp_path):
  """A paused worker on XML written to a file."""
  s = _paused(tmp_path / "model.xml", XML)
  yield s
  s.stop()


def test_key_snippet_loads_in_mujoco(sim, tmp_path):
  """The clipboard `<key>` of a moved state, pasted into the model, restores that state in MuJoCo."""
  sim.send("ctrl", 0, 0.3)
  sim.send("step", 300)
  snippet = _run(sim, lambda m, d: key_snippet(m, d, "here"))
  qpos, qvel, t = _run(sim, lambda m, d: (d.qpos.copy(), d.qvel.copy(), d.time))
  assert np.abs(qvel).max() > 1e-3
  xml = XML.replace("</mujoco>", f"<keyframe>{snippet}</keyframe></mujoco>")
  mm = mujoco.MjModel.from_xml_string(xml)
  md = mujoco.MjData(mm)
  mujoco.mj_resetDataKeyframe(mm, md, 0)
  np.testing.assert_allclose(md.qpos, qpos, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(md.qvel, qvel, rtol=1e-5, atol=1e-6)
  assert md.time == pytest.approx(t, rel=1e-5) and md.ctrl[0] == pytest.approx(0.3)


def test_saved_copy_has_the_edits(sim, tmp_path):
  """Edits of options and of elements (numbered as MuJoCo's compiler numbers them, a body's own
  geoms before its children's) are in the saved copy as MuJoCo reads it."""
  sim.send("opt", "timestep", 0.001)
  sim.send("opt", "integrator", 1)
  sim.send("opt", "disableflags", int(numjoco.mjtDisableBit.GRAVITY))
  m = sim.model
  second = numjoco.name2id(m, "geom", "second")
  tip = numjoco.name2id(m, "geom", "tip")
  assert second < tip    # a body's own geoms come first: document order would be wrong here
  sim.send("model", "geom_solref", second, np.array([0.05, 0.7]))
  sim.send("model", "geom_friction", tip, np.array([0.3, 0.01, 0.002]))
  sim.send("model", "dof_damping", 1, 0.25)
  sim.send("model", "jnt_solimp", 0, np.array([0.8, 0.9, 0.01, 0.5, 2]))
  sim.send("model", "body_mass", 3, 3.5)
  sim.sync()
  out = tmp_path / "copy.xml"
  skipped = _run(sim, lambda mm, d: export.save_copy(mm, dict(sim.edits), dict(sim.opt_edits),
                                                     out, sim.opt0))
  assert skipped == []
  mm = mujoco.MjModel.from_xml_path(str(out))
  assert mm.opt.timestep == 0.001 and mm.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
  assert mm.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY
  np.testing.assert_allclose(mm.geom_solref[second], [0.05, 0.7])
  np.testing.assert_allclose(mm.geom_friction[tip], [0.3, 0.01, 0.002])
  assert mm.dof_damping[1] == 0.25
  np.testing.assert_allclose(mm.jnt_solimp[0], [0.8, 0.9, 0.01, 0.5, 2])
  assert mm.body_mass[3] == 3.5
  # untouched values stay as they were
  orig = mujoco.MjModel.from_xml_string(XML)
  np.testing.assert_allclose(mm.geom_solref[tip], orig.geom_solref[tip])
  np.testing.assert_allclose(mm.jnt_range, orig.jnt_range)


def test_mjcf_diff_names_what_changed(sim):
  """The diff lists the option and element edits, by name where the element has one."""
  sim.send("opt", "integrator", 3)
  m = sim.model
  sim.send("model", "geom_solref", numjoco.name2id(m, "geom", "tip"), np.array([0.1, 2.0]))
  sim.sync()
  text = _run(sim, lambda mm, d: export.mjcf_diff(mm, dict(sim.edits), dict(sim.opt_edits),
                                                  sim.opt0))
  assert '<option integrator="implicitfast"/>' in text
  assert '<geom name="tip" solref="0.1 2"/>' in text


def test_bad_edit_is_reported(sim):
  """An edit of a field the panel does not offer is an error naming the field, shown in status."""
  sim.send("model", "geom_type", 0, 2)
  st = sim.wait_until(lambda st: st.error != "")
  assert "geom_type" in st.error and st.paused


def test_energy_shown_by_the_worker_matches_mujoco():
  """The Info panel's energy (the engine's d.energy, published by the worker once the panel's
  checkbox sets the ENERGY enable flag) equals MuJoCo's mjENBL_ENERGY values on a model with
  gravity, springs of every joint type and motion; it is zero while the flag is off."""
  from numjoco.engine.types import mjtEnableBit
  xml = """<mujoco><worldbody>
    <body pos="0 0 1"><joint type="hinge" axis="0 1 0" stiffness="3" springref="20"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".04"/>
      <body pos=".3 0 0"><joint type="ball" stiffness="2"/><joint type="slide" axis="1 0 0"
        stiffness="5" armature="0.1"/><geom type="box" size=".05 .1 .05" pos=".1 0 0"/></body>
    </body>
    <body pos="1 0 1"><freejoint/><geom type="ellipsoid" size=".1 .05 .07"/></body>
  </worldbody></mujoco>"""
  m = numjoco.load_model(xml)
  mm = mujoco.MjModel.from_xml_string(xml)
  mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
  md = mujoco.MjData(mm)
  rng = np.random.default_rng(3)
  md.qpos[:] = mm.qpos0 + rng.normal(0, 0.3, mm.nq)
  for adr in (1, 9):   # ball and free quaternions
    md.qpos[adr:adr + 4] /= np.linalg.norm(md.qpos[adr:adr + 4])
  md.qvel[:] = rng.normal(0, 1.0, mm.nv)
  mujoco.mj_forward(mm, md)
  sim = Simulation(m, paused=True).start()
  try:
    def state(m, d):
      d.qpos[:], d.qvel[:] = md.qpos, md.qvel
      numjoco.forward(m, d)
    sim.send("call", state)
    sim.sync()
    with sim.snapshot() as snap:
      assert snap.extra["energy"] == (0.0, 0.0)
    sim.send("opt", "enableflags", int(m.opt.enableflags) | mjtEnableBit.ENERGY)
    sim.send("call", state)
    sim.sync()
    with sim.snapshot() as snap:
      np.testing.assert_allclose(snap.extra["energy"], md.energy, rtol=1e-9, atol=1e-12)
  finally:
    sim.stop()


def test_mass_edit_recomputes_derived_constants_as_mj_setConst(sim, tmp_path):
  """Editing a body mass or a dof armature also refreshes what depends on it (subtree mass,
  invweights, dof_M0), as mj_setConst does in MuJoCo after the same edit."""
  sim.send("model", "body_mass", 3, 5.0)
  sim.send("model", "dof_armature", 0, 0.2)
  sim.sync()
  m = sim.model
  mm = mujoco.MjModel.from_xml_path(str(tmp_path / "model.xml"))
  md = mujoco.MjData(mm)
  mm.body_mass[3] = 5.0
  mm.dof_armature[0] = 0.2
  mujoco.mj_setConst(mm, md)
  np.testing.assert_allclose(m.body_subtreemass, mm.body_subtreemass, rtol=1e-12)
  np.testing.assert_allclose(m.body_invweight0, mm.body_invweight0, rtol=1e-9, atol=1e-12)
  np.testing.assert_allclose(m.dof_invweight0, mm.dof_invweight0, rtol=1e-9, atol=1e-12)
  np.testing.assert_allclose(m.dof_M0, mm.dof_M0, rtol=1e-9, atol=1e-12)


@pytest.fixture
def plastic_sim(tmp_path):
  """A paused worker on the plastic model (tests/app/test_sim.py's PLASTIC) written to a file."""
  from tests.app.test_sim import PLASTIC
  p = tmp_path / "plastic.xml"
  s = _paused(p, PLASTIC)
  yield s, p
  s.stop()


def test_key_snippet_with_plastic_state_loads_the_same_in_both_engines(plastic_sim):
  """After plastic flow, the copied `<key>` carries `plastic=` (4.0's attribute); pasted into the
  model it restores the same qpos, qvel and d.plastic in MuJoCo 4.0 and in this engine, and both
  then step on identically."""
  s, path = plastic_sim
  for i, u in enumerate((1.5, 1.0, 0.0, 0.5)):
    s.send("ctrl", i, u)
  s.send("step", 300)
  snippet = _run(s, lambda m, d: key_snippet(m, d, "flowed"))
  qpos, plastic = _run(s, lambda m, d: (d.qpos.copy(), d.plastic.copy()))
  assert 'plastic="' in snippet
  xml = path.read_text().replace("</mujoco>", f"<keyframe>{snippet}</keyframe></mujoco>")
  mm = mujoco.MjModel.from_xml_string(xml)
  md = mujoco.MjData(mm)
  mujoco.mj_resetDataKeyframe(mm, md, 0)
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  numjoco.reset_data(m, d, "flowed")
  init = mujoco.MjData(mujoco.MjModel.from_xml_string(path.read_text())).plastic
  assert np.abs(plastic - init).max() > 1e-2      # the state had moved away from the initial one
  np.testing.assert_allclose(md.plastic, plastic, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(md.qpos, qpos, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(d.plastic, md.plastic, rtol=1e-12, atol=1e-14)
  for a in ("qpos", "qvel", "act", "ctrl"):
    np.testing.assert_allclose(getattr(d, a), getattr(md, a), rtol=1e-12, atol=1e-14, err_msg=a)
  mujoco.mj_step(mm, md, 100)
  numjoco.step(m, d, 100)
  np.testing.assert_allclose(d.plastic, md.plastic, rtol=1e-8, atol=1e-10)
  np.testing.assert_allclose(d.qpos, md.qpos, rtol=1e-8, atol=1e-10)


def test_saved_copy_has_springyield_and_actuator_groups(plastic_sim, tmp_path):
  """Edited springyields (a hinge's in the file's degrees, a tendon's) and disabled actuator
  groups are in the saved copy as MuJoCo 4.0 reads it, and this engine reads the same values."""
  s, path = plastic_sim
  s.send("model", "jnt_springyield", 0, 0.05)        # radians in the Model
  s.send("model", "jnt_springyield", 1, 0.2)         # the ball joint
  s.send("model", "tendon_springyield", 0, 0.004)
  s.send("model", "tendon_stiffness", 0, 12.0)
  s.send("opt", "disableactuator", (1 << 1) | (1 << 7))
  s.sync()
  out = tmp_path / "copy.xml"
  skipped = _run(s, lambda m, d: export.save_copy(m, dict(s.edits), dict(s.opt_edits), out,
                                                  s.opt0))
  assert skipped == []
  text = out.read_text()
  assert 'actuatorgroupdisable="1 7"' in text
  assert f'springyield="{np.rad2deg(0.05):.12g}"' in text   # degrees, as the file's compiler says
  mm = mujoco.MjModel.from_xml_path(str(out))
  np.testing.assert_allclose(mm.jnt_springyield[:2], [0.05, 0.2], rtol=1e-10)
  assert mm.tendon_springyield[0] == pytest.approx(0.004) and mm.tendon_stiffness[0] == 12.0
  assert mm.opt.disableactuator == (1 << 1) | (1 << 7)
  orig = mujoco.MjModel.from_xml_path(str(path))
  np.testing.assert_allclose(mm.jnt_springyield[2:], orig.jnt_springyield[2:])
  m = numjoco.load_model(str(out))
  np.testing.assert_allclose(m.jnt_springyield, mm.jnt_springyield, rtol=1e-12)
  np.testing.assert_allclose(m.tendon_springyield, mm.tendon_springyield, rtol=1e-12)
  assert m.opt.disableactuator == mm.opt.disableactuator


def test_reenabled_groups_and_zero_yield_in_saved_copy(tmp_path):
  """Groups disabled in the file and enabled in the viewer leave the saved copy with none
  disabled (in MuJoCo 4.0 and here); a springyield edited to 0 is written with a note that it
  reloads as an elastic joint."""
  from tests.app.test_sim import PLASTIC
  p = tmp_path / "groups.xml"
  p.write_text(PLASTIC.replace('<option timestep="0.002"/>',
                               '<option timestep="0.002" actuatorgroupdisable="2 1"/>'))
  s = Simulation(path=str(p), paused=True).start()
  try:
    s.wait_until(lambda st: st.model_version > 0)
    assert _run(s, lambda m, d: m.opt.disableactuator) == 6
    s.send("opt", "disableactuator", 0)
    s.send("model", "jnt_springyield", 0, 0.0)
    s.sync()
    out = tmp_path / "copy.xml"
    skipped = _run(s, lambda m, d: export.save_copy(m, dict(s.edits), dict(s.opt_edits), out,
                                                    s.opt0))
    diff = _run(s, lambda m, d: export.mjcf_diff(m, dict(s.edits), dict(s.opt_edits), s.opt0))
  finally:
    s.stop()
  assert len(skipped) == 1 and "elastic" in skipped[0]
  assert "actuatorgroupdisable" not in out.read_text()
  assert '<option actuatorgroupdisable=""/>' in diff
  assert '<joint name="hinge" springyield="0"/>' in diff
  mm = mujoco.MjModel.from_xml_path(str(out))
  assert mm.opt.disableactuator == 0 and numjoco.load_model(str(out)).opt.disableactuator == 0
  assert mm.jnt_springyield[0] == 0 and mm.jnt_plasticadr[0] == -1


def test_mjcf_diff_of_springyield_and_groups(plastic_sim):
  """The diff names the joint and tendon with springyield in the source's unit, and the option
  with the disabled groups; pasted into the model, MuJoCo 4.0 reads the edited values."""
  s, path = plastic_sim
  s.send("model", "jnt_springyield", 0, 0.05)
  s.send("model", "tendon_springyield", 0, 0.004)
  s.send("opt", "disableactuator", 1 << 2)
  s.sync()
  text = _run(s, lambda m, d: export.mjcf_diff(m, dict(s.edits), dict(s.opt_edits), s.opt0))
  assert '<option actuatorgroupdisable="2"/>' in text
  assert f'<joint name="hinge" springyield="{np.rad2deg(0.05):.12g}"/>' in text
  assert '<tendon name="t" springyield="0.004"/>' in text
  src = path.read_text()
  edited = (src.replace('springyield="10"', f'springyield="{np.rad2deg(0.05):.12g}"')
            .replace('springyield="0.02"', 'springyield="0.004"')
            .replace('<option timestep="0.002"/>',
                     '<option timestep="0.002" actuatorgroupdisable="2"/>'))
  mm = mujoco.MjModel.from_xml_string(edited)
  assert mm.jnt_springyield[0] == pytest.approx(0.05, rel=1e-10)
  assert mm.opt.disableactuator == 4


def test_mjcf_diff_of_a_model_without_source_says_the_angle_unit():
  """A model compiled from a string has no file to read `<compiler angle>` from: the diff writes
  a hinge's springyield in degrees (MJCF's default) and says so; read back with that unit by
  MuJoCo 4.0, it is the edited value."""
  from tests.app.test_sim import PLASTIC
  s = Simulation(numjoco.load_model(PLASTIC), paused=True).start()
  try:
    s.send("model", "jnt_springyield", 0, 0.07)
    s.sync()
    text = _run(s, lambda m, d: export.mjcf_diff(m, dict(s.edits), dict(s.opt_edits), s.opt0))
  finally:
    s.stop()
  assert 'angles in degrees' in text
  value = text.split('<joint name="hinge" springyield="')[1].split('"')[0]
  mm = mujoco.MjModel.from_xml_string(PLASTIC.replace('springyield="10"',
                                                      f'springyield="{value}"'))
  assert mm.jnt_springyield[0] == pytest.approx(0.07, rel=1e-10)
