"""The viewer's history (app/sim.py History, as MuJoCo simulate's): the worker keeps the state of
every step; paused, it goes back to any of them bit for bit, and stepping on from there drops the
later states and gives the same trajectory as the first time. The window's Left/Right keys and
the Simulation panel's slider drive it."""
import os
import time

import numpy as np

import numjoco
from numjoco.app.sim import HISTORY_STEPS, Simulation
from numjoco.engine.state import get_state

XML = os.path.join(os.path.dirname(__file__), "..", "assets", "state.xml")
CTRL = [0.4, -0.2, 0.1]


def _sim(**kw):
  m = numjoco.load_model(XML)
  sim = Simulation(m, paused=True, **kw).start()
  sim.send("call", lambda m, d: d.ctrl.__setitem__(slice(None), CTRL))
  sim.sync()
  return sim


def _state(sim):
  got = []
  sim.send("call", lambda m, d: got.append(get_state(m, d)))
  sim.sync()
  return got[0]


def _reference(nstep):
  """The INTEGRATION state after each of `nstep` single steps of a Data of our own."""
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  d.ctrl[:] = CTRL
  out = [get_state(m, d)]
  for _ in range(nstep):
    numjoco.step(m, d)
    out.append(get_state(m, d))
  return np.array(out)


def test_back_100_steps_bit_for_bit_and_resume_replays():
  """200 steps in one chunk; 100 back is the state of step 100 exactly; 100 steps on from there
  give step 200's state exactly, with the later states dropped first; every kept state is the
  one a step-by-step run gives."""
  ref = _reference(200)
  sim = _sim()

  def then(name, arg, kept, back, k):
    """Send one command; the history then keeps `kept` states, Data is `back` steps back and
    its state is the reference's after step k, bit for bit."""
    sim.send(name, arg)
    sim.sync()
    st = sim.status()
    assert (st.history, st.history_back) == (kept, back)
    np.testing.assert_array_equal(_state(sim), ref[k])
  try:
    then("step", 200, 201, 0, 200)
    then("history", 100, 201, 100, 100)
    for k in range(1, 201):      # (the first is the state before the test set ctrl)
      np.testing.assert_array_equal(sim.history.row(200 - k), ref[k])
    then("step", 60, 161, 0, 160)     # from step 100: steps 101..160 again, 161..200 dropped
    then("step", 40, 201, 0, 200)
    # running (not paused) from a past state drops the later ones too
    sim.send("history", 50)
    sim.send("pause", False)
    sim.wait_until(lambda s: s.history > 170)
    sim.send("pause", True)
    sim.sync()
    n = sim.status().history
    np.testing.assert_array_equal(sim.history.row(n - 1 - 160), ref[160])
  finally:
    sim.stop()


def test_history_is_bounded_and_restarts_at_reset_and_keyframes():
  """At most HISTORY_STEPS states; a reset or a keyframe starts it again from that state; going
  back needs a pause and a state that is kept."""
  sim = _sim()
  try:
    sim.send("step", HISTORY_STEPS + 300)
    sim.sync()
    assert sim.status().history == HISTORY_STEPS
    sim.send("history", HISTORY_STEPS)        # one more than kept: refused, shown
    sim.sync()
    assert "kept" in sim.status().error
    sim.send("clear_error")
    sim.send("reset")
    sim.sync()
    assert sim.status().history == 1
    np.testing.assert_array_equal(sim.history.row(0), _state(sim))
    sim.send("pause", False)
    sim.send("history", 0)                    # running: refused
    sim.sync()
    assert "pause first" in sim.status().error
  finally:
    sim.stop()


def test_history_while_recording():
  """Going back while recording: the recording goes on from the earlier time (its next frame
  1/fps after it) and ends cleanly."""
  sim = _sim()
  try:
    sim.send("record_start", 50.0)
    sim.send("step", 100)
    sim.send("history", 40)
    sim.send("step", 20)
    sim.send("record_stop")
    frames = []
    t_end = time.perf_counter() + 60
    while not frames or frames[-1] is not None:   # the UI's part: take the samples
      frames += sim.recorded()
      assert time.perf_counter() < t_end, "the recording did not end"
      time.sleep(0.01)
    times = [snap.extra["time"] for k, snap in frames[:-1]]
    ks = [k for k, _ in frames[:-1]]
    assert ks == list(range(len(ks))) and len(ks) >= 8
    back = int(np.argmin(np.diff(times)))          # where time went back
    assert times[back + 1] < times[back]
    assert np.all(np.diff(times[back + 1:]) > 0)
  finally:
    sim.stop()


def test_left_right_keys_and_slider_in_the_window(open_viewer):
  """Paused: Left goes one step back, Right one forward through the history, then steps anew;
  the Simulation panel's slider shows and sets how far back."""
  from pyglet.window import key
  from tests.app.conftest import run_until
  v = open_viewer(XML, paused=True)
  v.sim.send("step", 30)
  v.sim.sync()
  t30 = v.sim.d.time

  def press(sym):
    v.window.dispatch_event("on_key_press", sym, 0)
    v.frame()
    v.sim.sync()
  for _ in range(3):
    press(key.LEFT)
  st = v.sim.status()
  assert st.history_back == 3 and abs(v.sim.d.time - (t30 - 3 * v.sim.m.opt.timestep)) < 1e-12
  press(key.RIGHT)
  assert v.sim.status().history_back == 2
  v.frame()
  assert "history" in v.ui.rects                 # the slider is up while paused
  press(key.RIGHT)
  press(key.RIGHT)
  press(key.RIGHT)                               # at the newest: a new step
  st = v.sim.status()
  assert st.history_back == 0 and st.history == 32
  run_until(v, lambda: abs(v.sim.snapshot().__enter__().time - (t30 + v.sim.m.opt.timestep))
            < 1e-12, "the new step is not on screen")
