"""Check the third-party MJCF corpus against MuJoCo (issue #30):
`python -m tests.corpus.check [--limit N] [--pattern P] [--compile-only]`.

Reads ~/.cache/numjoco-corpus/index.tsv (written by `python -m tests.corpus.fetch`) and, for
each model file, in this order:
  mj        MuJoCo loads it (mujoco.MjModel.from_xml_path); if not: `mj-refused`, with its reason
  ours      numjoco.load_model(path) (with --compile-only: engine.mjcf.compile_model, no Numba
            kernels): `ours-refused:<msg>` for our MjcfError, `ours-error:<type>` otherwise
  compile   every compiled field equal to MuJoCo's (tests.test_mjcf_compile's comparison, less
            the mj_setConst fields, which are compared on the loaded model): `compile-diff:<field>`
  forward   qacc, sensordata and the contact count at qpos0 and at 2 random states near it
            (tests.models.random_state, scale .05), full constraints: `forward-diff`
  tf        teacher-forced rollout, 200 steps (tests.models.assert_teacher_forced, 1e-5):
            `tf-diff:<step, what>`
Models run one after another in a worker process (restarted after a crash, a timeout or every
--restart models) so that a crash or a hang is one model's status. Every stage runs even when
an earlier one differs (columns of the CSV); the status is the first that differs. Prints one
line per model and a summary by package and by cause; writes
~/.cache/numjoco-corpus/results.csv (or --csv).
"""
import argparse
import collections
import csv
import json
import os
import re
import select
import subprocess
import sys
import time
import traceback

from tests.corpus.fetch import CACHE, INDEX

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# fields mj_setConst fills (tests/test_mujoco_models.py): compared on numjoco.load_model's model
SETCONST = ("actuator_biasprm", "eq_data", "jnt_stiffness", "dof_damping", "dof_length")
STAGES = ("mj", "ours", "compile", "forward", "tf")


# ------------------------------------------------------------------------------- worker side

def _short(e, n=300):
  s = str(e).strip().replace("\n", " | ")
  return s[:n]


def _where(e):
  """file:line of the innermost engine/ frame of an exception."""
  for fr in reversed(traceback.extract_tb(e.__traceback__)):
    if "/engine/" in fr.filename:
      return f"{os.path.relpath(fr.filename, ROOT)}:{fr.lineno}"
  fr = traceback.extract_tb(e.__traceback__)[-1:]
  return f"{os.path.basename(fr[0].filename)}:{fr[0].lineno}" if fr else "?"


def compile_diffs(ours, mjm, skip=()):
  """[(field, detail)] where compile_model's output differs from MuJoCo's compiled model
  (the comparison of tests.test_mjcf_compile.assert_same, all fields rather than the first)."""
  import mujoco
  import numpy as np

  from numjoco.engine import types as t
  from tests.models import SETCONST_SKIPPED, reference_fields
  sizes, arrays, names = ours
  ref_sizes, ref = reference_fields(mjm)
  out = []
  for k in t.MODEL_SIZES:
    if k in ref_sizes and sizes.get(k) != ref_sizes[k]:
      out.append((f"size:{k}", f"ours {sizes.get(k)} mujoco {ref_sizes[k]}"))
  if out:
    return out
  for name, _, _ in t.MODEL_TABLE:
    if name in SETCONST_SKIPPED or name in skip or name not in ref:
      continue
    if name not in arrays:
      out.append((name, "not filled"))
      continue
    a, b = np.asarray(arrays[name], float), np.asarray(ref[name], float)
    if a.shape != b.shape:
      out.append((name, f"shape ours {a.shape} mujoco {b.shape}"))
      continue
    atol = 1e-7 if name == "mesh_polynormal" else 1e-12
    rtol = 0 if name == "mesh_polynormal" else 1e-9
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
      idx = tuple(int(i) for i in np.argwhere(bad)[0])
      out.append((name, f"{int(bad.sum())} of {bad.size} differ; first at {idx}: "
                        f"ours {a[idx]!r} mujoco {b[idx]!r}"))
  for obj, lst in names.items():
    want = [mujoco.mj_id2name(mjm, int(obj), i) or "" for i in range(len(lst))]
    if lst != want:
      i = next((i for i, (x, y) in enumerate(zip(lst, want)) if x != y), len(lst))
      out.append((f"names:{obj}", f"at {i}: ours {lst[i:i+1]} mujoco {want[i:i+1]}"))
  return out


def check_one(path, compile_only, report):
  """Run the stages on one model; `report(stage)` before each. Returns the result dict."""
  import warnings

  import mujoco
  import numpy as np
  r = {s: "-" for s in STAGES}
  r["detail"] = ""

  def fail(stage, short, detail=""):
    r[stage] = short
    r["detail"] = (r["detail"] + f" [{stage}] {detail}").strip() if detail else r["detail"]

  report("mj")
  try:
    mjm = mujoco.MjModel.from_xml_path(path)
  except Exception as e:   # noqa: BLE001 - MuJoCo's reason is the result
    fail("mj", "refused", _short(e))
    return r
  r["mj"] = "ok"
  r.update(nq=mjm.nq, nv=mjm.nv, nbody=mjm.nbody, ngeom=mjm.ngeom, nmesh=mjm.nmesh,
           nu=mjm.nu, ntendon=mjm.ntendon, neq=mjm.neq, nflex=mjm.nflex)

  report("ours")
  from numjoco.engine.mjcf import MjcfError, compile_model
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      ours = compile_model(path)
      if not compile_only:
        import numjoco
        m = numjoco.load_model(path)
  except MjcfError as e:
    fail("ours", "refused", _short(e.msg if getattr(e, "msg", None) else e))
    return r
  except Exception as e:   # noqa: BLE001
    fail("ours", f"error:{type(e).__name__}", f"{_short(e)} at {_where(e)}")
    return r
  r["ours"] = "ok"

  report("compile")
  try:
    diffs = compile_diffs(ours, mjm, skip=SETCONST)
    if not compile_only:
      for name in SETCONST:
        a, b = np.asarray(getattr(m, name), float), np.asarray(getattr(mjm, name), float)
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True):
          diffs.append((name, "after set_const"))
  except Exception as e:   # noqa: BLE001
    diffs = [(f"error:{type(e).__name__}", f"{_short(e)} at {_where(e)}")]
  if diffs:
    fail("compile", "diff:" + ",".join(f for f, _ in diffs[:4]) + ("..." if len(diffs) > 4 else ""),
         f"{len(diffs)} fields: {' '.join(f for f, _ in diffs)}; " +
         "; ".join(f"{f}: {d}" for f, d in diffs[:3]))
  else:
    r["compile"] = "ok"
  if compile_only:
    return r

  report("forward")
  import numjoco
  from tests.models import assert_forward_as_mujoco, assert_teacher_forced, random_state
  fields = ("qpos", "qvel", "ctrl", "act", "qfrc_applied", "xfrc_applied", "mocap_pos",
            "mocap_quat", "plastic")
  try:
    for state in ("qpos0", 0, 1):
      mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
      if state != "qpos0":
        random_state(mjm, mjd, state, scale=0.05)
      assert_forward_as_mujoco(m, d, mjm, mjd, f"state {state}", ncon=True, fields=fields)
    r["forward"] = "ok"
  except AssertionError as e:
    msg = _short(e, 400)
    what = re.search(r"state \w+: (\w+)", msg)
    fail("forward", f"diff:{what.group(0) if what else 'assert'}", msg)
  except Exception as e:   # noqa: BLE001
    fail("forward", f"error:{type(e).__name__}", f"{_short(e)} at {_where(e)}")

  report("tf")
  try:
    worst = assert_teacher_forced(m, mjm, nstep=200, tol=1e-5)
    r["tf"] = "ok"
    r["tf_worst"] = f"{worst:.2e}"
  except AssertionError as e:
    msg = _short(e, 400)
    step = re.search(r"step (\d+): (\w+)", msg)
    err = re.search(r"differs by ([\d.e+-]+)", msg)
    what = f"{step.group(1)},{step.group(2)}" if step else "assert"
    if err:
      what += f"={err.group(1)}"
    if step:
      ctx = mujoco_at_step(mjm, int(step.group(1)))
      msg += f" | MuJoCo at that step: {ctx}"
      if ctx.get("unstable"):
        what += ",mj-unstable"
      elif ctx.get("unconverged"):
        what += ",mj-unconverged"
    fail("tf", f"diff:{what}", msg)
  except Exception as e:   # noqa: BLE001
    fail("tf", f"error:{type(e).__name__}", f"{_short(e)} at {_where(e)}")
  return r


def mujoco_at_step(mjm, step, seed=0):
  """MuJoCo's own state at `step` of tests.models.assert_teacher_forced's rollout (replayed:
  the same random controls): did its solver stop at the iteration limit, did it warn of an
  unstable simulation (bad qacc), how large is qacc. Tells a difference in a diverging or
  unconverged rollout from one in a well-posed state."""
  import mujoco
  import numpy as np
  mjd = mujoco.MjData(mjm)
  rng = np.random.default_rng(seed)
  lo, hi = (mjm.actuator_ctrlrange.T if mjm.nu else (np.zeros(0), np.zeros(0)))
  free = ~mjm.actuator_ctrllimited.astype(bool) if mjm.nu else np.zeros(0, bool)
  lo, hi = np.where(free, -1.0, lo), np.where(free, 1.0, hi)
  for _ in range(step + 1):
    if mjm.nu:
      mjd.ctrl[:] = rng.uniform(lo, hi)
    mujoco.mj_step(mjm, mjd)
  bad = int(mjd.warning[int(mujoco.mjtWarning.mjWARN_BADQACC)].number)
  mujoco.mj_forward(mjm, mjd)
  niter = int(mjd.solver_niter[0])
  return {"niter": niter, "iterations": int(mjm.opt.iterations), "ncon": int(mjd.ncon),
          "nefc": int(mjd.nefc), "max_qacc": float(f"{np.abs(mjd.qacc).max(initial=0):.3g}"),
          "unstable": bad > 0, "unconverged": niter >= mjm.opt.iterations}


def worker(compile_only):
  """Read model paths from stdin, one per line; write JSON lines to the original stdout
  (stray prints, MuJoCo's C-level ones too, go to stderr)."""
  out = os.fdopen(os.dup(1), "w", buffering=1)
  os.dup2(2, 1)
  sys.stdout = sys.stderr

  def send(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()

  send({"ready": True})
  for line in sys.stdin:
    path = line.strip()
    if not path:
      continue
    t0 = time.time()
    print(f"### {path}", file=sys.stderr, flush=True)
    try:
      r = check_one(path, compile_only, lambda s: send({"stage": s}))
    except Exception as e:   # noqa: BLE001
      r = {"detail": f"worker: {type(e).__name__}: {_short(e)}"}
    r["seconds"] = round(time.time() - t0, 2)
    send({"result": r})


# ------------------------------------------------------------------------------- parent side

class Worker:
  def __init__(self, compile_only, log):
    self.p = subprocess.Popen(
        [sys.executable, "-m", "tests.corpus.check", "--worker"] +
        (["--compile-only"] if compile_only else []),
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
        bufsize=1)
    self.fd, self.buf, self.n = self.p.stdout.fileno(), b"", 0
    msg = self._read(600)
    if not msg or not msg.get("ready"):
      raise RuntimeError("worker did not start")

  def _read(self, timeout):
    """The next JSON line, None on timeout, {"eof": True} when the worker died. Reads the
    pipe's file descriptor itself: a buffered readline could hold a second line that select
    then never reports."""
    end = time.time() + timeout
    while b"\n" not in self.buf:
      r, _, _ = select.select([self.fd], [], [], max(end - time.time(), 0))
      if not r:
        return None
      chunk = os.read(self.fd, 65536)
      if not chunk:
        return {"eof": True}
      self.buf += chunk
    line, self.buf = self.buf.split(b"\n", 1)
    return json.loads(line)

  def run(self, path, timeout):
    """(result dict, None) or (None, 'timeout@stage' / 'crash@stage')."""
    self.n += 1
    self.p.stdin.write(path + "\n")
    self.p.stdin.flush()
    stage, end = "start", time.time() + timeout
    while True:
      msg = self._read(end - time.time())
      if msg is None:
        self.kill()
        return None, f"timeout@{stage}"
      if msg.get("eof"):
        self.p.wait()
        return None, f"crash@{stage}(rc {self.p.returncode})"
      if "stage" in msg:
        stage = msg["stage"]
      elif "result" in msg:
        return msg["result"], None

  def kill(self):
    if self.p.poll() is None:
      self.p.kill()
    self.p.wait()

  def close(self):
    try:
      self.p.stdin.close()
      self.p.wait(timeout=30)
    except Exception:   # noqa: BLE001
      self.kill()


def status_of(r):
  """The first stage that differs: mj-refused, ours-refused:<msg>, ours-error:<type>,
  compile-diff:<field>, forward-diff:<what>, tf-diff:<step,what>, or ok/compile-ok."""
  if r.get("mj") != "ok":
    return "mj-refused"
  if r.get("ours") != "ok":
    o = r.get("ours", "")
    if o == "refused":
      return "ours-refused:" + _first(r["detail"], "ours")
    return "ours-" + o
  for s in ("compile", "forward", "tf"):
    v = r.get(s, "-")
    if v.startswith("diff") or v.startswith("error"):
      return f"{s}-{v}"
  return "ok" if r.get("tf") == "ok" else "compile-ok"


def _first(detail, stage):
  m = re.search(r"\[%s\] (.*?)(?= \[\w+\] |$)" % stage, detail)
  return m.group(1) if m else detail


def cause_of(status, r):
  """A coarse cause for grouping: numbers, quoted names and paths taken out."""
  if status == "mj-refused":
    s = "mj-refused: " + _first(r.get("detail", ""), "mj")
  elif status.startswith("ours-refused:"):
    s = status
  elif status.startswith("compile-diff:"):
    s = "compile-diff:" + status.split(":", 1)[1].split(",")[0].rstrip(".")
  elif status.startswith("tf-diff:"):
    m = re.match(r"tf-diff:\d+,(\w+)", status)
    s = "tf-diff:" + (m.group(1) if m else status)
    s += next((f" ({t})" for t in ("mj-unstable", "mj-unconverged") if t in status), "")
  elif status.startswith("forward-diff:"):
    s = "forward-diff:" + status.split(":")[-1].strip()
  else:
    s = status
  s = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", s)
  s = re.sub(r"(/[\w.+-]+)+", "<path>", s)
  s = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", "N", s)
  s = re.sub(r"(Element|element) name.*", r"\1 …", s)
  return s[:110]


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--limit", type=int, help="the first N models (after --pattern)")
  ap.add_argument("--pattern", help="regex on 'package path'")
  ap.add_argument("--compile-only", action="store_true",
                  help="MuJoCo load + compile_model field comparison only (no Numba kernels)")
  ap.add_argument("--timeout", type=float, default=120, help="seconds per model")
  ap.add_argument("--restart", type=int, default=40, help="new worker every N models")
  ap.add_argument("--csv", default=None, help="results CSV (default CACHE/results.csv)")
  ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
  args = ap.parse_args(argv)
  if args.worker:
    return worker(args.compile_only)

  rows = [line.rstrip("\n").split("\t") for line in open(INDEX) if line.strip()]
  if args.pattern:
    rows = [r for r in rows if re.search(args.pattern, f"{r[0]} {r[1]}")]
  if args.limit:
    rows = rows[:args.limit]
  out_csv = args.csv or os.path.join(
      CACHE, "results-compile.csv" if args.compile_only else "results.csv")
  log_path = os.path.splitext(out_csv)[0] + ".log"
  log = open(log_path, "w")
  results, w = [], None
  cols = ["package", "path", "status", "cause", *STAGES, "seconds", "nq", "nv", "nbody",
          "ngeom", "nmesh", "nu", "ntendon", "neq", "nflex", "tf_worst", "detail"]
  t_all = time.time()
  with open(out_csv, "w", newline="") as f:
    wr = csv.DictWriter(f, cols, extrasaction="ignore")
    wr.writeheader()
    for i, (pkg, rel) in enumerate(rows):
      if w is None or w.n >= args.restart:
        if w:
          w.close()
        w = Worker(args.compile_only, log)
      t0 = time.time()
      r, err = w.run(os.path.join(CACHE, rel), args.timeout)
      if r is None:
        r = {"mj": "ok", "ours": "ok", "detail": err, "seconds": round(time.time() - t0, 1)}
        st = err.split("@")[0] + "@" + err.split("@")[1].split("(")[0]
        status = f"{st}"
        w = None
      else:
        status = status_of(r)
      r.update(package=pkg, path=rel, status=status, cause=cause_of(status, r))
      wr.writerow(r)
      f.flush()
      results.append(r)
      print(f"[{i + 1}/{len(rows)}] {pkg}  {rel}  {status}  ({r.get('seconds')} s)", flush=True)
  if w:
    w.close()
  summarize(results, args.compile_only)
  print(f"\n{len(results)} models in {time.time() - t_all:.0f} s; results: {out_csv}; "
        f"worker log: {log_path}")


def summarize(results, compile_only):
  by_pkg = collections.OrderedDict()
  for r in results:
    c = by_pkg.setdefault(r["package"], collections.Counter())
    c["total"] += 1
    c["mj"] += r.get("mj") == "ok"
    c["ours"] += r.get("ours") == "ok"
    c["compile"] += r.get("compile") == "ok"
    c["forward"] += r.get("forward") == "ok"
    c["tf"] += r.get("tf") == "ok"
    c["all"] += r["status"] in ("ok", "compile-ok")
  heads = ["total", "mj", "ours", "compile"] + ([] if compile_only else ["forward", "tf"])
  print("\nby package:  " + "  ".join(f"{h:>7}" for h in heads))
  tot = collections.Counter()
  for pkg, c in by_pkg.items():
    tot.update(c)
    print(f"  {pkg:32s}" + "  ".join(f"{c[h]:7d}" for h in heads))
  print(f"  {'TOTAL':32s}" + "  ".join(f"{tot[h]:7d}" for h in heads))
  print("  (mj: MuJoCo loads; ours: we load it too; compile/forward/tf: equal to MuJoCo's)")
  causes = collections.Counter(r["cause"] for r in results if r["status"] not in ("ok", "compile-ok"))
  print("\nby cause (first stage that differs):")
  for cause, n in causes.most_common():
    ex = next(r for r in results if r["cause"] == cause)
    print(f"  {n:4d}  {cause}\n        e.g. {ex['path']}")


if __name__ == "__main__":
  main()
