"""Benchmark: µs per step, ours vs MuJoCo's `mj_step(m, d, nstep)` in the same run, with
constraints disabled on both; plus cold (empty cache) and warm (cached) import + first step.

    python -m tests.bench.step [--models humanoid,walker] [--nstep 2000] [--no-start]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

MODELS = ["cartpole", "acrobot", "cheetah", "walker", "hopper", "humanoid", "humanoid_CMU"]

_START = """
import time; t = time.perf_counter()
import numjoco
m = numjoco.load_model({path!r}); d = numjoco.make_data(m); numjoco.step(m, d)
print(time.perf_counter() - t)
"""


def _per_step(fn, nstep, repeats=5):
  best = float("inf")
  for _ in range(repeats):
    t = time.perf_counter()
    fn(nstep)
    best = min(best, time.perf_counter() - t)
  return best / nstep * 1e6


def bench_step(name, nstep):
  """(ours µs/step, MuJoCo µs/step) on one suite model, constraints off."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  from tests.models import load_both
  m, mjm = load_both(name)
  mjd = mujoco.MjData(mjm)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.step(m, d, 10)  # compile / warm up
  mujoco.mj_step(mjm, mjd, 10)
  ours = _per_step(lambda n: numjoco.step(m, d, n), nstep)
  theirs = _per_step(lambda n: mujoco.mj_step(mjm, mjd, n), nstep)
  return ours, theirs


def bench_start(path):
  """(cold s, warm s): fresh process import + load + first step, empty then filled cache."""
  with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, NUMJOCO_CACHE_DIR=tmp)
    out = []
    for _ in range(2):
      r = subprocess.run([sys.executable, "-c", _START.format(path=path)], env=env,
                         capture_output=True, text=True, check=True)
      out.append(float(r.stdout.strip().splitlines()[-1]))
  return out


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--models", default=",".join(MODELS))
  p.add_argument("--nstep", type=int, default=2000)
  p.add_argument("--no-start", action="store_true")
  args = p.parse_args()
  print(f"{'model':14s} {'ours µs':>9s} {'MuJoCo µs':>10s} {'ratio':>7s}")
  for name in args.models.split(","):
    ours, theirs = bench_step(name, args.nstep)
    print(f"{name:14s} {ours:9.2f} {theirs:10.2f} {ours / theirs:7.2f}")
  if not args.no_start:
    from tests.models import suite_source
    cold, warm = bench_start(suite_source("humanoid")[0])
    print(f"start (import + load humanoid + first step): cold {cold:.1f} s, warm {warm:.2f} s")


if __name__ == "__main__":
  main()
