"""Soak test of the viewer: it runs (under Xvfb when DISPLAY is unset) for a given time while a
seeded random user drags the camera and bodies, edits the physics panel (integrator, solver,
solref/solimp, gravity), loads keyframes, goes back through the history, reloads, switches
between five models, takes screenshots and starts and stops recordings. Afterwards:

- no exception on the worker or in the UI, no crash (the window is still up);
- resident memory grows at most 5% after the warm-up (every model with every integrator and
  solver, then a minute of the random user: the kernels, shaders and pools in use). It is read
  at checkpoints every CHECK_SECONDS, each at the same state whatever the user did (the demo
  opened, reset and paused, garbage collected, glibc's free memory returned): the median of
  the last third of the checkpoints against the median of the first third (at least three
  each). Read between actions instead, it swings by 10-25% with the model on screen and the
  allocator's pools; even at the checkpoints it moves by +-4% from one to the next (644-694 MB
  over a nine-minute run), so single checkpoints or the first and last three would mistake
  that spread for growth;
- no thread and no file descriptor left over;
- frames per second drawing the demo model, paused at its reset state, at the start and at the
  end (the script fails when the end's are more than 10% below; the test prints them).

    python -m tests.bench.soak [--minutes 60] [--seed 1]

prints one line per minute and a summary, and exits 1 when a criterion fails. The one-hour
figures are in the issue notes.
"""
import argparse
import os
import random
import sys
import tempfile
import threading
import time

import numpy as np

FPS_SECONDS = 5.0       # seconds of frames for each FPS measurement
RSS_GROWTH = 0.05       # allowed growth of resident memory after the warm-up
CHECK_SECONDS = 30.0    # the random user's time between memory checkpoints


def models():
  """The five models switched between: the demo, two dm_control suite models, MuJoCo's car
  and a flex model from MuJoCo's model folder (tests/assets)."""
  from numjoco.assets import DEMO_MODEL
  from tests.models import MUJOCO_MODELS, suite_source
  return [str(DEMO_MODEL), suite_source("cheetah")[0], suite_source("humanoid")[0],
          os.path.join(MUJOCO_MODELS, "model", "car", "car.xml"),
          os.path.join(MUJOCO_MODELS, "model", "flex", "trampoline.xml")]


def rss_bytes():
  """Resident memory of this process (Linux /proc)."""
  with open("/proc/self/statm") as f:
    return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _malloc_trim():
  """Return glibc's free heap memory to the system (no-op elsewhere)."""
  import ctypes
  try:
    ctypes.CDLL("libc.so.6").malloc_trim(0)
  except (OSError, AttributeError):
    pass


def heap_bytes():
  """(bytes in use, free bytes held) of glibc's malloc over all its arenas (mallinfo2: chunks
  in use plus mmapped blocks; free chunks kept), or (0, 0) elsewhere: resident memory that
  grows while the bytes in use stay flat is the allocator's fragmentation, not a leak."""
  import ctypes

  class _Info(ctypes.Structure):
    _fields_ = [(k, ctypes.c_size_t) for k in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]
  try:
    fn = ctypes.CDLL("libc.so.6").mallinfo2
  except (OSError, AttributeError):
    return 0, 0
  fn.restype = _Info
  info = fn()
  return info.uordblks + info.hblkhd, info.fordblks


def linked_units():
  """Engine units loaded into this process (each holds its machine code)."""
  from numjoco.engine import _jit
  return sum(u.linked for u in _jit.units().values())


def fd_count():
  return len(os.listdir("/proc/self/fd"))


def measure_fps(v, seconds=FPS_SECONDS):
  """Frames per second of viewer `v` drawing for `seconds` (physics as it is)."""
  n, t0 = 0, time.perf_counter()
  while time.perf_counter() - t0 < seconds:
    v.frame()
    n += 1
  return n / (time.perf_counter() - t0)


class User:
  """Seeded random actions on a Viewer, through the same handlers and commands as a person."""

  def __init__(self, v, paths, seed, out_dir):
    self.v, self.paths, self.rng, self.out_dir = v, paths, random.Random(seed), out_dir
    self.counts = {}
    self.notes = []        # what a user was told instead of the expected result

  def act(self):
    name = self.rng.choice([a for a in dir(self) if a.startswith("do_")])
    self.counts[name] = self.counts.get(name, 0) + 1
    getattr(self, name)()

  def _frames(self, n):
    for _ in range(n):
      self.v.frame()

  def do_camera_drag(self):
    from pyglet.window import mouse
    v, r = self.v, self.rng
    w, h = v.window.get_size()
    x, y = r.randrange(w // 3, w), r.randrange(h)
    button = r.choice([mouse.LEFT, mouse.RIGHT, mouse.MIDDLE])
    v.on_mouse_press(x, y, button, 0)
    for _ in range(r.randrange(3, 12)):
      v.on_mouse_drag(x, y, r.randint(-15, 15), r.randint(-15, 15), button, 0)
      v.frame()
    v.on_mouse_release(x, y, button, 0)

  def do_perturb(self):
    """Select the body under a random point of the model, then Ctrl+drag it."""
    from pyglet.window import key, mouse
    v, r = self.v, self.rng
    w, h = v.window.get_size()
    with v.sim.snapshot() as snap:
      if snap is None or v.ui.m is None or v.ui.m.nbody < 2:
        return
      b = r.randrange(1, v.ui.m.nbody)
      x, y = v.renderer.project(snap.xpos[b], v.camera, w, h, snap)[0]
    if not (np.isfinite(x) and np.isfinite(y)):   # behind the camera
      return
    x, y = int(x), int(h - y)
    for _ in range(2):
      v.on_mouse_press(x, y, mouse.LEFT, 0)
      v.on_mouse_release(x, y, mouse.LEFT, 0)
    button = r.choice([mouse.LEFT, mouse.RIGHT])
    v.on_mouse_press(x, y, button, key.MOD_CTRL)
    for _ in range(r.randrange(5, 30)):
      v.on_mouse_drag(x, y, r.randint(-10, 10), r.randint(-10, 10), button, key.MOD_CTRL)
      v.frame()
    v.on_mouse_release(x, y, button, key.MOD_CTRL)

  def do_edit_options(self):
    from numjoco.engine.types import mjtIntegrator, mjtSolver
    r, v = self.rng, self.v
    what = r.choice(["integrator", "solver", "gravity", "iterations"])
    value = {"integrator": lambda: r.choice(list(mjtIntegrator)).value,
             "solver": lambda: r.choice(list(mjtSolver)).value,
             "gravity": lambda: np.array([0, 0, r.uniform(-20, 0)]),
             "iterations": lambda: r.randrange(1, 100)}[what]()
    v.execute("opt", what, value)
    self._frames(3)

  def do_edit_contacts(self):
    r, v = self.rng, self.v
    m = v.ui.m
    if m is None or m.ngeom == 0:
      return
    g = r.randrange(m.ngeom)
    if r.random() < 0.5:
      v.execute("model", "geom_solref", g, np.array([r.uniform(0.005, 0.1), r.uniform(0.5, 2)]))
    else:
      v.execute("model", "geom_solimp", g,
                np.array([r.uniform(0.5, 0.9), r.uniform(0.9, 0.99), r.uniform(0.0005, 0.01),
                          0.5, 2.0]))
    self._frames(3)

  def do_keyframe_or_reset(self):
    m = self.v.ui.m
    key = self.rng.randrange(m.nkey) if m is not None and m.nkey else None
    self.v.execute("reset", key)
    self._frames(3)

  def do_history(self):
    v, r = self.v, self.rng
    v.execute("pause", True)
    v.sim.sync()
    st = v.sim.status()
    if st.history > 1:
      v.execute("history", r.randrange(st.history))
      self._frames(3)
    v.execute("pause", False)

  def do_reload(self):
    self.v.reload()
    self._wait_model()

  def do_switch_model(self):
    self.v.open(self.rng.choice(self.paths))
    self._wait_model()

  def _wait_model(self):
    v = self.v
    t_end = time.perf_counter() + 120
    while time.perf_counter() < t_end:
      v.frame()
      if v.sim is None:        # the worker starts on the viewer's boot thread
        continue
      st = v.sim.status()
      if st.load_error or (st.physics and not st.loading and v.ui.m is v.sim.model
                           and st.model_version == v._model_version):
        return
    raise RuntimeError("a model did not load within 120 s")

  def _fresh_demo(self, paused, frames):
    """The demo opened afresh and reset, paused or running, then `frames` frames drawn."""
    v = self.v
    v.open(self.paths[0])
    self._wait_model()
    v.execute("reset", None)
    v.execute("pause", paused)
    self._frames(frames)

  def checkpoint(self):
    """Resident memory, malloc's bytes in use and its free bytes held (heap_bytes), at a
    state that does not depend on what the user did: the demo opened afresh, reset and
    paused, drawn, Python's garbage collected and glibc's free memory returned; the user's run
    goes on afterwards."""
    import gc
    self._fresh_demo(True, 10)
    gc.collect()
    _malloc_trim()
    rss = rss_bytes()
    used, free = heap_bytes()
    self.v.execute("pause", False)
    return rss, used, free

  def demo_fps(self):
    """Frames per second drawing the demo opened afresh, reset and paused: the median of three
    measure_fps. Paused, the frame is the drawing and the panels alone (with the simulation
    running, the same measurement moved by 20-40% between runs: the worker thread's share of the
    two cores varies), comparable at the start and the end of a run."""
    self._fresh_demo(True, 30)
    fps = sorted(measure_fps(self.v, FPS_SECONDS / 2) for _ in range(3))[1]
    self.v.execute("pause", False)
    return fps

  def do_screenshot(self):
    path = self.v.save_screenshot(os.path.join(self.out_dir, "shot.png"),
                                  ui=self.rng.random() < 0.5)
    if path:
      os.remove(path)

  def do_record(self):
    v = self.v
    path = v.start_recording(os.path.join(self.out_dir, "rec.mp4"))
    self._frames(self.rng.randrange(10, 60))
    v.stop_recording()
    if path and not v.ui.message.startswith("video saved"):   # e.g. no frame: said, not failed
      self.notes.append(f"recording: {v.ui.message}")
    if path and os.path.exists(path):
      os.remove(path)

  def do_run_frames(self):
    self._frames(self.rng.randrange(10, 60))


def check(v):
  """The worker's and the UI's errors, but for refusals: an edit the model cannot take is
  refused with a ValueError that the worker shows (and pauses on), as a user would see it; the
  user dismisses it and the run goes on."""
  st = v.sim.status()
  last = st.error.strip().splitlines()[-1] if st.error.strip() else ""
  if last.startswith("ValueError:"):
    v.sim.send("clear_error")
    v.sim.send("pause", False)
    return [e for e in (st.load_error, v.ui.error) if e]
  return [e for e in (st.error, st.load_error, v.ui.error) if e]


def soak(seconds, seed=1, warm_seconds=60.0, width=1280, height=720, log=print, trace=0,
         fps_drop=None):
  """Run the soak for `seconds` after a warm-up (every model with every integrator and solver,
  then `warm_seconds` of the random user); returns the figures and the failures. `fps_drop`:
  the end's frames per second may be at most this fraction below the start's (None: not
  checked, for a machine running other jobs). `trace`: frames of tracemalloc's tracebacks
  over the run (0: not traced)."""
  from numjoco.app.viewer import Viewer
  paths = models()
  out_dir = tempfile.mkdtemp(prefix="numjoco-soak-")
  v = Viewer(paths[0], width=width, height=height, max_fps=0, out_dir=out_dir)
  user = User(v, paths, seed, out_dir)
  failures = []

  def run(seconds):
    """The random user for `seconds`, errors checked after each action; returns the memory
    checkpoints (seconds since the start, then User.checkpoint's three figures in bytes), one
    every CHECK_SECONDS and one at the end."""
    t0 = last = time.perf_counter()
    checked = t0 - CHECK_SECONDS      # the first checkpoint at the start
    samples = []
    while not v.closed:
      now = time.perf_counter()
      if now - checked >= CHECK_SECONDS or now - t0 >= seconds:
        samples.append((now - t0, *user.checkpoint()))
        checked = time.perf_counter()
        if now - t0 >= seconds:
          break
      else:
        user.act()
      errors = check(v)
      if errors:
        failures.append(f"after {sum(user.counts.values())} actions: {errors[0][-2000:]}")
        v.sim.send("clear_error")
        v.ui.error = ""
      if time.perf_counter() - last > 60:
        last = time.perf_counter()
        log(f"{(last - t0) / 60:.0f} min: rss {rss_bytes() / 2**20:.0f} MB (checkpoint "
            f"{samples[-1][1] / 2**20:.0f} MB, heap in use {samples[-1][2] / 2**20:.0f} MB, "
            f"free {samples[-1][3] / 2**20:.0f} MB), "
            f"{threading.active_count()} threads, {fd_count()} fds, {linked_units()} units, "
            f"{sum(user.counts.values())} actions")
    if v.closed:
      failures.append("the window closed")
    return np.array(samples).reshape(-1, 4)

  try:
    user._wait_model()
    # warm-up: every model once with every integrator and solver (each loads its kernels),
    # a recording and a screenshot, then the demo again
    from numjoco.engine.types import mjtIntegrator, mjtSolver
    for p in paths[1:] + paths[:1]:
      v.open(p)
      user._wait_model()
      for integrator, solver in zip(list(mjtIntegrator), list(mjtSolver) * 2):
        v.execute("opt", "integrator", integrator.value)
        v.execute("opt", "solver", solver.value)
        user._frames(10)
      user.do_record()
      user.do_screenshot()
      user.do_reload()
    run(warm_seconds)                       # and the random user for a while
    fps0 = user.demo_fps()
    threads0, fds0 = threading.active_count(), fd_count()
    if trace:
      import tracemalloc
      tracemalloc.start(trace)
      user.checkpoint()
      snap0 = tracemalloc.take_snapshot()
    log(f"warm: {threads0} threads, {fds0} fds, {fps0:.1f} fps")
    main = run(seconds)
    third = max(3, len(main) // 3)
    rss0, rss1 = (float(np.median(main[:third, 1])), float(np.median(main[-third:, 1])))
    heap0, heap1 = (float(np.median(main[:third, 2])), float(np.median(main[-third:, 2])))
    hours = (main[-1, 0] - main[0, 0]) / 3600
    slope = np.polyfit(main[:, 0] / 3600, main[:, 1], 1)[0] if hours > 0 else 0.0
    if trace:
      user.checkpoint()
      grown = tracemalloc.take_snapshot().compare_to(snap0, "traceback")
      tracemalloc.stop()
      log(f"Python's allocations grown most from the first checkpoint to the last "
          f"(tracemalloc, {trace} frames):")
      for st in grown[:12]:
        log(f"  {st.size_diff / 2**20:+.2f} MB in {st.count_diff:+d} blocks at")
        for line in st.traceback.format()[:2 * trace]:
          log("    " + line)
    fps1 = user.demo_fps()
    threads1, fds1 = threading.active_count(), fd_count()
  finally:
    v.close()
  growth = rss1 / rss0 - 1
  if growth > RSS_GROWTH:
    failures.append(f"resident memory grew {100 * growth:.1f}% ({rss0 / 2**20:.0f} -> "
                    f"{rss1 / 2**20:.0f} MB; checkpoints "
                    f"{' '.join(f'{b / 2**20:.0f}' for b in main[:, 1])} MB; malloc's bytes "
                    f"in use {heap0 / 2**20:.0f} -> {heap1 / 2**20:.0f} MB, free held "
                    f"{' '.join(f'{b / 2**20:.0f}' for b in main[:, 3])} MB)")
  if fps_drop is not None and fps1 < (1 - fps_drop) * fps0:
    failures.append(f"frames per second fell {100 * (1 - fps1 / fps0):.1f}% ({fps0:.1f} -> "
                    f"{fps1:.1f})")
  if threads1 > threads0:
    failures.append(f"threads: {threads0} -> {threads1}")
  if fds1 > fds0:
    failures.append(f"file descriptors: {fds0} -> {fds1}")
  return dict(seconds=seconds, actions=dict(user.counts), rss=(rss0, rss1), heap=(heap0, heap1),
              rss_max=float(main[:, 1].max()), rss_slope=float(slope), checkpoints=main,
              threads=(threads0, threads1), fds=(fds0, fds1),
              fps=(fps0, fps1), notes=user.notes), failures


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--minutes", type=float, default=60.0)
  p.add_argument("--seed", type=int, default=1)
  p.add_argument("--warm-minutes", type=float, default=1.0)
  p.add_argument("--trace", type=int, default=0, metavar="FRAMES",
                 help="trace Python's allocations (tracemalloc, FRAMES frames each) and print "
                      "those grown most over the run")
  p.add_argument("--fps-drop", type=float, default=0.10,
                 help="the most the end's FPS may fall below the start's (a quiet machine; "
                 "a negative value: not checked)")
  a = p.parse_args(argv)
  if a.fps_drop < 0:
    a.fps_drop = None
  xvfb = None
  if not os.environ.get("DISPLAY"):
    from tests.app import conftest
    conftest._start_xvfb()
    xvfb = conftest._XVFB
  try:
    figures, failures = soak(a.minutes * 60, a.seed, a.warm_minutes * 60, fps_drop=a.fps_drop,
                            trace=a.trace)
  finally:
    if xvfb is not None:   # the X server this run started ends with it
      xvfb.terminate()
      xvfb.wait(5)
  rss0, rss1 = figures["rss"]
  fps0, fps1 = figures["fps"]
  print(f"{a.minutes:g} min, {sum(figures['actions'].values())} actions "
        f"({', '.join(f'{k[3:]} {n}' for k, n in sorted(figures['actions'].items()))})")
  print(f"rss {rss0 / 2**20:.0f} -> {rss1 / 2**20:.0f} MB ({100 * (rss1 / rss0 - 1):+.1f}%, "
        f"max {figures['rss_max'] / 2**20:.0f} MB, trend "
        f"{figures['rss_slope'] / 2**20:+.0f} MB/h over {len(figures['checkpoints'])} "
        f"checkpoints; malloc's bytes in use {figures['heap'][0] / 2**20:.0f} -> "
        f"{figures['heap'][1] / 2**20:.0f} MB), "
        f"threads {figures['threads'][0]} -> {figures['threads'][1]}, "
        f"fds {figures['fds'][0]} -> {figures['fds'][1]}, "
        f"fps {fps0:.1f} -> {fps1:.1f} ({100 * (fps1 / fps0 - 1):+.1f}%)")
  for n in figures["notes"]:
    print("note:", n)
  for f in failures:
    print("FAIL:", f)
  return 1 if failures else 0


if __name__ == "__main__":
  sys.exit(main())
