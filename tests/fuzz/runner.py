"""Running mutants: each in one long-lived child process (tests/fuzz/worker.py), restarted after
a crash or a hang, with a time limit per mutant; the results classified, failures saved with a
one-line repro command, and MuJoCo's acceptance compared when asked.

Classes: "ok" (loaded, forward and the steps ran), "refused" (our load error naming file, line
and element), and the failures: "internal" (a Python exception the compiler wrapped at the
root), "unlocated" (a load error without its element), "exception" (any other exception, while
loading or stepping), "crash" (the child died: a signal), "hang" (over the time limit)."""
import collections
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tests.fuzz import mutate, seeds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLASSES = ("ok", "refused", "internal", "unlocated", "exception", "crash", "hang")
FAILURES = CLASSES[2:]


class Worker:
  """The child process that loads and runs mutants, one request at a time."""

  def __init__(self, log_path, mem_gb=10.0, start_timeout=300.0):
    self.log_path, self.mem_gb, self.start_timeout = log_path, mem_gb, start_timeout
    self.proc, self.restarts, self._buf = None, -1, b""

  def start(self):
    self.restarts += 1
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONFAULTHANDLER="1")
    self.log = open(self.log_path, "ab")
    self.proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fuzz.worker", "--mem-gb", str(self.mem_gb)], cwd=ROOT,
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
    self._buf = b""
    ready = self._read_line(self.start_timeout)
    if not isinstance(ready, dict) or "ready" not in ready:
      self.stop()
      raise RuntimeError(f"the fuzz worker did not start: {ready}; see {self.log_path}")

  def stop(self):
    """End the child (the one this object started) and wait for it."""
    if self.proc is not None:
      if self.proc.poll() is None:
        os.kill(self.proc.pid, signal.SIGKILL)
      self.proc.wait()
      self.proc = None
      self.log.close()

  def _read_line(self, timeout):
    """The next JSON line from the child; "hang" after `timeout` s, ("crash", code) at EOF."""
    deadline = time.monotonic() + timeout
    fd = self.proc.stdout.fileno()
    while b"\n" not in self._buf:
      left = deadline - time.monotonic()
      if left <= 0:
        return "hang"
      ready, _, _ = select.select([fd], [], [], left)
      if not ready:
        continue
      chunk = os.read(fd, 65536)
      if not chunk:
        return ("crash", self.proc.wait())
      self._buf += chunk
    line, self._buf = self._buf.split(b"\n", 1)
    return json.loads(line)

  def run(self, request, timeout):
    """The child's answer to `request`: a dict, with "cls" "hang" or "crash" when it did not
    answer in time or died (the child is then restarted for the next request)."""
    if self.proc is None:
      self.start()
    log_at = os.path.getsize(self.log_path)
    self.proc.stdin.write((json.dumps(request) + "\n").encode())
    self.proc.stdin.flush()
    t0 = time.monotonic()
    res = self._read_line(timeout)
    if isinstance(res, dict):
      res["s"] = round(time.monotonic() - t0, 3)
      return res
    if res == "hang":
      self.stop()
      out = {"cls": "hang", "msg": f"no answer after {timeout:g} s"}
    else:
      code = res[1]
      self.stop()
      what = (f"killed by signal {signal.Signals(-code).name}" if code < 0
              else f"exited with status {code}")
      out = {"cls": "crash", "msg": what}
    with open(self.log_path, "rb") as f:
      f.seek(log_at)
      out["tb"] = f.read()[-6000:].decode("utf-8", "replace")
    return out


class Farms:
  """Folders where mutants are written beside their seed's files: one per seed folder, with
  symbolic links to everything in it, so meshes, textures and includes resolve as for the
  seed."""

  def __init__(self, root):
    self.root, self.made = root, {}

  def folder(self, seed_path):
    src = os.path.dirname(os.path.abspath(seed_path))
    if src not in self.made:
      dst = os.path.join(self.root, f"farm{len(self.made)}")
      os.makedirs(dst)
      for name in os.listdir(src):
        if not name.startswith("fuzz_"):
          os.symlink(os.path.join(src, name), os.path.join(dst, name))
      self.made[src] = dst
    return self.made[src]

  def write(self, mut):
    """Write the mutant's files; the path of its model."""
    folder = self.folder(mut.seed_path)
    for name, data in mut.files.items():
      with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    return os.path.join(folder, mutate.MAIN)

  def clean(self, mut):
    folder = self.folder(mut.seed_path)
    for name in mut.files:
      os.remove(os.path.join(folder, name))


def repro_command(seed, index):
  """The command that runs mutant `index` of run `seed` again."""
  return f"python -m tests.fuzz --seed {seed} --index {index}"


def save_failure(out_dir, mut, res):
  """Write a failing mutant's files and what happened (info.txt) under out_dir/failures."""
  folder = os.path.join(out_dir, "failures", res["cls"], f"{mut.seed}-{mut.index}")
  os.makedirs(folder, exist_ok=True)
  for name, data in mut.files.items():
    with open(os.path.join(folder, name), "wb") as f:
      f.write(data)
  with open(os.path.join(folder, "info.txt"), "w") as f:
    f.write(f"repro: {repro_command(mut.seed, mut.index)}\n"
            f"seed model: {seeds.short_name(mut.seed_path)}\n"
            f"class: {res['cls']}\nmessage: {res.get('msg', '')}\nmutations:\n")
    f.writelines(f"  {op}\n" for op in mut.ops)
    if res.get("tb"):
      f.write("\n" + res["tb"])
  return folder


class Record:
  """One mutant's outcome: its mutant, our result and (compared) MuJoCo's."""

  def __init__(self, mut, ours, theirs=None):
    self.mut, self.ours, self.theirs = mut, ours, theirs

  @property
  def cls(self):
    return self.ours["cls"]


class Run:
  """The outcome of a fuzzing run: the records, the time taken, duplicates skipped, restarts."""

  def __init__(self, seed):
    self.seed, self.records, self.seconds, self.duplicates, self.restarts = seed, [], 0.0, 0, 0

  def counts(self):
    c = collections.Counter(r.cls for r in self.records)
    return {k: c.get(k, 0) for k in CLASSES}

  def failures(self):
    return [r for r in self.records if r.cls in FAILURES]

  def summary(self):
    """The summary table (text)."""
    n = len(self.records)
    lines = [f"seed {self.seed}: {n} distinct mutants in {self.seconds:.1f} s "
             f"({n / max(self.seconds, 1e-9):.2f} mutants/s; {self.duplicates} duplicates "
             f"skipped; {self.restarts} worker restarts)", "", f"{'class':<10} {'count':>6}"]
    lines += [f"{k:<10} {v:>6}" for k, v in self.counts().items()]
    by_op = collections.defaultdict(collections.Counter)
    for r in self.records:
      for op in {op.split(":")[0] for op in r.mut.ops}:
        by_op[op][r.cls] += 1
    lines += ["", f"{'mutation':<10} " + " ".join(f"{k:>9}" for k in CLASSES)]
    lines += [f"{op:<10} " + " ".join(f"{c.get(k, 0):>9}" for k in CLASSES)
              for op, c in sorted(by_op.items())]
    agree = [r for r in self.records if r.theirs is not None]
    if agree:
      lines += ["", f"compared with MuJoCo: {len(agree)}; "
                f"we refuse, MuJoCo loads: {len(self.we_refuse())}; "
                f"we load, MuJoCo refuses: {len(self.they_refuse())}"]
    return "\n".join(lines)

  def we_refuse(self):
    return [r for r in self.records if r.theirs and r.theirs.get("accepts")
            and r.cls != "ok"]

  def they_refuse(self):
    return [r for r in self.records if r.theirs and r.theirs.get("accepts") is False
            and r.cls == "ok"]


def _kind(msg):
  """A message with its file, line, names and numbers taken out: disagreements group by it."""
  msg = re.sub(r"^[^\n]*?:\d+: ", "", msg.split("\n")[0])
  msg = re.sub(r"(?:ValueError: )?XML Error: ", "", msg)
  msg = re.sub(r"<(\w+)[^>]*>", r"<\1>", msg)
  msg = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", msg)
  msg = re.sub(r"-?\d[\d.e+-]*", "#", msg)
  return msg[:110]


def write_report(run, out_dir):
  """out_dir/report.md: the summary, every failure with its repro command, and the
  disagreements with MuJoCo grouped by kind (our message when we refuse, MuJoCo's when it
  does), each kind with its count and an example mutant."""
  lines = ["# numjoco MJCF fuzzing", "", "```", run.summary(), "```", ""]
  fails = run.failures()
  lines += [f"## Failures ({len(fails)})", ""]
  for r in fails:
    lines.append(f"- {r.cls}: `{repro_command(r.mut.seed, r.mut.index)}` "
                 f"({seeds.short_name(r.mut.seed_path)}; {'; '.join(r.mut.ops)}): "
                 f"{r.ours.get('msg', '')[:300]}")
  for title, recs, side in (("We refuse, MuJoCo loads", run.we_refuse(), "ours"),
                            ("We load, MuJoCo refuses", run.they_refuse(), "theirs")):
    groups = collections.defaultdict(list)
    for r in recs:
      groups[_kind((r.ours if side == "ours" else r.theirs).get("msg", ""))].append(r)
    lines += ["", f"## {title} ({len(recs)})", ""]
    for kind, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
      r = rs[0]
      msg = (r.ours if side == "ours" else r.theirs).get("msg", "").split("\n")[0]
      lines.append(f"- {len(rs)} x {kind}\n  e.g. `{repro_command(r.mut.seed, r.mut.index)}` "
                   f"({'; '.join(r.mut.ops)}): {msg[:300]}")
  os.makedirs(out_dir, exist_ok=True)
  with open(os.path.join(out_dir, "report.md"), "w") as f:
    f.write("\n".join(lines) + "\n")


def run(n, seed, out_dir, compare=False, timeout=10.0, steps=100, indices=None, log=None,
        mem_gb=10.0):
  """Run `n` distinct mutants of run `seed` (or exactly the mutants `indices`); failures are
  saved under out_dir. `compare` also asks MuJoCo whether it accepts each mutant. `log(text)`
  gets a progress line now and then. Returns the Run."""
  paths = seeds.seed_models()
  out = Run(seed)
  if indices is None:     # a new run: the failures of an earlier one in this folder go
    shutil.rmtree(os.path.join(out_dir, "failures"), ignore_errors=True)
  os.makedirs(out_dir, exist_ok=True)
  tmp = tempfile.mkdtemp(prefix="numjoco-fuzz-")
  farms = Farms(tmp)
  worker = Worker(os.path.join(out_dir, "worker.log"), mem_gb)
  seen, t0 = set(), time.monotonic()
  todo = iter(indices) if indices is not None else iter(range(sys.maxsize))
  try:
    worker.start()
    t0 = time.monotonic()
    for index in todo:
      if indices is None and len(out.records) >= n:
        break
      mut = mutate.make_mutant(seed, index, paths)
      if mut.key in seen:
        out.duplicates += 1
        continue
      seen.add(mut.key)
      path = farms.write(mut)
      req = {"id": f"{seed}-{index}", "path": path, "steps": steps}
      ours = worker.run(dict(req, cmd="ours"), timeout)
      theirs = None
      if compare and ours["cls"] not in ("crash", "hang"):
        theirs = worker.run(dict(req, cmd="mujoco"), timeout)
        if theirs.get("cls") in ("crash", "hang"):
          theirs = {"accepts": None, "msg": f"MuJoCo: {theirs['cls']}: {theirs['msg']}"}
      farms.clean(mut)
      rec = Record(mut, ours, theirs)
      out.records.append(rec)
      if rec.cls in FAILURES:
        save_failure(out_dir, mut, ours)
      if log is not None and len(out.records) % 50 == 0:
        c = out.counts()
        log(f"{len(out.records)} mutants, {time.monotonic() - t0:.0f} s: "
            + ", ".join(f"{k} {v}" for k, v in c.items() if v))
  finally:
    worker.stop()
    out.seconds = time.monotonic() - t0
    out.restarts = worker.restarts
    shutil.rmtree(tmp, ignore_errors=True)
  return out
