"""The models the fuzzer mutates: the real models the tests ship (MuJoCo's own models of
tests/assets/mujoco_models/MODELS.txt, the other MJCF files and the URDF under tests/assets) and
dm_control's suite XMLs, each a path; in a fixed order so a seed number picks the same model on
every machine."""
import os

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.path.join(_TESTS, "assets")
# folders of tests/assets whose XML files are whole models (attach/ and sdf/ hold parts of
# models and plugin models; models/ holds templates with {placeholders})
_FOLDERS = ("mujoco", "replicate", "tendon", "urdf")
# seeds larger than this (the file, without its assets) take seconds to compile each time
MAX_BYTES = 150_000
# seeds that take 2 s or more to load and step 100 times here: a mutant that adds to them
# (duplicates a body, raises a count) is a valid model slower than the fuzzer's time limit
SLOW = frozenset(("mujoco_models/test/engine/testdata/sleep/perf/smooth.xml",
                  "mujoco_models/model/sleep/100_humanoids.xml",
                  "mujoco_models/model/humanoid/100_humanoids.xml",
                  "mujoco/sand_castle.xml", "mujoco_models/model/adhesion/sand_castle.xml"))


def suite_dir():
  """dm_control's suite folder, or None when dm_control is not installed."""
  try:
    from dm_control import suite
  except Exception:     # noqa: BLE001 - dm_control's import pulls in optional GL libraries
    return None
  return os.path.dirname(suite.__file__)


def seed_models():
  """Paths of the seed models, sorted by their name relative to where they live."""
  out = {}
  listed = os.path.join(ASSETS, "mujoco_models", "MODELS.txt")
  with open(listed) as f:
    for rel in f.read().split():
      out["mujoco_models/" + rel] = os.path.join(ASSETS, "mujoco_models", rel)
  for folder in _FOLDERS:
    for name in sorted(os.listdir(os.path.join(ASSETS, folder))):
      if name.endswith((".xml", ".urdf")):
        out[f"{folder}/{name}"] = os.path.join(ASSETS, folder, name)
  suite = suite_dir()
  if suite is not None:
    for name in sorted(os.listdir(suite)):
      if name.endswith(".xml"):
        out["suite/" + name] = os.path.join(suite, name)
  return [out[k] for k in sorted(out)
          if k not in SLOW and os.path.getsize(out[k]) <= MAX_BYTES]


def short_name(path):
  """The seed's name as the summary shows it (relative to tests/assets or the suite)."""
  suite = suite_dir()
  if suite is not None and path.startswith(suite + os.sep):
    return "suite/" + os.path.relpath(path, suite)
  return os.path.relpath(path, ASSETS)
