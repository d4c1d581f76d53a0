"""MuJoCo 4's polynomial springs and dampers, contact adhesion and surface velocity, against the
installed `mujoco` (4.0): compiled fields, forward outputs at random states (qfrc_*, contacts,
efc_vel / efc_aref, qacc), teacher-forced rollouts with every solver and cone, and MuJoCo's own
test models for these features (tests/assets/mujoco, see the README there).
"""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from numjoco.engine.mjcf import MjcfError
from tests.conformance.test_teacher_forced import record_errors
from tests.models import assert_close, inverse_both, model_xml, models_of
from tests.models import teacher_forced as teacher_forced_states

_ASSETS = os.path.join(os.path.dirname(__file__), "assets", "mujoco")
_SOLVERS = ("Newton", "CG", "PGS")
_CONES = ("pyramidal", "elliptic")


def _both(xml):
  """(ours, MuJoCo's) models of an MJCF string or a file in tests/assets/mujoco."""
  return models_of(os.path.join(_ASSETS, xml) if xml.endswith(".xml") else xml)


def _set_solver(m, mjm, solver, cone):
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  mjm.opt.cone = int(getattr(mujoco.mjtCone, "mjCONE_" + cone.upper()))
  m.opt.solver, m.opt.cone = mjm.opt.solver, mjm.opt.cone


def _compare_contacts(d, mjd, where=""):
  """Same contacts and rows as MuJoCo, with the same adhesion, surface velocity, dim, rows."""
  assert (d.ncon, d.nefc) == (mjd.ncon, mjd.nefc), f"{where}: contacts/rows differ"
  n = d.ncon
  c = mjd.contact
  np.testing.assert_array_equal(d.contact_dim[:n], c.dim, err_msg=where)
  np.testing.assert_array_equal(d.contact_exclude[:n], c.exclude, err_msg=where)
  np.testing.assert_array_equal(d.contact_efc_address[:n], c.efc_address, err_msg=where)
  assert_close(d.contact_adhesion[:n], c.adhesion, "contact.adhesion " + where)
  assert_close(d.contact_surfacevel[:n], c.surfacevel, "contact.surfacevel " + where,
               rtol=1e-8, atol=1e-8)
  assert_close(d.efc_vel[:d.nefc], mjd.efc_vel, "efc_vel " + where, rtol=1e-7, atol=1e-7)
  # aref carries the contact stiffness (k ~ 3e3 here) times efc_pos, whose round-off differs
  # by ~1e-9 for tilted cylinders on planes; the adhesion bias R * adhesion is ~0.1-1
  assert_close(d.efc_aref[:d.nefc], mjd.efc_aref, "efc_aref " + where, rtol=1e-5, atol=1e-5)
  assert_close(d.qfrc_adhesion, mjd.qfrc_adhesion, "qfrc_adhesion " + where, rtol=1e-8,
               atol=1e-8)


def teacher_forced(m, mjm, solver, cone, nstep, every=1, key=None, seed=0, check=None):
  """Step MuJoCo; at every `every`-th state put it into ours, run forward and compare contacts
  and rows (`_compare_contacts`). Returns the worst relative qacc / efc_force errors, the
  worst relative cost excess (primal for Newton/CG, dual for PGS, on MuJoCo's rows) and the
  number of contacts seen."""
  _set_solver(m, mjm, solver, cone)
  mjd = mujoco.MjData(mjm)
  if key is not None:
    mujoco.mj_resetDataKeyframe(mjm, mjd, key)
  worst = {"qacc": 0.0, "efc_force": 0.0, "cost": -np.inf}
  ncon = 0
  for i, d, mjd in teacher_forced_states(m, mjm, nstep, every, seed, mjd, before_step=check):
    _compare_contacts(d, mjd, f"step {i}")
    ncon += d.ncon
    record_errors(worst, solver, mjm, mjd, d)
  return worst, ncon


def _assert_solved(worst, solver):
  """Newton agrees with MuJoCo's solution; CG and PGS stop early by design, so theirs must be at
  least as good as MuJoCo's (cost within 1e-6 relative, or lower)."""
  if solver == "Newton":
    assert worst["qacc"] <= 1e-6 and worst["efc_force"] <= 1e-6, worst
  else:
    assert worst["cost"] <= 1e-6, worst


# ------------------------------------------------------------------ polynomial springs, dampers

_POLY = model_xml("poly_adhesion_surfacevel/poly")

_POLY_FIELDS = ("jnt_stiffness", "jnt_stiffnesspoly", "dof_damping", "dof_dampingpoly",
                "tendon_stiffness", "tendon_stiffnesspoly", "tendon_damping",
                "tendon_dampingpoly", "actuator_damping", "actuator_dampingpoly",
                "jnt_actuatorid", "tendon_actuatorid", "qpos_spring")


def test_poly_compiled_fields():
  """"a b c" fills the linear field with a and the *poly field with (b, c); a partial value
  overrides only the leading coefficients of its default class (joints, tendons, actuators)."""
  m, mjm = _both(_POLY.format(integrator="Euler"))
  assert mjm.jnt_stiffnesspoly.any() and mjm.actuator_dampingpoly.any()
  for f in _POLY_FIELDS:
    assert_close(getattr(m, f), getattr(mjm, f), f, rtol=0, atol=0)
  # the class "lin" keeps the default's higher-order terms: stiffness "4" -> (4, 2, 3)
  assert list(m.jnt_stiffnesspoly[1]) == [2.0, 3.0] and m.jnt_stiffness[1] == 4.0


def test_poly_springdamper_keeps_higher_order_terms():
  """springdamper sets the linear coefficients from the dynamics; the poly terms stay."""
  xml = ('<mujoco><worldbody><body><joint type="hinge" springdamper=".5 1" stiffness="0 2 3" '
         'damping="0 4"/><geom size=".1" pos=".2 0 0"/></body></worldbody></mujoco>')
  m, mjm = _both(xml)
  for f in ("jnt_stiffness", "jnt_stiffnesspoly", "dof_damping", "dof_dampingpoly"):
    assert_close(getattr(m, f), getattr(mjm, f), f)


@pytest.mark.parametrize("bad, what", [('stiffness="1 2 3 4"', "stiffness"),
                                       ('damping="1 x"', "damping")])
def test_poly_bad_input(tmp_path, bad, what):
  """Too many coefficients or a non-number: an error naming the attribute and the line."""
  p = tmp_path / "m.xml"
  p.write_text(f'<mujoco>\n<worldbody>\n<body>\n<joint {bad}/>\n<geom size=".1"/>\n</body>\n'
               '</worldbody>\n</mujoco>')
  with pytest.raises(MjcfError) as e:
    numjoco.load_model(str(p))
  assert "m.xml:4" in str(e.value) and what in str(e.value)


def _random_poly_state(mjm, mjd, rng):
  mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * 0.5
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv) * 2
  mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)


@pytest.mark.parametrize("seed", range(4))
def test_poly_forward(seed):
  """qfrc_spring/damper/passive, qacc and the spring energy agree with MuJoCo at random states
  (hinge, slide, ball, free joints, fixed and spatial tendons, actuator damping with gear)."""
  m, mjm = _both(_POLY.format(integrator="Euler"))
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  _random_poly_state(mjm, mjd, rng)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert np.abs(mjd.qfrc_spring).max() > 0.1 and np.abs(mjd.qfrc_damper).max() > 0.1
  for f in ("qfrc_spring", "qfrc_damper", "qfrc_passive", "qacc", "energy"):
    assert_close(getattr(d, f), getattr(mjd, f), f)


def test_poly_forward_fails_without_poly_terms():
  """The comparison above can fail: dropping the higher-order terms changes qfrc_passive."""
  m, mjm = _both(_POLY.format(integrator="Euler"))
  m.dof_dampingpoly[:] = 0.0
  mjd = mujoco.MjData(mjm)
  _random_poly_state(mjm, mjd, np.random.default_rng(0))
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert np.abs(d.qfrc_damper - mjd.qfrc_damper).max() > 1e-3


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_poly_rollout(integrator):
  """300 free-running steps agree with MuJoCo: Euler's implicit damping and the implicit
  integrators use the damping polynomial's derivative; springyield moves the plastic reference
  of the polynomial springs."""
  m, mjm = _both(_POLY.format(integrator=integrator))
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(5)
  _random_poly_state(mjm, mjd, rng)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  for i in range(300):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert np.abs(mjd.plastic).max() > 1e-3, "no joint yielded: springyield untested"
  # RK4's d.energy is not compared: MuJoCo reports neither the first stage's energy nor the end
  # state's (a known difference of the RK4 pipeline, not of the polynomial terms)
  fields = ("qpos", "qvel", "plastic") + (("energy",) if integrator != "RK4" else ())
  for f in fields:
    assert_close(getattr(d, f), getattr(mjd, f), f, rtol=1e-7, atol=1e-7)


def test_poly_stiffness_model():
  """MuJoCo's passive/poly_stiffness.xml (four boxes on spatial tendons with linear, quadratic,
  cubic and mixed stiffness): tendon fields and a 500-step rollout with the energy flag."""
  m, mjm = _both("poly_stiffness.xml")
  for f in ("tendon_stiffness", "tendon_stiffnesspoly", "tendon_lengthspring"):
    assert_close(getattr(m, f), getattr(mjm, f), f)
  mjm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
  m.opt.enableflags = m.opt.enableflags | int(numjoco.mjtEnableBit.ENERGY)
  worst, ncon = teacher_forced(m, mjm, "Newton", "pyramidal", nstep=500, every=5)
  _assert_solved(worst, "Newton")
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  for _ in range(200):
    mujoco.mj_step(mjm, mjd)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert_close(d.energy, mjd.energy, "energy", rtol=1e-9)
  assert_close(d.qfrc_spring, mjd.qfrc_spring, "qfrc_spring")


# -------------------------------------------------------------------------------- adhesion

_ADHESION = model_xml("poly_adhesion_surfacevel/adhesion")


def test_adhesion_compiled_fields():
  """geom_adhesion and pair_adhesion (a pair's own value, not mixed from its geoms)."""
  m, mjm = _both(_ADHESION)
  for f in ("geom_adhesion", "pair_adhesion", "geom_gap", "pair_gap"):
    assert_close(getattr(m, f), getattr(mjm, f), f, rtol=0, atol=0)


def _adhesion_state(mjm, mjd, rng):
  """Bodies resting on (or near) the floor and under the ceiling: some penetrating, some in
  their gap, some out of reach, with random velocities."""
  mjd.qpos[:] = mjm.qpos0
  for b, half in ((1, .1), (2, .08), (3, .05), (5, .1)):
    a = mjm.jnt_qposadr[mjm.body_jntadr[b]]
    mjd.qpos[a + 2] = half + rng.uniform(-.006, .012)
  a = mjm.jnt_qposadr[mjm.body_jntadr[4]]
  mjd.qpos[a + 2] = 1.0 - .05 - rng.uniform(-.004, .004)
  mjd.qpos[a + 3:a + 7] = [1, rng.normal() * .01, rng.normal() * .01, 0]
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv) * .2


@pytest.mark.parametrize("cone", _CONES)
@pytest.mark.parametrize("seed", range(3))
def test_adhesion_forward(seed, cone):
  """Contacts (mixed adhesion: sum, priority, pair override; in-gap adhesive contacts kept with
  dim 1), qfrc_adhesion, efc_aref (the R * adhesion bias) and qacc agree with MuJoCo."""
  m, mjm = _both(_ADHESION)
  _set_solver(m, mjm, "Newton", cone)
  mjd = mujoco.MjData(mjm)
  _adhesion_state(mjm, mjd, np.random.default_rng(seed))
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert np.any(mjd.contact.adhesion != 0) and np.abs(mjd.qfrc_adhesion).max() > 0
  _compare_contacts(d, mjd)
  assert_close(d.qfrc_passive, mjd.qfrc_passive, "qfrc_passive")
  assert_close(d.qacc, mjd.qacc, "qacc", rtol=1e-6, atol=1e-6)


def test_adhesion_in_gap_contacts_pull():
  """An adhesive box hovering within its gap keeps a normal-only contact that pulls it down;
  without adhesion the same contact is excluded (MuJoCo's numbers, and the sign by physics)."""
  xml = _ADHESION
  m, mjm = _both(xml)
  mjd = mujoco.MjData(mjm)
  a = mjm.jnt_qposadr[mjm.body_jntadr[1]]
  mjd.qpos[a + 2] = .105   # 5 mm above the floor, gap 1 cm
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  _compare_contacts(d, mjd)
  box = [i for i in range(d.ncon) if d.contact_geom2[i] == 2 or d.contact_geom1[i] == 2]
  assert box and all(d.contact_dim[i] == 1 and d.contact_exclude[i] == 0 for i in box)
  # pulled down harder than gravity alone: 4 contacts x (0.7 + 0.5) N on 8 kg
  assert d.qacc[mjm.jnt_dofadr[mjm.body_jntadr[1]] + 2] < -9.81 - 0.5


@pytest.mark.parametrize("cone", _CONES)
@pytest.mark.parametrize("solver", _SOLVERS)
def test_adhesion_teacher_forced(solver, cone):
  """The adhesion scene along MuJoCo's trajectory: the hanger stays stuck under the ceiling, the
  others stick to the floor; rows, qfrc_adhesion and the solution agree with MuJoCo."""
  m, mjm = _both(_ADHESION)
  worst, ncon = teacher_forced(m, mjm, solver, cone, nstep=400, every=2)
  assert ncon > 400
  _assert_solved(worst, solver)


@pytest.mark.parametrize("cone", _CONES)
@pytest.mark.parametrize("solver", _SOLVERS)
def test_fridge_door(solver, cone):
  """MuJoCo's model/adhesion/fridge_door.xml from the "ajar" keyframe: the magnets (adhesion
  within the gap band) pull the door shut and hold it."""
  m, mjm = _both("fridge_door.xml")
  worst, ncon = teacher_forced(m, mjm, solver, cone, nstep=600, every=3, key=1)
  assert ncon > 50
  _assert_solved(worst, solver)


def test_fridge_door_snaps_shut_free_running():
  """Free-running from "ajar", our door closes (hinge angle to ~0) as MuJoCo's does."""
  m, mjm = _both("fridge_door.xml")
  mjd = mujoco.MjData(mjm)
  mujoco.mj_resetDataKeyframe(mjm, mjd, 1)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  for _ in range(500):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert abs(mjd.qpos[0]) < 2e-3 and abs(d.qpos[0]) < 2e-3
  assert abs(d.qpos[0] - mjd.qpos[0]) < 1e-4


def test_sand_castle():
  """MuJoCo's model/adhesion/sand_castle.xml (549 grains with three adhesions and gaps): fields,
  then at MuJoCo's state after 150 steps our contacts, rows, qfrc_adhesion and qacc_smooth."""
  m, mjm = _both("sand_castle.xml")
  for f in ("geom_adhesion", "geom_gap"):
    assert_close(getattr(m, f), getattr(mjm, f), f, rtol=0, atol=0)
  mjd = mujoco.MjData(mjm)
  for _ in range(150):
    mujoco.mj_step(mjm, mjd)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert mjd.ncon > 1000
  _compare_contacts(d, mjd)
  assert_close(d.qacc_smooth, mjd.qacc_smooth, "qacc_smooth", rtol=1e-7, atol=1e-7)


# ------------------------------------------------------------------------ surface velocity

_SURFACEVEL = model_xml("poly_adhesion_surfacevel/surfacevel")


def test_surfacevel_compiled_fields():
  """geom_surfacevel, re-expressed in the compiled frame of a mesh geom (the angular origin
  moves to the mesh's center, both parts rotate with the mesh frame)."""
  m, mjm = _both(_SURFACEVEL)
  assert_close(m.geom_surfacevel, mjm.geom_surfacevel, "geom_surfacevel", rtol=1e-12,
               atol=1e-12)
  assert np.abs(mjm.geom_surfacevel[2] - [.2, .1, 0, 0, 0, 1]).max() > .05


@pytest.mark.parametrize("cone", _CONES)
@pytest.mark.parametrize("seed", range(3))
def test_surfacevel_forward(seed, cone):
  """contact.surfacevel (geom2's surface minus geom1's, in the contact frame) and efc_vel of
  the contact rows (tangent and spin rows; pyramidal edges +- mu) agree with MuJoCo."""
  m, mjm = _both(_SURFACEVEL)
  _set_solver(m, mjm, "Newton", cone)
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  mjd.qpos[:] = mjm.qpos0
  for j in range(mjm.njnt):
    a = mjm.jnt_qposadr[j]
    mjd.qpos[a + 2] += rng.uniform(-.01, .005)
    mjd.qpos[a + 3:a + 7] += rng.normal(size=4) * .02
  mujoco.mj_normalizeQuat(mjm, mjd.qpos)
  mjd.qvel[:] = rng.normal(size=mjm.nv) * .3
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  mujoco.mj_forward(mjm, mjd)
  assert mjd.ncon >= 4 and np.abs(mjd.contact.surfacevel).max() > .1
  _compare_contacts(d, mjd)
  assert_close(d.qacc, mjd.qacc, "qacc", rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cone", _CONES)
@pytest.mark.parametrize("solver", _SOLVERS)
@pytest.mark.parametrize("name", ["surfacevel_conveyor.xml", "surfacevel_turntable.xml"])
def test_surfacevel_models(name, solver, cone):
  """MuJoCo's conveyor (two opposed belts, deflectors) and turntable (condim 6: torsion spins
  the centered box) models along MuJoCo's trajectories."""
  m, mjm = _both(name)
  worst, ncon = teacher_forced(m, mjm, solver, cone, nstep=600, every=3)
  assert ncon > 100
  _assert_solved(worst, solver)


def test_conveyor_carries_cargo():
  """Free-running 1.5 s on the conveyor: the cargo rides the +x belt at about belt speed, as in
  MuJoCo, and our positions agree with MuJoCo's."""
  m, mjm = _both("surfacevel_conveyor.xml")
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  n = int(1.5 / mjm.opt.timestep)
  for _ in range(n):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  box1 = mjm.jnt_qposadr[0]
  assert d.qvel[0] > .5 and d.qpos[box1] > -1.5 + .5
  assert abs(d.qpos[box1] - mjd.qpos[box1]) < 1e-3


def test_turntable_spins_centered_box():
  """Free-running 2 s on the turntable (condim 6): torsional friction spins the centered box up
  to the platter's 1 rad/s, and the whole state agrees with MuJoCo's."""
  m, mjm = _both("surfacevel_turntable.xml")
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  for _ in range(int(2 / mjm.opt.timestep)):
    mujoco.mj_step(mjm, mjd)
    numjoco.step(m, d)
  assert abs(d.qvel[5] - 1.0) < 0.02
  assert np.abs(d.qpos - mjd.qpos).max() < 1e-6


@pytest.mark.parametrize("cone", _CONES)
@pytest.mark.parametrize("scene", ["poly", "adhesion", "surfacevel"])
def test_inverse(scene, cone):
  """numjoco.inverse against mj_inverse at random states with random qacc: polynomial damping in
  the discrete-time correction, qfrc_adhesion in the passive force, the adhesion bias and the
  surface velocities in the constraint forces."""
  xml = {"poly": _POLY.format(integrator="Euler"), "adhesion": _ADHESION,
         "surfacevel": _SURFACEVEL}[scene]
  m, mjm = _both(xml)
  _set_solver(m, mjm, "Newton", cone)
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(3)
  if scene == "poly":
    _random_poly_state(mjm, mjd, rng)
  elif scene == "adhesion":
    _adhesion_state(mjm, mjd, rng)
  else:
    mjd.qpos[:] = mjm.qpos0
    mjd.qvel[:] = rng.normal(size=mjm.nv) * .3
  mjd.qacc[:] = rng.normal(size=mjm.nv) * 3
  d = inverse_both(m, mjm, mjd)
  assert d.nefc == mjd.nefc
  if scene != "poly":
    assert mjd.nefc > 0
  for f in ("qfrc_passive", "qfrc_constraint", "qfrc_inverse"):
    assert_close(getattr(d, f), getattr(mjd, f), f, rtol=1e-8, atol=1e-8)
  assert_close(d.efc_force[:d.nefc], mjd.efc_force, "efc_force", rtol=1e-8, atol=1e-8)
