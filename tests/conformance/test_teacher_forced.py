"""The whole pipeline (collision, constraint rows, solver) "teacher-forced" along MuJoCo's own
trajectories: at every step we put MuJoCo's state (incl. qacc_warmstart) into ours, run our
forward and compare contacts, rows, qacc and efc_force (Newton), or the solver's cost (CG/PGS).

Comparing along MuJoCo's trajectory instead of free-running keeps chaotic contact dynamics from
turning round-off into different trajectories.
"""
import mujoco
import numpy as np
import pytest

import engine
from engine import interop
from tests.conformance.test_contact import _quadruped_without_terrain
from tests.models import suite_source

_ASSETS = engine.__file__.rsplit("/", 2)[0] + "/assets"


def _load(name):
  if name == "pile64":
    path = _ASSETS + "/pile64.xml"
    return engine.load_model(path), mujoco.MjModel.from_xml_path(path)
  if name == "quadruped":
    xml, assets = _quadruped_without_terrain()
    return engine.load_model(xml, assets=assets), mujoco.MjModel.from_xml_string(xml, assets)
  src, assets = suite_source(name)
  if assets:
    return engine.load_model(src, assets=assets), mujoco.MjModel.from_xml_string(src, assets)
  return engine.load_model(src), mujoco.MjModel.from_xml_path(src)


def _rel_err(ours, ref):
  ours, ref = np.asarray(ours, float), np.asarray(ref, float)
  if ref.size == 0:
    return 0.0
  return float(np.max(np.abs(ours - ref)) / max(1.0, np.max(np.abs(ref))))


def teacher_forced(name, solver, cone, nstep, seed=0, every=1):
  """Max relative errors of qacc and efc_force over MuJoCo's trajectory, and contact count."""
  m, mjm = _load(name)
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  mjm.opt.cone = int(getattr(mujoco.mjtCone, "mjCONE_" + cone.upper()))
  m.opt.solver, m.opt.cone = mjm.opt.solver, mjm.opt.cone
  mjd = mujoco.MjData(mjm)
  d = engine.make_data(m)
  rng = np.random.default_rng(seed)
  worst = {"qacc": 0.0, "efc_force": 0.0}
  ncontacts = 0
  for i in range(nstep):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_step(mjm, mjd)
    if i % every:
      continue
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_forward(mjm, mjd)
    engine.forward(m, d)
    assert (d.ncon, d.nefc) == (mjd.ncon, mjd.nefc), f"step {i}: contacts/rows differ"
    np.testing.assert_array_equal(d.efc_type[:d.nefc], mjd.efc_type, err_msg=f"step {i}")
    ncontacts += d.ncon
    worst["qacc"] = max(worst["qacc"], _rel_err(d.qacc, mjd.qacc))
    worst["efc_force"] = max(worst["efc_force"], _rel_err(d.efc_force[:d.nefc], mjd.efc_force))
  return worst, ncontacts


MODELS = ["humanoid", "walker", "cheetah", "hopper", "finger", "stacker", "quadruped"]


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", MODELS)
def test_newton_teacher_forced(name, cone):
  worst, ncon = teacher_forced(name, "Newton", cone, nstep=2000)
  assert ncon > 100, "the trajectory has (almost) no contacts: test is vacuous"
  assert worst["qacc"] <= 1e-6 and worst["efc_force"] <= 1e-6, worst
