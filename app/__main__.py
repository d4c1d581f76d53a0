"""`numjoco [MODEL]`: load a model and simulate it.

The interactive viewer is the next piece of work (issue #4); until it lands, `numjoco` loads the
model, runs it headless for a few simulated seconds and prints what happened, so the command
already checks a model end to end (errors name the file, line and element).
"""
import argparse
import sys
import time


def _parse(argv):
  p = argparse.ArgumentParser(prog="numjoco", description=__doc__.splitlines()[0])
  p.add_argument("model", nargs="?", help="MJCF file (default: the bundled demo)")
  p.add_argument("--seconds", type=float, default=2.0, help="simulated time to run headless")
  p.add_argument("--key", default=None, help="keyframe to start from (index or name)")
  return p.parse_args(argv)


def main(argv=None):
  """Entry point of the `numjoco` console script."""
  args = _parse(sys.argv[1:] if argv is None else argv)
  import numpy as np

  import engine
  from assets import DEMO_MODEL
  from engine.mjcf.parse import MjcfError

  path = args.model or str(DEMO_MODEL)
  t0 = time.perf_counter()
  try:
    m = engine.load_model(path)
  except (MjcfError, OSError) as e:
    print(f"numjoco: cannot load model: {e}", file=sys.stderr)
    return 2
  d = engine.make_data(m)
  if args.key is not None:
    engine.reset_data(m, d, int(args.key) if args.key.isdigit() else args.key)
  nstep = max(1, int(round(args.seconds / m.opt.timestep)))
  engine.step(m, d, 1)  # compiles on first use (cached afterwards)
  t1 = time.perf_counter()
  done = engine.step(m, d, nstep - 1)
  t2 = time.perf_counter()
  engine.forward(m, d)
  print(f"model      {path}")
  print(f"sizes      nq={m.nq} nv={m.nv} nu={m.nu} nbody={m.nbody} ngeom={m.ngeom}")
  print(f"load+first {t1 - t0:.2f} s")
  print(f"simulated  {d.time:.3f} s in {t2 - t1:.3f} s wall "
        f"({(done * m.opt.timestep) / max(t2 - t1, 1e-9):.0f}x real time)")
  print(f"contacts   ncon={d.ncon} nefc={d.nefc} islands={d.nisland} "
        f"solver iterations={d.solver_niter[:max(1, d.nisland)].tolist()}")
  print(f"qpos       {np.array2string(d.qpos, precision=4, max_line_width=100)}")
  print("viewer     not yet available (issue #4): this run was headless")
  return 0


if __name__ == "__main__":
  sys.exit(main())
