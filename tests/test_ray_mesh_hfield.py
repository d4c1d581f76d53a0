"""Rangefinder rays against meshes and height fields (mj_rayMesh, mj_rayHfield) vs MuJoCo."""
import os

import mujoco
import numpy as np

import numjoco
from tests.models import free_pose_forward, models_of

_ASSETS = os.path.join(os.path.dirname(__file__), "assets", "mujoco")
_RNG = np.random.default_rng(3)
_ELEV = " ".join("%.3f" % x for x in _RNG.uniform(0, 1, 8 * 10))


def _model(nray):
  sites = "".join(f'<site name="s{i}" pos="0 0 0"/>' for i in range(nray))
  sens = "".join(f'<rangefinder site="s{i}"/>' for i in range(nray))
  return f"""<mujoco><compiler meshdir="{_ASSETS}"/>
  <asset><mesh name="cone" file="cone.obj" scale=".3 .3 .3"/>
    <hfield name="h" nrow="8" ncol="10" size="1.5 1.2 .4 .1" elevation="{_ELEV}"/></asset>
  <worldbody><geom type="hfield" hfield="h" pos="0 0 -.5" euler="5 -3 20"/>
    <geom type="mesh" mesh="cone" pos=".4 -.3 .2" euler="30 10 0"/>
    <geom type="mesh" mesh="cone" pos="-.5 .4 .1" euler="-20 40 0" rgba="1 1 1 0"/>
    <body name="probe" pos="0 0 1"><freejoint/><geom size=".01" contype="0" conaffinity="0"/>
      {sites}</body></worldbody><sensor>{sens}</sensor></mujoco>"""


def test_rangefinders_hit_meshes_and_hfield():
  nray = 24
  xml = _model(nray)
  m, mjm = models_of(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(0)
  hits = 0
  for trial in range(30):
    # every site looks along its own random direction (site z axis)
    for i in range(nray):
      q = rng.normal(size=4)
      q[3] = abs(q[3]) + 1.0   # mostly downwards-ish and sideways
      q /= np.linalg.norm(q)
      mjm.site_quat[i] = q
      m.site_quat[i] = q
      mjm.site_pos[i] = rng.uniform(-0.6, 0.6, 3)
      m.site_pos[i] = mjm.site_pos[i]
    mjd.qpos[:] = 0
    free_pose_forward(m, d, mjm, mjd, rng, 0.8, (0.2, 1.0))
    np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-9, atol=1e-9,
                               err_msg=f"trial {trial}")
    hits += int((mjd.sensordata > 0).sum())
  assert hits > 100, "too few rays hit anything: test is vacuous"
