"""Solver cost per iteration, ours vs MuJoCo in the same run.

A primal solver's step time is mostly its iterations (CG does 20-40 per step on the suite's
models, as many as MuJoCo's), so this times one step from the same settled state with the
tolerance at 1e-30 and `iterations` at two values (default 5 and 100) and reports the slope:
µs per iteration, ours and MuJoCo's. Also prints line-search evaluations, which should agree.

    python -m tests.bench.iteration [--model walker] [--solver CG] [--iterations 5,100]
"""
import argparse
import time

from tests.bench.contact import settled


def measure(name, solver, counts, settle=300, repeat=7):
  """{iterations: (ours s, MuJoCo s, ours niter, MuJoCo niter, ours neval, MuJoCo neval)}."""
  import mujoco

  import numjoco
  from numjoco.engine import interop
  m, mjm, mjd = settled(name, solver, settle)
  state = mujoco.MjData(mjm)
  mujoco.mj_copyData(state, mjm, mjd)
  d = numjoco.make_data(m)
  res = {}
  for n in counts:
    for o in (m.opt, mjm.opt):
      o.tolerance, o.iterations = 1e-30, n
    best_ours = best_ref = float("inf")
    for _ in range(repeat):
      interop.data_from_mujoco(state, d)
      numjoco.step(m, d, 1)   # compiles on first use
      interop.data_from_mujoco(state, d)
      t = time.perf_counter()
      numjoco.step(m, d, 1)
      best_ours = min(best_ours, time.perf_counter() - t)
      mujoco.mj_copyData(mjd, mjm, state)
      t = time.perf_counter()
      mujoco.mj_step(mjm, mjd, 1)
      best_ref = min(best_ref, time.perf_counter() - t)
    it = int(d.solver_niter.sum())
    res[n] = (best_ours, best_ref, it, int(mjd.solver_niter.sum()),
              int(d.solver_neval[:min(it, 200)].sum()),
              sum(int(mjd.solver[i].neval) for i in range(min(it, 200))))
  return res


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--model", default="walker")
  p.add_argument("--solver", default="CG")
  p.add_argument("--iterations", default="5,100")
  a = p.parse_args()
  lo, hi = (int(x) for x in a.iterations.split(","))
  res = measure(a.model, a.solver, (lo, hi))
  for n, (to, tr, io, ir, eo, er) in res.items():
    print(f"iterations={n}: ours {to * 1e6:.1f} µs ({io} it, {eo} evals), "
          f"MuJoCo {tr * 1e6:.1f} µs ({ir} it, {er} evals)")
  (to0, tr0, io0, ir0, *_), (to1, tr1, io1, ir1, *_) = res[lo], res[hi]
  if io1 == io0 or ir1 == ir0:
    print("the solver converged before the larger count: no slope")
    return
  so, sr = (to1 - to0) / (io1 - io0) * 1e6, (tr1 - tr0) / (ir1 - ir0) * 1e6
  print(f"per iteration: ours {so:.3f} µs, MuJoCo {sr:.3f} µs, ratio {so / sr:.2f}")


if __name__ == "__main__":
  main()
