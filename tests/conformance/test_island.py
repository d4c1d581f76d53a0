"""Conformance of constraint islands (engine.island, per-island solving in engine.solver)
against MuJoCo with its default settings (islands on).

Two levels: teacher-forced solves at sampled states (MuJoCo's rows copied into ours, see
test_solver.solve_both) for every solver, and the full pipeline teacher-forced along MuJoCo's
trajectories (our collision, rows, islands and solver) for Newton. Both compare the island
structure (count, tree/dof/row maps), per-island iteration counts and statistics, and qacc /
efc_force.
"""
import mujoco
import numpy as np
import pytest

from numjoco.engine import forward
from tests.conformance import test_teacher_forced as tf
from tests.conformance.test_solver import (CG, DSBL_ISLAND, ELLIPTIC, NEWTON, PGS, PYRAMIDAL,
                                           rel_err, solve_both, states)
from tests.models import models_of, teacher_forced

NSOLVER = 200

# several separate stacks, spheres and capsules on a plane: many islands, some trees in none
_BODIES = []
for s, (x, y) in enumerate([(0, 0), (.6, 0), (0, .6)]):
  for k in range(3):
    _BODIES.append(f'<body pos="{x + .02 * k:.2f} {y:.2f} {.1 + .21 * k:.2f}"><freejoint/>'
                   '<geom type="box" size=".1 .1 .1"/></body>')
for j, x in enumerate([-.6, -.3, .9]):
  _BODIES.append(f'<body pos="{x} -.6 .1"><freejoint/><geom type="sphere" size=".1"/></body>')
_BODIES.append('<body pos=".6 .6 .3"><freejoint/>'
               '<geom type="capsule" size=".05 .1" euler="0 90 0"/></body>')
_BODIES.append('<body pos="-.6 .6 3"><freejoint/><geom type="sphere" size=".1"/></body>')
STACKS = ('<mujoco><worldbody><geom type="plane" size="5 5 .1"/>' + "".join(_BODIES)
          + "</worldbody></mujoco>")

_MAPS = ("tree_island", "dof_island", "map_dof2idof", "map_idof2dof", "island_ntree",
         "island_itreeadr", "island_nv", "island_idofadr", "island_dofadr")
_ROW_MAPS = ("efc_island", "map_efc2iefc", "map_iefc2efc")
_ISLAND_ROWS = ("island_ne", "island_nf", "island_nefc", "island_iefcadr")


def check_islands(m, mjm, d, mjd, p=None):
  """Island count and maps equal MuJoCo's; p (row_match) when our rows are in another order
  (then the row maps, which depend on the order, are compared through efc_island only)."""
  ni = mjd.nisland
  assert d.nisland == ni
  assert d.nidof == mjd.nidof
  if ni == 0:
    return
  for f in _MAPS:
    ours, theirs = getattr(d, f), np.asarray(getattr(mjd, f))
    n = theirs.shape[0] if f in ("tree_island", "dof_island", "map_dof2idof",
                                 "map_idof2dof") else ni
    np.testing.assert_array_equal(ours[:n], theirs[:n], err_msg=f)
  if p is not None and not np.array_equal(p, np.arange(mjd.nefc)):
    np.testing.assert_array_equal(d.efc_island[p], mjd.efc_island)
  else:
    for f in _ROW_MAPS:
      np.testing.assert_array_equal(getattr(d, f)[:mjd.nefc], getattr(mjd, f), err_msg=f)
  for f in _ISLAND_ROWS:
    np.testing.assert_array_equal(getattr(d, f)[:ni], getattr(mjd, f)[:ni], err_msg=f)


def check_statistics(d, mjd, fields, rtol=1e-5, niter_slack=0):
  """Per-island iteration counts (within niter_slack), and the named statistics of every
  island's iterations."""
  ni = max(1, mjd.nisland)
  niter = d._arrays["solver_niter"]
  if niter_slack:
    assert np.abs(niter - mjd.solver_niter).max() <= niter_slack, (niter, mjd.solver_niter)
    return
  np.testing.assert_array_equal(niter, mjd.solver_niter)
  for k in range(min(ni, 20)):
    a, n = k * NSOLVER, min(int(mjd.solver_niter[k]), NSOLVER)
    for f in fields:
      ours = getattr(d, "solver_" + f)[a:a + n]
      theirs = np.array(getattr(mjd.solver, f))[a:a + n]
      if f in ("improvement", "gradient", "lineslope"):
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-10, err_msg=f"{f} {k}")
      else:
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{f} island {k}")


SOLVE_CASES = [(n, s, c, ns) for n in ("stack", "articulated", "condim", "pile")
               for s, c, ns in ((NEWTON, PYRAMIDAL, 0), (NEWTON, ELLIPTIC, 0), (CG, PYRAMIDAL, 0),
                                (CG, ELLIPTIC, 0), (PGS, PYRAMIDAL, 0), (PGS, ELLIPTIC, 0),
                                (NEWTON, ELLIPTIC, 20), (PGS, PYRAMIDAL, 20))]


@pytest.mark.parametrize("name,solver_type,cone,noslip", SOLVE_CASES)
def test_island_solve_matches_mujoco(name, solver_type, cone, noslip):
  """Teacher-forced solve with islands on (MuJoCo's default): islands, per-island iteration
  counts and statistics, qacc, efc_force and efc_state equal MuJoCo's."""
  nisland = 0
  for state in states(name):
    m, mjm, d, mjd = solve_both(name, state, solver_type, cone, islands=True, noslip=noslip)
    n = mjd.nefc
    check_islands(m, mjm, d, mjd)
    nisland = max(nisland, mjd.nisland)
    # dual states of elliptic / no-slip forces tie on cone surfaces (see test_solver); CG's
    # late iterations amplify round-off, so only its iteration counts are compared
    ties = (solver_type == PGS and cone == ELLIPTIC) or noslip
    fields = ("improvement",) if ties else ("improvement", "nactive", "nchange")
    if solver_type == NEWTON and not noslip:
      fields += ("gradient", "lineslope", "neval")
      if not mujoco.mj_isSparse(mjm):
        fields += ("nupdate",)
    if solver_type == CG:
      # MuJoCo's sparse products (nv >= 60) round otherwise: CG may stop one iteration apart
      check_statistics(d, mjd, (), niter_slack=int(mujoco.mj_isSparse(mjm)))
    else:
      check_statistics(d, mjd, fields)
    tol = 1e-4 if solver_type == CG else 1e-9
    assert rel_err(d.qacc, mjd.qacc) < tol
    assert rel_err(d.efc_force[:n], mjd.efc_force) < tol
    if not ties:
      np.testing.assert_array_equal(d.efc_state[:n], mjd.efc_state)
  assert nisland >= 2, "the scene should have several islands"


def test_disabled_islands_solve_as_one():
  """With the ISLAND disable bit set nothing is islanded (nisland 0, one iteration count)."""
  for state in states("stack")[:2]:
    m, mjm, d, mjd = solve_both("stack", state, NEWTON, PYRAMIDAL, islands=False)
    assert mjd.nisland == 0 and d.nisland == 0
    check_statistics(d, mjd, ("improvement", "nactive"))


def test_island_comparison_can_fail():
  """Solving as one system gives other iteration counts than MuJoCo's per-island solve (so the
  per-island checks above are sensitive), while the forces still agree to the tolerance."""
  differ = 0
  for state in states("stack"):
    m, mjm, d, mjd = solve_both("stack", state, CG, PYRAMIDAL, islands=True)
    m.opt.disableflags = int(m.opt.disableflags) | DSBL_ISLAND
    d.qacc[:] = np.nan
    forward.fwd_constraint(m.struct, d.struct)
    m.opt.disableflags = int(m.opt.disableflags) & ~DSBL_ISLAND
    differ += not np.array_equal(d._arrays["solver_niter"], mjd.solver_niter)
  assert differ > 0


def _load(name):
  if name == "stacks":
    return models_of(STACKS)
  return tf._load(name)


def row_match(d, mjd):
  """p with our row p[i] matching MuJoCo's row i: the identity for non-contact rows; contacts
  matched by geom pair and nearest position (collision may list a pair's contacts in another
  order, e.g. at ties of aligned boxes)."""
  n = mjd.nefc
  p = np.arange(n)
  used = set()
  for c in range(mjd.ncon):
    g = (mjd.contact.geom1[c], mjd.contact.geom2[c])
    best, bestd = -1, np.inf
    for k in range(d.ncon):
      if k in used or (d.contact_geom1[k], d.contact_geom2[k]) != g:
        continue
      dist = np.linalg.norm(d.contact_pos[k] - mjd.contact.pos[c])
      if dist < bestd:
        best, bestd = k, dist
    assert best >= 0, f"contact {c} has no match"
    used.add(best)
    a, b = mjd.contact.efc_address[c], d.contact_efc_address[best]
    nrow = (2 * (mjd.contact.dim[c] - 1) if mjd.efc_type[a] == PYRAMIDAL_ROW
            else mjd.contact.dim[c])
    p[a:a + nrow] = np.arange(b, b + nrow)
  return p


PYRAMIDAL_ROW = int(mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL)


def teacher_forced_islands(name, cone, nstep, every=1, seed=0):
  """Full pipeline along MuJoCo's trajectory (Newton, islands on); checks islands and
  per-island statistics at every compared step; returns worst qacc / efc_force errors and the
  largest island count seen."""
  m, mjm = _load(name)
  mjm.opt.solver = m.opt.solver = NEWTON
  mjm.opt.cone = m.opt.cone = cone
  worst = {"qacc": 0.0, "efc_force": 0.0}
  nisland = 0
  # our rows differ from MuJoCo's at round-off (own collision): a line search may take one
  # evaluation more or less, so neval is not compared here (it is in the solve tests)
  fields = ("improvement", "gradient", "nactive", "nchange")
  reordered = 0
  for i, d, mjd in teacher_forced(m, mjm, nstep, every, seed):
    assert (d.ncon, d.nefc) == (mjd.ncon, mjd.nefc), f"step {i}: contacts/rows differ"
    p = row_match(d, mjd)
    reordered += not np.array_equal(p, np.arange(mjd.nefc))
    check_islands(m, mjm, d, mjd, p)
    check_statistics(d, mjd, fields)
    np.testing.assert_array_equal(d.efc_state[p], mjd.efc_state, err_msg=f"step {i}")
    nisland = max(nisland, mjd.nisland)
    worst["qacc"] = max(worst["qacc"], rel_err(d.qacc, mjd.qacc))
    worst["efc_force"] = max(worst["efc_force"], rel_err(d.efc_force[p], mjd.efc_force))
  worst["reordered_steps"] = reordered
  return worst, nisland


@pytest.mark.parametrize("cone", [PYRAMIDAL, ELLIPTIC])
@pytest.mark.parametrize("name,nstep,min_islands", [("stacker", 500, 2), ("humanoid", 300, 1),
                                                    ("walker", 300, 1), ("stacks", 400, 6)])
def test_newton_islands_teacher_forced(name, nstep, min_islands, cone):
  """Full pipeline, MuJoCo's default (islands on): per-island Newton equals MuJoCo's."""
  worst, nisland = teacher_forced_islands(name, cone, nstep)
  assert nisland >= min_islands
  assert worst["qacc"] <= 1e-9 and worst["efc_force"] <= 1e-9, worst


# one island: a box with a frictional hinge lid resting on the plane, welded at the lid to
# the world by a soft equality; beside it a pendulum (a tree with no rows: nidof < nv)
_ONE = """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
<body name="box" pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/>
  <body name="lid" pos="0 0 .12"><joint type="hinge" axis="1 0 0" frictionloss=".01"/>
    <geom type="box" size=".1 .1 .01"/></body></body>
{pendulum}
</worldbody>
<equality><connect body1="lid" body2="world" anchor="0 0 .22" solref=".05 1"/></equality>
</mujoco>"""
_PENDULUM = """<body pos="2 0 1"><joint type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"/></body>"""


@pytest.mark.parametrize("pendulum", [False, True])
def test_single_island_maps_and_rows_match_mujoco(pendulum):
  """The single-island pass (island._one_island): every map and per-island count, and the
  island-ordered row data, equal MuJoCo's, with every dof in the island and with a tree in
  none."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  xml = _ONE.format(pendulum=_PENDULUM if pendulum else "")
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, 50)
  mujoco.mj_forward(mjm, mjd)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  assert mjd.nisland == 1 and mjd.ne > 0 and mjd.nf > 0 and mjd.ncon > 0
  assert (mjd.nidof < mjm.nv) == pendulum
  assert d.nefc == mjd.nefc
  check_islands(m, mjm, d, mjd)
  for f in ("iefc_type", "iefc_id"):
    np.testing.assert_array_equal(getattr(d, f)[:mjd.nefc], getattr(mjd, f), err_msg=f)
  for f in ("iefc_frictionloss", "iefc_D", "iefc_R"):
    np.testing.assert_allclose(getattr(d, f)[:mjd.nefc], getattr(mjd, f), rtol=1e-9,
                               atol=1e-12, err_msg=f)
