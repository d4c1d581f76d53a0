"""The state vector (engine/state.py: mj_stateSize, mj_getState, mj_setState, mj_copyState)
against MuJoCo's on a model with every component this engine has (tests/assets/state.xml), and
the property the viewer's history relies on: a saved INTEGRATION state, set again, gives the
same trajectory bit for bit."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import state
from numjoco.engine.state import mjtState

XML = os.path.join(os.path.dirname(__file__), "assets", "state.xml")


def _models():
  m = numjoco.load_model(XML)
  mj = mujoco.MjModel.from_xml_path(XML)
  return m, numjoco.make_data(m), mj, mujoco.MjData(mj)


def _drive(d, k):
  """Controls and applied forces that vary with step k (the same in both engines)."""
  d.ctrl[:] = [np.sin(0.05 * k), 0.3 * np.cos(0.03 * k), 0.2]
  d.xfrc_applied[3, 2] = 2.0 * np.sin(0.02 * k)
  d.qfrc_applied[:] = 0.0
  d.qfrc_applied[1] = 0.05
  d.mocap_pos[0, 2] = 0.5 + 0.1 * np.sin(0.04 * k)


@pytest.mark.parametrize("spec", [mjtState.INTEGRATION, mjtState.PHYSICS, mjtState.USER,
                                  mjtState.QVEL | mjtState.MOCAP_QUAT, mjtState.TIME])
def test_state_vector_equals_mujocos(spec):
  """Sizes and contents equal MuJoCo's for each spec, after 200 driven steps in both engines."""
  m, d, mj, md = _models()
  assert state.state_size(m, spec) == mujoco.mj_stateSize(mj, int(spec))
  for k in range(200):
    _drive(d, k)
    _drive(md, k)
    numjoco.step(m, d)
    mujoco.mj_step(mj, md)
  ref = np.empty(mujoco.mj_stateSize(mj, int(spec)))
  mujoco.mj_getState(mj, md, ref, int(spec))
  np.testing.assert_allclose(state.get_state(m, d, spec), ref, rtol=1e-9, atol=1e-9)


def test_set_state_replays_bit_for_bit():
  """Save the INTEGRATION state, run 150 driven steps, set it again and run them again: every
  step's qpos, qvel, act and sensordata are identical (the history buffers, plastic state and
  warmstart come back with the state)."""
  m, d, _, _ = _models()
  for k in range(60):
    _drive(d, k)
    numjoco.step(m, d)
  saved = state.get_state(m, d)

  def run():
    out = []
    for k in range(60, 210):
      _drive(d, k)
      numjoco.step(m, d)
      out.append(np.concatenate([d.qpos, d.qvel, d.act, d.sensordata, d.plastic]))
    return np.array(out)
  first = run()
  state.set_state(m, d, saved)
  np.testing.assert_array_equal(state.get_state(m, d), saved)
  again = run()
  np.testing.assert_array_equal(again, first)
  assert np.abs(first[-1] - first[0]).max() > 0.05    # the state did move


def test_copy_state_and_bad_input():
  m, d, _, _ = _models()
  for k in range(30):
    _drive(d, k)
    numjoco.step(m, d)
  d2 = numjoco.make_data(m)
  state.copy_state(m, d, d2)
  np.testing.assert_array_equal(state.get_state(m, d2), state.get_state(m, d))
  with pytest.raises(ValueError, match="state vector"):
    state.set_state(m, d, np.zeros(3))
  with pytest.raises(ValueError, match="invalid state spec"):
    state.state_size(m, 1 << 20)
