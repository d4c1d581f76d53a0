"""What the viewer writes out: `<key>` snippets and edited models, read back by MuJoCo itself."""
import numpy as np
import pytest

import engine
from app import export
from app.sim import Simulation, key_snippet

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


@pytest.fixture
def sim(tmp_path):
  """A paused worker on XML written to a file (export needs a source path)."""
  p = tmp_path / "model.xml"
  p.write_text(XML)
  s = Simulation(path=str(p), paused=True).start()
  s.wait_until(lambda st: st.model_version > 0)
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
  sim.send("opt", "disableflags", int(engine.mjtDisableBit.GRAVITY))
  m = sim.model
  second = engine.name2id(m, "geom", "second")
  tip = engine.name2id(m, "geom", "tip")
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
  sim.send("model", "geom_solref", engine.name2id(m, "geom", "tip"), np.array([0.1, 2.0]))
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
  from engine.types import mjtEnableBit
  xml = """<mujoco><worldbody>
    <body pos="0 0 1"><joint type="hinge" axis="0 1 0" stiffness="3" springref="20"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".04"/>
      <body pos=".3 0 0"><joint type="ball" stiffness="2"/><joint type="slide" axis="1 0 0"
        stiffness="5" armature="0.1"/><geom type="box" size=".05 .1 .05" pos=".1 0 0"/></body>
    </body>
    <body pos="1 0 1"><freejoint/><geom type="ellipsoid" size=".1 .05 .07"/></body>
  </worldbody></mujoco>"""
  m = engine.load_model(xml)
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
      engine.forward(m, d)
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
