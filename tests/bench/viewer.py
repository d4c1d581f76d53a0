"""Benchmark of the viewer window (1280x720): frames per second with physics paused and running
at real time, the real-time factor the worker achieves meanwhile, and the time from process
start to the model on screen with a warm cache. Not a test:

    python -m tests.bench.viewer [--models demo,humanoid,pile64] [--seconds 5] [--no-record]

Each model also gets a '+rec' row: the same run while the viewer records a 30 fps video of it
(frames sampled by the worker in simulated time, rendered offscreen, encoded on a thread).

Starts Xvfb when DISPLAY is unset (software GL: Mesa llvmpipe).
"""
import argparse
import os
import subprocess
import sys
import time

_FIRST = """
import resource, time, sys
from numjoco.app.viewer import Viewer
v = Viewer({path!r}, width=1280, height=720, max_fps=0)
while v.first_frame_at is None:
  v.frame()
r = resource.getrusage(resource.RUSAGE_SELF)
print("FIRST", time.time(), r.ru_utime + r.ru_stime, flush=True)
while not v.sim.status().physics:
  v.frame()
print("PHYSICS", time.time(), flush=True)
v.close()
"""


def _path(name):
  from numjoco.assets import ASSETS, DEMO_MODEL
  if name == "demo":
    return str(DEMO_MODEL)
  if name == "pile64":
    return str(ASSETS / "pile64.xml")
  from tests.models import suite_source
  src, assets = suite_source(name)
  if assets:
    raise SystemExit(f"{name}: models with in-memory assets cannot be opened by path")
  return src


def _frames(v, seconds):
  n, t0 = 0, time.perf_counter()
  while time.perf_counter() - t0 < seconds:
    v.frame()
    n += 1
  return n / (time.perf_counter() - t0)


def _cpu():
  """CPU seconds of this process (all threads, llvmpipe's too) and of the physics worker alone
  (Linux /proc; 0 elsewhere)."""
  import resource
  import threading
  r = resource.getrusage(resource.RUSAGE_SELF)
  worker = 0.0
  for t in threading.enumerate():
    if t.name == "numjoco-sim" and t.native_id:
      try:
        with open(f"/proc/self/task/{t.native_id}/stat") as f:
          fields = f.read().rsplit(")", 1)[1].split()
        worker += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
      except OSError:
        pass
  return r.ru_utime + r.ru_stime, worker


def _render_ms(c0, c1, frames):
  """CPU ms per frame of everything but the physics worker, between two _cpu() readings."""
  return ((c1[0] - c0[0]) - (c1[1] - c0[1])) / max(frames, 1) * 1e3


def bench_model(name, seconds, record=False):
  """(fps paused, fps running, rtf running, steps/s, CPU ms per frame paused, CPU ms per frame
  running) for one model, CPU without the physics worker's (the steadier figure on a shared
  machine); with `record`, running while a video is recorded (to a temporary folder)."""
  import tempfile
  from numjoco.app.viewer import Viewer
  tmp = tempfile.TemporaryDirectory()
  v = Viewer(_path(name), width=1280, height=720, max_fps=0, paused=True, out_dir=tmp.name)
  try:
    while v.first_frame_at is None or not v.ui_ready or not v.sim.status().physics:
      v.frame()     # FPS with the panels drawn (they come up with the physics)
    c0, t0 = _cpu(), time.perf_counter()
    fps_paused = _frames(v, seconds)
    ms_paused = _render_ms(c0, _cpu(), fps_paused * (time.perf_counter() - t0))
    v.sim.send("pause", False)
    if record:
      v.start_recording()
    t_end = time.perf_counter() + 30
    while v.sim.status().steps_per_s == 0 and time.perf_counter() < t_end:
      v.frame()       # the worker is stepping (not still loading its kernel)
    _frames(v, 1.0)   # let pacing settle
    rtf, sps = [], []
    n, t0, c0 = 0, time.perf_counter(), _cpu()
    while time.perf_counter() - t0 < seconds:
      v.frame()
      n += 1
      if n % 10 == 0 or n < 20:   # slow frames (recording): sample every frame
        st = v.sim.status()
        rtf.append(st.rtf)
        sps.append(st.steps_per_s)
    fps_running = n / (time.perf_counter() - t0)
    ms_running = _render_ms(c0, _cpu(), n)
    if record:
      v.stop_recording()
    return (fps_paused, fps_running, sum(rtf) / max(len(rtf), 1), sum(sps) / max(len(sps), 1),
            ms_paused, ms_running)
  finally:
    v.close()
    tmp.cleanup()


def first_frame(name, repeats=5):
  """Medians over `repeats` fresh interpreters (warm cache) of: seconds from launching the
  interpreter to the model drawn in the window, the process's CPU seconds by then, and seconds
  to the physics taking over from the preview."""
  import statistics
  code = _FIRST.format(path=_path(name))
  runs = []
  for _ in range(repeats):
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    got = {x.split()[0]: x.split()[1:] for x in out.stdout.splitlines()
           if x.startswith(("FIRST", "PHYSICS"))}
    if len(got) < 2:
      raise SystemExit(f"first-frame run failed:\n{out.stderr[-2000:]}")
    runs.append((float(got["FIRST"][0]) - t0, float(got["FIRST"][1]),
                 float(got["PHYSICS"][0]) - t0))
  return tuple(statistics.median(r[k] for r in runs) for k in range(3))


def screenshot(path, seconds=1.5):
  """Save the README's picture: the demo after `seconds`, contacts shown, panels open."""
  from PIL import Image
  from numjoco.app.viewer import Viewer
  v = Viewer(width=1280, height=720, max_fps=60)
  try:
    while v.first_frame_at is None:
      v.frame()
    v.sim.send("opt", "enableflags", 2)   # energy, for the plot
    v.ui.plot_sel["joint"] = True
    while v.first_frame_at is None or v.sim.snapshot().__enter__().time < seconds:
      v.frame()
    v.sim.send("pause", True)
    v.opts.contact_points = v.opts.contact_forces = True
    for _ in range(3):
      v.frame()
    img = Image.fromarray(v.screenshot(ui=True)).resize((960, 540), Image.LANCZOS)
    img.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
  finally:
    v.close()


def main():
  """Print the table."""
  p = argparse.ArgumentParser()
  p.add_argument("--models", default="demo,humanoid,pile64")
  p.add_argument("--seconds", type=float, default=5.0)
  p.add_argument("--no-start", action="store_true", help="skip the time-to-first-frame runs")
  p.add_argument("--no-record", action="store_true", help="skip the runs while recording")
  p.add_argument("--start-only", action="store_true", help="only the time-to-first-frame runs")
  p.add_argument("--screenshot", metavar="PNG", help="only save the README's screenshot")
  a = p.parse_args()
  if not os.environ.get("DISPLAY"):
    from tests.app.conftest import _start_xvfb
    _start_xvfb()
  if a.screenshot:
    return screenshot(a.screenshot)
  from numjoco.app import warmup
  if not warmup.is_warm():
    print("warming the Numba cache first (python -m numjoco.app.warmup)...", flush=True)
    subprocess.run([sys.executable, "-m", "numjoco.app.warmup"], check=True)
  print(f"viewer 1280x720, {os.cpu_count()} cores; FPS uncapped (the app caps at 60); first "
        "frame: process start to the model drawn (its preview) / CPU s by then / to the physics "
        "running, warm cache, median of 5; load: 1-min average "
        "when the row ends (other jobs share the machine); ms/f: CPU ms per frame of all threads "
        "but the physics worker, paused/running")
  print(f"{'model':10s} {'FPS paused':>10s} {'FPS running':>11s} {'RTF':>6s} {'steps/s':>8s}"
        f" {'ms/f':>11s} {'first frame':>18s} {'load':>5s}")
  for name in a.models.split(","):
    if a.start_only:
      ff = "{:.2f}s/{:.2f}/{:.2f}s".format(*first_frame(name))
      print(f"{name:10s} first frame / CPU / physics {ff}  load {os.getloadavg()[0]:.2f}",
            flush=True)
      continue
    fp, fr, rtf, sps, mp, mr = bench_model(name, a.seconds)
    ff = "" if a.no_start else "{:.2f}s/{:.2f}/{:.2f}s".format(*first_frame(name))
    print(f"{name:10s} {fp:10.1f} {fr:11.1f} {rtf:6.2f} {sps:8.0f} {f'{mp:.1f}/{mr:.1f}':>11s}"
          f" {ff:>18s} {os.getloadavg()[0]:5.2f}", flush=True)
    if not a.no_record:
      fp, fr, rtf, sps, _, mr = bench_model(name, a.seconds, record=True)
      print(f"{name + '+rec':10s} {'':10s} {fr:11.1f} {rtf:6.2f} {sps:8.0f} {f'-/{mr:.1f}':>11s}"
            f" {'':18s} {os.getloadavg()[0]:5.2f}", flush=True)


if __name__ == "__main__":
  main()
