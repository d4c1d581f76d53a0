"""Each stage of our forward pass against MuJoCo's same stage, on MuJoCo's inputs
(tests/stages.py: the stage's outputs start as NaN, exactly one stage runs in each engine,
every output must be written and agree to 1e-9). The models exercise each stage: contacts,
spatial and fixed tendons, equality constraints, actuators with activation, sensors."""
import pytest

from tests.models import models_named
from tests.stages import run_stage


CONTACT = ["cheetah", "humanoid", "test/engine/testdata/collision_convex/perf/mixed.xml"]
EQUALITY = ["test/engine/testdata/weld.xml", "test/engine/testdata/connect.xml",
            "test/engine/testdata/island/island_efc.xml"]
TENDON = ["tendon/arm26.xml", "mjx/mujoco/mjx/test_data/tendon/pulley_site_wrap.xml",
          "model/car/car.xml"]
SENSOR = ["mjx/mujoco/mjx/test_data/sensor/sensor.xml", "../conformance/sensor_model.xml"]
SMOOTH = ["cartpole", "swimmer", "humanoid", "tendon/arm26.xml"]

MODELS = {
    "kinematics": SMOOTH + CONTACT, "com_pos": SMOOTH, "camlight": ["humanoid", "cheetah"],
    "tendon": TENDON, "crb": SMOOTH + TENDON[1:2], "factor_m": SMOOTH,
    "collision": CONTACT, "make_constraint": CONTACT + EQUALITY,
    "transmission": SMOOTH + ["model/slider_crank/slider_crank.xml"], "com_vel": SMOOTH,
    "passive": SMOOTH + ["cheetah"], "project_constraint": CONTACT + EQUALITY,
    "reference_constraint": CONTACT + EQUALITY, "rne": SMOOTH,
    "fwd_velocity": SMOOTH + CONTACT + EQUALITY, "fwd_actuation": SMOOTH,
    "fwd_acceleration": SMOOTH, "fwd_constraint": CONTACT + EQUALITY,
    "sensor_pos": SENSOR, "sensor_vel": SENSOR, "sensor_acc": SENSOR,
    "rne_post_constraint": CONTACT + EQUALITY,
}


def _models(name):
  import mujoco
  import numjoco
  m, mjm = models_named(name)
  return m, numjoco.make_data(m), mjm, mujoco.MjData(mjm)


@pytest.mark.parametrize("stage,model", [(s, n) for s, names in MODELS.items() for n in names])
def test_stage(stage, model):
  m, d, mjm, mjd = _models(model)
  for seed in range(2):
    assert run_stage(stage, m, d, mjm, mjd, seed) > 0, f"{model} does not exercise {stage}"


@pytest.mark.parametrize("stage", list(MODELS))
def test_a_stage_that_does_nothing_fails(stage):
  """The fixture fails a stage that leaves its outputs as they were (here NaN): every stage's
  first model gives it outputs to write."""
  m, d, mjm, mjd = _models(MODELS[stage][0])
  with pytest.raises(AssertionError, match="left"):
    run_stage(stage, m, d, mjm, mjd, 0, ours=lambda m, d: None)
