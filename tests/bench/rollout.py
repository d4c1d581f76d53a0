"""Benchmark of `numjoco.rollout` (issue #36): N worlds of a model stepped `--nstep` times with
random controls, on one thread and on all of numba's threads, against mujoco.rollout on one
and on as many threads, in the same run. Not a test:

    python -m tests.bench.rollout [--models humanoid,hopper] [--worlds 16,64] [--nstep 200]

Prints wall seconds (best of --repeats), the speed-up of all threads over one, and our time over
MuJoCo's with the same thread count.
"""
import argparse
import os
import time

import numba
import numpy as np


def _best(fn, repeats):
  best = float("inf")
  for _ in range(repeats):
    t = time.perf_counter()
    fn()
    best = min(best, time.perf_counter() - t)
  return best


def bench(name, n, nstep, threads, repeats):
  """(ours 1 thread, ours `threads`, MuJoCo 1 thread, MuJoCo `threads`) wall seconds."""
  import mujoco
  from mujoco import rollout as mj_rollout
  import numjoco
  from tests.bench.speed import load
  m, mjm = load(name)
  d = numjoco.make_data(m)
  numjoco.forward(m, d)
  rng = np.random.default_rng(0)
  ctrl = rng.uniform(-1, 1, (n, nstep, m.nu))
  numjoco.rollout(m, d, 2, control=ctrl[:, :2])        # compile and link once
  md = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, md)
  spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
  x0 = np.empty(mujoco.mj_stateSize(mjm, spec))
  mujoco.mj_getState(mjm, md, x0, spec)
  x0 = np.tile(x0, (n, 1))
  out = []
  for k in (1, threads):
    numba.set_num_threads(k)
    out.append(_best(lambda: numjoco.rollout(m, d, nstep, control=ctrl), repeats))
  for k in (1, threads):
    datas = [mujoco.MjData(mjm) for _ in range(k)]
    out.append(_best(lambda: mj_rollout.rollout(mjm, datas, x0, ctrl, nstep=nstep), repeats))
  numba.set_num_threads(threads)
  return out


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--models", default="humanoid,hopper")
  p.add_argument("--worlds", default="16,64")
  p.add_argument("--nstep", type=int, default=200)
  p.add_argument("--repeats", type=int, default=3)
  a = p.parse_args()
  threads = numba.get_num_threads()
  print(f"rollout: {a.nstep} steps per world, random controls, {os.cpu_count()} cores, "
        f"{threads} threads (numba.get_num_threads); wall seconds, best of {a.repeats}")
  print(f"{'model':10s} {'N':>4s} {'ours 1t':>8s} {f'ours {threads}t':>8s} {'speed-up':>9s}"
        f" {'mj 1t':>8s} {f'mj {threads}t':>8s} {'ours/mj 1t':>10s} {f'ours/mj {threads}t':>10s}")
  for name in a.models.split(","):
    for n in (int(x) for x in a.worlds.split(",")):
      o1, on, j1, jn = bench(name, n, a.nstep, threads, a.repeats)
      print(f"{name:10s} {n:4d} {o1:8.3f} {on:8.3f} {o1 / on:8.2f}x {j1:8.3f} {jn:8.3f}"
            f" {o1 / j1:9.2f}x {on / jn:9.2f}x", flush=True)


if __name__ == "__main__":
  main()
