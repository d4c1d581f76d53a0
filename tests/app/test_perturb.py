"""Mouse perturbation: picking rays and reference moves compared with MuJoCo's own (the spring
law itself is tested against MuJoCo in tests/conformance/test_perturb.py), and drags through
the simulation worker's commands."""
import numpy as np
import pytest

import numjoco
from numjoco.app import perturb

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
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  mm = mujoco.MjModel.from_xml_string(XML)
  md = mujoco.MjData(mm)
  rng = np.random.default_rng(0)
  md.qpos[:] = mm.qpos0 + rng.normal(0, 0.2, mm.nq)
  for adr in (2, 9):
    md.qpos[adr:adr + 4] /= np.linalg.norm(md.qpos[adr:adr + 4])
  md.qvel[:] = rng.normal(0, 1, mm.nv)
  mujoco.mj_forward(mm, md)
  d.qpos[:], d.qvel[:] = md.qpos, md.qvel
  numjoco.forward(m, d)
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


def _scene(mm, md, azimuth, elevation):
  scn = mujoco.MjvScene(mm, 100)
  cam = mujoco.MjvCamera()
  cam.azimuth, cam.elevation, cam.distance, cam.lookat = azimuth, elevation, 3.0, [0.5, 0, 1]
  mujoco.mjv_updateScene(mm, md, mujoco.MjvOption(), None, cam, mujoco.mjtCatBit.mjCAT_ALL, scn)
  return scn


@pytest.mark.parametrize("action", ["MOVE_V", "MOVE_H", "ROTATE_V", "ROTATE_H"])
def test_mouse_moves_the_reference_as_mjv_movePerturb(action):
  """The reference point / orientation follows the mouse exactly as mjv_movePerturb moves it."""
  from numjoco.render.camera import Camera, Mouse
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


DRAG = """<mujoco><option gravity="0 0 0" timestep="0.002"/><worldbody>
  <body name="arm" pos="0 0 1"><joint type="hinge" axis="0 1 0" damping="0.05"/>
    <geom type="capsule" fromto="0 0 0 .4 0 0" size=".05"/></body>
  <body name="egg" pos="1 0 .5" euler="0.3 0.2 0.1"><freejoint/>
    <geom type="ellipsoid" size=".1 .2 .15"/></body>
  <body name="other" pos="-1 0 .5"><freejoint/><geom type="sphere" size=".1"/></body>
</worldbody></mujoco>"""
NO_TURN = np.array([1.0, 0, 0, 0])


def _worker(paused):
  from numjoco.app.sim import Simulation
  sim = Simulation(numjoco.load_model(DRAG), paused=paused, speed=float("inf")).start()
  sim.sync()
  return sim


def _get(sim, fn):
  out = []
  sim.send("call", lambda m, d: out.append(fn(m, d)))
  sim.sync()
  return out[0]


def _grab_point(m, d, body, local):
  return d.xmat[body].reshape(3, 3) @ local + d.xpos[body]


@pytest.mark.parametrize("body,local,shift", [
    (1, [0.3, 0, 0], [0, 0, 0.1]),          # hinged: the point can reach the target on its arc
    (2, [0.05, 0.1, 0], [0.2, -0.1, 0.3])])  # free
def test_worker_drag_pulls_towards_the_cursor_and_releases(body, local, shift):
  """A translate drag through the worker's commands: the engine's d.xfrc_perturb acts on the
  body (every substep) while dragging, the grab point settles on the moved reference, the user's
  xfrc_applied on another body is untouched, and releasing zeroes the perturbation."""
  sim = _worker(paused=False)
  try:
    user = np.array([0.3, -0.2, 0.1, 0.0, 0.01, 0.0])
    sim.send("call", lambda m, d: d.xfrc_applied.__setitem__(3, user))
    local = np.array(local, float)
    start = _get(sim, lambda m, d: _grab_point(m, d, body, local))
    sim.send("perturb_start", body, local, perturb.TRANSLATE)
    sim.send("perturb_ref", np.array(shift, float), NO_TURN)
    t0 = _get(sim, lambda m, d: d.time)
    force = _get(sim, lambda m, d: d.xfrc_perturb.copy())
    sim.wait_until(lambda st: _get(sim, lambda m, d: d.time) > t0 + 3.0, timeout=60)
    sim.send("pause", True)
    point, ref, pert, applied = _get(sim, lambda m, d: (
        _grab_point(m, d, body, local), d.pert_refselpos.copy(), d.xfrc_perturb.copy(),
        d.xfrc_applied.copy()))
    np.testing.assert_allclose(ref, start + shift, atol=1e-6)   # the reference moved by `shift`
    assert np.abs(force[body]).max() > 0 or np.abs(pert[body]).max() > 0
    assert np.linalg.norm(point - ref) < 0.03 < 0.5 * np.linalg.norm(start - ref)
    np.testing.assert_array_equal(applied[3], user)       # the user's force stays as set
    assert not applied[[0, 1, 2]].any()                   # the drag never wrote xfrc_applied
    assert not np.delete(pert, body, axis=0).any()        # only the dragged body is pulled
    sim.send("perturb_stop")
    sim.send("step", 1)
    assert not _get(sim, lambda m, d: d.xfrc_perturb.any() or d.pert_active[0])
  finally:
    sim.stop()


def test_worker_drag_while_running_applies_force_each_substep():
  """While the drag is held, d.xfrc_perturb of the body is the spring force (non-zero) after
  any chunk: the engine recomputes it every substep rather than holding one per chunk."""
  sim = _worker(paused=True)
  try:
    sim.send("perturb_start", 1, np.array([0.3, 0, 0]), perturb.TRANSLATE)
    sim.send("perturb_ref", np.array([0, 0, 0.1]), NO_TURN)
    sim.send("step", 1)
    f1 = _get(sim, lambda m, d: d.xfrc_perturb[1].copy())
    sim.send("step", 50)
    f50 = _get(sim, lambda m, d: d.xfrc_perturb[1].copy())
    assert f1[2] > 0 and np.abs(f50).max() > 0
    assert not np.allclose(f1, f50)   # recomputed from the moving state
  finally:
    sim.stop()


def test_paused_drag_moves_a_free_body_kinematically():
  """Paused, a drag moves a free body's inertial frame exactly with the reference
  (mjv_applyPerturbPose): translated by the mouse's shift and turned by its rotation, with
  velocities untouched and kinematics updated; a hinged body does not move."""
  sim = _worker(paused=True)
  try:
    xipos0, ximat0, qvel0 = _get(sim, lambda m, d: (d.xipos[2].copy(), d.ximat[2].copy(),
                                                    d.qvel.copy()))
    shift = np.array([0.2, -0.1, 0.3])
    turn = perturb.axis_angle([0, 0, 1], 0.5)
    sim.send("perturb_start", 2, np.array([0.05, 0.1, 0]), perturb.TRANSLATE | perturb.ROTATE)
    sim.send("perturb_ref", shift, turn)
    xipos, ximat, qvel, t = _get(sim, lambda m, d: (d.xipos[2].copy(), d.ximat[2].copy(),
                                                    d.qvel.copy(), d.time))
    np.testing.assert_allclose(xipos, xipos0 + shift, atol=1e-9)
    rz = np.array([[np.cos(0.5), -np.sin(0.5), 0], [np.sin(0.5), np.cos(0.5), 0], [0, 0, 1]])
    np.testing.assert_allclose(ximat.reshape(3, 3), rz @ ximat0.reshape(3, 3), atol=1e-9)
    np.testing.assert_array_equal(qvel, qvel0)
    assert t == 0.0
    sim.send("perturb_stop")
    arm0 = _get(sim, lambda m, d: d.xquat[1].copy())
    sim.send("perturb_start", 1, np.array([0.3, 0, 0]), perturb.TRANSLATE)
    sim.send("perturb_ref", np.array([0, 0, 0.1]), NO_TURN)
    np.testing.assert_array_equal(_get(sim, lambda m, d: d.xquat[1].copy()), arm0)
  finally:
    sim.stop()


def test_skin_pick_matches_mjv_select():
  """Clicks on dm_control's dog (its skin over hidden bone geoms) select the body and point
  mujoco.mjv_select gives for skins: the bone weighing most on the hit face's vertex nearest
  the hit, at that vertex; clicks beside it select as MuJoCo's (geoms, or nothing)."""
  import os
  dm = pytest.importorskip("dm_control")
  from numjoco.render.camera import Camera
  from numjoco.render.renderer import VisOptions
  from numjoco.render.skin import SkinModel
  from numjoco.render.snapshot import Snapshot
  path = os.path.join(os.path.dirname(dm.__file__), "suite", "dog.xml")
  mm = mujoco.MjModel.from_xml_path(path)
  md = mujoco.MjData(mm)
  rng = np.random.default_rng(2)
  md.qpos[7:] = mm.qpos0[7:] + rng.normal(0, 0.2, mm.nq - 7)
  mujoco.mj_forward(mm, md)
  m = numjoco.load_model(path)
  d = numjoco.make_data(m)
  d.qpos[:] = md.qpos
  numjoco.forward(m, d)
  snap = Snapshot(m, d)
  mcam = mujoco.MjvCamera()
  mujoco.mjv_defaultFreeCamera(mm, mcam)
  mcam.lookat[:], mcam.distance, mcam.azimuth, mcam.elevation = [0, 0, 0.4], 1.6, 120, -20
  opt = mujoco.MjvOption()
  scn = mujoco.MjvScene(mm, 2000)
  mujoco.mjv_updateScene(mm, md, opt, None, mcam, mujoco.mjtCatBit.mjCAT_ALL, scn)
  cam = Camera.default_for(m)
  cam.lookat, cam.distance = np.array([0, 0, 0.4]), 1.6
  cam.azimuth, cam.elevation = 120, -20
  skins, opts = SkinModel(m), VisOptions()
  aspect = 4 / 3
  selpnt, geomid, flexid, skinid = (np.zeros(3), np.zeros(1, np.int32), np.zeros(1, np.int32),
                                    np.zeros(1, np.int32))
  nskin = 0
  for relx in np.linspace(0.3, 0.7, 9):
    for rely in np.linspace(0.3, 0.8, 9):
      body = mujoco.mjv_select(mm, md, opt, aspect, relx, rely, scn, selpnt, geomid, flexid,
                               skinid)
      origin, direction = cam.ray(relx, rely, aspect, snap)
      ours, point, skin = perturb.select(m, snap, origin, direction, opts.geom_groups,
                                         skip_static=False, skins=skins,
                                         skin_visible=skins.visible(opts), return_skin=True)
      assert ours == body, (relx, rely, ours, body)
      assert skin == skinid[0]       # the skin the viewer highlights (pert.skinselect)
      if skinid[0] >= 0:
        nskin += 1
        np.testing.assert_allclose(point, selpnt, atol=1e-6)
  assert nskin > 20
