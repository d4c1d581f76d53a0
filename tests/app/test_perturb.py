"""Mouse perturbation: picking rays and MuJoCo's spring law, compared with MuJoCo's own."""
import numpy as np
import pytest

import engine
from app import perturb

mujoco = pytest.importorskip("mujoco")

XML = """<mujoco><worldbody><geom type="plane" size="2 2 .1"/>
  <body name="arm" pos="0 0 1"><joint type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 .4 0 0" size=".05"/>
    <body name="box" pos=".4 0 0"><joint type="ball"/>
      <geom type="box" size=".1 .05 .08" pos=".1 0 0"/></body></body>
  <body name="egg" pos="1 0 .5" euler="0.3 0.2 0.1"><freejoint/>
    <geom type="ellipsoid" size=".1 .2 .15"/><geom type="cylinder" size=".05 .2" pos="0 0 .3"/></body>
</worldbody></mujoco>"""


def _both():
  m = engine.load_model(XML)
  d = engine.make_data(m)
  mm = mujoco.MjModel.from_xml_string(XML)
  md = mujoco.MjData(mm)
  rng = np.random.default_rng(0)
  md.qpos[:] = mm.qpos0 + rng.normal(0, 0.2, mm.nq)
  for adr in (2, 9):
    md.qpos[adr:adr + 4] /= np.linalg.norm(md.qpos[adr:adr + 4])
  md.qvel[:] = rng.normal(0, 1, mm.nv)
  mujoco.mj_forward(mm, md)
  d.qpos[:], d.qvel[:] = md.qpos, md.qvel
  engine.forward(m, d)
  return m, d, mm, md


def test_ray_pick_matches_mj_ray():
  """Rays through random points hit the same body at the same distance as mujoco.mj_ray."""
  m, d, mm, md = _both()
  rng = np.random.default_rng(1)
  geomid = np.zeros(1, np.int32)
  hits = set()
  for _ in range(300):
    p = np.array([0.5, -2.0, 0.8]) + rng.normal(0, 0.05, 3)
    target = np.array([rng.uniform(-0.2, 1.3), 0, rng.uniform(0.3, 1.3)])
    u = (target - p) / np.linalg.norm(target - p)
    t = mujoco.mj_ray(mm, md, p, u, None, 1, -1, geomid)
    body, point = perturb.select(m, d, p, u, skip_static=False)
    if geomid[0] < 0:
      assert body == -1
      continue
    hits.add(int(geomid[0]))
    assert body == mm.geom_bodyid[geomid[0]]
    np.testing.assert_allclose(point, p + t * u, atol=1e-9)
  assert hits == set(range(mm.ngeom))   # every geom type was hit somewhere


def test_local_mass_and_force_match_mujoco():
  """mjv_initPerturb's effective mass and mjv_applyPerturbForce's wrench, body by body."""
  m, d, mm, md = _both()
  scn = mujoco.MjvScene(mm, 100)
  cam = mujoco.MjvCamera()
  opt = mujoco.MjvOption()
  mujoco.mjv_updateScene(mm, md, opt, None, cam, mujoco.mjtCatBit.mjCAT_ALL, scn)
  for body, local in ((1, [0.3, 0.02, 0.01]), (2, [0.15, 0.05, -0.02]), (3, [0.05, 0.1, 0.2])):
    pert = mujoco.MjvPerturb()
    pert.select = body
    pert.localpos = local
    mujoco.mjv_initPerturb(mm, md, scn, pert)
    selpos = md.xmat[body].reshape(3, 3) @ local + md.xpos[body]
    ours = perturb.local_mass(m, d, body, selpos)
    assert ours == pytest.approx(pert.localmass, rel=1e-9)
    pert.refselpos = selpos + [0.1, -0.05, 0.2]
    pert.active = int(mujoco.mjtPertBit.mjPERT_TRANSLATE)
    md.xfrc_applied[:] = 0
    mujoco.mjv_applyPerturbForce(mm, md, pert)
    p = perturb.Perturb(select=body, localpos=np.array(local), refselpos=pert.refselpos.copy(),
                        active=True, localmass=ours)
    f, tq = perturb.apply_force(m, d, p, mm.vis.map.stiffness, mm.vis.map.stiffnessrot)
    np.testing.assert_allclose(np.concatenate([f, tq]), md.xfrc_applied[body], rtol=1e-9,
                               atol=1e-9)


def _scene(mm, md, azimuth, elevation):
  scn = mujoco.MjvScene(mm, 100)
  cam = mujoco.MjvCamera()
  cam.azimuth, cam.elevation, cam.distance, cam.lookat = azimuth, elevation, 3.0, [0.5, 0, 1]
  mujoco.mjv_updateScene(mm, md, mujoco.MjvOption(), None, cam, mujoco.mjtCatBit.mjCAT_ALL, scn)
  return scn


@pytest.mark.parametrize("action", ["MOVE_V", "MOVE_H", "ROTATE_V", "ROTATE_H"])
def test_mouse_moves_the_reference_as_mjv_movePerturb(action):
  """The reference point / orientation follows the mouse exactly as mjv_movePerturb moves it."""
  from render.camera import Camera, Mouse
  m, d, mm, md = _both()
  scn = _scene(mm, md, 60.0, -30.0)
  body = 3
  pert = mujoco.MjvPerturb()
  pert.select = body
  pert.localpos = [0.02, 0.03, 0.01]
  mujoco.mjv_initPerturb(mm, md, scn, pert)
  ours = perturb.Perturb(select=body, localpos=np.array(pert.localpos),
                         refselpos=pert.refselpos.copy(), refquat=pert.refquat.copy(),
                         scale=pert.scale)
  cam = Camera(m)
  cam.azimuth, cam.elevation, cam.distance, cam.lookat = 60.0, -30.0, 3.0, np.array([0.5, 0, 1])
  _, forward, _ = cam.pose()
  xiquat = perturb.quat_mul(d.xquat[body], m.body_iquat[body])
  for dx, dy in ((0.05, -0.02), (-0.03, 0.08), (0.2, 0.1)):
    mujoco.mjv_movePerturb(mm, md, int(getattr(mujoco.mjtMouse, "mjMOUSE_" + action)), dx, dy,
                           scn, pert)
    ours.move(getattr(Mouse, action), dx, dy, forward, xiquat)
    np.testing.assert_allclose(ours.refselpos, pert.refselpos, atol=1e-9)
    np.testing.assert_allclose(ours.refquat, pert.refquat, atol=1e-9)


def test_rotation_torque_matches_mujoco():
  """mjPERT_ROTATE: the torsional spring towards the reference orientation, critically damped."""
  m, d, mm, md = _both()
  for body in (1, 2, 3):
    pert = mujoco.MjvPerturb()
    pert.select = body
    pert.refquat = perturb.axis_angle([0.3, -0.5, 0.8] / np.linalg.norm([0.3, -0.5, 0.8]), 0.7)
    pert.active = int(mujoco.mjtPertBit.mjPERT_ROTATE)
    md.xfrc_applied[:] = 0
    mujoco.mjv_applyPerturbForce(mm, md, pert)
    p = perturb.Perturb(select=body, refquat=pert.refquat.copy(), active=perturb.ROTATE)
    f, tq = perturb.apply_force(m, d, p, mm.vis.map.stiffness, mm.vis.map.stiffnessrot)
    np.testing.assert_allclose(np.concatenate([f, tq]), md.xfrc_applied[body], rtol=1e-9,
                               atol=1e-9)
