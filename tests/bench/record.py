"""Benchmark of headless recording (`numjoco record`): simulated seconds recorded per wall second
at 1280x720, 30 fps, split into physics, rendering and encoding time. Not a test:

    python -m tests.bench.record [--models humanoid,pile64] [--seconds 2] [--size 1280x720]

Rendering is EGL offscreen (Mesa llvmpipe on machines without a GPU); encoding is H.264 veryfast
on render.video's background thread, so its time overlaps physics and rendering.
"""
import argparse
import os
import sys
import tempfile
import time


def _model(name):
  import numjoco
  if name == "pile64":
    from numjoco.assets import ASSETS
    return numjoco.load_model(str(ASSETS / "pile64.xml"))
  os.environ.setdefault("MUJOCO_GL", "egl")   # dm_control imports a GL backend: not X's
  from tests.models import suite_source
  src, assets = suite_source(name)
  return numjoco.load_model(src, assets=assets) if assets else numjoco.load_model(src)


def bench(name, seconds, fps, size, samples):
  """Record `seconds` of model `name`; returns (model name, RecordStats)."""
  import numjoco
  from numjoco.app.record import record
  m = _model(name)
  d = numjoco.make_data(m)
  numjoco.step(m, d, 1)                    # load the compiled kernels before timing
  with tempfile.TemporaryDirectory() as tmp:
    record(m, os.path.join(tmp, "warm.mp4"), 2 / fps, fps, size, samples=samples)
    out = os.path.join(tmp, f"{name}.mp4")
    stats = record(m, out, seconds, fps, size, samples=samples)
    stats.bytes = os.path.getsize(out)
  return m, stats


def main(argv=None):
  """Print one line per model: throughput and where the wall time went."""
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--models", default="humanoid,pile64")
  p.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per model")
  p.add_argument("--fps", type=float, default=30.0)
  p.add_argument("--size", default="1280x720")
  p.add_argument("--samples", type=int, default=None,
                 help="MSAA samples (default: the model's offsamples, 4, as numjoco record)")
  args = p.parse_args(argv)
  from numjoco.app.record import parse_size
  size = parse_size(args.size)
  msaa = "the model's offsamples" if args.samples is None else args.samples
  print(f"recording {args.seconds:g} s at {size[0]}x{size[1]}, {args.fps:g} fps, MSAA {msaa}, "
        f"H.264 veryfast crf 20 ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
  print(f"{'model':10s} {'sim s/wall s':>12s} {'frames/s':>9s} | per frame ms: {'physics':>8s} "
        f"{'render':>7s} {'encode*':>8s} {'wait':>6s} | {'steps/frame':>11s}")
  for name in args.models.split(","):
    t = time.perf_counter()
    m, s = bench(name, args.seconds, args.fps, size, args.samples)
    n = max(1, s.frames)
    print(f"{name:10s} {s.sim_seconds / s.wall:12.3f} {s.frames / s.wall:9.1f} | "
          f"{'':14s}{1e3 * s.physics / n:8.1f} {1e3 * s.render / n:7.1f} "
          f"{1e3 * s.encode / n:8.1f} {1e3 * s.wait / n:6.1f} | {s.steps / n:11.1f}"
          f"   ({s.bytes / 1e6:.1f} MB, {time.perf_counter() - t:.0f} s incl. load)", flush=True)
  print("* encode runs on its own thread, overlapping physics and render; wait is the time the "
        "main thread was blocked on it (a full queue, and the final flush)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
