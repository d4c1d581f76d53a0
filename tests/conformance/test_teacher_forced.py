"""The whole pipeline (collision, constraint rows, solver) "teacher-forced" along MuJoCo's own
trajectories: at every step we put MuJoCo's state (incl. qacc_warmstart) into ours, run our
forward and compare contacts, rows, qacc and efc_force (Newton), or the solver's cost (CG/PGS).

Comparing along MuJoCo's trajectory instead of free-running keeps chaotic contact dynamics from
turning round-off into different trajectories.
"""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco import engine
from numjoco.engine import interop
from numjoco.engine import forward as forward_mod
from tests.conformance.test_contact import _quadruped_without_terrain
from tests.conformance.test_solver import dual_cost, primal_cost
from tests.models import models_named, models_of
from tests.models import teacher_forced as teacher_forced_states

_ASSETS = engine.__file__.rsplit("/", 2)[0] + "/assets"


def _load(name):
  if name == "pile64":
    return models_of(_ASSETS + "/pile64.xml")
  if name == "quadruped":
    xml, assets = _quadruped_without_terrain()
    return models_of(xml, assets=assets)
  return models_named(name, quiet=False)


def _rel_err(ours, ref):
  ours, ref = np.asarray(ours, float), np.asarray(ref, float)
  if ref.size == 0:
    return 0.0
  return float(np.max(np.abs(ours - ref)) / max(1.0, np.max(np.abs(ref))))


def record_errors(worst, solver, mjm, mjd, d):
  """Fold one state's errors into `worst`: relative qacc and efc_force errors, and the cost
  excess over MuJoCo's solution (the primal cost for Newton/CG, the dual one for PGS, both
  evaluated on MuJoCo's rows)."""
  worst["qacc"] = max(worst["qacc"], _rel_err(d.qacc, mjd.qacc))
  worst["efc_force"] = max(worst["efc_force"], _rel_err(d.efc_force[:d.nefc], mjd.efc_force))
  if d.nefc:
    if solver == "PGS":
      ours, ref = dual_cost(mjm, mjd, d.efc_force[:d.nefc]), dual_cost(mjm, mjd, mjd.efc_force)
    else:
      ours, ref = primal_cost(mjm, mjd, d.qacc), primal_cost(mjm, mjd, mjd.qacc)
    worst["cost"] = max(worst["cost"], (ours - ref) / max(1e-12, abs(ref)))


def teacher_forced(name, solver, cone, nstep, seed=0, every=1):
  """Max relative errors of qacc and efc_force over MuJoCo's trajectory, the worst relative
  cost excess (ours minus MuJoCo's: the primal cost for Newton/CG, the dual one for PGS, both
  evaluated on MuJoCo's rows) and the number of contacts seen."""
  m, mjm = _load(name)
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  mjm.opt.cone = int(getattr(mujoco.mjtCone, "mjCONE_" + cone.upper()))
  m.opt.solver, m.opt.cone = mjm.opt.solver, mjm.opt.cone
  worst = {"qacc": 0.0, "efc_force": 0.0, "cost": -np.inf}
  ncontacts = 0
  for i, d, mjd in teacher_forced_states(m, mjm, nstep, every, seed):
    assert (d.ncon, d.nefc) == (mjd.ncon, mjd.nefc), f"step {i}: contacts/rows differ"
    np.testing.assert_array_equal(d.efc_type[:d.nefc], mjd.efc_type, err_msg=f"step {i}")
    ncontacts += d.ncon
    record_errors(worst, solver, mjm, mjd, d)
  return worst, ncontacts


MODELS = ["humanoid", "walker", "cheetah", "hopper", "manipulator", "stacker", "quadruped"]
_NEWTON_TOL = {}


@pytest.mark.slow   # 2000-step trajectories
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", MODELS)
def test_newton_teacher_forced(name, cone):
  worst, ncon = teacher_forced(name, "Newton", cone, nstep=2000)
  assert ncon > 100, "the trajectory has (almost) no contacts: test is vacuous"
  tol = _NEWTON_TOL.get(name, 1e-6)
  assert worst["qacc"] <= tol and worst["efc_force"] <= tol, worst


@pytest.mark.slow   # 2000-step trajectories
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("solver", ["CG", "PGS"])
@pytest.mark.parametrize("name", MODELS)
def test_cg_pgs_cost_teacher_forced(name, solver, cone):
  """CG and PGS stop early by design: what must hold is that our solution is at least as good
  as MuJoCo's (cost within 1e-6 relative, or lower)."""
  worst, ncon = teacher_forced(name, solver, cone, nstep=2000, every=4)
  assert ncon > 25, "the trajectory has (almost) no contacts: test is vacuous"
  assert worst["cost"] <= 1e-6, worst


def solver_teacher_forced(name, solver, cone, nstep, every):
  """As `teacher_forced`, but our solver gets MuJoCo's contacts and constraint rows: for
  scenes where a contact's choice among near-equal candidates (multicontact, EPA round-off)
  would otherwise decide the comparison, this checks the solver alone. Returns the worst
  relative qacc / efc_force errors and cost excess, the rows seen and the largest island."""
  m, mjm = _load(name)
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  mjm.opt.cone = int(getattr(mujoco.mjtCone, "mjCONE_" + cone.upper()))
  m.opt.solver, m.opt.cone = mjm.opt.solver, mjm.opt.cone
  worst = {"qacc": 0.0, "efc_force": 0.0, "cost": -np.inf}
  nrows = big = 0
  # M, qacc_smooth, ... of each state from our forward; then MuJoCo's rows
  for i, d, mjd in teacher_forced_states(m, mjm, nstep, every, ctrl=None):
    interop.efc_from_mujoco(mjm, mjd, d)
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    forward_mod.fwd_constraint(m.struct, d.struct)
    nrows += d.nefc
    big = max(big, int(np.max(d.island_nv[:d.nisland], initial=0)))
    record_errors(worst, solver, mjm, mjd, d)
  return worst, nrows, big


@pytest.mark.slow   # a 1500-step trajectory of 64 bodies
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("solver", ["Newton", "CG", "PGS"])
def test_pile64_solver_teacher_forced(solver, cone):
  """64 free bodies settling into one heap: islands of 100-250 dofs (the sparse Newton
  factor), along MuJoCo's 1500-step trajectory with MuJoCo's contacts and rows."""
  worst, nrows, big = solver_teacher_forced("pile64", solver, cone, nstep=1500, every=25)
  assert nrows > 5000 and big >= 100, (nrows, big)
  if solver == "Newton":
    assert worst["qacc"] <= 1e-6 and worst["efc_force"] <= 1e-6, worst
  else:
    assert worst["cost"] <= 1e-6, worst


@pytest.mark.parametrize("integrator", ["Euler", "RK4", "implicit", "implicitfast"])
@pytest.mark.parametrize("name", ["humanoid", "walker", "hopper"])
def test_one_step_with_contacts(name, integrator):
  """One step of every integrator from MuJoCo's states along a contact-rich trajectory:
  qpos, qvel (and act) after the step agree with mj_step's."""
  m, mjm = _load(name)
  mjm.opt.integrator = int(getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper()))
  m.opt.integrator = mjm.opt.integrator
  mjd, probe = mujoco.MjData(mjm), mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  rng = np.random.default_rng(5)
  worst, ncon = 0.0, 0
  for i in range(600):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_step(mjm, mjd)
    if i % 5:
      continue
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_copyData(probe, mjm, mjd)
    mujoco.mj_step(mjm, probe)
    numjoco.step(m, d)
    ncon += probe.ncon
    for ours, ref in ((d.qpos, probe.qpos), (d.qvel, probe.qvel), (d.act, probe.act)):
      worst = max(worst, _rel_err(ours, ref))
  assert ncon > 50, "no contacts along the trajectory: test is vacuous"
  assert worst <= 1e-8, worst
