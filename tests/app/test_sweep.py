"""`numjoco sweep` (app/sweep.py): the metrics against MuJoCo's contacts for the same parameters,
the same table from this process, worker processes and a local Ray instance, a killed worker's
variant run again, and the parameter language's errors."""
import math
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.app import sweep as sw

BOX = """<mujoco model="box on plane">
  <option timestep="0.002"/>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="box" pos="0 0 0.3">
      <freejoint name="free"/>
      <geom name="box" type="box" size=".1 .1 .1" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""
TIMECONST = [0.005, 0.01, 0.02]
DAMPRATIO = [0.5, 1.0, 2.0]
GRID = {"geom_solref[*][0]": TIMECONST, "geom_solref[*][1]": DAMPRATIO}
SECONDS = 0.6


@pytest.fixture(scope="module")
def box(tmp_path_factory):
  path = tmp_path_factory.mktemp("sweep") / "box.xml"
  path.write_text(BOX)
  return str(path)


@pytest.fixture(scope="module")
def serial(box):
  return sw.sweep(box, GRID, seconds=SECONDS, workers=1)


def _same(rows_a, rows_b):
  """Tables equal bit for bit, NaN (a metric that does not apply) equal to NaN."""
  def key(rows):
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in rows]
  return key(rows_a) == key(rows_b)


def _mujoco_run(path, solref, seconds):
  """Max penetration, final energy minus initial, under MuJoCo with every geom's solref set."""
  mm = mujoco.MjModel.from_xml_path(path)
  mm.geom_solref[:] = solref
  mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
  md = mujoco.MjData(mm)
  pen, energy = 0.0, []
  for _ in range(int(round(seconds / mm.opt.timestep))):
    mujoco.mj_step(mm, md)
    if md.ncon:
      pen = max(pen, -float(np.min(md.contact.dist)))
    energy.append(md.energy.sum())
  return pen, energy[-1] - energy[0]


def test_grid_penetration_and_energy_match_mujoco(box, serial):
  """The 3x3 solref grid: one row per variant in grid order, and each row's deepest
  penetration and energy change equal MuJoCo's for the same solref (stiffer contacts sink
  less: the metric is not constant)."""
  rows = serial.rows
  assert [(r["geom_solref[*][0]"], r["geom_solref[*][1]"]) for r in rows] == \
      [(t, z) for t in TIMECONST for z in DAMPRATIO]
  for r in rows:
    solref = (r["geom_solref[*][0]"], r["geom_solref[*][1]"])
    pen, de = _mujoco_run(box, solref, SECONDS)
    assert pen > 1e-4
    assert r["max_penetration"] == pytest.approx(pen, rel=1e-9, abs=1e-12)
    assert r["energy_drift"] == pytest.approx(de, rel=1e-7, abs=1e-9)
    assert r["steps"] == 300 and r["diverged"] == ""
  pens = [r["max_penetration"] for r in rows]
  assert pens[0] < pens[3] < pens[6]          # a longer time constant sinks deeper
  # dissipation: the box fell 0.2 m onto the floor and stopped (energy m g h lost)
  assert rows[4]["energy_drift"] == pytest.approx(-9.81 * 0.2, rel=0.01)


def test_settle_time_and_jitter_follow_their_definitions(box, serial):
  """Settle time: when every |qvel| last dropped below the tolerance; jitter: the RMS of
  |qvel| over the run's second half. Recomputed here from a run of the engine itself."""
  r = serial.rows[4]
  m = numjoco.load_model(box)
  m.geom_solref[:] = (r["geom_solref[*][0]"], r["geom_solref[*][1]"])
  d = numjoco.make_data(m)
  t, vmax, vnorm = [], [], []
  for _ in range(300):
    numjoco.step(m, d, 1)
    t.append(d.time)
    vmax.append(np.abs(d.qvel).max())
    vnorm.append(np.linalg.norm(d.qvel))
  last = max(k for k, v in enumerate(vmax) if v >= 1e-3)
  assert r["settle_time"] == pytest.approx(t[last + 1], abs=1e-12)
  assert 0.1 < r["settle_time"] < SECONDS
  assert r["jitter"] == pytest.approx(math.sqrt(np.mean(np.square(vnorm[150:]))), rel=1e-9)


def test_processes_and_ray_give_the_same_table(box, serial):
  """Worker processes and a local Ray instance return the table this process computes, row for
  row and bit for bit."""
  local = sw.sweep(box, GRID, seconds=SECONDS, workers=2)
  assert _same(local.rows, serial.rows)
  on_ray = sw.sweep(box, GRID, seconds=SECONDS, ray_address="local")
  assert _same(on_ray.rows, serial.rows)


@pytest.mark.parametrize("where", ["processes", "ray"])
def test_killed_worker_variant_runs_again(box, serial, tmp_path, where):
  """A worker process that dies mid-variant (os._exit, as when killed) loses no row: the
  variant runs again and the table equals the undisturbed one."""
  marker = str(tmp_path / "died")
  kw = dict(workers=2) if where == "processes" else dict(ray_address="local")
  res = sw.sweep(box, GRID, seconds=SECONDS, _fail_once=marker, **kw)
  assert os.path.exists(marker)            # a worker did die
  assert _same(res.rows, serial.rows)
  if where == "processes":     # the test can fail: without reruns the variant is lost
    with pytest.raises(RuntimeError, match=r"worker process died, 1 time\(s\) with 0 rerun"):
      sw.sweep(box, GRID, seconds=SECONDS, _fail_once=marker + "2", retries=0, **kw)
  else:
    import ray
    with pytest.raises(ray.exceptions.WorkerCrashedError):
      sw.sweep(box, GRID, seconds=SECONDS, _fail_once=marker + "2", retries=0, **kw)


def test_best_variant_as_mjcf_diff_and_edited_copy(box, serial, tmp_path):
  """The least penetration is the stiffest variant; its MJCF diff and edited copy carry its
  solref, and the copy loads with it."""
  best = serial.best("max_penetration")
  assert best["variant"] == min(serial.rows, key=lambda r: r["max_penetration"])["variant"]
  t, z = best["geom_solref[*][0]"], best["geom_solref[*][1]"]
  diff = serial.mjcf_diff(best)
  assert f'<geom name="floor" solref="{t:g} {z:g}"/>' in diff
  out = tmp_path / "best.xml"
  assert serial.save_model(best, out) == []
  m = numjoco.load_model(str(out))
  assert np.array_equal(m.geom_solref, np.tile([t, z], (2, 1)))
  worst = serial.best("max_penetration", maximize=True)
  assert worst["max_penetration"] > best["max_penetration"]


def test_table_csv_parquet_and_plot(serial, tmp_path):
  """The table round-trips through CSV (floats as written) and Parquet; the plot is an image."""
  import csv
  serial.write(tmp_path / "t.csv")
  with open(tmp_path / "t.csv") as f:
    back = list(csv.DictReader(f))
  assert list(back[0]) == serial.columns
  assert [float(r["max_penetration"]) for r in back] == \
      [r["max_penetration"] for r in serial.rows]
  import pyarrow.parquet as pq
  serial.write(str(tmp_path / "t.parquet"))
  table = pq.read_table(str(tmp_path / "t.parquet")).to_pydict()
  assert table["max_penetration"] == [r["max_penetration"] for r in serial.rows]
  serial.plot(str(tmp_path / "p.png"))
  from PIL import Image
  img = np.asarray(Image.open(tmp_path / "p.png").convert("L"))
  assert img.shape[1] > 800 and (img < 128).mean() > 0.005     # axes and points drawn


def test_model_restored_between_variants(box):
  """A worker keeps one Model per file: after a variant it holds the loaded values again
  (body_mass also re-runs mj_setConst both ways)."""
  m = numjoco.load_model(box)
  ref = numjoco.load_model(box)
  params = [sw.parse_param("body_mass[box]=3"), sw.parse_param("opt.integrator=RK4"),
            sw.parse_param("geom_friction[*][0]=0.3")]
  sw.check_params(m, params)
  edits, opt_edits, undo = sw.apply(m, params, {p.name: p.values[0] for p in params})
  assert m.body_mass[1] == 3 and m.opt.integrator == numjoco.mjtIntegrator.RK4
  assert m.body_subtreemass[0] == 3            # mj_setConst ran
  assert set(edits) == {("body_mass", 1), ("geom_friction", 0), ("geom_friction", 1)}
  sw.restore(m, undo)
  for f in ("body_mass", "body_subtreemass", "geom_friction", "dof_invweight0"):
    assert np.array_equal(getattr(m, f), getattr(ref, f)), f
  assert m.opt.integrator == ref.opt.integrator


def test_random_samples_seeds_noise_controller_and_user_metric(box):
  """Random variants stay in their ranges and repeat with the sample seed; seeds draw the
  initial velocity noise; the controller and a user's metric run in each variant."""
  calls = []

  def push(m, d, rng):
    calls.append(1)

  def final_height(m, d, trace):
    return float(d.qpos[2])

  res = sw.sweep(box, random={"geom_friction[*][0]": "loguniform:0.1:2",
                              "opt.integrator": ["Euler", "implicitfast"]},
                 samples=4, seeds=2, noise=0.05, seconds=0.2, workers=1, controller=push,
                 metrics={"height": final_height})
  assert len(res.rows) == 8 and len(calls) == 8 * 100
  mus = [r["geom_friction[*][0]"] for r in res.rows]
  assert all(0.1 <= v <= 2 for v in mus) and len(set(mus)) == 4
  assert {r["opt.integrator"] for r in res.rows} <= {"EULER", "IMPLICITFAST"}
  again = sw.variants([sw.parse_param("geom_friction[*][0]=loguniform:0.1:2", True),
                       sw.parse_param("opt.integrator=Euler,implicitfast", True)], 4, 0)
  assert [v["geom_friction[*][0]"] for v in again] == mus[::2]
  a, b = res.rows[0], res.rows[1]           # one variant, seeds 0 and 1: other noise
  assert a["variant"] == b["variant"] and a["height"] != b["height"]
  assert 0.05 < a["height"] < 0.35


def test_a_closure_for_worker_processes_is_refused_clearly(box):
  with pytest.raises(sw.SweepError, match="must be module-level functions"):
    sw.sweep(box, {"geom_friction[*][0]": [0.5]}, seconds=0.01, workers=2,
             metrics={"x": lambda m, d, trace: 0.0})


@pytest.mark.parametrize("spec, msg", [
    ("geom_solref[ground][0]=0.01", "no geom named 'ground'"),
    ("geom_solref[floor][2]=0.01", "has 2 column(s)"),
    ("geom_solref[floor]=0.01 1 3", "rows have 2 numbers"),
    ("geom_mass=1", "not a sweepable Model field"),
    ("opt.integrator=RK5", "'RK5' is not one of"),
    ("opt.timestepp=0.01", "no option 'timestepp'"),
    ("geom_solref[floor][0]=fast", "'fast' is not a number"),
    ("geom_solref[floor][0]", "expected NAME=VALUES"),
])
def test_bad_parameters_are_refused_with_what_is_wrong(box, spec, msg):
  with pytest.raises(sw.SweepError, match=msg.replace("(", r"\(").replace(")", r"\)")):
    sw.sweep(box, [spec], seconds=0.01, workers=1)


def test_command_line_prints_table_best_diff_and_writes_files(box, tmp_path, capsys):
  out, best = tmp_path / "t.csv", tmp_path / "best.xml"
  code = sw.main([box, "--grid", "geom_solref[*][0]=0.005,0.02", "--seconds", "0.3",
                  "--jobs", "1", "-o", str(out), "--export-best", str(best)])
  text = capsys.readouterr().out
  assert code == 0
  assert "max_penetration" in text and "best by max_penetration: variant 0" in text
  assert '<geom name="box" solref="0.005 1"/>' in text
  assert out.exists() and numjoco.load_model(str(best)).geom_solref[1, 0] == 0.005
  assert sw.main([box, "--grid", "geom_solref[nope][0]=1", "--jobs", "1"]) == 2
  assert "no geom named 'nope'" in capsys.readouterr().err
  assert sw.main([str(tmp_path / "missing.xml")]) == 2


def test_variant_videos(box, tmp_path):
  """--video writes a playable video of each run."""
  import av
  res = sw.sweep(box, {"geom_solref[*][0]": [0.005, 0.02]}, seconds=0.2, workers=1,
                 video=str(tmp_path), video_seconds=0.2, size=(160, 120))
  names = [r["video"] for r in res.rows]
  assert names == ["variant0000_seed0.mp4", "variant0001_seed0.mp4"]
  for n in names:
    with av.open(str(tmp_path / n)) as c:
      assert sum(1 for _ in c.decode(video=0)) == 6


def test_open_best_opens_the_edited_copy_in_the_viewer(box, monkeypatch, capsys):
  """--open-best starts the viewer (`python -m numjoco FILE`) on a copy of the model with the
  best variant's values, next to the model (its relative assets resolve there), removed when
  the viewer closes."""
  import subprocess
  import sys
  seen = []

  def viewer(argv):
    seen.append((argv, numjoco.load_model(argv[3]).geom_friction[1, 0]))
    return 0
  monkeypatch.setattr(subprocess, "call", viewer)
  assert sw.main([box, "--grid", "geom_friction[box][0]=0.2,0.9", "--best", "settle_time",
                  "--seconds", "0.4", "--jobs", "1", "--open-best"]) == 0
  capsys.readouterr()
  ((argv, mu),) = seen
  assert argv[:3] == [sys.executable, "-m", "numjoco"]
  assert os.path.dirname(argv[3]) == os.path.dirname(box) and not os.path.exists(argv[3])
  res = sw.sweep(box, {"geom_friction[box][0]": [0.2, 0.9]}, seconds=0.4, workers=1)
  assert mu == res.best("settle_time")["geom_friction[box][0]"]
