"""Preallocated constraint room: efc_J, iefc_J and solver_Y hold njmax rows of at most
types.efc_row_nnz nonzeros each (nJmax), not njmax x nv. MuJoCo's own sleep/perf/smooth.xml
(343 trees, nv 4459) needed 26 GB of Data that way and was killed for memory."""

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import types as t
from tests.models import models_of

# many trees, one of them a long chain, and a spatial tendon across two trees
_TREES = """
<mujoco>
  <option solver="PGS" cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <site name="anchor" pos="0 0 2"/>
    <body name="other" pos="-2 -1 .2">
      <freejoint/>
      <geom type="box" size=".1 .1 .1"/>
      <body pos="0 0 .15">
        <joint type="ball"/>
        <geom type="capsule" size=".04" fromto="0 0 0 0 0 .2"/>
        <site name="tip" pos="0 0 .2"/>
      </body>
    </body>
    <replicate count="{count}" offset=".35 0 0">
      <body pos="-2 0 .2">
        <freejoint/>
        <geom type="box" size=".1 .1 .1"/>
        <body pos="0 0 .15">
          <joint type="ball"/>
          <geom type="capsule" size=".04" fromto="0 0 0 0 0 .2"/>
        </body>
      </body>
    </replicate>
    <body name="chain" pos="0 1 .3">
      <freejoint/>
      <geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/>
      <body pos=".3 0 0"><joint axis="0 0 1"/><geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/>
        <body pos=".3 0 0"><joint axis="0 0 1"/><geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/>
          <body pos=".3 0 0"><joint axis="0 1 0"/><geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/>
            <site name="chain_tip" pos=".3 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial limited="true" range="0 1.2"><site site="chain_tip"/><site site="tip"/></spatial>
  </tendon>
  <equality><connect body1="chain" body2="world" anchor="0 0 0"/></equality>
</mujoco>"""


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_rows_stay_within_the_bound_and_forward_matches_mujoco(cone):
  m, mjm = models_of(_TREES.format(count=12, cone=cone), quiet=True)
  # the chain (6 + 3 dofs) and the tendon's two trees (9 + 9) bound a row
  assert t.efc_row_nnz_of(m) == 2 * (9 + 9) == t.efc_row_nnz_of(mjm)
  assert m.sizes()["nJmax"] == m.sizes()["njmax"] * 36 < m.sizes()["njmax"] * m.nv
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(3)
  for _ in range(3):
    mjd.qpos[:] = mjm.qpos0
    z = [mjm.jnt_qposadr[j] + 2 for j in range(mjm.njnt) if mjm.jnt_type[j] == 0]
    mjd.qpos[z[:-1]] = rng.uniform(0.05, 0.12, len(z) - 1)   # boxes pressed into the floor
    mjd.qvel[:] = rng.normal(size=mjm.nv)
    mujoco.mj_forward(mjm, mjd)
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    numjoco.forward(m, d)
    assert mjd.ncon >= 12 and d.nefc == mjd.nefc and d.nefc > 60
    nnz = d.efc_J_rownnz[:d.nefc]
    assert nnz.max() <= t.efc_row_nnz_of(m)
    assert d.solver_Ynnz[:d.nefc].max() <= t.efc_row_nnz_of(m)
    np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=1e-6, atol=1e-6 * (1 + abs(mjd.qacc).max()))


def test_many_trees_fit_in_memory():
  """344 trees of 9 dofs (about the size of MuJoCo's smooth.xml): Data fits in memory. What
  remains is mostly the dense nv x nv Newton work matrices (solver_L, solver_Lpat, ...)."""
  xml = _TREES.format(count=343, cone="pyramidal")
  m, mjm = models_of(xml, quiet=True)
  d = numjoco.make_data(m)
  dense_j = m.sizes()["njmax"] * m.nv * 8 * 3   # efc_J, iefc_J, solver_Y as they were
  rows = d.efc_J.nbytes + d.iefc_J.nbytes + d.solver_Y.nbytes
  assert rows < dense_j / 50, (rows, dense_j)
  assert sum(a.nbytes for a in d._arrays.values()) < 1.5e9 < dense_j
