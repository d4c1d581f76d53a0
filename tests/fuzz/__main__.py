"""`python -m tests.fuzz --n 1000 --seed S`: fuzz the MJCF compiler with N distinct mutants of
run S, print the summary table and write the failures and report.md to --out. `--index I` (as
the repro lines say) runs exactly mutant I of run S and prints what happened; `--compare` also
asks MuJoCo whether it accepts each mutant and lists the disagreements in the report.
`--boundscheck` runs the engine's kernels with Numba's bounds checks (NUMBA_BOUNDSCHECK=1, in a
kernel cache of their own, built first: about 5 minutes), so that a model that makes a kernel
read out of range fails with an IndexError instead of reading garbage."""
import argparse
import json
import os
import subprocess
import sys

from tests.fuzz import runner


def main(argv=None):
  p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
  p.add_argument("--n", type=int, default=1000, help="distinct mutants to run (default 1000)")
  p.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
  p.add_argument("--index", type=int, action="append",
                 help="run only this mutant of the run (repeatable)")
  p.add_argument("--jobs", type=int, default=1, help="worker processes (only 1 is supported)")
  p.add_argument("--out", default="fuzz-out", help="folder for failures and report.md")
  p.add_argument("--compare", action="store_true", help="compare acceptance with MuJoCo")
  p.add_argument("--timeout", type=float, default=10.0, help="seconds per mutant (default 10)")
  p.add_argument("--steps", type=int, default=100, help="steps after forward (default 100)")
  p.add_argument("--mem-gb", type=float, default=10.0, help="the worker's address space limit")
  p.add_argument("--boundscheck", action="store_true",
                 help="kernels with bounds checks (their own cache, built first)")
  a = p.parse_args(argv)
  if a.jobs != 1:
    p.error("--jobs: only one worker process is supported")
  if a.boundscheck:   # the worker inherits the environment
    os.environ["NUMBA_BOUNDSCHECK"] = "1"
    os.environ.setdefault("NUMJOCO_CACHE_DIR", os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "numjoco-boundscheck"))
    print(f"building bounds-checked kernels in {os.environ['NUMJOCO_CACHE_DIR']}", flush=True)
    subprocess.run([sys.executable, "-m", "numjoco", "compile", "--all"], check=True)
  res = runner.run(a.n, a.seed, a.out, compare=a.compare, timeout=a.timeout, steps=a.steps,
                   indices=a.index, log=lambda s: print(s, file=sys.stderr, flush=True),
                   mem_gb=a.mem_gb)
  if a.index:
    for r in res.records:
      print(f"mutant {a.seed}-{r.mut.index} of {runner.seeds.short_name(r.mut.seed_path)}:")
      for op in r.mut.ops:
        print(f"  {op}")
      print(json.dumps(r.ours, indent=1))
      if r.theirs is not None:
        print("MuJoCo:", json.dumps(r.theirs))
  print(res.summary())
  runner.write_report(res, a.out)
  print(f"report: {a.out}/report.md")
  return 1 if res.failures() else 0


if __name__ == "__main__":
  sys.exit(main())
