"""The viewer meets NaN and inf (issue #34): the simulation worker reports a divergence in its
status with MuJoCo's warning name and index (numjoco.engine.api.Divergence), resets as MuJoCo
does, starts its history again and keeps stepping; a bad control is a warning (MuJoCo's
mjWARN_BADCTRL, no reset); NaN or inf model and option edits are refused; the window stays up
and its Simulation panel shows the divergence."""
import contextlib

import numpy as np
import pytest

import numjoco
from numjoco.app.sim import Simulation
from tests.models import model_xml, write_xml

SCENE = model_xml("divergence/scene", integrator="Euler")


@contextlib.contextmanager
def paused_worker():
  """A started, paused Simulation of the divergence scene, 200 steps in (history: 201 states)."""
  s = Simulation(numjoco.load_model(SCENE), paused=True).start()
  try:
    s.sync()
    s.send("step", 200)
    s.sync()
    assert s.status().history == 201
    yield s
  finally:
    s.stop()


def _set(field, index, value):
  def poke(m, d):
    getattr(d, field)[index] = value
  return poke


@pytest.mark.parametrize("command, args, text", [
    ("qpos", (8, np.nan), "mjWARN_BADQPOS at qpos index 8"),
    ("call", (_set("qvel", 6, np.inf),), "mjWARN_BADQVEL at dof 6"),
    ("call", (_set("xfrc_applied", (2, 1), np.nan),), "mjWARN_BADQACC at dof 0"),
], ids=["qpos-nan", "qvel-inf", "xfrc_applied-nan"])
def test_worker_reports_resets_restarts_history_and_goes_on(command, args, text):
  """A bad value injected between chunks: the next step finds it; the status names MuJoCo's
  warning and index, Data is MuJoCo's reset state stepped once (the step that found it), the
  history holds that one state, and the worker runs on without an error."""
  with paused_worker() as s:
    s.send(command, *args)
    s.send("step", 50)
    st = s.wait_until(lambda st: st.divergences > 0)
    s.sync()
    st = s.status()
    assert st.divergences == 1 and st.last_divergence.startswith(text), st.last_divergence
    assert "state reset" in st.last_divergence and st.error == "" and st.history == 1
    fresh = numjoco.make_data(s.model)
    numjoco.step(s.model, fresh)
    np.testing.assert_array_equal(s.d.qpos, fresh.qpos)
    assert s.d.time == fresh.time
    s.send("pause", False)
    s.wait_until(lambda st: st.history > 50)
    assert s.status().divergences == 1 and s.status().error == ""
    assert np.isfinite(s.d.qpos).all() and s.d.time > 50 * s.model.opt.timestep


def test_bad_control_is_mujocos_ctrl_warning_not_a_divergence():
  """A NaN control: every step counts mjWARN_BADCTRL with its index (MuJoCo zeroes the controls
  for the step and resets nothing); the status lists it among the warnings, time goes on."""
  with paused_worker() as s:
    t = s.d.time
    s.send("ctrl", 1, float("nan"))
    s.send("step", 10)
    s.sync()
    st = s.status()
    assert st.divergences == 0 and st.error == "" and st.history == 211
    assert any(w.startswith("mjWARN_BADCTRL x10 (last at ctrl 1)") for w in st.warnings), st.warnings
    assert s.d.time == pytest.approx(t + 10 * s.model.opt.timestep)


@pytest.mark.parametrize("command, args, text", [
    ("model", ("body_mass", 2, float("nan")), "body_mass[2]: expected 1 finite numbers"),
    ("model", ("body_mass", 2, float("inf")), "body_mass[2]: expected 1 finite numbers"),
    ("opt", ("timestep", float("nan")), "opt.timestep: expected finite numbers"),
    ("opt", ("timestep", float("inf")), "opt.timestep: expected finite numbers"),
    ("opt", ("gravity", [0, 0, float("nan")]), "opt.gravity: expected finite numbers"),
], ids=["mass-nan", "mass-inf", "timestep-nan", "timestep-inf", "gravity-nan"])
def test_bad_parameter_edit_is_refused(command, args, text):
  """A NaN or inf parameter would make every step diverge (MuJoCo's checks reset Data each time
  and cannot name the parameter): the edit is refused with a message naming it, the model keeps
  its value, and the worker steps on once the error is dismissed."""
  with paused_worker() as s:
    mass, opt = s.model.body_mass.copy(), (s.model.opt.timestep, s.model.opt.gravity.copy())
    s.send(command, *args)
    st = s.wait_until(lambda st: st.error != "")
    assert text in st.error
    np.testing.assert_array_equal(s.model.body_mass, mass)
    assert s.model.opt.timestep == opt[0] and np.array_equal(s.model.opt.gravity, opt[1])
    s.send("clear_error")
    s.send("step", 10)
    s.sync()
    assert s.status().history == 211 and s.status().divergences == 0


def test_nan_parameter_slipped_in_never_kills_the_worker():
  """A NaN mass set behind the commands' back ("call"): every step diverges, as in MuJoCo (reset,
  then the step from the reset state meets the mass again); the worker counts them and keeps
  running, no error."""
  with paused_worker() as s:
    def poison(m, d):
      m.body_mass[2] = np.nan
    s.send("call", poison)
    s.send("pause", False)
    s.wait_until(lambda st: st.divergences >= 5)
    st = s.status()
    assert st.error == "" and not st.paused
    assert st.last_divergence.startswith("mjWARN_BADQ"), st.last_divergence


def test_window_stays_up_and_the_panel_shows_the_divergence(open_viewer, tmp_path, monkeypatch):
  """In the window: a NaN qvel injected while running is reported in the Simulation panel with
  MuJoCo's warning and index, the viewer keeps drawing and the simulation keeps running."""
  from tests.app.conftest import run_until
  from numjoco.app.panels import simulation as panel
  shown = []
  draw = panel.draw

  class Spy:
    def __init__(self, imgui):
      self._imgui = imgui

    def __getattr__(self, name):
      return getattr(self._imgui, name)

    def text_colored(self, col, text):
      shown.append(text)
      return self._imgui.text_colored(col, text)

  monkeypatch.setattr(panel, "draw", lambda imgui, *a: draw(Spy(imgui), *a))
  v = open_viewer(write_xml(tmp_path, "scene.xml", SCENE))
  v.sim.send("call", _set("qvel", 6, np.nan))
  run_until(v, lambda: v.sim.status().divergences > 0, "divergence not reported")
  run_until(v, lambda: any("mjWARN_BADQVEL at dof 6" in t for t in shown),
            "the Simulation panel did not show the divergence")
  assert any(t.startswith("diverged 1x: mjWARN_BADQVEL at dof 6, time ") for t in shown), shown
  with v.sim.snapshot() as snap:
    t = snap.time
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t + 0.05, "the simulation stopped")
  st = v.sim.status()
  assert st.error == "" and not st.paused and st.divergences == 1


def test_a_divergence_ends_the_windows_recording_at_the_last_good_frame(open_viewer, tmp_path):
  """Ctrl+R's recording, then a NaN qvel: the recording ends there, as `numjoco record` stops
  (the worker sends its end marker before drawing the reset state), the message names the
  warning and the saved file, and the video decodes to every frame the worker sampled, all of
  them from before the divergence."""
  import av
  from tests.app.conftest import run_until
  v = open_viewer(write_xml(tmp_path, "scene.xml", SCENE), out_dir=tmp_path, record_fps=30)
  path = v.start_recording()
  t0 = v.sim.snapshot().__enter__().time
  # the worker starts the recording when it takes the command, after t0: a margin over 0.2 s
  run_until(v, lambda: v.sim.snapshot().__enter__().time > t0 + 0.3, "not running")
  v.sim.send("call", _set("qvel", 6, np.nan))
  run_until(v, lambda: v.recording is None, "the divergence did not end the recording")
  st = v.sim.status()
  assert st.divergences == 1 and st.error == "" and v.last_saved == path
  assert v.ui.message.startswith("the simulation diverged: mjWARN_BADQVEL at dof 6, time "), \
      v.ui.message
  assert f"recording stopped. video saved: {path}" in v.ui.message
  start, stop, frames = v.sim.record_span
  assert stop - start > 0.2 and abs(frames - (stop - start) * 30) <= 1   # none after `stop`
  with av.open(path) as f:
    assert sum(1 for _ in f.decode(video=0)) == frames
  run_until(v, lambda: v.sim.snapshot().__enter__().time > stop + 0.05, "the simulation stopped")
  assert v.recording is None and v.sim.status().error == ""
