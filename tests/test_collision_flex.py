"""engine.collision.flex against MuJoCo 4.0: flex contacts (ids, dist, pos, frame, parameters)
at states along 4.0's own trajectories of MuJoCo's flex models and on small snippets, and the
contact weights against 4.0's constraint Jacobian rows (efc_J).

The kernels read MuJoCo's own model arrays and its flexvert_xpos / geom poses (namedtuples
from tests/flex_collision_harness.py), so these tests compile only engine.collision.flex and
the primitives it calls, not the engine. Sleep is disabled in the loaded models (skipping a
sleeping flex is the driver's job). Contacts are compared in 4.0's order: every case below
gives the same id sequence, so a mismatch in order or count fails. Contacts from GJK/EPA
(cylinder/box : tetrahedron, triangle : triangle) agree to ~6e-11, the analytic ones to
~1e-15.
"""
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from tests.flex_collision_harness import (collide_all, compare_contacts, flex_data,  # noqa: E402
                                          flex_model, load_mujoco, mujoco_flex_contacts)
from tests.models import model_xml                                                  # noqa: E402
from tests.test_flex_compile import NO_INTERNAL                                     # noqa: E402

GEO_TOL = 1e-9     # dist, pos, frame
PAR_TOL = 1e-12    # friction, solref, solimp, includemargin; dim and exclude exact

S5 = (300, 600, 900, 1200, 1500)
# (model, steps of 4.0's trajectory at which to compare)
TRAJECTORIES = [
  ("model/flex/trampoline.xml", S5),              # sphere : triangle
  ("model/flex/plate.xml", S5),                   # capsule : triangle, plane : vertex
  ("model/flex/basket.xml", S5),                  # sphere : triangle, plane : vertex
  ("model/flex/pancake.xml", (600, 1200)),        # plane : vertex, 81 in one pair
  ("model/flex/pinch.xml", (100, 200)),           # plane : vertex
  ("model/flex/jelly.xml", (600, 900, 1500)),     # analytic capsule : tetrahedron
  ("model/flex/floppy.xml", (600, 900, 1500)),    # cylinder : tetrahedron (GJK), 99 in one pair
  ("model/flex/sphere_radial.xml", (300, 900)),   # box : tetrahedron (GJK/EPA)
  ("model/flex/sphere_full.xml", (300, 900)),
  ("model/flex/flag.xml", (900, 1500)),           # triangle self-collision (SAP order, GJK)
  ("test/user/testdata/rigid_flex.xml", (200, 300)),   # triangle : triangle of two flexes
  ("test/engine/testdata/skingroup.xml", (200, 300)),
  ("test/user/testdata/cube_22_ascii_vol_gmshApp.xml", (100, 200)),   # plane : tetra vertex
  ("test/user/testdata/shark_22_ascii_vol_fTetWild.xml", (100,)),     # 232 plane : vertex
  ("model/flex/trilinear.xml", (1500,)),          # plane : vertex of interpolated flexes
  ("model/flex/quadratic.xml", (1000,)),
  ("test/engine/testdata/sleep/flex_mocap.xml", (50, 100, 200)),      # sphere : capsule
  ("test/engine/testdata/sleep/flex_contact.xml", (50, 200)),
  ("test/engine/testdata/sleep/flex_static.xml", (50, 200)),
]

SNIPPET_1D = model_xml("collision_flex/dim1")
SNIPPET_2D = model_xml("collision_flex/dim2")
SNIPPET_3D = model_xml("collision_flex/dim3")
SNIPPET_2D_CONVEX = model_xml("collision_flex/dim2_convex")


def _ours(mjm, mjd):
  fm = flex_model(mjm)
  fd = flex_data(mjm, mjd)
  missing = collide_all(mjm, fm, fd)
  return fm, fd, missing


def _check_state(mjm, mjd, label):
  """Compare one state; returns the number of contacts compared."""
  _, fd, _ = _ours(mjm, mjd)
  idx = mujoco_flex_contacts(mjd)
  in_order, matched, geo, par, left_theirs, left_ours = compare_contacts(mjd, idx, fd)
  assert not left_theirs and not left_ours, (label, left_theirs[:5], left_ours[:5])
  assert in_order, label
  assert matched == len(idx) == fd.ncon[0]
  assert geo < GEO_TOL, (label, geo)
  assert par < PAR_TOL, (label, par)
  return matched


def _trajectory(rel, steps, sleep=False, disable=0):
  """MuJoCo's model and data at these steps of its own trajectory (after mj_forward); the
  `disable` flags apply to that mj_forward only (the trajectory is the default one)."""
  mjm = load_mujoco(rel, rel in NO_INTERNAL, NO_INTERNAL.get(rel, ()), sleep=sleep)
  flags = mjm.opt.disableflags
  mjd = mujoco.MjData(mjm)
  k = 0
  for s in steps:
    while k < s:
      mujoco.mj_step(mjm, mjd)
      k += 1
    mjm.opt.disableflags = flags | int(disable)
    mujoco.mj_forward(mjm, mjd)
    yield mjm, mjd, s
    mjm.opt.disableflags = flags


# trajectories that take minutes (rigid_flex: two flexes whose every element pair our
# collision checks): marked slow
_SLOW = {"test/user/testdata/rigid_flex.xml"}


def _params(rows):
  """pytest params (model, steps), named by the file, the _SLOW ones marked slow."""
  return [pytest.param(r, s, id=os.path.basename(r),
                       marks=[pytest.mark.slow] if r in _SLOW else []) for r, s in rows]


@pytest.mark.parametrize("rel,steps", _params(TRAJECTORIES))
def test_trajectory_contacts(rel, steps):
  """Every flex contact of 4.0 at these states, in its order, to 1e-9."""
  total = 0
  for mjm, mjd, s in _trajectory(rel, steps):
    total += _check_state(mjm, mjd, f"{rel} step {s}")
  assert total > 0, "no contact compared"


SNIPPETS = [SNIPPET_1D, SNIPPET_2D, SNIPPET_3D, SNIPPET_2D_CONVEX]


# (plate is left out: 4.0 itself runs out of stack without its midphase there)
NO_MIDPHASE = [("model/flex/basket.xml", (500,)),
               ("model/flex/jelly.xml", (900,)), ("model/flex/flag.xml", (900,)),
               ("model/flex/sphere_radial.xml", (300,))]


@pytest.mark.parametrize("rel,steps", NO_MIDPHASE, ids=[os.path.basename(r) for r, _ in
                                                        NO_MIDPHASE])
def test_midphase_disabled(rel, steps):
  """With the midphase disabled, 4.0 collides all pairs directly: contacts in generation order
  (no sort), self-collision over element pairs e1 < e2."""
  total = 0
  for mjm, mjd, s in _trajectory(rel, steps, disable=mujoco.mjtDisableBit.mjDSBL_MIDPHASE):
    total += _check_state(mjm, mjd, f"{rel} step {s} (no midphase)")
  assert total > 0, "no contact compared"


@pytest.mark.parametrize("xml", SNIPPETS, ids=["dim1", "dim2", "dim3", "dim2_convex"])
def test_snippet_contacts(xml):
  """Sphere/capsule/box against capsule (1D) and triangle (2D) elements, plane : vertex,
  1D flex : flex, margins and gaps, priority/solmix mixing, bitmask filtering; sphere and
  capsule : tetrahedron (analytic), ellipsoid/cylinder/box : tetrahedron and triangle and
  cylinder : capsule element (GJK/EPA), triangle : capsule element of two flexes."""
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  n = _check_state(mjm, mjd, "snippet")
  assert n >= 7, n


def test_snippet_kinds():
  """The snippets exercise each kind of pair they are meant to (guards against a snippet that
  silently stops touching)."""
  kinds = set()
  for xml in SNIPPETS:
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, mjd)
    for i in range(mjd.ncon):
      c = mjd.contact[i]
      g = c.geom[0]
      kinds.add((int(mjm.geom_type[g]) if g >= 0 else -1, int(mjm.flex_dim[c.flex[1]]),
                 int(c.vert[1] >= 0)))
  # (geom type or -1 for a flex, element dim, vertex contact)
  assert {(0, 1, 1), (2, 1, 0), (3, 1, 0), (6, 1, 0), (-1, 1, 0), (2, 2, 0), (3, 2, 0),
          (6, 2, 0), (2, 3, 0), (3, 3, 0), (4, 3, 0), (5, 3, 0), (6, 3, 0), (4, 2, 0),
          (5, 2, 0), (5, 1, 0)} <= kinds, kinds


def _dense_efc_j(mjm, mjd):
  if not mujoco.mj_isSparse(mjm):
    return np.array(mjd.efc_J[:mjd.nefc * mjm.nv]).reshape(mjd.nefc, mjm.nv)
  J = np.zeros((mjd.nefc, mjm.nv))
  for r in range(mjd.nefc):
    a = mjd.efc_J_rowadr[r]
    for q in range(mjd.efc_J_rownnz[r]):
      J[r, mjd.efc_J_colind[a + q]] = mjd.efc_J[a + q]
  return J


def _check_weights(mjm, mjd):
  """Expected translational contact rows from our weights and MuJoCo's mj_jac; returns
  (rows compared, max error)."""
  from numjoco.engine.collision import flex as cf
  fm, fd, _ = _ours(mjm, mjd)
  idx = mujoco_flex_contacts(mjd)
  assert compare_contacts(mjd, idx, fd)[0]
  J = _dense_efc_j(mjm, mjd)
  vert = np.zeros(4, np.int32)
  w = np.zeros(4)
  nrow, err = 0, 0.0
  elliptic = mjm.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
  for j, i in enumerate(idx):
    c = mjd.contact[i]
    a = c.efc_address
    if a < 0:
      continue
    jp = np.zeros((3, mjm.nv))
    for side, sign in ((0, -1.0), (1, 1.0)):
      if c.geom[side] >= 0:
        t = np.zeros((3, mjm.nv))
        mujoco.mj_jac(mjm, mjd, t, None, c.pos, mjm.geom_bodyid[c.geom[side]])
        jp += sign * t
        continue
      n = cf.contact_weights(fm, fd, j, side, vert, w)
      assert n > 0 and abs(w[:n].sum() - 1) < 1e-12 and (w[:n] >= 0).all()
      for q in range(n):
        t = np.zeros((3, mjm.nv))
        mujoco.mj_jac(mjm, mjd, t, None, c.pos, mjm.flex_vertbodyid[vert[q]])
        jp += sign * w[q] * t
    frame = c.frame.reshape(3, 3)
    if elliptic or c.dim == 1:
      rows = [J[a + r] for r in range(min(c.dim, 3))]
    else:   # pyramidal: rows n +- mu_k t_k
      rows = [(J[a] + J[a + 1]) / 2] + [(J[a + 2 * k] - J[a + 2 * k + 1]) / (2 * c.friction[k])
                                        for k in range(min(c.dim - 1, 2))]
    for r, row in enumerate(rows):
      err = max(err, np.abs(frame[r] @ jp - row).max())
      nrow += 1
  return nrow, err


WEIGHTS = [
  ("model/flex/trampoline.xml", (600, 1200)), ("model/flex/plate.xml", (600, 1500)),
  ("test/engine/testdata/sleep/flex_mocap.xml", (50, 100)), ("model/flex/pinch.xml", (100,)),
  ("model/flex/jelly.xml", (900,)), ("model/flex/floppy.xml", (600,)),
  ("model/flex/flag.xml", (900,)), ("test/user/testdata/rigid_flex.xml", (300,))]


@pytest.mark.parametrize("rel,steps", _params(WEIGHTS))
def test_contact_weights_match_efc_j(rel, steps):
  """4.0 distributes an element contact with the barycentric coordinates of the closest
  element point (segment, triangle, tetrahedron; both sides of element : element contacts):
  our weights times MuJoCo's vertex-body Jacobians give its efc_J rows."""
  total = 0
  for mjm, mjd, s in _trajectory(rel, steps):
    nrow, err = _check_weights(mjm, mjd)
    assert err < 1e-11, (rel, s, err)
    total += nrow
  assert total > 0


def test_snippet_weights_match_efc_j():
  """The same on the 1D/2D snippets (capsule and triangle elements, flex : flex, pinned
  cloth corners on the world body)."""
  total = 0
  for xml in SNIPPETS:
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, mjd)
    nrow, err = _check_weights(mjm, mjd)
    assert err < 1e-11, err
    total += nrow
  assert total > 0

