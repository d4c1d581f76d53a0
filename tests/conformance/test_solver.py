"""Conformance of the constraint solvers (engine.solver) against MuJoCo, teacher-forced.

MuJoCo runs a trajectory with random controls/forces so that contacts, limits, friction loss
and equalities are active; at sampled states MuJoCo's mj_forward gives the reference. Our
forward computes the smooth dynamics (qacc_smooth, M and its factor), MuJoCo's constraint rows
and contacts are copied into our Data (interop.efc_from_mujoco), qacc_warmstart is MuJoCo's,
and our fwd_constraint must reproduce MuJoCo's solve.

Both engines solve per island unless the ISLAND disable bit is set; these tests set it on both
sides (one system); test_island.py compares MuJoCo's default per-island solve.
"""
import functools

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco import engine
from numjoco.engine import forward, interop, solver
from tests.models import load_both, model_xml, models_of

NEWTON, CG, PGS = int(mujoco.mjtSolver.mjSOL_NEWTON), int(mujoco.mjtSolver.mjSOL_CG), int(
    mujoco.mjtSolver.mjSOL_PGS)
PYRAMIDAL, ELLIPTIC = int(mujoco.mjtCone.mjCONE_PYRAMIDAL), int(mujoco.mjtCone.mjCONE_ELLIPTIC)
DSBL_ISLAND = int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
DSBL_WARMSTART = int(mujoco.mjtDisableBit.mjDSBL_WARMSTART)
CONE_STATE = int(mujoco.mjtConstraintState.mjCNSTRSTATE_CONE)

SCENES = {name: model_xml(f"conformance/solver/{name}")
          for name in ("box_plane", "stack", "condim", "articulated")}

_PILE = "\n".join(
    f'<body pos="{(i % 4) * .18 - .3:.2f} {((i // 4) % 3) * .18 - .2:.2f} '
    f'{.12 + .21 * (i // 12):.2f}">'
    '<freejoint/><geom type="box" size=".08 .08 .08"/></body>' for i in range(24))
SCENES["pile"] = ('<mujoco><worldbody><geom type="plane" size="5 5 .1"/>' + _PILE
                  + "</worldbody></mujoco>")

_PILE64 = engine.__file__.rsplit("/", 2)[0] + "/assets/pile64.xml"

SUITE = ["humanoid", "walker", "hopper", "cheetah"]
MODELS = SUITE + list(SCENES)
NSAMPLE = 4


@functools.lru_cache(maxsize=None)
def models(name):
  """(ours, MuJoCo's) model, constraints enabled; both compiled from the MJCF."""
  if name in SCENES:
    return models_of(SCENES[name])
  if name == "pile64":
    return models_of(_PILE64)
  return load_both(name, disable_constraint=False)


@functools.lru_cache(maxsize=None)
def states(name):
  """States along a MuJoCo trajectory under random controls and applied forces."""
  _, mjm = models(name)
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(7)
  out = []
  for _ in range(NSAMPLE):
    for _ in range(40):
      mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
      mjd.qfrc_applied[:] = rng.normal(size=mjm.nv)
      mujoco.mj_step(mjm, mjd)
    out.append({f: np.copy(getattr(mjd, f)) for f in
                ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "qacc_warmstart")})
  return out


def solve_both(name, state, solver_type, cone, islands=False, flags=0, noslip=0):
  """MuJoCo's mj_forward and our teacher-forced fwd_constraint at one state."""
  m, mjm = models(name)
  mjm.opt.noslip_iterations, m.opt.noslip_iterations = noslip, noslip
  mjm.opt.solver, m.opt.solver = solver_type, solver_type
  mjm.opt.cone, m.opt.cone = cone, cone
  base = int(mjm.opt.disableflags) & ~(DSBL_ISLAND | DSBL_WARMSTART)
  mjm.opt.disableflags = base | flags | (0 if islands else DSBL_ISLAND)
  m.opt.disableflags = ((int(m.opt.disableflags) & ~(DSBL_ISLAND | DSBL_WARMSTART)) | flags
                        | (0 if islands else DSBL_ISLAND))
  mjd = mujoco.MjData(mjm)
  for f, v in state.items():
    getattr(mjd, f)[...] = v
  mujoco.mj_forward(mjm, mjd)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.act[:] = mjd.act
  numjoco.forward(m, d)
  np.testing.assert_allclose(d.qacc_smooth, mjd.qacc_smooth, rtol=1e-8, atol=1e-8)
  interop.efc_from_mujoco(mjm, mjd, d)
  d.efc_force[:] = np.nan
  d.efc_state[:] = -1
  d.qacc[:] = np.nan
  forward.fwd_constraint(m.struct, d.struct)
  return m, mjm, d, mjd


def full_m(mjm, mjd):
  """MuJoCo's mass matrix, dense."""
  M = np.zeros((mjm.nv, mjm.nv))
  mujoco.mj_fullM(mjm, mjd, M)
  return M


def primal_cost(mjm, mjd, qacc):
  """Gauss + constraint cost of qacc (MuJoCo's primal objective), written independently."""
  nefc = mjd.nefc
  J = interop.efc_J_dense(mjm, mjd)
  da = qacc - mjd.qacc_smooth
  cost = 0.5 * da @ full_m(mjm, mjd) @ da
  jar = J @ qacc - mjd.efc_aref[:nefc]
  D, R, fl, typ = mjd.efc_D, mjd.efc_R, mjd.efc_frictionloss, mjd.efc_type
  i = 0
  while i < nefc:
    if i < mjd.ne:
      cost += 0.5 * D[i] * jar[i] ** 2
    elif i < mjd.ne + mjd.nf:
      if jar[i] <= -R[i] * fl[i]:
        cost += -0.5 * R[i] * fl[i] ** 2 - fl[i] * jar[i]
      elif jar[i] >= R[i] * fl[i]:
        cost += -0.5 * R[i] * fl[i] ** 2 + fl[i] * jar[i]
      else:
        cost += 0.5 * D[i] * jar[i] ** 2
    elif typ[i] != mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC:
      cost += 0.5 * D[i] * jar[i] ** 2 if jar[i] < 0 else 0.0
    else:
      con = mjd.contact[mjd.efc_id[i]]
      dim, mu, fr = con.dim, con.mu, con.friction
      N = jar[i] * mu
      T = np.linalg.norm(jar[i + 1:i + dim] * fr[:dim - 1])
      if N >= mu * T or (T <= 0 and N >= 0):
        pass
      elif mu * N + T <= 0:
        cost += 0.5 * np.sum(D[i:i + dim] * jar[i:i + dim] ** 2)
      else:
        cost += 0.5 * D[i] / (mu * mu * (1 + mu * mu)) * (N - mu * T) ** 2
      i += dim
      continue
    i += 1
  return cost


def dual_cost(mjm, mjd, force):
  """0.5 f'(J M^-1 J' + R) f + f'(J qacc_smooth - aref): PGS's objective."""
  nefc = mjd.nefc
  J = interop.efc_J_dense(mjm, mjd)
  MinvJT = np.linalg.solve(full_m(mjm, mjd), J.T)
  AR = J @ MinvJT + np.diag(mjd.efc_R[:nefc])
  b = J @ mjd.qacc_smooth - mjd.efc_aref[:nefc]
  return 0.5 * force @ AR @ force + force @ b


def rel_err(ours, theirs):
  """Largest difference relative to the largest reference value (at least 1)."""
  ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
  if ours.size == 0:
    return 0.0
  return np.max(np.abs(ours - theirs)) / max(1.0, np.max(np.abs(theirs)))


CASES = [(n, s, c) for n in MODELS for s in (NEWTON, CG, PGS) for c in (PYRAMIDAL, ELLIPTIC)]


@pytest.mark.parametrize("name,solver_type,cone", CASES)
def test_solver_matches_mujoco(name, solver_type, cone):
  """qacc, efc_force, efc_state (and Newton's statistics) agree with MuJoCo's solve; CG and PGS
  reach at least MuJoCo's cost."""
  nrows = 0
  for state in states(name):
    m, mjm, d, mjd = solve_both(name, state, solver_type, cone)
    n = mjd.nefc
    nrows += n
    if n == 0:
      np.testing.assert_array_equal(d.qacc, d.qacc_smooth)
      assert rel_err(d.qacc, mjd.qacc) < 1e-9
      assert d.solver_niter[0] == 0
      continue
    force = d.efc_force[:n]
    if solver_type == NEWTON:
      assert rel_err(d.qacc, mjd.qacc) < 1e-6
      assert rel_err(force, mjd.efc_force) < 1e-6
      np.testing.assert_array_equal(d.efc_state[:n], mjd.efc_state)
      it = mjd.solver_niter[0]
      assert d.solver_niter[0] == it
      for f in ("improvement", "gradient", "lineslope"):
        np.testing.assert_allclose(getattr(d, "solver_" + f)[:it],
                                   np.array(getattr(mjd.solver, f))[:it], rtol=1e-5, atol=1e-12,
                                   err_msg=f)
      # MuJoCo's sparse factor (nv >= 60) refactors at other times than the dense one
      counts = ("nactive", "nchange", "neval") + (() if mujoco.mj_isSparse(mjm) else ("nupdate",))
      for f in counts:
        np.testing.assert_array_equal(getattr(d, "solver_" + f)[:it],
                                      np.array(getattr(mjd.solver, f))[:it], err_msg=f)
    elif solver_type == CG:
      ours, theirs = primal_cost(mjm, mjd, d.qacc), primal_cost(mjm, mjd, mjd.qacc)
      assert ours <= theirs + 1e-6 * abs(theirs) + 1e-12
      if mjd.solver_niter[0] < mjm.opt.iterations:
        assert rel_err(d.qacc, mjd.qacc) < 1e-4
        assert rel_err(d.qfrc_constraint, mjd.qfrc_constraint) < 1e-4
    else:
      ours, theirs = dual_cost(mjm, mjd, force), dual_cost(mjm, mjd, mjd.efc_force)
      assert ours <= theirs + 1e-6 * abs(theirs) + 1e-12
      if mjd.solver_niter[0] < mjm.opt.iterations:
        assert rel_err(d.qacc, mjd.qacc) < 1e-6
        assert rel_err(force, mjd.efc_force) < 1e-6
      if cone == PYRAMIDAL:  # elliptic: forces on the cone surface tie SATISFIED/CONE
        np.testing.assert_array_equal(d.efc_state[:n], mjd.efc_state)
    np.testing.assert_allclose(d.qfrc_constraint, J_T(mjm, mjd) @ force, rtol=1e-9, atol=1e-9)
  if name in SCENES:
    assert nrows > 0, "the scene should produce constraint rows"


def J_T(mjm, mjd):
  """efc_J' of MuJoCo's rows, dense."""
  return interop.efc_J_dense(mjm, mjd).T


@pytest.mark.parametrize("solver_type,cone", [(NEWTON, PYRAMIDAL), (NEWTON, ELLIPTIC),
                                              (PGS, PYRAMIDAL)])
def test_sparse_mujoco_model(solver_type, cone):
  """humanoid_CMU (nv >= 60: MuJoCo's sparse Jacobian and sparse Newton Hessian) agrees with
  our dense solve."""
  for state in states("humanoid_CMU")[:3]:
    m, mjm, d, mjd = solve_both("humanoid_CMU", state, solver_type, cone)
    assert mujoco.mj_isSparse(mjm)
    assert d.solver_niter[0] == mjd.solver_niter[0]
    assert rel_err(d.qacc, mjd.qacc) < 1e-6
    assert rel_err(d.efc_force[:mjd.nefc], mjd.efc_force) < 1e-6


@functools.lru_cache(maxsize=None)
def _pile64_states():
  """pile64 states once the heap has formed (islands of well over 60 dofs)."""
  _, mjm = models("pile64")
  mjd = mujoco.MjData(mjm)
  out = []
  for _ in range(4):
    mujoco.mj_step(mjm, mjd, 200)
    out.append({f: np.copy(getattr(mjd, f)) for f in ("qpos", "qvel", "qacc_warmstart")})
  return out


@pytest.mark.parametrize("cone", [PYRAMIDAL, ELLIPTIC])
def test_large_island_newton(cone):
  """Newton per island on pile64 agrees with MuJoCo: islands of 60+ dofs take our sparse
  Hessian path (symbolic pattern, factor, rank-1 and cone updates, solves)."""
  largest = 0
  for state in _pile64_states():
    m, mjm, d, mjd = solve_both("pile64", state, NEWTON, cone, islands=True)
    assert d.nisland == mjd.nisland
    largest = max(largest, int(np.max(mjd.island_nv[:mjd.nisland], initial=0)))
    assert rel_err(d.qacc, mjd.qacc) < 1e-6
    assert rel_err(d.efc_force[:mjd.nefc], mjd.efc_force) < 1e-6
  assert largest >= 60, "no island of 60+ dofs: the sparse path was not exercised"


@pytest.mark.parametrize("solver_type", [NEWTON, CG, PGS])
def test_without_warmstart(solver_type):
  """With warmstart disabled the solve starts from qacc_smooth / zero forces, as MuJoCo's."""
  for state in states("stack")[:2]:
    m, mjm, d, mjd = solve_both("stack", state, solver_type, ELLIPTIC, flags=DSBL_WARMSTART)
    assert d.solver_niter[0] == mjd.solver_niter[0]
    assert rel_err(d.qacc, mjd.qacc) < (1e-4 if solver_type == CG else 1e-6)


@pytest.mark.parametrize("name", ["stack", "condim", "articulated"])
@pytest.mark.parametrize("solver_type,cone", [(NEWTON, PYRAMIDAL), (NEWTON, ELLIPTIC),
                                              (PGS, ELLIPTIC)])
def test_noslip_matches_mujoco(name, solver_type, cone):
  """The no-slip post-pass (noslip_iterations > 0) gives MuJoCo's forces and statistics."""
  for state in states(name):
    m, mjm, d, mjd = solve_both(name, state, solver_type, cone, noslip=20)
    n = mjd.nefc
    assert d.solver_niter[0] == mjd.solver_niter[0]
    assert rel_err(d.qacc, mjd.qacc) < 1e-6
    assert rel_err(d.efc_force[:n], mjd.efc_force) < 1e-6
    it = mjd.solver_niter[0]
    np.testing.assert_allclose(d.solver_improvement[:it], np.array(mjd.solver.improvement)[:it],
                               rtol=1e-5, atol=1e-12)


def test_constraint_update_matches_mujoco():
  """constraint_update: force, state, cost, qfrc_constraint and cone Hessians equal MuJoCo's
  mj_constraintUpdate at random jar (all zones of every constraint type)."""
  rng = np.random.default_rng(3)
  for name in ("condim", "articulated"):
    for cone in (PYRAMIDAL, ELLIPTIC):
      state = states(name)[1]
      m, mjm, d, mjd = solve_both(name, state, NEWTON, cone)
      n = mjd.nefc
      for _ in range(5):
        jar = rng.normal(size=n) * np.abs(mjd.efc_aref[:n]).mean()
        cost_mj = np.zeros(1)
        mujoco.mj_constraintUpdate(mjm, mjd, jar, cost_mj, 1)
        jar_ours = np.zeros(d.efc_force.shape[0])
        jar_ours[:n] = jar
        cost = solver.constraint_update(m.struct, d.struct, jar_ours, True)
        np.testing.assert_allclose(cost, cost_mj[0], rtol=1e-12)
        np.testing.assert_allclose(d.efc_force[:n], mjd.efc_force, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(d.efc_state[:n], mjd.efc_state)
        np.testing.assert_allclose(d.qfrc_constraint, mjd.qfrc_constraint, rtol=1e-10,
                                   atol=1e-10)
        for c in range(mjd.ncon):
          if mjd.efc_state[mjd.contact.efc_address[c]] == CONE_STATE:
            dim = mjd.contact.dim[c]
            np.testing.assert_allclose(d.contact_H[c, :dim * dim],
                                       mjd.contact.H[c, :dim * dim], rtol=1e-10, atol=1e-12)


def test_solver_detects_a_wrong_input():
  """The comparison can fail: one perturbed reference acceleration changes the solution."""
  state = states("stack")[0]
  m, mjm, d, mjd = solve_both("stack", state, NEWTON, PYRAMIDAL)
  n = mjd.nefc
  i = int(np.argmax(np.abs(mjd.efc_force)))
  d.efc_aref[i] *= 1.5
  forward.fwd_constraint(m.struct, d.struct)
  assert rel_err(d.efc_force[:n], mjd.efc_force) > 1e-3
