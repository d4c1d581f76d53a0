"""The viewer's start path: the window side (main thread) must not import the engine, Numba,
scipy or mujoco, so the window, GL context and imgui initialise while the boot thread imports the
engine and loads the model (issue #4: model on screen <=1 s). An import of the engine on the main
thread waits on the boot thread's import lock and serialises the two.
"""
import subprocess
import sys

import pytest

def test_window_side_imports_no_engine():
  code = ("import sys\nimport app.viewer, app.panels\n"
          "import render.renderer, render.camera, render.snapshot, render.visual, render.meshes\n"
          "print(' '.join(sorted({k.split('.')[0] for k in sys.modules})))\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
  loaded = set(out.stdout.split())
  assert "app" in loaded and "render" in loaded   # the probe itself worked
  assert not loaded & {"engine", "numba", "scipy", "mujoco", "llvmlite"}, loaded


def test_speeds_shared_by_worker_and_panels():
  from app import sim
  from app.panels import common
  assert sim.SPEEDS is common.SPEEDS
  assert sim.SPEEDS[-1] == float("inf") and 1.0 in sim.SPEEDS


def test_new_snapshot_buffers_are_filled_from_the_worker_data():
  """The worker's snapshot factory copies its own Data (no second Data made and forwarded)."""
  import numpy as np

  import engine
  from app.sim import BasicSnapshot, _snapshot_maker
  from assets import DEMO_MODEL
  from render.snapshot import Snapshot
  m = engine.load_model(str(DEMO_MODEL))
  d = engine.make_data(m)
  d.qpos[:] = d.qpos + 0.1       # away from qpos0: a snapshot of a fresh Data would differ
  engine.forward(m, d)
  snap = _snapshot_maker(Snapshot, m, d)()
  np.testing.assert_array_equal(snap.geom_xpos, d.geom_xpos)
  np.testing.assert_array_equal(snap.qpos, d.qpos)
  basic = _snapshot_maker(BasicSnapshot, m, d)()   # takes only the model
  assert basic.qpos.shape == d.qpos.shape


_FIRST_FRAME = """
import json, sys
import numpy as np
from app.viewer import Viewer
v = Viewer(width=480, height=320, max_fps=0)
while v.first_frame_at is None:
  v.frame()
out = {"imgui_at_first_frame": "imgui_bundle" in sys.modules, "ui_at_first_frame": v.ui_ready}
img = v.screenshot().astype(int)
bg = np.round(np.array(v.opts.background) * 255)
out["model_pixels"] = int((np.abs(img - bg).sum(2) > 30).sum())
while not v.ui_ready:
  v.frame()
v.frame()
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

  from app import sim as sim_mod
  from assets import DEMO_MODEL
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
  code = ("import sys\nfrom app import warmup\nd = warmup.cache_dir()\nwarmup.is_warm()\n"
          "assert 'numba' not in sys.modules and 'engine' not in sys.modules\n"
          "import engine._cache\nprint(d == engine._cache.cache_dir())\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, **env), cwd=os.path.dirname(os.path.dirname(
                           os.path.dirname(os.path.abspath(__file__)))))
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.split() == ["True"]
