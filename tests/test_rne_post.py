"""cfrc_ext and the force/torque sensors of MuJoCo 4.0's mj_rnePostConstraint: a weld's torque
scaled by 0.5 torquescale and rotated into the world (4.0 changelog: "Fixed the torque applied
by weld constraints"), and the forces spatial tendons apply to bodies along their paths (spring,
damper, actuator, limit, friction loss, equality and armature)."""
import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import models_and_data

_WELD = """
<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1"><freejoint/><geom type="box" size=".1 .2 .3" mass="1"/>
      <site name="sa" pos=".1 0 .2" euler="10 20 30"/>
      <body pos=".3 0 0"><joint axis="0 1 0"/><geom size=".1" mass=".5"/></body>
    </body>
    <body name="b" pos=".5 .2 1.2" quat=".9 .1 .3 .2"><freejoint/>
      <geom type="box" size=".2 .1 .1" mass="2"/><site name="sb" pos="0 .1 0" euler="-30 0 45"/>
    </body>
  </worldbody>
  <equality>{weld}</equality>
  <sensor><force site="sa"/><torque site="sa"/><force site="sb"/><torque site="sb"/></sensor>
</mujoco>"""
_WELDS = {
    "bodies": '<weld body1="a" body2="b" relpose=".1 .2 .3 .8 .2 -.3 .4" anchor=".1 -.2 .05"/>',
    "torquescale": '<weld body1="a" body2="b" torquescale=".3" relpose=".1 .2 .3 .8 .2 -.3 .4"/>',
    "world": '<weld body1="b" body2="world" torquescale="2"/>',
    "sites": '<weld site1="sa" site2="sb" torquescale=".7"/>',
}

_TENDON = """
<mujoco>
  <worldbody>
    <site name="w" pos="0 0 2"/>
    <body name="a" pos="0 0 1"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/>
      <site name="sa" pos=".1 0 0"/><site name="sa2" pos="-.1 0 .1"/>
      <body pos=".3 0 0"><joint axis="0 1 0"/><geom size=".05" mass=".5"/>
        <site name="sa3" pos=".05 0 0"/></body>
    </body>
    <body name="b" pos=".5 0 1"><freejoint/>
      <geom name="cyl" type="cylinder" size=".1 .1" zaxis="0 1 0" mass="2"/>
      <site name="side" pos="0 0 -.3"/>
    </body>
    <body name="c" pos="1 0 1"><freejoint/><geom type="box" size=".05 .05 .05" mass="1"/>
      <site name="sc" pos="-.05 0 0"/><site name="sc2" pos=".05 0 0"/></body>
  </worldbody>
  <tendon>
    <spatial name="t" {attrs}>{path}</spatial>
    <spatial name="t2" stiffness="20" springlength=".2 .2"><site site="sa2"/><site site="sc2"/></spatial>
  </tendon>
  <actuator><motor tendon="t" gear="{gear}"/></actuator>
  <equality>{eq}</equality>
  <sensor><force site="sa"/><torque site="sa"/><force site="sc"/><torque site="sc"/></sensor>
</mujoco>"""
_PATH = '<site site="w"/><site site="sa"/><site site="sa3"/><geom geom="cyl"/><site site="sc"/>'
_PULLEY = ('<site site="sa"/><geom geom="cyl" sidesite="side"/><site site="sc"/><pulley divisor="2"/>'
           '<site site="sa3"/><site site="w"/>')
_TENDONS = {
    "spring_damper": dict(attrs='stiffness="50" damping="3" springlength=".3 .3"'),
    "actuator": dict(attrs='', gear="2"),
    "limit": dict(attrs='limited="true" range="0 1.2"'),
    "frictionloss": dict(attrs='frictionloss="2" stiffness="10"'),
    "armature": dict(attrs='armature=".3" stiffness="20"', path='<site site="w"/><site site="sa"/>'
                     '<site site="sa3"/><site site="sc"/>'),
    "pulley": dict(attrs='stiffness="50" damping="1"', path=_PULLEY),
    "equality": dict(attrs='', eq='<tendon tendon1="t" tendon2="t2" polycoef="0 1.5 .3 0 0"/>'),
}


def _compare(m, d, mjm, mjd, seeds=3, scale=.1):
  rng = np.random.default_rng(0)
  for _ in range(seeds):
    mjd.qpos[:] = mjm.qpos0 + rng.normal(size=mjm.nq) * scale
    mujoco.mj_normalizeQuat(mjm, mjd.qpos)
    mjd.qvel[:] = rng.normal(size=mjm.nv)
    mjd.ctrl[:] = rng.uniform(-1, 1, size=mjm.nu)
    mujoco.mj_forward(mjm, mjd)
    d.qpos[:], d.qvel[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.ctrl
    numjoco.forward(m, d)
    assert d.nefc == mjd.nefc
    np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=1e-7, atol=1e-7)
    scale_f = 1 + np.abs(mjd.cfrc_ext).max()
    np.testing.assert_allclose(d.cfrc_ext, mjd.cfrc_ext, rtol=0, atol=1e-8 * scale_f)
    np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-8,
                               atol=1e-8 * (1 + np.abs(mjd.sensordata).max()))
    assert np.abs(mjd.cfrc_ext).max() > 1e-3   # the test sees forces


@pytest.mark.parametrize("case", sorted(_WELDS))
def test_weld_torque(case):
  _compare(*models_and_data(_WELD.format(weld=_WELDS[case])))


@pytest.mark.parametrize("case", sorted(_TENDONS))
def test_spatial_tendon_forces(case):
  c = dict(dict(attrs="", path=_PATH, gear="0", eq=""), **_TENDONS[case])
  xml = _TENDON.format(**c)
  m, d, mjm, mjd = models_and_data(xml)
  _compare(m, d, mjm, mjd, scale=.02)
  # the tendon's own part is what the test is about: without it cfrc_ext differs
  if case != "equality":
    tendon_free = _TENDON.format(**dict(c, attrs="", gear="0", eq=""))
    m2, d2, mjm2, mjd2 = models_and_data(tendon_free)
    d2.qpos[:], d2.qvel[:], d2.ctrl[:] = mjd.qpos, mjd.qvel, mjd.ctrl
    numjoco.forward(m2, d2)
    assert np.abs(d2.cfrc_ext - mjd.cfrc_ext).max() > 1e-3


_ADHESION = """
<mujoco>
  <option cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="2 2 .1" adhesion="3"/>
    <body pos="0 0 .0995"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/>
      <site name="s" size=".2 .2 .2" type="box"/></body>
  </worldbody>
  <sensor><touch site="s"/><force site="s"/><torque site="s"/>
    <contact body1="world" data="found force torque"/></sensor>
</mujoco>"""


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_adhesive_contact_forces_are_net_of_the_pull(cone):
  """mj_contactForce subtracts the contact's adhesion from the normal force: touch, force and
  contact sensors and cfrc_ext read the net force (4.0: a 1 kg box held by adhesion reads its
  weight, while its rows carry weight + pull)."""
  m, d, mjm, mjd = models_and_data(_ADHESION.format(cone=cone))
  for _ in range(50):
    mujoco.mj_step(mjm, mjd)
  d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  assert mjd.ncon == d.ncon == 4 and mjd.contact.adhesion.max() == 3
  np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-8, atol=1e-8)
  np.testing.assert_allclose(d.cfrc_ext, mjd.cfrc_ext, rtol=1e-8, atol=1e-8)
  assert abs(mjd.sensordata[0] - 9.81) < 0.05   # touch: the weight, not weight + 4 x 3
