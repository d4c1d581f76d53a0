"""numjoco.rollout: N worlds stepped on numba's threads equal N serial `step` runs bit for bit."""
import warnings

import numba
import numpy as np
import pytest

import numjoco
from numjoco.engine import state

# a body with a free joint falling among boxes, a slider with a motor, and sensors: contacts,
# a controlled actuator and sensordata in every step
XML = """
<mujoco>
  <option timestep="0.004"/>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <geom type="box" size=".1 .1 .1" pos=".1 0 .1"/>
    <body name="ball" pos="0 0 .5">
      <freejoint/>
      <geom name="ball" type="sphere" size=".08" mass="1"/>
      <site name="s" size=".09"/>
    </body>
    <body name="cart" pos="0 .5 .1">
      <joint name="slide" type="slide" axis="1 0 0" damping=".3"/>
      <geom type="box" size=".1 .05 .05" mass=".5"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="push" joint="slide" gear="2"/>
  </actuator>
  <sensor>
    <jointpos joint="slide"/>
    <framepos objtype="body" objname="ball"/>
    <touch site="s"/>
  </sensor>
</mujoco>
"""


def _model(xml=XML):
  return numjoco.load_model(xml)


def _serial(m, d, nstep, qpos=None, qvel=None, ctrl=None, model=None):
  """One world stepped by `step` calls from a copy of d's state: (qpos, qvel, sensordata)."""
  mm = model or m
  dw = numjoco.make_data(mm)
  state.set_state(mm, dw, state.get_state(m, d))
  if qpos is not None:
    dw.qpos[:] = qpos
  if qvel is not None:
    dw.qvel[:] = qvel
  out = ([], [], [])
  for s in range(nstep):
    if ctrl is not None:
      dw.ctrl[:] = ctrl[s]
    numjoco.step(mm, dw)
    for a, x in zip(out, (dw.qpos, dw.qvel, dw.sensordata)):
      a.append(x.copy())
  return tuple(np.array(a) for a in out)


@pytest.mark.parametrize("threads", [1, 2])
def test_rollout_equals_serial_steps_bit_for_bit(threads):
  """Worlds with their own initial qpos, qvel and controls: each equals its serial run exactly,
  on one thread and on two; d is left as it was."""
  m = _model()
  d = numjoco.make_data(m)
  d.ctrl[0] = 0.4
  numjoco.step(m, d, 5)
  before = state.get_state(m, d)
  rng = np.random.default_rng(1)
  n, nstep = 5, 120
  qpos = np.repeat(d.qpos[None], n, 0)
  qpos[:, 0:2] += rng.uniform(-0.1, 0.1, (n, 2))
  qvel = rng.uniform(-1, 1, (n, m.nv))
  ctrl = rng.uniform(-1, 1, (n, nstep, m.nu))
  old = numba.get_num_threads()
  numba.set_num_threads(threads)
  try:
    out = numjoco.rollout(m, d, nstep, initial_qpos=qpos, initial_qvel=qvel, control=ctrl)
  finally:
    numba.set_num_threads(old)
  assert out["qpos"].shape == (n, nstep, m.nq) and out["sensordata"].shape == (n, nstep, 5)
  for i in range(n):
    ref = _serial(m, d, nstep, qpos[i], qvel[i], ctrl[i])
    for key, r in zip(("qpos", "qvel", "sensordata"), ref):
      assert np.array_equal(out[key][i], r), (i, key)
  assert np.array_equal(state.get_state(m, d), before)
  # the worlds differ (their inputs reach the results) and contacts happened
  assert np.abs(out["qpos"][0] - out["qpos"][1]).max() > 1e-3
  assert out["sensordata"][:, :, 4].max() > 0


def test_rollout_without_inputs_is_one_world_of_d():
  """No initial state or controls: one world, the serial run from d with d's own controls."""
  m = _model()
  d = numjoco.make_data(m)
  d.ctrl[0] = -0.7
  out = numjoco.rollout(m, d, 40)
  ref = _serial(m, d, 40)
  assert out["qpos"].shape == (1, 40, m.nq)
  for key, r in zip(("qpos", "qvel", "sensordata"), ref):
    assert np.array_equal(out[key][0], r)


def test_rollout_over_models_that_differ_in_parameters():
  """models[i] steps world i: each equals the serial run of its own model (here the slider's
  damping), and a different damping gives a different motion."""
  m = _model()
  models = [_model(XML.replace('damping=".3"', f'damping="{c}"')) for c in (0.0, 0.3, 3.0)]
  d = numjoco.make_data(m)
  ctrl = np.full((3, 60, 1), 0.5)
  out = numjoco.rollout(m, d, 60, control=ctrl, models=models)
  for i, mi in enumerate(models):
    ref = _serial(m, d, 60, ctrl=ctrl[i], model=mi)
    assert np.array_equal(out["qvel"][i], ref[1])
  slide = m.jnt_dofadr[1]
  assert out["qvel"][0, -1, slide] > out["qvel"][1, -1, slide] > out["qvel"][2, -1, slide]


def test_rollout_world_that_diverges_warns_and_goes_on():
  """A world whose state blows up warns (naming the world), is reset and finishes its steps as
  `step` does; the other worlds are untouched by it."""
  m = _model()
  d = numjoco.make_data(m)
  qvel = np.zeros((2, m.nv))
  qvel[1, 0] = 1e300
  with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    out = numjoco.rollout(m, d, 10, initial_qvel=qvel)
  assert any("world 1: mjWARN_BADQVEL" in str(x.message) for x in w)
  assert np.isfinite(out["qvel"]).all()
  for i in range(2):
    ref = _serial(m, d, 10, qvel=qvel[i])
    assert np.array_equal(out["qpos"][i], ref[0])


def test_rollout_shapes_are_checked():
  """Inputs whose worlds disagree, or of the wrong trailing shape, are refused by name."""
  m = _model()
  d = numjoco.make_data(m)
  with pytest.raises(ValueError, match="control has 3 worlds"):
    numjoco.rollout(m, d, 5, initial_qpos=np.zeros((2, m.nq)), control=np.zeros((3, 5, 1)))
  with pytest.raises(ValueError, match=r"initial_qvel must have shape \(N, 7\)"):
    numjoco.rollout(m, d, 5, initial_qvel=np.zeros((2, 3)))
  with pytest.raises(ValueError, match=r"control must have shape \(N, 5, 1\)"):
    numjoco.rollout(m, d, 5, control=np.zeros((2, 4, 1)))


def test_repeated_calls_reuse_threads_and_data_and_see_model_edits():
  """The worker threads and their Data outlive a call: a second call after the Model was edited
  (a damping, the integrator, a body's position: what the reset state is made from) equals the
  serial run of the edited Model, and the threads are the same ones."""
  import threading
  m = _model()
  d = numjoco.make_data(m)
  ctrl = np.full((4, 50, 1), 0.5)
  old = numba.get_num_threads()
  numba.set_num_threads(2)
  try:
    numjoco.rollout(m, d, 50, control=ctrl)
    before = {t.ident for t in threading.enumerate() if t.name.startswith("numjoco-rollout")}
    m.dof_damping[m.jnt_dofadr[1]] = 2.0
    m.opt.integrator = numjoco.mjtIntegrator.RK4
    m.body_pos[1, 0] = 0.3
    out = numjoco.rollout(m, d, 50, control=ctrl)
    after = {t.ident for t in threading.enumerate() if t.name.startswith("numjoco-rollout")}
  finally:
    numba.set_num_threads(old)
  assert before and before == after
  for i in range(4):
    ref = _serial(m, d, 50, ctrl=ctrl[i])
    for key, r in zip(("qpos", "qvel", "sensordata"), ref):
      assert np.array_equal(out[key][i], r), (i, key)
