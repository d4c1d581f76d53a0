"""The Rendering panel's flex toggles (MuJoCo's mjVIS_FLEXVERT/EDGE/FACE/SKIN, with its
defaults) under a real X window, and the viewer showing a simulated flex model (a cloth
without collisions, inline: no model file to find)."""
import os

import numpy as np
import pytest

from tests.app.test_viewer import BALL, _changed_pixels, _click, _send
from tests.models import write_xml

ROOT = os.path.join(os.path.dirname(__file__), "..", "assets", "mujoco_models", "model", "flex")
FLAGS = {"flex_vertices": False, "flex_edges": True, "flex_faces": False, "flex_skin": True}


def _scroll_to(v, name):
  """Scroll the panel until widget `name` is on screen; its rectangle."""
  h = v.window.height
  _send(v, "on_mouse_motion", 100, h - 300, 0, 0)
  for _ in range(12):
    x0, y0, x1, y1 = v.ui.rects.get(name, (0, h, 0, h))
    if 16 < y0 and y1 < h - 16:
      return x0, y0, x1, y1
    _send(v, "on_mouse_scroll", 100, h - 300, 0, -5)
    v.frame()
  raise AssertionError(f"{name} never came into view")


def _flex_picture(opts):
  """trampoline.xml at qpos0 drawn headless with VisOptions `opts` (shadows off), MuJoCo's
  state in our snapshot (tests/render/test_flex_render.py's way, until Data has flexes)."""
  import mujoco
  from tests.models import load_flex_model
  from numjoco.render.camera import Camera
  from numjoco.render.headless import HeadlessRenderer
  from numjoco.render.snapshot import Snapshot
  from tests.render.test_flex_render import MjDataView
  path = os.path.join(ROOT, "trampoline.xml")
  mm = mujoco.MjModel.from_xml_path(path)
  md = mujoco.MjData(mm)
  mujoco.mj_forward(mm, md)
  m = load_flex_model(path)
  hr = HeadlessRenderer(m, 240, 180)
  try:
    c = Camera.default_for(m)
    c.lookat, c.distance, c.azimuth, c.elevation = np.array([0.0, 0, 1]), 2.5, 60, -40
    o = type(opts)(**{k: getattr(opts, k) for k in opts.__dataclass_fields__})
    o.shadows = False
    return hr.render(Snapshot(m, MjDataView(md)), c, o)
  finally:
    hr.release()


def test_rendering_panel_flex_toggles(open_viewer, tmp_path):
  """Each flex flag starts at MuJoCo's default (vertices off, edges on, faces off, skin on);
  clicking its checkbox in the Rendering panel flips it and a second click flips it back. The
  viewer's options with the skin clicked off draw a flex model differently (its edges instead
  of its skin: over 2000 pixels change) and the same again once clicked back on."""
  v = open_viewer(write_xml(tmp_path, "ball.xml", BALL), paused=True)
  for name, default in FLAGS.items():
    assert getattr(v.opts, name) is default, name
  v.ui.expand.add("Rendering")
  v.frame()
  v.frame()
  shown = _flex_picture(v.opts)
  for name, default in FLAGS.items():
    x0, y0, x1, y1 = _scroll_to(v, name)
    _click(v, x0 + 8, (y0 + y1) / 2)
    assert getattr(v.opts, name) is (not default), f"{name} did not toggle"
    if name == "flex_skin":
      assert _changed_pixels(shown, _flex_picture(v.opts)) > 2000
    x0, y0, x1, y1 = _scroll_to(v, name)
    _click(v, x0 + 8, (y0 + y1) / 2)
    assert getattr(v.opts, name) is default, f"{name} did not toggle back"
  assert _changed_pixels(shown, _flex_picture(v.opts)) == 0


_CLOTH = """<mujoco><worldbody><light pos="0 0 3"/>
  <body name="pin" pos="0 0 1"><geom type="box" size=".05 .05 .05" contype="0" conaffinity="0"/>
  </body>
  <flexcomp name="cloth" type="grid" dim="2" count="9 9 1" spacing=".08 .08 .08" pos="0 0 .6"
            mass=".5" radius=".01" rgba=".2 .6 .9 1">
    <contact contype="0" conaffinity="0"/><edge equality="true"/><pin id="0 8"/>
  </flexcomp></worldbody></mujoco>"""


def test_viewer_shows_a_flex_model(open_viewer, tmp_path):
  """The viewer opens a flex model numjoco.load_model accepts: its flex is on screen (turning
  the skin off changes over 2000 pixels) and its flex groups' checkboxes are in the Rendering
  panel (group 0 off hides the flex: the picture changes again)."""
  path = tmp_path / "cloth.xml"
  path.write_text(_CLOTH)
  v = open_viewer(str(path), paused=True)
  shown = v.screenshot()
  v.opts.flex_skin = False
  v.frame()
  assert _changed_pixels(shown, v.screenshot()) > 2000
  v.opts.flex_skin = True
  v.ui.expand.add("Rendering")
  v.frame()
  v.frame()
  x0, y0, x1, y1 = _scroll_to(v, "flex group 0")
  _click(v, x0 + 8, (y0 + y1) / 2)
  assert not v.opts.flex_groups[0]
  assert _changed_pixels(shown, v.screenshot()) > 2000
