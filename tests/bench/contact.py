"""Benchmark with contacts and constraints on: µs per step, ours vs MuJoCo in the same run.

Both engines start from the same settled state (MuJoCo's, after `--settle` steps) and run
`--nstep` steps; the ratio is ours/MuJoCo. Also prints contacts, rows and solver iterations so
a slow ratio can be told apart from a different amount of work.

    python -m tests.bench.contact [--models humanoid,walker,stacker,pile64,humanoids22]
                                  [--solver Newton] [--stages]

humanoids22 is MuJoCo's model/humanoid/22_humanoids.xml (353 bodies, nv 594): the model that
shows costs growing faster than the model (the all-pairs broadphase was 1.2 of 1.8 ms).
bunnies, spheremesh and boxmesh (MuJoCo's mesh test scenes, not in the default list) time
mesh contacts (multicontact and plane-mesh clip the compiled mesh polygons).

`--stages` also times stages of ours at the settled state, each in a compiled loop (no Python
call in between): forward, fwd_position, fwd_constraint and its parts. On a shared machine
compare ratios from the same run only: absolute times move by tens of percent with the load.
"""
import argparse
import os
import time

import numpy as np

from tests.models import suite_source

MODELS = ["humanoid", "walker", "stacker", "pile64", "humanoids22"]
_ASSETS = os.path.join(os.path.dirname(__file__), "..", "..", "assets")
_MJ_MODELS = os.path.join(os.path.dirname(__file__), "..", "assets", "mujoco_models")
_FILES = {"pile64": os.path.join(_ASSETS, "pile64.xml"),
          "humanoids22": os.path.join(_MJ_MODELS, "model", "humanoid", "22_humanoids.xml"),
          # mesh-heavy scenes (multicontact and plane-mesh on meshes of 8 to 2503 vertices)
          "bunnies": os.path.join(_MJ_MODELS, "model", "replicate", "bunnies.xml"),
          "spheremesh": os.path.join(_MJ_MODELS, "test", "engine", "testdata", "collision_convex",
                                     "perf", "spheremesh.xml"),
          "boxmesh": os.path.join(_MJ_MODELS, "test", "engine", "testdata", "collision_convex",
                                  "perf", "boxmesh.xml")}


def _load(name):
  import mujoco

  import numjoco
  if name in _FILES:
    return numjoco.load_model(_FILES[name]), mujoco.MjModel.from_xml_path(_FILES[name])
  src, assets = suite_source(name)
  if assets:
    return (numjoco.load_model(src, assets=assets), mujoco.MjModel.from_xml_string(src, assets))
  return numjoco.load_model(src), mujoco.MjModel.from_xml_path(src)


def settled(name, solver, settle):
  """(ours, MuJoCo's model, MuJoCo's data after `settle` steps with random controls), both
  models set to `solver`."""
  import mujoco

  import numjoco
  m, mjm = _load(name)
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  m.opt.solver = int(getattr(numjoco.mjtSolver, solver.upper()))
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(0)
  for _ in range(settle):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mujoco.mj_step(mjm, mjd)
  return m, mjm, mjd


def bench(name, nstep, settle, solver):
  import mujoco

  import numjoco
  from numjoco.engine import interop
  m, mjm, mjd = settled(name, solver, settle)
  d = numjoco.make_data(m)
  numjoco.step(m, d, 2)   # compile
  state = mujoco.MjData(mjm)
  mujoco.mj_copyData(state, mjm, mjd)
  best_ours = best_ref = float("inf")
  for _ in range(3):
    interop.data_from_mujoco(state, d)
    t = time.perf_counter()
    numjoco.step(m, d, nstep)
    best_ours = min(best_ours, time.perf_counter() - t)
    mujoco.mj_copyData(mjd, mjm, state)
    t = time.perf_counter()
    mujoco.mj_step(mjm, mjd, nstep)
    best_ref = min(best_ref, time.perf_counter() - t)
  return (best_ours / nstep * 1e6, best_ref / nstep * 1e6,
          (d.ncon, d.nefc, d.nisland, int(d.solver_niter.max())),
          (mjd.ncon, mjd.nefc, mjd.nisland, int(mjd.solver_niter.max())))


_STAGES = None


def _stage_kernels():
  """Compiled loops that call one stage n times (built on first use)."""
  global _STAGES
  if _STAGES is None:
    import numba

    from numjoco.engine import constraint, island, solver, solver_pgs
    from numjoco.engine.collision import driver as collision_driver
    from numjoco.engine import forward as fwd

    def loop(stage):
      @numba.njit
      def run(m, d, n):
        for _ in range(n):
          stage(m, d)
      return run

    @numba.njit
    def warm(m, d):
      solver.mul_jac(d, d.efc_b, d.qacc_smooth, d.nefc[0], m.nv)
      fwd.warmstart(m, d)

    _STAGES = [("forward", loop(fwd.forward)), ("fwd_position", loop(fwd.fwd_position)),
               ("  collision", loop(collision_driver.collision)),
               ("  make_constraint", loop(constraint.make_constraint)),
               ("fwd_velocity", loop(fwd.fwd_velocity)),
               ("fwd_constraint", loop(fwd.fwd_constraint)),
               ("  island", loop(island.island)), ("  efc_b + warmstart", loop(warm)),
               ("  make_y", loop(solver_pgs.make_y))]
  return _STAGES


def stages(name, settle, solver, n=500):
  """µs per call of each stage at the state after `settle` MuJoCo steps (best of 5)."""
  import mujoco

  import numjoco
  m, mjm = _load(name)
  mjm.opt.solver = int(getattr(mujoco.mjtSolver, "mjSOL_" + solver.upper()))
  m.opt.solver = int(getattr(numjoco.mjtSolver, solver.upper()))
  return stages_of(m, mjm, settle, n)


def stages_of(m, mjm, settle, n=500, rounds=5):
  """µs per call of each of our stages (compiled loops of `n` calls, best of `rounds`) at the
  state MuJoCo's model `mjm` reaches after `settle` steps."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  mjd = mujoco.MjData(mjm)
  mujoco.mj_step(mjm, mjd, settle)
  d = numjoco.make_data(m)
  interop.data_from_mujoco(mjd, d)
  numjoco.forward(m, d)
  out = []
  for label, run in _stage_kernels():
    run(m.struct, d.struct, 1)
    best = float("inf")
    for _ in range(rounds):
      t = time.perf_counter()
      run(m.struct, d.struct, n)
      best = min(best, (time.perf_counter() - t) / n * 1e6)
    out.append((label, best))
  return out


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--models", default=",".join(MODELS))
  p.add_argument("--nstep", type=int, default=1000)
  p.add_argument("--settle", type=int, default=1000)
  p.add_argument("--solver", default="Newton")
  p.add_argument("--stages", action="store_true", help="also time stages of ours")
  args = p.parse_args()
  print(f"solver {args.solver}; ncon/nefc/islands/max iterations at the end of the timed run")
  print(f"{'model':11s} {'ours µs':>9s} {'MuJoCo µs':>10s} {'ratio':>6s}  {'ours':>18s} "
        f"{'MuJoCo':>18s}")
  for name in args.models.split(","):
    ours, ref, wo, wr = bench(name, args.nstep, args.settle, args.solver)
    print(f"{name:11s} {ours:9.1f} {ref:10.1f} {ours / ref:6.2f}  {str(wo):>18s} {str(wr):>18s}")
  if args.stages:
    for name in args.models.split(","):
      print(f"stages of {name} (µs per call): " + ", ".join(
          f"{label.strip()} {t:.1f}" for label, t in stages(name, args.settle, args.solver)))


if __name__ == "__main__":
  main()
