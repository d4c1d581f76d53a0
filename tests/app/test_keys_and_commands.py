"""One table of key bindings (app/keys.py) drives both the viewer's key handler and the help
panel; the panels talk to a UiState and a command sink, never to the Viewer."""
import ast
import pathlib

import numpy as np
import pytest

from numjoco.app import keys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _chords(b):
  """(ctrl, shift) chords that select binding `b` in the table (the first match wins)."""
  return {"": [(False, False)], "ctrl": [(True, False)], "ctrl+shift": [(True, True)],
          "noctrl": [(False, False), (False, True)]}[b.mods]


def test_every_key_in_the_table_dispatches_to_its_command(open_viewer):
  """A synthetic key press of each bound key, with its modifiers, reaches Viewer.execute as the
  table's command and arguments; unbound keys and toggles with Ctrl do nothing."""
  from pyglet.window import key
  v = open_viewer()
  got = []
  v.execute = lambda name, *args: got.append((name, args))
  n = 0
  for b in keys.BINDINGS:
    for k, args in zip(b.keys, b.args):
      for ctrl, shift in _chords(b):
        got.clear()
        mods = (key.MOD_CTRL if ctrl else 0) | (key.MOD_SHIFT if shift else 0)
        v.window.dispatch_event("on_key_press", getattr(key, k), mods)
        v.frame()      # pyglet delivers queued events in the frame's dispatch_events
        assert got == [(b.command, tuple(args))], (k, b.mods)
        n += 1
  assert n >= 35
  for symbol, mods in ((key.Q, 0), (key.C, key.MOD_CTRL), (key.L, 0), (key._9, 0)):
    got.clear()
    v.window.dispatch_event("on_key_press", symbol, mods)
    v.frame()
    assert got == []


def test_the_table_commands_exist_and_act(open_viewer):
  """Each command of the table is one the viewer runs itself; a few act as MuJoCo's keys do."""
  from pyglet.window import key
  v = open_viewer()
  for b in keys.BINDINGS:
    assert callable(getattr(v, "_cmd_" + b.command, None)), b.command
  o = v.opts
  before = (o.contact_points, o.geom_groups[1], v.ui.show_help)
  for symbol in (key.C, key._1, key.F1):
    v.window.dispatch_event("on_key_press", symbol, 0)
    v.frame()
  assert (o.contact_points, o.geom_groups[1], v.ui.show_help) == tuple(not x for x in before)


def test_the_help_panel_lists_the_table():
  """The help rows are the table's labelled bindings, in its order, then the mouse."""
  from numjoco.app import panels
  rows = panels._help_rows()
  bound = [(b.label, b.help) for b in keys.BINDINGS if b.label is not None]
  assert list(rows) == bound + list(keys.MOUSE)
  assert ("Ctrl+P", "screenshot of the 3D view (PNG; Shift: with the panels)") in rows
  assert len({b.keys + (b.mods,) for b in keys.BINDINGS}) == len(keys.BINDINGS)


def test_find_picks_the_first_matching_binding():
  assert keys.find("P", ctrl=True, shift=True) == ("screenshot", (True,))
  assert keys.find("P", ctrl=True) == ("screenshot", (False,))
  assert keys.find("P") is None
  assert keys.find("S") == ("toggle_option", ("shadows",))
  assert keys.find("S", ctrl=True) is None
  assert keys.find("_3", shift=True) == ("toggle_geom_group", (3,))


class _Imgui:
  """Enough of imgui for the Simulation and Controls panels: `press` names the buttons
  clicked this frame, `slide` gives slider values by label prefix."""

  class InputTextFlags_:
    enter_returns_true = 0

  def __init__(self, press=(), slide=None):
    self.press, self.slide = set(press), slide or {}

  def button(self, label):
    return label in self.press

  def checkbox(self, label, v):
    return False, v

  def combo(self, label, i, items):
    return False, i

  def input_text(self, label, text, flags=0):
    return False, text

  def slider_float(self, label, v, lo, hi):
    hit = [x for k, x in self.slide.items() if label.startswith(k)]
    return (True, hit[0]) if hit else (False, v)

  def get_item_rect_min(self):
    from types import SimpleNamespace
    return SimpleNamespace(x=0, y=0)

  get_item_rect_max = get_item_rect_min

  def __getattr__(self, name):      # text, same_line, separator, ...: draw nothing
    return lambda *a, **k: None


def test_a_panel_action_reaches_the_command_sink():
  """The Simulation panel's buttons and the Controls panel's slider send their commands to
  the sink they are given, with what the UiState holds (the selected keyframe, the control)."""
  import numjoco
  from numjoco.app import panels
  from numjoco.app.sim import Status
  from numjoco.app.panels import controls, simulation
  from tests.app.test_viewer import ARM
  m = numjoco.load_model(ARM)
  ui = panels.UiState()
  ui.on_model(m)
  ui.key = 0
  cmd = panels.CommandSink()
  st = Status(path="arm.xml", paused=True, rtf=1.0)
  simulation.draw(_Imgui(press=("Reset", "Reload", "Record", "Screenshot")), ui, cmd, st, None)
  assert cmd.sent == [("reset", 0), ("reload",), ("screenshot", False), ("toggle_recording",)]
  cmd.sent.clear()
  controls.draw(_Imgui(slide={"motor": 0.5}), ui, cmd, st, None)
  assert cmd.sent == [("ctrl", 0, 0.5)] and ui.ctrl[0] == 0.5
  np.testing.assert_array_equal(ui.ctrl[1:], 0.0)


def test_the_sink_runs_the_viewers_commands(open_viewer):
  """The viewer's sink runs a panel's command: Reset view gives the model's default camera."""
  from numjoco.render.camera import Camera
  v = open_viewer()
  v.camera.distance *= 3
  v.commands.send("reset_view")
  assert v.camera.distance == pytest.approx(Camera.default_for(v.ui.m).distance)


@pytest.mark.parametrize("path", sorted((ROOT / "app" / "panels").glob("*.py")),
                         ids=lambda p: p.name)
def test_panels_do_not_know_the_viewer(path):
  """No panel module imports app/viewer or names a `viewer`."""
  tree = ast.parse(path.read_text())
  names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
  names |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
            for a in n.args + n.kwonlyargs}
  names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
  mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
  mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
  assert "viewer" not in names and not any("viewer" in m for m in mods)
