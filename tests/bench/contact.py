"""Benchmark with contacts and constraints on: µs per step, ours vs MuJoCo in the same run.

Both engines start from the same settled state (MuJoCo's, after `--settle` steps) and run
`--nstep` steps; the ratio is ours/MuJoCo. Also prints contacts, rows and solver iterations so
a slow ratio can be told apart from a different amount of work.

    python -m tests.bench.contact [--models humanoid,walker,stacker,pile64] [--solver Newton]
"""
import argparse
import os
import time

import numpy as np

from tests.models import suite_source

MODELS = ["humanoid", "walker", "stacker", "pile64"]
_ASSETS = os.path.join(os.path.dirname(__file__), "..", "..", "assets")


def _load(name):
  import mujoco

  import engine
  if name == "pile64":
    path = os.path.join(_ASSETS, "pile64.xml")
    return engine.load_model(path), mujoco.MjModel.from_xml_path(path)
  src, assets = suite_source(name)
  if assets:
    return (engine.load_model(src, assets=assets), mujoco.MjModel.from_xml_string(src, assets))
  return engine.load_model(src), mujoco.MjModel.from_xml_path(src)


def bench(name, nstep, settle, solver):
  import mujoco

  import engine
  from engine import interop
  m, mjm = _load(name)
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  m.opt.solver = int(getattr(engine.mjtSolver, solver.upper()))
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(0)
  for _ in range(settle):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_step(mjm, mjd)
  d = engine.make_data(m)
  engine.step(m, d, 2)   # compile
  state = mujoco.MjData(mjm)
  mujoco.mj_copyData(state, mjm, mjd)
  best_ours = best_ref = float("inf")
  for _ in range(3):
    interop.data_from_mujoco(state, d)
    t = time.perf_counter()
    engine.step(m, d, nstep)
    best_ours = min(best_ours, time.perf_counter() - t)
    mujoco.mj_copyData(mjd, mjm, state)
    t = time.perf_counter()
    mujoco.mj_step(mjm, mjd, nstep)
    best_ref = min(best_ref, time.perf_counter() - t)
  return (best_ours / nstep * 1e6, best_ref / nstep * 1e6,
          (d.ncon, d.nefc, d.nisland, int(d.solver_niter.max())),
          (mjd.ncon, mjd.nefc, mjd.nisland, int(mjd.solver_niter.max())))


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--models", default=",".join(MODELS))
  p.add_argument("--nstep", type=int, default=1000)
  p.add_argument("--settle", type=int, default=1000)
  p.add_argument("--solver", default="Newton")
  args = p.parse_args()
  print(f"solver {args.solver}; ncon/nefc/islands/max iterations at the end of the timed run")
  print(f"{'model':10s} {'ours µs':>9s} {'MuJoCo µs':>10s} {'ratio':>6s}  {'ours':>18s} "
        f"{'MuJoCo':>18s}")
  for name in args.models.split(","):
    ours, ref, wo, wr = bench(name, args.nstep, args.settle, args.solver)
    print(f"{name:10s} {ours:9.1f} {ref:10.1f} {ours / ref:6.2f}  {str(wo):>18s} {str(wr):>18s}")


if __name__ == "__main__":
  main()
