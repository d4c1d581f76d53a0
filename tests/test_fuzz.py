"""Mutation fuzzing of the MJCF compiler (tests/fuzz, issue #34): a seeded subset of the
mutants `python -m tests.fuzz` runs, each loaded, forwarded and stepped 100 times in a child
process. None may crash the process, hang past 10 s, or fail with anything but our load error
naming file, line and element (the line alone for malformed XML)."""
import os

import pytest

from tests.fuzz import mutate, runner, seeds
from tests.fuzz.worker import classify_load_error

SEED, COUNT = 34, 500


def test_seeded_mutants_fail_only_with_located_load_errors(tmp_path):
  """COUNT distinct mutants of run SEED: no crash, no hang, no other exception."""
  run = runner.run(COUNT, SEED, str(tmp_path))
  counts = run.counts()
  assert len(run.records) == COUNT
  assert counts["ok"] > 0.1 * COUNT and counts["refused"] > 0.3 * COUNT, counts
  fails = [f"{r.cls}: {runner.repro_command(SEED, r.mut.index)}: {r.ours.get('msg', '')[:300]}"
           f"\n{r.ours.get('tb', '')}" for r in run.failures()]
  assert not fails, "\n".join(fails)


def test_a_mutant_is_the_same_for_the_same_seed_and_index():
  paths = seeds.seed_models()
  a, b = mutate.make_mutant(7, 123, paths), mutate.make_mutant(7, 123, paths)
  assert (a.seed_path, a.ops, a.files) == (b.seed_path, b.ops, b.files)
  assert mutate.make_mutant(7, 124, paths).key != a.key


def test_load_errors_are_classified_by_their_location():
  assert classify_load_error("m.xml:4: <joint name=\"knee\">: unknown attribute 'rnage'") == (
      "refused")
  assert classify_load_error("m.xml:9: malformed XML: Excessive depth") == "refused"
  assert classify_load_error("m.xml:1: <mujoco>: internal compiler error: ValueError: x") == (
      "internal")
  assert classify_load_error("<string>:None: history buffers need a timestep") == "unlocated"


def test_the_runner_reports_a_crash_and_a_hang_and_goes_on(tmp_path):
  """A child killed by a signal is a "crash", one that does not answer in time a "hang"; the
  next request gets a new child."""
  w = runner.Worker(os.path.join(tmp_path, "worker.log"))
  try:
    w.start()
    crash = w.run({"cmd": "segv"}, 10)
    assert crash["cls"] == "crash" and "SIGSEGV" in crash["msg"], crash
    hang = w.run({"cmd": "sleep", "seconds": 60}, 1)
    assert hang["cls"] == "hang", hang
    ok = w.run({"cmd": "sleep", "seconds": 0}, 10)
    assert ok["cls"] == "ok" and w.restarts == 2
  finally:
    w.stop()


def test_failures_are_saved_with_a_repro_command(tmp_path):
  mut = mutate.make_mutant(1, 2, seeds.seed_models())
  folder = runner.save_failure(str(tmp_path), mut, {"cls": "exception", "msg": "boom"})
  with open(os.path.join(folder, "info.txt")) as f:
    info = f.read()
  assert "python -m tests.fuzz --seed 1 --index 2" in info and "boom" in info
  with open(os.path.join(folder, mutate.MAIN), "rb") as f:
    assert f.read() == mut.files[mutate.MAIN]


@pytest.mark.parametrize("op", sorted(name for name, _, _ in mutate.TREE_OPS))
def test_every_mutation_applies_to_a_real_model(op):
  """Each element-level mutation changes a real model (MuJoCo's humanoid) when drawn."""
  import random

  from lxml import etree
  path = os.path.join(seeds.ASSETS, "mujoco_models", "model", "humanoid", "humanoid.xml")
  fn = dict((n, f) for n, f, _ in mutate.TREE_OPS)[op]
  for i in range(20):
    root = etree.parse(path).getroot()
    before = etree.tostring(root)
    mut = mutate.Mutant(path, 0, 0)
    desc = fn(random.Random(i), root, mut)
    if desc is not None and (etree.tostring(root) != before or mut.files):
      return
  pytest.fail(f"mutation {op} never applied")
