"""Snapshot: copies of Data, and contact_force equal to MuJoCo's mj_contactForce."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop
from numjoco.render.snapshot import Snapshot

PILE = """
<mujoco>
  <option cone="{cone}" timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .08 .06" condim="3"/></body>
    <body pos="0.05 0.02 0.3"><freejoint/><geom type="sphere" size=".07" condim="4"/></body>
    <body pos="-0.2 0.1 0.2"><freejoint/><geom type="capsule" size=".04 .1" condim="6"
      euler="0 80 0"/></body>
    <body pos="0.25 -0.1 0.2"><freejoint/><geom type="ellipsoid" size=".06 .05 .04"
      condim="1"/></body>
    <body pos="0.1 0.25 0.15"><freejoint/><geom type="box" size=".05 .05 .05" condim="3"
      friction="0.3"/></body>
  </worldbody>
</mujoco>
"""


def _contact_force_mujoco(mjm, mjd):
  out = np.zeros((mjd.ncon, 6))
  for i in range(mjd.ncon):
    mujoco.mj_contactForce(mjm, mjd, i, out[i])
  return out


def _settled(cone, nstep=150):
  xml = PILE.format(cone=cone)
  mjm = mujoco.MjModel.from_xml_string(xml)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, nstep)
  mujoco.mj_forward(mjm, mjd)
  return numjoco.load_model(xml), mjm, mjd


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_contact_force_decodes_efc_force_like_mujoco(cone):
  """With MuJoCo's contacts and efc_force copied in, contact_force equals mj_contactForce."""
  m, mjm, mjd = _settled(cone)
  assert mjd.ncon >= 6 and len(set(mjd.contact.dim)) >= 3
  d = numjoco.make_data(m)
  interop.efc_from_mujoco(mjm, mjd, d)
  snap = Snapshot(m)
  snap.capture(m, d)
  ref = _contact_force_mujoco(mjm, mjd)
  assert snap.ncon == mjd.ncon
  np.testing.assert_allclose(snap.contact_force[:snap.ncon], ref, rtol=1e-12, atol=1e-12)
  assert np.abs(ref[:, 0]).max() > 0.1        # real forces, not zeros on both sides


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_contact_force_after_our_forward(cone):
  """Our engine's contacts and forces, from MuJoCo's state, give MuJoCo's contact forces."""
  m, mjm, mjd = _settled(cone)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  snap = Snapshot(m)
  snap.capture(m, d)
  ref = _contact_force_mujoco(mjm, mjd)
  assert snap.ncon == mjd.ncon
  ours = {}
  for i in range(snap.ncon):
    key = (tuple(snap.contact_geom[i]), tuple(np.round(snap.contact_pos[i], 6)))
    ours[key] = snap.contact_force[i]
  scale = np.abs(ref[:, 0]).max()
  for i in range(mjd.ncon):
    key = (tuple(mjd.contact.geom[i]), tuple(np.round(mjd.contact.pos[i], 6)))
    assert key in ours, f"MuJoCo's contact {key} is missing from ours"
    np.testing.assert_allclose(ours[key], ref[i], rtol=1e-5, atol=1e-6 * scale,
                               err_msg=f"contact {key}")


def test_capture_and_copy_from():
  """capture copies (not views) Data; copy_from reproduces every field."""
  m, mjm, mjd = _settled("pyramidal", 50)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  a = Snapshot(m)
  a.capture(m, d)
  np.testing.assert_array_equal(a.geom_xpos, d.geom_xpos)
  assert a.time == d.time and a.ncon == d.ncon and a.nefc == d.nefc
  np.testing.assert_array_equal(a.contact_geom[:a.ncon, 0], d.contact_geom1[:d.ncon])
  d.geom_xpos[:] += 1.0
  assert not np.allclose(a.geom_xpos, d.geom_xpos)
  b = Snapshot(m)
  b.copy_from(a)
  for name in ("geom_xpos", "xmat", "subtree_com", "qpos", "energy"):
    np.testing.assert_array_equal(getattr(b, name), getattr(a, name))
  n = a.ncon
  np.testing.assert_array_equal(b.contact_force[:n], a.contact_force[:n])
  assert b.ncon == n and b.time == a.time
