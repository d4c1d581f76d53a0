"""Benchmark of sleeping trees: µs per step of MuJoCo's dominos (96 trees) from reset, ours vs
MuJoCo in the same run, with the sleep flag on and off, and how many trees sleep at the end.

    python -m tests.bench.sleep [--nstep 1500] [--model model/sleep/dominos.xml]

MuJoCo skips sleeping trees in every stage; ours computes them (same poses, engine/sleep.py),
so the ratio with sleep on shows what that skipping is worth.
"""
import argparse
import os
import time
import warnings

import numpy as np

_DIR = os.path.join(os.path.dirname(__file__), "..", "assets", "mujoco_models")


def run(path, nstep, sleep_on):
  import mujoco

  import numjoco
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = numjoco.load_model(path)
    mjm = mujoco.MjModel.from_xml_path(path)
    bit, mjbit = int(numjoco.mjtEnableBit.SLEEP), int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    m.opt.enableflags = (int(m.opt.enableflags) | bit) if sleep_on else (
        int(m.opt.enableflags) & ~bit)
    mjm.opt.enableflags = (mjm.opt.enableflags | mjbit) if sleep_on else (
        mjm.opt.enableflags & ~mjbit)
    d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  numjoco.step(m, d, 1)   # compiled before timing
  numjoco.reset_data(m, d)
  t0 = time.perf_counter()
  numjoco.step(m, d, nstep)
  ours = (time.perf_counter() - t0) / nstep * 1e6
  t0 = time.perf_counter()
  for _ in range(nstep):
    mujoco.mj_step(mjm, mjd)
  theirs = (time.perf_counter() - t0) / nstep * 1e6
  return ours, theirs, int((d.tree_asleep >= 0).sum()), int((mjd.tree_asleep >= 0).sum()), m.ntree


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--nstep", type=int, default=1500)
  ap.add_argument("--model", default="model/sleep/dominos.xml")
  a = ap.parse_args()
  path = os.path.join(_DIR, a.model)
  print(f"{a.model}, {a.nstep} steps from reset")
  for on in (True, False):
    ours, theirs, n, mjn, ntree = run(path, a.nstep, on)
    print(f"sleep {'on ' if on else 'off'}: ours {ours:8.1f} us/step  MuJoCo {theirs:8.1f} "
          f"us/step  ratio {ours / theirs:5.2f}   asleep at the end: ours {n}, MuJoCo {mjn} "
          f"of {ntree}")


if __name__ == "__main__":
  np.set_printoptions(precision=3)
  main()
