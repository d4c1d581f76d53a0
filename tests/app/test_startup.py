"""The viewer's start path: the window side (main thread) must not import the engine, Numba,
scipy or mujoco, so the window, GL context and imgui initialise while the boot thread imports the
engine and loads the model (issue #4: model on screen <=1 s). An import of the engine on the main
thread waits on the boot thread's import lock and serialises the two.
"""
import subprocess
import sys

import pytest

def test_window_side_imports_no_engine():
  code = ("import sys\nimport numjoco.app.viewer, numjoco.app.panels\n"
          "import numjoco.render.renderer, numjoco.render.camera, numjoco.render.snapshot\n"
          "import numjoco.render.visual, numjoco.render.meshes\n"
          "print(' '.join(sorted({'.'.join(k.split('.')[:2]) for k in sys.modules})))\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
  loaded = set(out.stdout.split())
  assert "numjoco.app" in loaded and "numjoco.render" in loaded   # the probe itself worked
  assert not loaded & {"numjoco.engine", "numba", "scipy", "mujoco", "llvmlite"}, loaded


def test_speeds_shared_by_worker_and_panels():
  from numjoco.app import sim
  from numjoco.app.panels import common
  assert sim.SPEEDS is common.SPEEDS
  assert sim.SPEEDS[-1] == float("inf") and 1.0 in sim.SPEEDS


def test_new_snapshot_buffers_are_filled_from_the_worker_data():
  """The worker's snapshot factory copies its own Data (no second Data made and forwarded)."""
  import numpy as np

  import numjoco
  from numjoco.app.sim import BasicSnapshot, _snapshot_maker
  from numjoco.assets import DEMO_MODEL
  from numjoco.render.snapshot import Snapshot
  m = numjoco.load_model(str(DEMO_MODEL))
  d = numjoco.make_data(m)
  d.qpos[:] = d.qpos + 0.1       # away from qpos0: a snapshot of a fresh Data would differ
  numjoco.forward(m, d)
  snap = _snapshot_maker(Snapshot, m, d)()
  np.testing.assert_array_equal(snap.geom_xpos, d.geom_xpos)
  np.testing.assert_array_equal(snap.qpos, d.qpos)
  basic = _snapshot_maker(BasicSnapshot, m, d)()   # takes only the model
  assert basic.qpos.shape == d.qpos.shape


_FIRST_FRAME = """
import json, sys
import numpy as np
from numjoco.app.viewer import Viewer
v = Viewer(width=480, height=320, max_fps=0)
while v.first_frame_at is None:
  v.frame()
out = {"imgui_at_first_frame": "imgui_bundle" in sys.modules, "ui_at_first_frame": v.ui_ready}
img = v.screenshot().astype(int)
bg = np.round(np.array(v.opts.background) * 255)
out["model_pixels"] = int((np.abs(img - bg).sum(2) > 30).sum())
while not (v.ui_ready and v.sim.status().physics):   # the panels need the engine's Model
  v.frame()
v.frame()
v.frame()   # pyglet queues on_draw: a frame's draw runs at the next frame's dispatch_events
from imgui_bundle import imgui
out["panel"] = bool(imgui.internal.find_window_by_name("numjoco").active)
v.close()
print(json.dumps(out))
"""


def test_model_is_drawn_before_the_panels_load():
  """The first frame shows the model without waiting for imgui-bundle (imported on a thread only
  afterwards), and the panels come up a few frames later."""
  import json
  import os
  out = subprocess.run([sys.executable, "-c", _FIRST_FRAME], capture_output=True, text=True,
                       timeout=300, cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                           os.path.abspath(__file__)))))
  assert out.returncode == 0, out.stderr[-3000:]
  res = json.loads(out.stdout.strip().splitlines()[-1])
  assert not res["imgui_at_first_frame"] and not res["ui_at_first_frame"]
  assert res["model_pixels"] > 2000          # the demo scene is on screen, not a blank window
  assert res["panel"]                         # and the panels arrive


def test_worker_waits_for_the_first_frame_then_runs(monkeypatch):
  """With wait_shown the worker publishes the model and holds still (the window's first frame
  gets the CPU) until the UI says the frame is out; then it steps in real time."""
  import time

  from numjoco.app import sim as sim_mod
  from numjoco.assets import DEMO_MODEL
  monkeypatch.setattr(sim_mod, "SHOWN_WAIT", 60.0)
  sim = sim_mod.Simulation(path=str(DEMO_MODEL), wait_shown=True).start()
  try:
    sim.wait_until(lambda st: st.model_version > 0)
    time.sleep(2.0)     # without the wait, the worker would be stepping by now
    with sim.snapshot() as snap:
      assert snap.time == 0.0          # published, not stepped
    sim.first_shown.set()
    sim.wait_until(lambda st: st.rtf > 0, timeout=60)
    with sim.snapshot() as snap:
      assert snap.time > 0.0
  finally:
    sim.stop()


@pytest.mark.parametrize("env", [{}, {"NUMJOCO_CACHE_DIR": "/tmp/nj-cache-x"},
                                 {"NUMBA_BOUNDSCHECK": "1"}])
def test_warm_check_finds_the_engines_cache_without_numba(env):
  """app.warmup computes the engine's cache directory without importing numba (its import
  belongs on the boot thread), and it is the directory engine/_cache.py configures."""
  import os
  code = ("import sys\nfrom numjoco.app import warmup\nd = warmup.cache_dir()\n"
          "warmup.is_warm()\n"
          "assert 'numba' not in sys.modules and 'numjoco.engine' not in sys.modules\n"
          "from numjoco.engine import _cache\nprint(d == _cache.cache_dir())\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, **env), cwd=os.path.dirname(os.path.dirname(
                           os.path.dirname(os.path.abspath(__file__)))))
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.split() == ["True"]


# ------------------------------------------------------------------ the preview (engine/preview.py)

_ROOT = __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.dirname(
    __import__("os").path.abspath(__file__))))

_POSE_FIELDS = ("xpos", "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos",
                "geom_xmat", "site_xpos", "site_xmat", "subtree_com", "cam_xpos", "cam_xmat",
                "light_xpos", "light_xdir", "ten_wrapadr", "ten_wrapnum", "wrap_obj",
                "wrap_xpos")


def _pose_sources():
  import os

  from tests.models import model_xml, suite_source
  return [("poses", model_xml("app/startup/poses")),
          ("demo", os.path.join(_ROOT, "assets", "demo.xml")),
          ("humanoid", suite_source("humanoid")[0]), ("cartpole", suite_source("cartpole")[0])]


@pytest.mark.parametrize("name", ["poses", "demo", "humanoid", "cartpole"])
def test_preview_poses_equal_mujocos_forward(name):
  """The preview (numpy kinematics, no engine) poses every body, geom, site, camera and light
  as MuJoCo's mj_forward does, at qpos0 and at each keyframe, and its m.stat (which places the
  free camera) is MuJoCo's."""
  import mujoco
  import numpy as np

  from numjoco.engine.preview import Compiled
  src = dict(_pose_sources())[name]
  c = Compiled(src)
  mjm = (mujoco.MjModel.from_xml_string(src) if src.lstrip().startswith("<")
         else mujoco.MjModel.from_xml_path(src))
  mjd = mujoco.MjData(mjm)
  for key in [None] + list(range(mjm.nkey)):
    pm, pd = c.preview(key)
    if key is None:
      mujoco.mj_resetData(mjm, mjd)
    else:
      mujoco.mj_resetDataKeyframe(mjm, mjd, key)
    mujoco.mj_forward(mjm, mjd)
    for f in _POSE_FIELDS:
      want = getattr(mjd, f).reshape(getattr(pd, f).shape)
      np.testing.assert_allclose(getattr(pd, f), want, atol=1e-12, err_msg=f"{name} {key} {f}")
  for f in ("extent", "meansize", "meanmass"):
    np.testing.assert_allclose(getattr(pm.stat, f), getattr(mjm.stat, f), rtol=1e-9, err_msg=f)
  np.testing.assert_allclose(pm.stat.center, mjm.stat.center, atol=1e-12)


def test_preview_compiles_without_numba():
  """Compiling and posing a model for the first frame imports no numba (nor the mujoco
  package); building the engine's Model of it does."""
  code = ("import sys\nfrom numjoco.engine.preview import Compiled\n"
          "c = Compiled('assets/demo.xml'); m, d = c.preview()\n"
          "print(sorted({k.split('.')[0] for k in sys.modules} & {'numba', 'mujoco', 'llvmlite'}))\n"
          "from numjoco.engine.api import build_model\n"
          "build_model(c); print('numba' in sys.modules)\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=_ROOT)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.split("\n")[:2] == ["[]", "True"]


@pytest.mark.parametrize("name", ["poses", "humanoid"])
def test_build_model_of_the_preview_equals_load_model(name):
  """build_model(Compiled(...)) builds the same Model as numjoco.load_model (every array, size
  and statistic), on the very arrays the preview model shows (shared, not copied)."""
  import numpy as np

  import numjoco
  from numjoco.engine.api import build_model
  from numjoco.engine.preview import Compiled
  src = dict(_pose_sources())[name]
  c = Compiled(src)
  pm, _ = c.preview()
  m, ref = build_model(c), numjoco.load_model(src)
  assert m.sizes() == ref.sizes()
  assert set(m._arrays) == set(ref._arrays)
  for k, a in ref._arrays.items():
    np.testing.assert_array_equal(m._arrays[k], a, err_msg=k)
  for f in ("extent", "meansize", "meanmass", "meaninertia"):
    assert getattr(m.stat, f) == getattr(ref.stat, f), f
  assert m.geom_pos is pm.geom_pos and m.geom_rgba is pm.geom_rgba


_IMPORTS = """
import importlib, sys, types
for mod in {CASES}:
  importlib.import_module(mod)
import numjoco
from numjoco.engine import api, forward, inverse, step
print(callable(numjoco.forward) and numjoco.forward is api.forward,
      callable(numjoco.inverse) and numjoco.inverse is api.inverse,
      isinstance(forward, types.ModuleType), isinstance(inverse, types.ModuleType),
      step.fwd is forward and inverse.fwd is forward and api._fwd is forward)
"""


@pytest.mark.parametrize("first", [[], ["numjoco.engine.derivative"], ["numjoco.engine.forward"],
                                   ["numjoco.engine.step"],
                                   ["numjoco.engine.inverse"], ["numjoco.engine.smooth"],
                                   ["numjoco.engine.api"], ["numjoco.engine.lengthrange"],
                                   ["numjoco.engine.collision.convex"], ["numjoco.engine.sensor"],
                                   ["numjoco.engine.mjcf", "numjoco.engine.io"]])
def test_engine_imports_in_any_order(first):
  """`import numjoco` loads no numba; whichever engine module is imported first, the imports
  succeed, numjoco.forward and numjoco.inverse are the public functions and
  numjoco.engine.forward and numjoco.engine.inverse the modules."""
  code = "import sys, numjoco\nassert 'numba' not in sys.modules\n" + _IMPORTS.replace(
      "{CASES}", repr(first))
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=_ROOT)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.split() == ["True"] * 5


_PREVIEW_FRAME = """
import json, sys
import numpy as np
from numjoco.app.viewer import Viewer
v = Viewer(sys.argv[1], width=480, height=320, max_fps=0, key=sys.argv[2] or None,
           paused=True)   # the takeover pose is compared before the simulation runs
while v.first_frame_at is None:
  v.frame()
st = v.sim.status()
out = {"numba_at_first_frame": "numba" in sys.modules, "physics_at_first_frame": st.physics,
       "preview": bool(getattr(v.renderer.m, "preview", False)), "caption": v.window.caption}
img = v.screenshot().astype(int)
bg = np.round(np.array(v.opts.background) * 255)
out["model_pixels"] = int((np.abs(img - bg).sum(2) > 30).sum())
with v.sim.snapshot() as snap:
  out["geom_xpos"] = snap.geom_xpos.tolist()
  out["geom_xmat"] = snap.geom_xmat.tolist()
while not (v.sim.status().physics and v.ui.m is v.sim.model):
  v.frame()
out["engine_model"] = type(v.renderer.m).__name__
with v.sim.snapshot() as snap:
  out["geom_xpos_physics"] = snap.geom_xpos.tolist()
v.sim.send("pause", False)
import time
t_end = time.perf_counter() + 60
while time.perf_counter() < t_end:
  v.frame()
  with v.sim.snapshot() as snap:
    if snap.time > 0.05:
      break
out["time"] = snap.time
out["caption_after"] = v.window.caption
v.close()
print(json.dumps(out))
"""


@pytest.mark.parametrize("model,key", [("poses", "moved"), ("humanoid", "")])
def test_first_frame_is_the_preview_then_physics_takes_over(model, key, tmp_path):
  """The window's first frame draws the model's preview before numba is imported: the scene is
  on screen, in MuJoCo's pose at the start keyframe (or qpos0), the caption says the physics is
  loading; then the engine's Model takes over in the same pose and the simulation runs."""
  import json

  import mujoco
  import numpy as np
  src = dict(_pose_sources())[model]
  if src.lstrip().startswith("<"):
    path = tmp_path / "poses.xml"
    path.write_text(src)
    src = str(path)
  out = subprocess.run([sys.executable, "-c", _PREVIEW_FRAME, src, key], capture_output=True,
                       text=True, timeout=300, cwd=_ROOT)
  assert out.returncode == 0, out.stderr[-3000:]
  res = json.loads(out.stdout.strip().splitlines()[-1])
  assert not res["numba_at_first_frame"] and not res["physics_at_first_frame"]
  assert res["preview"] and "loading physics" in res["caption"]
  assert res["model_pixels"] > 2000
  mjm = mujoco.MjModel.from_xml_path(src)
  mjd = mujoco.MjData(mjm)
  if key:
    mujoco.mj_resetDataKeyframe(mjm, mjd, mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_KEY, key))
  mujoco.mj_forward(mjm, mjd)
  np.testing.assert_allclose(res["geom_xpos"], mjd.geom_xpos, atol=1e-12)
  np.testing.assert_allclose(res["geom_xmat"], mjd.geom_xmat, atol=1e-12)
  np.testing.assert_allclose(res["geom_xpos_physics"], mjd.geom_xpos, atol=1e-9)
  assert res["engine_model"] == "Model" and res["time"] > 0.05
  assert "loading" not in res["caption_after"]


def test_random_marks_cached_equal_mujocos(tmp_path, monkeypatch):
  """The random marks' mask (MuJoCo's seeded generator) is computed once per (pixels,
  probability) and then read from the cache folder; cold, warm or from a damaged cache file
  the texture pixels are MuJoCo's."""
  import mujoco
  import numpy as np

  from numjoco.engine.mjcf import _texture
  from numjoco.engine.preview import Compiled
  from tests.models import model_xml
  monkeypatch.setenv("NUMJOCO_CACHE_DIR", str(tmp_path))
  xml = model_xml("app/startup/marks")
  want = mujoco.MjModel.from_xml_string(xml).tex_data
  cold = Compiled(xml).arrays["tex_data"]
  files = sorted((tmp_path / "texture-marks").iterdir())
  assert len(files) == 2
  warm = Compiled(xml).arrays["tex_data"]
  files[0].write_bytes(b"not a mask")
  damaged = Compiled(xml).arrays["tex_data"]
  for got in (cold, warm, damaged):
    np.testing.assert_array_equal(got, want)
  n = 40 * 40 * 6
  np.testing.assert_array_equal(_texture.random_marks(n, 0.03),
                                _texture.mt19937_64_uniform(n) < 0.03)


_SAME_PICTURE = """
import sys, numpy as np
from numjoco.app.viewer import Viewer
v = Viewer(sys.argv[1], width=480, height=320, max_fps=0, paused=True)
while v.first_frame_at is None:
  v.frame()
preview = v.screenshot().astype(int)
while not (v.sim.status().physics and v.ui.m is v.sim.model):
  v.frame()
for _ in range(3):
  v.frame()
physics = v.screenshot().astype(int)
v.close()
bg = np.round(np.array(v.opts.background) * 255)
print(int((np.abs(preview - physics).sum(2) > 0).sum()), int((np.abs(preview - bg).sum(2) > 30).sum()))
"""


@pytest.mark.parametrize("model", ["poses", "humanoid"])
def test_preview_picture_equals_the_physics_picture(model, tmp_path):
  """The preview frame is the full scene: pixel for pixel the picture the engine's first frame
  gives (paused at t=0), floor, lights, shadows, textures, tendons and all."""
  src = dict(_pose_sources())[model]
  if src.lstrip().startswith("<"):
    path = tmp_path / "poses.xml"
    path.write_text(src)
    src = str(path)
  out = subprocess.run([sys.executable, "-c", _SAME_PICTURE, src], capture_output=True,
                       text=True, timeout=300, cwd=_ROOT)
  assert out.returncode == 0, out.stderr[-3000:]
  differing, drawn = (int(x) for x in out.stdout.split()[-2:])
  assert drawn > 2000 and differing == 0, (drawn, differing)
