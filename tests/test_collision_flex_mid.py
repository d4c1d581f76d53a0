"""The flex midphase (engine/collision.flex_mid.py) on random crumpled states of two flexes, one
self-colliding: it gives exactly the contacts of the all-pairs loops, and the element pairs
MuJoCo 4.0's midphase gives.

The kernels read MuJoCo's own model arrays and its flexvert_xpos / flexelem_aabb
(tests/flex_collision_harness.py), so these tests compile only engine.collision.flex and the
colliders it calls.
"""
import collections

import mujoco
import numpy as np
import pytest

from tests.flex_collision_harness import (collide_all, compare_contacts, flex_data,
                                          flex_model, mujoco_flex_contacts)

_XML = """<mujoco><option gravity="0 0 0"/><worldbody>
  <flexcomp name="a" type="grid" dim="{dim}" count="{count}" spacing=".1 .1 .1" radius=".01">
    <contact selfcollide="{mode}"/><edge equality="false"/>
  </flexcomp>
  <flexcomp name="b" type="grid" dim="{dim}" count="{count}" spacing=".1 .1 .1" radius=".01"
            pos=".12 .05 .04">
    <contact selfcollide="none" margin="{margin}" gap="{gap}"/><edge equality="false"/>
  </flexcomp>
</worldbody></mujoco>"""
_COUNT = {2: "6 6 1", 3: "4 4 3"}
_NARROW = int(mujoco.mjtFlexSelf.mjFLEXSELF_NARROW)
_MIDPHASE = int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)


def _states(dim, mode, noise, margin, gap, n=3, seed=0):
  """MuJoCo's model of the two flexes (flex b with this margin and gap) and data at n random
  states: every vertex moved by `noise` times a standard normal (the elements overlap their
  neighbours and the other flex)."""
  mjm = mujoco.MjModel.from_xml_string(_XML.format(dim=dim, count=_COUNT[dim], mode=mode,
                                                   margin=margin, gap=gap))
  rng = np.random.default_rng(seed)
  for _ in range(n):
    mjd = mujoco.MjData(mjm)
    mjd.qpos[:] = mjm.qpos0 + noise * rng.standard_normal(mjm.nq)
    mujoco.mj_forward(mjm, mjd)
    yield mjm, mjd


def _contacts(mjm, mjd, fm):
  """Our flex contacts with model fm: (ncon, ids (ncon, 8), dist, pos, frame, friction)."""
  fd = flex_data(mjm, mjd)
  assert collide_all(mjm, fm, fd) == 0
  n = int(fd.ncon[0])
  ids = np.hstack([fd.contact_geom[:n], fd.contact_flex[:n], fd.contact_elem[:n],
                   fd.contact_vert[:n]])
  return n, ids, fd.contact_dist[:n], fd.contact_pos[:n], fd.contact_frame[:n], \
      fd.contact_friction[:n]


@pytest.mark.parametrize("dim", [2, 3])
def test_midphase_equals_all_pairs(dim):
  """selfcollide bvh (the sorted-box midphase) gives the contacts of selfcollide narrow (every
  pair e1 < e2), and flex : flex with the midphase those with it disabled (every pair): same
  ids in the same order, the same numbers."""
  nself = nflex = 0
  for mjm, mjd in _states(dim, "bvh", 0.08, 0.01, 0.005):
    fm = flex_model(mjm)
    mid = _contacts(mjm, mjd, fm)
    selfcollide = np.where(fm.flex_selfcollide != 0, _NARROW, 0).astype(fm.flex_selfcollide.dtype)
    allpairs = fm._replace(flex_selfcollide=selfcollide,
                           opt_disableflags=fm.opt_disableflags | _MIDPHASE)
    ref = _contacts(mjm, mjd, allpairs)
    assert mid[0] == ref[0]
    for a, b in zip(mid[1:], ref[1:]):
      np.testing.assert_array_equal(a, b)
    flex = mid[1][:, 2:4]
    nself += int(np.sum(flex[:, 0] == flex[:, 1]))
    nflex += int(np.sum(flex[:, 0] != flex[:, 1]))
  assert nself > 50 and nflex > 50, (nself, nflex)


def _pair_counts(ids):
  """Contacts per unordered (flex, element) pair."""
  return collections.Counter(tuple(sorted(((r[2], r[4]), (r[3], r[5])))) for r in ids)


@pytest.mark.parametrize("margin", [0.0, 0.01])
@pytest.mark.parametrize("dim,mode", [(2, "bvh"), (3, "bvh"), (3, "auto"), (2, "sap")])
def test_midphase_matches_mujoco(dim, mode, margin):
  """Against 4.0 with its midphase: flex : flex contacts (sorted by element pair) in 4.0's
  order; self-collision by SAP in 4.0's order; self-collision by 4.0's BVH traversal, which
  orders and orients the pairs by its tree, as the same element pairs with the same number of
  contacts each. Geometry and parameters as 4.0's without margin; with a margin and gap on
  one flex, the ids and parameters (element pairs apart within the margin go through GJK's
  distance, whose geometry is the narrowphase's to match)."""
  total = 0
  for mjm, mjd in _states(dim, mode, 0.03, margin, margin / 2, seed=1):
    fm = flex_model(mjm)
    n, ids = _contacts(mjm, mjd, fm)[:2]
    idx = mujoco_flex_contacts(mjd)
    theirs = np.array([[*mjd.contact[i].geom, *mjd.contact[i].flex, *mjd.contact[i].elem,
                        *mjd.contact[i].vert] for i in idx]).reshape(-1, 8)
    tree = mode != "sap"
    if tree:
      # self contacts come last in both
      ours_self = ids[:, 2] == ids[:, 3]
      theirs_self = theirs[:, 2] == theirs[:, 3]
      assert _pair_counts(ids[ours_self]) == _pair_counts(theirs[theirs_self])
      idx = [i for i, s in zip(idx, theirs_self) if not s]
    fd = flex_data(mjm, mjd)
    if tree:
      fm = fm._replace(flex_selfcollide=np.zeros_like(fm.flex_selfcollide))
    collide_all(mjm, fm, fd)
    in_order, matched, geo, par, left_theirs, left_ours = compare_contacts(mjd, idx, fd)
    assert in_order and not left_theirs and not left_ours
    assert par < 1e-12, par
    if margin == 0:
      assert geo < 1e-9, geo
    total += n
  assert total > 100, total
