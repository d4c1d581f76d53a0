"""Benchmark: the first run and the kernel cache, each against the figures before the engine
was compiled as separate units (issue #31: 22 min 38 s and 17.4 GB cold, 5.4 GB of cache, a
full rebuild after any engine edit).

    python -m tests.bench.startup [--skip-all] [--jobs 2]

Every run uses a fresh temporary cache (NUMJOCO_CACHE_DIR) and a copy of this checkout, so
nothing from the machine's own cache is reused. Memory is the peak of the summed resident
sets of the whole process tree, sampled every 0.1 s.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEFORE = {"cold demo": (22 * 60 + 38, 17.4), "compile --all": (22 * 60 + 38, 17.4),
          "edit + rerun": (22 * 60 + 38, 17.4), "warm start": (None, None)}


def _tree_rss(pid):
  """Summed resident set (bytes) of pid and its descendants."""
  total, todo = 0, [pid]
  while todo:
    p = todo.pop()
    try:
      with open(f"/proc/{p}/status") as f:
        for line in f:
          if line.startswith("VmRSS:"):
            total += int(line.split()[1]) * 1024
      for task in os.listdir(f"/proc/{p}/task"):
        with open(f"/proc/{p}/task/{task}/children") as f:
          todo += [int(c) for c in f.read().split()]
    except (OSError, ValueError):
      pass
  return total


def run(cmd, cwd, env):
  """(wall seconds, peak tree RSS in bytes, output) of one command."""
  t0 = time.perf_counter()
  proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
  peak = [0]

  def sample():
    while proc.poll() is None:
      peak[0] = max(peak[0], _tree_rss(proc.pid))
      time.sleep(0.1)
  th = threading.Thread(target=sample, daemon=True)
  th.start()
  out = proc.communicate()[0]
  th.join()
  if proc.returncode != 0:
    raise SystemExit(f"{' '.join(cmd)} failed:\n{out[-3000:]}")
  return time.perf_counter() - t0, peak[0], out


def _checkout(tmp):
  dst = pathlib.Path(tmp) / "clone"
  shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns(
      "__pycache__", ".git", "*.mp4", ".pytest_cache", ".hypothesis"))
  return dst


def _cache_bytes(cache):
  return sum(p.stat().st_size for p in pathlib.Path(cache).rglob("*") if p.is_file())


def _edit(clone):
  """Change one statement of one engine stage (passive.py's spring-damper stage)."""
  path = clone / "engine" / "passive.py"
  text = path.read_text()
  i = text.index("def _spring_damper(")
  j = text.index('"""', text.index('"""', i) + 3) + 3
  path.write_text(text[:j] + "\n  _edited = 1.0" + text[j:])


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--jobs", type=int, default=2)
  p.add_argument("--skip-all", action="store_true", help="skip `numjoco compile --all`")
  args = p.parse_args(argv)
  rows = []
  demo = ["-m", "numjoco", "--headless", "assets/demo.xml", "--seconds", "1"]
  with tempfile.TemporaryDirectory() as tmp:
    clone = _checkout(tmp)
    env = dict(os.environ, NUMJOCO_CACHE_DIR=str(pathlib.Path(tmp) / "cache"),
               PYTHONPATH=str(clone))
    wall, rss, _ = run([sys.executable, *demo], clone, env)
    rows.append(("cold demo", wall, rss))
    wall, rss, out = run([sys.executable, *demo], clone, env)
    rows.append(("warm start", float(out.split("load+first")[1].split()[0]), rss))
    cache_demo = _cache_bytes(pathlib.Path(tmp) / "cache")
    _edit(clone)
    wall, rss, _ = run([sys.executable, *demo], clone, env)
    rows.append(("edit + rerun", wall, rss))
    cache_all = None
    if not args.skip_all:
      env_all = dict(env, NUMJOCO_CACHE_DIR=str(pathlib.Path(tmp) / "cache-all"))
      wall, rss, _ = run([sys.executable, "-m", "numjoco", "compile", "--all", "--jobs",
                          str(args.jobs)], clone, env_all)
      rows.append(("compile --all", wall, rss))
      cache_all = _cache_bytes(pathlib.Path(tmp) / "cache-all")
  print(f"{'':16} {'wall':>9} {'peak RSS':>10}   before (wall, RSS)")
  for name, wall, rss in rows:
    bw, br = BEFORE[name]
    before = f"{bw / 60:.1f} min, {br} GB" if bw else "-"
    print(f"{name:16} {wall:8.1f}s {rss / 1e9:8.2f} GB   {before}")
  print(f"cache after the demo: {cache_demo / 1e6:.0f} MB" + (
      f"; after compile --all: {cache_all / 1e6:.0f} MB" if cache_all else "")
        + "   (before: 5.4 GB)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
