"""`numjoco [MODEL]`: open MODEL (default: the bundled demo) in the interactive viewer.

`numjoco record MODEL -o out.mp4` renders a video offscreen (app/record.py).
`numjoco sweep MODEL --grid PARAM=V1,V2 -o table.csv` runs a parameter sweep (app/sweep.py).
`numjoco compile [MODEL] [--all] [--jobs N]` builds the engine's kernel cache (app/warmup.py).
`numjoco --headless MODEL` loads the model, runs it for a few simulated seconds without a window
and prints what happened, which checks a model end to end (errors name the file, line and
element).
"""
import argparse
import os
import sys
import time


def _parse(argv):
  p = argparse.ArgumentParser(prog="numjoco", description=__doc__.splitlines()[0])
  p.add_argument("model", nargs="?", help="MJCF file (default: the bundled demo)")
  p.add_argument("--headless", action="store_true", help="run without a window and print a summary")
  p.add_argument("--seconds", type=float, default=2.0, help="simulated time to run headless")
  p.add_argument("--key", default=None, help="keyframe to start from (index or name)")
  p.add_argument("--paused", action="store_true", help="viewer: start paused")
  p.add_argument("--speed", type=float, default=1.0, help="viewer: real-time factor to aim for")
  p.add_argument("--size", default="1280x720", help="viewer: window size WxH")
  return p.parse_args(argv)


def headless(args):
  """Load, run `args.seconds` of simulated time, print a summary; returns the exit status."""
  import numpy as np

  import numjoco
  from numjoco.assets import DEMO_MODEL
  from numjoco.engine.mjcf._node import MjcfError

  path = args.model or str(DEMO_MODEL)
  t0 = time.perf_counter()
  from numjoco.engine import build
  try:
    m = numjoco.load_model(path, prepare=build.compile_missing)   # uncached units in parallel
  except (MjcfError, OSError) as e:
    print(f"numjoco: cannot load model: {e}", file=sys.stderr)
    return 2
  d = numjoco.make_data(m)
  if args.key is not None:
    numjoco.reset_data(m, d, int(args.key) if args.key.isdigit() else args.key)
  nstep = max(1, int(round(args.seconds / m.opt.timestep)))
  numjoco.step(m, d, 1)  # compiles on first use (cached afterwards)
  t1 = time.perf_counter()
  done = numjoco.step(m, d, nstep - 1)
  t2 = time.perf_counter()
  numjoco.forward(m, d)
  print(f"model      {path}")
  print(f"sizes      nq={m.nq} nv={m.nv} nu={m.nu} nbody={m.nbody} ngeom={m.ngeom}")
  print(f"load+first {t1 - t0:.2f} s")
  print(f"simulated  {d.time:.3f} s in {t2 - t1:.3f} s wall "
        f"({(done * m.opt.timestep) / max(t2 - t1, 1e-9):.0f}x real time)")
  print(f"contacts   ncon={d.ncon} nefc={d.nefc} islands={d.nisland} "
        f"solver iterations={d.solver_niter[:max(1, d.nisland)].tolist()}")
  print(f"qpos       {np.array2string(d.qpos, precision=4, max_line_width=100)}")
  return 0


def viewer(args):
  """Open the window; returns the exit status."""
  if args.model and not os.path.isfile(args.model):
    print(f"numjoco: cannot open model: no file {args.model!r}", file=sys.stderr)
    return 2
  try:
    w, h = (int(x) for x in args.size.lower().split("x"))
  except ValueError:
    print(f"numjoco: --size {args.size!r}: expected WIDTHxHEIGHT, e.g. 1280x720", file=sys.stderr)
    return 2
  try:
    import pyglet
    pyglet.display.get_display()
  except Exception as e:  # noqa: BLE001 - pyglet raises several kinds when there is no display
    print(f"numjoco: cannot open a window ({e}); use `numjoco --headless MODEL` on a machine "
          "without a display, or run under Xvfb", file=sys.stderr)
    return 2
  from numjoco.app.viewer import Viewer
  key = None if args.key is None else int(args.key) if args.key.isdigit() else args.key
  v = Viewer(args.model, width=w, height=h, speed=args.speed, paused=args.paused, key=key)
  v.run()
  return 0


def main(argv=None):
  """Entry point of the `numjoco` console script."""
  argv = sys.argv[1:] if argv is None else list(argv)
  if argv and argv[0] == "record" and not os.path.isfile("record"):
    from numjoco.app import record
    return record.main(argv[1:])
  if argv and argv[0] == "sweep" and not os.path.isfile("sweep"):
    from numjoco.app import sweep
    return sweep.main(argv[1:])
  if argv and argv[0] == "compile" and not os.path.isfile("compile"):
    from numjoco.app import warmup
    return warmup.main(argv[1:])
  args = _parse(argv)
  return headless(args) if args.headless else viewer(args)


if __name__ == "__main__":
  sys.exit(main())
