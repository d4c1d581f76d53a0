"""Stage timers (engine/timer.py, MuJoCo's mjData.timer): with the timers on, each stage runs as
many times per step as MuJoCo's timers count with mjcb_time set, the parts add up to no more
than their whole, and with the timers off nothing is counted."""
import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import timer
from numjoco.engine.types import mjtTimer
from tests.models import suite_source

_PARTS = {"position": ["pos_kinematics", "pos_inertia", "pos_collision", "pos_make",
                       "pos_project"],
          "pos_collision": ["col_broad", "col_narrow"],
          "forward": ["position", "velocity", "actuation", "constraint"],
          "step": ["forward", "advance"]}


def _models(integrator):
  src, _ = suite_source("walker")
  m, mjm = numjoco.load_model(src), mujoco.MjModel.from_xml_path(src)
  m.opt.integrator = int(getattr(numjoco.mjtIntegrator, integrator))
  mjm.opt.integrator = int(getattr(mujoco.mjtIntegrator, "mjINT_" + integrator))
  return m, mjm


@pytest.mark.parametrize("integrator", ["EULER", "RK4", "IMPLICITFAST"])
def test_stages_run_as_often_as_mujocos_timers_count(integrator):
  from tests.bench.speed import cycle_clock
  m, mjm = _models(integrator)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  timer.enable(d)
  cycles, _ = cycle_clock()
  mujoco.set_mjcb_time(cycles.ctypes)
  try:
    numjoco.step(m, d, 50)
    mujoco.mj_step(mjm, mjd, 50)
  finally:
    mujoco.set_mjcb_time(None)
  for t in mjtTimer:
    if t.name == "INVERSE":
      continue
    assert d.timer_number[int(t)] == mjd.timer[int(t)].number, (
        t.name, d.timer_number[int(t)], mjd.timer[int(t)].number)
  assert d.timer_number[int(mjtTimer.STEP)] == 50


def test_parts_add_up_to_no_more_than_the_whole():
  m, _ = _models("EULER")
  d = numjoco.make_data(m)
  timer.enable(d)
  numjoco.step(m, d, 200)
  us = timer.stage_us(d, per=200)
  for whole, parts in _PARTS.items():
    assert 0 < sum(us[p] for p in parts) <= us[whole], (whole, us)
  assert all(v > 0 for k, v in us.items() if k != "inverse"), us


def test_timers_off_count_nothing():
  m, _ = _models("EULER")
  d = numjoco.make_data(m)
  numjoco.step(m, d, 20)
  assert not d.timer_on[0] and not d.timer_number.any() and not d.timer_duration.any()
  timer.enable(d)
  numjoco.step(m, d, 1)
  timer.enable(d, False)
  numjoco.step(m, d, 5)
  assert d.timer_number[int(mjtTimer.STEP)] == 0 and not d.timer_duration.any()
  timer.enable(d)
  numjoco.step(m, d, 3)
  assert d.timer_number[int(mjtTimer.STEP)] == 3
  assert np.all(d.timer_duration >= 0)


def test_a_reset_clears_the_timers_and_keeps_them_on():
  m, _ = _models("EULER")
  d = numjoco.make_data(m)
  timer.enable(d)
  numjoco.step(m, d, 5)
  numjoco.reset_data(m, d)
  assert d.timer_on[0] and not d.timer_number.any()
  numjoco.step(m, d, 2)
  assert d.timer_number[int(mjtTimer.STEP)] == 2
