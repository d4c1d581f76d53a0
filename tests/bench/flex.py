"""Benchmark: µs per step on MuJoCo's flex models with their collisions, ours vs MuJoCo's
`mj_step` in the same run. Each engine steps its own trajectory from reset over the same
window of steps (the flex has landed by then), so both meet about the same contacts; the
contact counts are printed with the times.

    python -m tests.bench.flex [--models flag,trampoline] [--skip 300] [--nstep 300]
"""
import argparse
import os
import time
import warnings

ROOT = os.path.join(os.path.dirname(__file__), "..", "assets", "mujoco_models", "model", "flex")
MODELS = ["flag", "trampoline", "pancake", "basket", "plate", "pinch", "pulley", "floppy", "jelly"]


def bench(name, skip, nstep):
  """(ours µs/step, MuJoCo µs/step, our mean ncon, MuJoCo's mean ncon)."""
  import mujoco

  import numjoco
  path = os.path.join(ROOT, name + ".xml")
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = numjoco.load_model(path)
  mjm = mujoco.MjModel.from_xml_path(path)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  numjoco.step(m, d, skip)
  mujoco.mj_step(mjm, mjd, skip)
  out = []
  for step, data in ((lambda: numjoco.step(m, d), d), (lambda: mujoco.mj_step(mjm, mjd), mjd)):
    total, ncon = 0.0, 0
    for _ in range(nstep):
      t = time.perf_counter()
      step()
      total += time.perf_counter() - t
      ncon += int(data.ncon)
    out.append((total / nstep * 1e6, ncon / nstep))
  return out[0][0], out[1][0], out[0][1], out[1][1]


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--models", default=",".join(MODELS))
  p.add_argument("--skip", type=int, default=300)
  p.add_argument("--nstep", type=int, default=300)
  args = p.parse_args()
  print(f"{'model':12s} {'ours µs':>9s} {'MuJoCo µs':>10s} {'ratio':>7s} {'ncon ours/4.0':>14s}")
  for name in args.models.split(","):
    ours, theirs, nc, mnc = bench(name, args.skip, args.nstep)
    print(f"{name:12s} {ours:9.1f} {theirs:10.1f} {ours / theirs:7.2f} {nc:7.1f}/{mnc:.1f}")


if __name__ == "__main__":
  main()
