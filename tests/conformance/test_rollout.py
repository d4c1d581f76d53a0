"""300-step rollouts with constraints disabled agree with MuJoCo's in qpos (issue: <= 1e-6)."""
import mujoco
import numpy as np
import pytest

import engine
from engine import interop
from tests.models import SUITE_MODELS, load_both, random_state

INTEGRATORS = {"euler": 0, "rk4": 1, "implicit": 2, "implicitfast": 3}


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("name", SUITE_MODELS)
def test_rollout(name, integrator):
  """Same random controls, same start: qpos stays within 1e-6 of MuJoCo's for 300 steps."""
  m, mjm = load_both(name)
  mjm.opt.integrator = INTEGRATORS[integrator]
  m.opt.integrator = INTEGRATORS[integrator]
  mjd = mujoco.MjData(mjm)
  rng = random_state(mjm, mjd, 7, scale=0.1)
  mjd.qvel[:] *= 0.5
  d = engine.make_data(m)
  interop.data_from_mujoco(mjd, d)
  d.act[:] = mjd.act
  worst = 0.0
  for _ in range(300):
    mjd.ctrl[:] = rng.uniform(-1, 1, size=mjm.nu)
    d.ctrl[:] = mjd.ctrl
    mujoco.mj_step(mjm, mjd)
    assert engine.step(m, d) == 1
    worst = max(worst, np.max(np.abs(d.qpos - mjd.qpos)))
  assert worst <= 1e-6, f"{name}/{integrator}: max |dqpos| = {worst:.3g}"
  assert d.time == pytest.approx(mjd.time, abs=1e-12)
