"""A real X display for the viewer tests: Xvfb is started when DISPLAY is unset (never skipped).

DISPLAY must be set before pyglet is imported, so this runs at collection time (pyglet is only
imported lazily by the app and by these tests' fixtures).
"""
import os
import shutil
import subprocess

import pytest

_XVFB = None


def _start_xvfb():
  global _XVFB
  exe = shutil.which("Xvfb")
  if exe is None:
    raise pytest.UsageError("the viewer tests need an X display: DISPLAY is unset and Xvfb is not "
                            "installed (apt-get install xvfb xauth libgl1-mesa-dri; .ci/run does)")
  r, w = os.pipe()
  _XVFB = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", "1280x800x24", "-nolisten",
                            "tcp"], pass_fds=(w,), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
  os.close(w)
  with os.fdopen(r) as f:
    num = f.readline().strip()
  if not num:
    raise pytest.UsageError("Xvfb started but reported no display number")
  os.environ["DISPLAY"] = ":" + num


def pytest_configure(config):
  """Start Xvfb when there is no display (before pyglet is imported)."""
  if not os.environ.get("DISPLAY"):
    _start_xvfb()


def pytest_collection_modifyitems(config, items):
  """Window tests first (those that open a viewer, and test_viewer.py): a GL context made through
  EGL earlier in the same process (headless rendering, e.g. video recording) leaves moderngl
  unable to attach to a pyglet/GLX window."""
  items.sort(key=lambda it: 0 if ("test_viewer" in it.nodeid
                                  or "open_viewer" in getattr(it, "fixturenames", ())) else 1)


def pytest_unconfigure(config):
  """Stop the Xvfb this session started."""
  if _XVFB is not None:
    _XVFB.terminate()
    _XVFB.wait(5)


@pytest.fixture(scope="session", autouse=True)
def warm_cache():
  """Compile the engine once before the viewer tests when the cache is cold (a clean CI clone):
  the viewer would otherwise show its compile screen for minutes."""
  import sys
  from numjoco.app import warmup
  if not warmup.is_warm():
    subprocess.run([sys.executable, "-m", "numjoco.app.warmup"], check=True,
                   cwd=str(warmup.ENGINE.parent))


@pytest.fixture
def open_viewer():
  """Factory: open_viewer(path=None, **kw) -> a Viewer whose model is on screen; closed after."""
  made = []

  def make(path=None, **kw):
    from numjoco.app.viewer import Viewer
    kw.setdefault("width", 640)
    kw.setdefault("height", 480)
    kw.setdefault("max_fps", 0)
    v = Viewer(path, **kw)
    made.append(v)
    run_until(v, lambda: v.first_frame_at is not None, "the model never appeared on screen")
    run_until(v, lambda: v.ui_ready, "the panels never came up")   # imported after frame one
    # the first frames show the model's preview (engine/preview.py); the tests drive the engine
    run_until(v, lambda: v.sim.status().physics and v.ui.m is v.sim.model,
              "the physics never took over from the preview")
    # the engine's first snapshot follows the takeover (tests read snapshots right away)
    run_until(v, lambda: _published(v), "the physics published no snapshot")
    return v

  yield make
  for v in made:
    v.close()


def _published(v):
  """Whether the simulation has published a snapshot of the engine's state."""
  with v.sim.snapshot() as snap:
    return snap is not None


def run_until(v, cond, what, timeout=120.0):
  """Run frames of viewer `v` until cond() holds (fails with `what` after `timeout` s)."""
  import time
  t_end = time.perf_counter() + timeout
  while not cond():
    if time.perf_counter() > t_end:
      raise AssertionError(what)
    v.frame()
