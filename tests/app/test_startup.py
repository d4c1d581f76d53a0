"""The viewer's start path: the window side (main thread) must not import the engine, Numba,
scipy or mujoco, so the window, GL context and imgui initialise while the boot thread imports the
engine and loads the model (issue #4: model on screen <=1 s). An import of the engine on the main
thread waits on the boot thread's import lock and serialises the two.
"""
import subprocess
import sys

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
