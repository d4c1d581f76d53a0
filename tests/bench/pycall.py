"""Benchmark of one step or forward called from a Python loop (a controller in Python, the usual
way to drive a model), ours against MuJoCo's Python bindings in the same run. Not a test:

    python -m tests.bench.pycall [--models ball_in_cup,hopper,humanoid,pile64] [--calls 20000]

Prints µs per call of `numjoco.step(m, d)` and `mujoco.mj_step(m, d)`, the same for forward,
and our step inside one compiled call of many steps (`step(m, d, n)` / n): the difference is
what a call from Python costs (argument checks, linking the units the options need, the warning
bookkeeping). Best of --repeats rounds, interleaved.
"""
import argparse
import time


def _per_call(fn, calls):
  fn()
  t = time.perf_counter()
  for _ in range(calls):
    fn()
  return (time.perf_counter() - t) / calls * 1e6


def bench(name, calls, repeats):
  """{label: µs} best of `repeats` for model `name`."""
  import mujoco
  import numjoco
  from tests.bench.speed import load
  m, mm = load(name)
  d, md = numjoco.make_data(m), mujoco.MjData(mm)
  numjoco.step(m, d, 1)
  n = max(10, calls // 10)
  runs = {"step": lambda: numjoco.step(m, d), "mj_step": lambda: mujoco.mj_step(mm, md),
          "forward": lambda: numjoco.forward(m, d), "mj_forward": lambda: mujoco.mj_forward(mm, md),
          "step in one call": None}
  best = {k: float("inf") for k in runs}
  for _ in range(repeats):
    for k, fn in runs.items():
      if fn is None:
        t = time.perf_counter()
        numjoco.step(m, d, n)
        v = (time.perf_counter() - t) / n * 1e6
      else:
        v = _per_call(fn, calls)
      best[k] = min(best[k], v)
      if k == "mj_step":   # both engines go on from their reset states, not from far away
        numjoco.reset_data(m, d)
        mujoco.mj_resetData(mm, md)
  return best


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--models", default="ball_in_cup,hopper,humanoid,pile64")
  p.add_argument("--calls", type=int, default=20000)
  p.add_argument("--repeats", type=int, default=3)
  args = p.parse_args(argv)
  print(f"{'model':12s} {'step':>8s} {'mj_step':>8s} {'ratio':>6s} | {'forward':>8s} "
        f"{'mj_fwd':>8s} {'ratio':>6s} | {'one call':>8s}   (µs per call, best of {args.repeats})")
  for name in args.models.split(","):
    b = bench(name, args.calls, args.repeats)
    print(f"{name:12s} {b['step']:8.2f} {b['mj_step']:8.2f} {b['step'] / b['mj_step']:6.2f} | "
          f"{b['forward']:8.2f} {b['mj_forward']:8.2f} {b['forward'] / b['mj_forward']:6.2f} | "
          f"{b['step in one call']:8.2f}", flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
