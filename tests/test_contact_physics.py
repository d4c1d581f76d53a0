"""Physical sanity of contacts and limits, checked against analytic results (no reference
engine): resting contact does not drift, a sliding sphere ends up rolling at 5/7 of its
speed, a pendulum stops at its joint limit."""
import math

import numpy as np
import pytest

import numjoco

SOLVERS = ["Newton", "CG", "PGS"]


def _with_solver(xml, solver, cone="pyramidal"):
  return xml.replace("<option", f'<option solver="{solver}" cone="{cone}"', 1)


@pytest.mark.parametrize("solver", SOLVERS)
def test_box_rests_on_plane(solver):
  xml = _with_solver("""<mujoco><option timestep="0.002"/><worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body pos="0 0 .1"><freejoint/><geom type="box" size=".2 .15 .1" density="500"/></body>
    </worldbody></mujoco>""", solver)
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  numjoco.step(m, d, 500)   # settle into the soft contact
  start = d.qpos[:3].copy()
  quat = d.qpos[3:7].copy()
  numjoco.step(m, d, 5000)  # 10 s
  assert d.ncon == 4
  assert np.linalg.norm(d.qpos[:3] - start) <= 1e-4
  assert np.linalg.norm(d.qpos[3:7] - quat) <= 1e-4
  # resting on the plane: centre height equals the half-height up to the soft penetration
  assert abs(d.qpos[2] - 0.1) < 2e-3


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_sliding_sphere_ends_up_rolling(solver, cone):
  """Solid sphere launched without spin: friction brings it to pure rolling at v0*5/7."""
  r, v0 = 0.1, 2.0
  xml = _with_solver(f"""<mujoco><option timestep="0.001"/><worldbody>
    <geom type="plane" size="20 20 .1" friction=".5 0 0"/>
    <body pos="0 0 {r}"><freejoint/><geom type="sphere" size="{r}" friction=".5 0 0"/></body>
    </worldbody></mujoco>""", solver, cone)
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  numjoco.step(m, d, 100)   # settle
  d.qvel[:] = 0
  d.qvel[0] = v0
  numjoco.step(m, d, 1500)  # sliding phase lasts 2 v0 / (7 mu g) = 0.12 s
  v, w = d.qvel[0], d.qvel[4]
  assert v == pytest.approx(5 / 7 * v0, rel=0.01)
  assert abs(v - w * r) < 0.01 * v0     # rolling: contact point at rest


@pytest.mark.parametrize("solver", SOLVERS)
def test_pendulum_stops_at_limit(solver):
  """A horizontal pendulum falls under gravity and comes to rest on its 30 degree limit."""
  lim = 30.0
  xml = _with_solver(f"""<mujoco><option timestep="0.001"/><worldbody>
    <body><joint name="j" type="hinge" axis="0 1 0" range="-{lim} {lim}" damping="0.02"/>
      <geom type="capsule" fromto="0 0 0 .5 0 0" size=".03"/></body>
    </worldbody></mujoco>""", solver)
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  peak = 0.0
  for _ in range(300):   # 3 s
    numjoco.step(m, d, 10)
    peak = max(peak, d.qpos[0])
  limit = math.radians(lim)
  assert peak < limit + 0.1          # a soft limit overshoots a little while it brakes
  assert abs(d.qpos[0] - limit) < 0.01 and abs(d.qvel[0]) < 1e-3   # at rest on the limit
  assert d.nl == 1 and d.efc_force[0] > 0
