"""Small models written here that reproduce what real third-party models exercise, each against
MuJoCo 4.0.1: contacts at deep penetration (plane-mesh, cylinder-box), spatial tendons wrapping
over spheres and cylinders with side sites at many poses, a mesh grasp with many contacts, a
height field with a solver limited to 3 iterations, elliptic cones. Forward qacc within 1e-6
of its scale, teacher-forced rollouts within 1e-5, contact lists equal."""

import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import assert_forward_as_mujoco, assert_teacher_forced, models_of


def _random_quat(rng):
  q = rng.normal(size=4)
  return q / np.linalg.norm(q)


def _assert_contacts_equal(d, mjd, what):
  assert d.ncon == mjd.ncon, f"{what}: ncon {d.ncon} != {mjd.ncon}"
  np.testing.assert_array_equal(d.contact_geom1[:d.ncon], mjd.contact.geom1, err_msg=what)
  np.testing.assert_array_equal(d.contact_geom2[:d.ncon], mjd.contact.geom2, err_msg=what)
  np.testing.assert_allclose(d.contact_dist[:d.ncon], mjd.contact.dist, rtol=0, atol=1e-9,
                             err_msg=what)
  np.testing.assert_allclose(d.contact_pos[:d.ncon], mjd.contact.pos, rtol=0, atol=1e-9,
                             err_msg=what)


# ------------------------------------------------------------------ deep penetration

_ROCK = " ".join("%.4f" % x for x in (np.random.default_rng(0).normal(size=(40, 3))
                                      * [0.1, 0.07, 0.05]).ravel())
_DEEP = f"""<mujoco>
  <asset>
    <mesh name="rock" vertex="{_ROCK}"/>
    <mesh name="brick" scale=".1 .07 .05"
          vertex="-1 -1 -1 1 -1 -1 1 1 -1 -1 1 -1 -1 -1 1 1 -1 1 1 1 1 -1 1 1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 .1"/>
    <geom name="table" type="box" pos="2 0 0" size=".3 .3 .1"/>
    <body name="rock" pos="0 0 .2"><freejoint/><geom type="mesh" mesh="rock"/></body>
    <body name="brick" pos="1 0 .2"><freejoint/><geom type="mesh" mesh="brick"/></body>
    <body name="can" pos="2 0 .3"><freejoint/><geom type="cylinder" size=".05 .08"/></body>
  </worldbody>
</mujoco>"""


@pytest.mark.parametrize("body", ["rock", "brick", "can"])
def test_deep_penetration_contacts(body):
  """Bodies placed at random orientations from just touching to half their size deep into
  the floor (meshes) or the table (the cylinder), as random poses of real robots leave them:
  the contact lists equal MuJoCo's."""
  m, mjm = models_of(_DEEP, quiet=True)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(7)
  j = mjm.body(body).jntadr[0]
  adr = mjm.jnt_qposadr[j]
  g = mjm.body(body).geomadr[0]
  base = mjm.qpos0.copy()
  deep = multi = 0
  for trial in range(150):
    mjd.qpos[:] = base
    x = {"rock": 0.0, "brick": 1.0, "can": 2.0}[body]
    top = 0.1 if body == "can" else 0.0
    z = top + rng.uniform(-0.6, 0.05) * mjm.geom_rbound[g]
    mjd.qpos[adr:adr + 7] = np.r_[x + rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), z,
                                  _random_quat(rng)]
    mjd.qvel[:] = 0
    mujoco.mj_forward(mjm, mjd)
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    numjoco.forward(m, d)
    _assert_contacts_equal(d, mjd, f"trial {trial}")
    deep += mjd.ncon > 0 and mjd.contact.dist.min() < -0.02
    multi += mjd.ncon > 1
  assert deep >= 30 and multi >= 20, (deep, multi)


# ------------------------------------------------------------------- tendon wrapping

def _wrapped_tendon(name, insert, head_side=None, elbow_side=None):
  """MJCF of a spatial tendon of _ARM from site origin around geom head, through site mid,
  around geom condyle to site `insert`; each wrap on the side of its side site when one is
  given."""
  head = f' sidesite="{head_side}"' if head_side else ""
  elbow = f' sidesite="{elbow_side}"' if elbow_side else ""
  return f"""    <spatial name="{name}" width=".003">
      <site site="origin"/>
      <geom geom="head"{head}/>
      <site site="mid"/>
      <geom geom="condyle"{elbow}/>
      <site site="{insert}"/>
    </spatial>
"""


_ARM = f"""<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <site name="origin" pos="0 -.02 .1"/>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0" range="-150 150" limited="true"/>
      <geom name="humerus" type="capsule" fromto="0 0 0 0 0 -.3" size=".025"/>
      <geom name="head" type="sphere" size=".04" contype="0" conaffinity="0"/>
      <site name="side_out" pos="-.06 0 0"/>
      <site name="side_in" pos="-.02 0 .01"/>
      <site name="mid" pos=".03 0 -.15"/>
      <body name="fore" pos="0 0 -.3">
        <joint name="elbow" type="hinge" axis="0 1 0" range="-10 150" limited="true"/>
        <geom name="condyle" type="cylinder" fromto="0 -.03 0 0 .03 0" size=".03"
              contype="0" conaffinity="0"/>
        <geom name="radius" type="capsule" fromto="0 0 0 0 0 -.25" size=".02"/>
        <site name="elbow_side" pos=".05 0 0"/>
        <site name="elbow_in" pos=".01 0 .005"/>
        <site name="insert" pos=".02 0 -.06"/>
        <site name="insert2" pos="-.02 .01 -.08"/>
      </body>
    </body>
  </worldbody>
  <tendon>
{_wrapped_tendon("outside", "insert", "side_out", "elbow_side")}\
{_wrapped_tendon("inside", "insert2", "side_in", "elbow_in")}\
{_wrapped_tendon("free", "insert2")}\
  </tendon>
  <actuator>
    <muscle name="m_out" tendon="outside" force="100" lengthrange=".25 .7"/>
    <muscle name="m_in" tendon="inside" force="80" lengthrange=".25 .7"/>
    <muscle name="m_free" tendon="free" force="60" lengthrange=".25 .7"/>
  </actuator>
  <sensor><tendonpos tendon="outside"/><tendonpos tendon="inside"/><tendonpos tendon="free"/>
    <actuatorfrc actuator="m_out"/><actuatorfrc actuator="m_in"/></sensor>
</mujoco>"""


def test_wrapping_tendons_at_many_poses():
  """Spatial tendons over a sphere and a cylinder, with side sites outside and inside the wrap
  geoms and without: lengths, moments and the muscle forces that follow them equal MuJoCo's
  over a grid of arm poses covering wrapped, unwrapped and inside-wrap configurations."""
  m, mjm = models_of(_ARM, quiet=True)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(3)
  for trial, (a, b) in enumerate((a, b) for a in np.linspace(-2.5, 2.5, 21)
                                 for b in np.linspace(-0.15, 2.5, 15)):
    mjd.qpos[:] = a, b
    mjd.qvel[:] = rng.normal(size=2)
    mjd.act[:] = rng.uniform(0, 1, mjm.na)
    mjd.ctrl[:] = rng.uniform(0, 1, mjm.nu)
    mujoco.mj_forward(mjm, mjd)
    for f in ("qpos", "qvel", "act", "ctrl"):
      getattr(d, f)[:] = getattr(mjd, f)
    numjoco.forward(m, d)
    what = f"pose {trial} ({a:.2f}, {b:.2f})"
    np.testing.assert_allclose(d.ten_length, mjd.ten_length, rtol=1e-12, atol=1e-12,
                               err_msg=what)
    np.testing.assert_allclose(d.ten_wrapnum, mjd.ten_wrapnum, err_msg=what)
    npath = mjd.ten_wrapadr[-1] + mjd.ten_wrapnum[-1]
    np.testing.assert_allclose(d.wrap_xpos[:npath], mjd.wrap_xpos[:npath], rtol=0, atol=1e-9,
                               err_msg=what)
    np.testing.assert_allclose(d.actuator_force, mjd.actuator_force, rtol=1e-9, atol=1e-9,
                               err_msg=what)
    scale = 1.0 + np.abs(mjd.qacc).max()
    np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=0, atol=1e-6 * scale, err_msg=what)


def test_wrapping_arm_teacher_forced():
  m, mjm = models_of(_ARM, quiet=True)
  assert_teacher_forced(m, mjm, nstep=200)


# ------------------------------------------------------------ constraint-heavy scenes

_GRASP = f"""<mujoco>
  <option timestep="0.002" cone="elliptic" impratio="5"/>
  <asset>
    <mesh name="pad" scale=".01 .02 .03"
          vertex="-1 -1 -1 1 -1 -1 1 1 -1 -1 1 -1 -1 -1 1 1 -1 1 1 1 1 -1 1 1"/>
    <mesh name="rock" vertex="{_ROCK}" scale=".4 .4 .4"/>
  </asset>
  <worldbody>
    <geom type="plane" size="1 1 .1"/>
    <body name="object" pos="0 0 .03"><freejoint/><geom type="mesh" mesh="rock" density="300"/>
    </body>
    <body name="palm" pos="0 0 .12">
      <joint name="lift" type="slide" axis="0 0 1" damping="20"/>
      <geom type="box" size=".05 .03 .01" density="500"/>
      {"".join(f'''<body name="f{i}" pos="{x} {y} -.03">
        <joint name="f{i}" type="slide" axis="{-np.sign(x) if x else 0} {-np.sign(y) if y else 0} 0"
               damping="5" range="-.02 .06" limited="true"/>
        <geom type="mesh" mesh="pad" euler="0 0 {0 if x else 90}" density="800"/>
      </body>''' for i, (x, y) in enumerate(((.06, 0), (-.06, 0), (0, .06), (0, -.06))))}
    </body>
  </worldbody>
  <actuator>
    <position joint="lift" kp="400" ctrlrange="-.03 .05"/>
    {"".join(f'<position joint="f{i}" kp="200" ctrlrange=".04 .06"/>' for i in range(4))}
  </actuator>
</mujoco>"""


def test_mesh_grasp_teacher_forced():
  """Four mesh pads squeezing a mesh rock (many mesh-mesh contacts, elliptic cones, Newton):
  teacher-forced 200 steps under random controls."""
  m, mjm = models_of(_GRASP, quiet=True)
  assert_teacher_forced(m, mjm, nstep=200)


def _hfield_scene(iterations):
  rng = np.random.default_rng(2)
  h = " ".join("%.3f" % v for v in rng.uniform(0, 1, 12 * 12))
  bodies = "".join(
      f'<body pos="{x} {y} .6"><freejoint/><geom type="capsule" size=".05 .15" '
      f'euler="{30 * i} {20 * i} 0"/><body pos=".2 0 0"><joint type="hinge" axis="0 1 0"/>'
      f'<geom type="capsule" fromto="0 0 0 .2 0 0" size=".04"/></body></body>'
      for i, (x, y) in enumerate(((0, 0), (.5, .2), (-.4, -.3), (.2, -.5))))
  return f"""<mujoco>
  <option timestep="0.004" iterations="{iterations}" ls_iterations="{iterations}"
          tolerance="1e-15"/>
  <asset><hfield name="terrain" nrow="12" ncol="12" size="1.5 1.5 .3 .1" elevation="{h}"/>
  </asset>
  <worldbody><geom type="hfield" hfield="terrain"/>{bodies}</worldbody>
</mujoco>"""


@pytest.mark.parametrize("iterations", [3, 100])
def test_hfield_few_iterations_teacher_forced(iterations):
  """Linked capsules falling on a height field with the solver limited to 3 iterations (the
  result is the third iterate, not the optimum; tolerance 1e-15 so every iteration runs) and
  with 100."""
  m, mjm = models_of(_hfield_scene(iterations), quiet=True)
  assert_teacher_forced(m, mjm, nstep=200)


_ELLIPTIC = """<mujoco>
  <option timestep="0.002" cone="elliptic" impratio="10" noslip_iterations="0"/>
  <worldbody>
    <geom type="plane" size="1 1 .1" friction="1 .01 .001"/>
    <body pos="0 0 .1"><freejoint/><geom type="box" size=".05 .05 .05" condim="6"
      friction=".8 .02 .002"/></body>
    <body pos=".2 0 .1"><freejoint/><geom type="sphere" size=".05" condim="4"/></body>
    <body pos="-.2 0 .1"><freejoint/><geom type="capsule" size=".03 .06" condim="3"
      euler="0 90 0"/></body>
    <body pos="0 .2 .1"><freejoint/><geom type="ellipsoid" size=".05 .04 .03" condim="6"/>
    </body>
  </worldbody>
</mujoco>"""


@pytest.mark.parametrize("solver", ["Newton", "CG", "PGS"])
def test_elliptic_cones_teacher_forced(solver):
  """Condim 3, 4 and 6 contacts with elliptic cones and impratio 10, each solver."""
  xml = _ELLIPTIC.replace('cone="elliptic"', f'cone="elliptic" solver="{solver}"')
  m, mjm = models_of(xml, quiet=True)
  assert_teacher_forced(m, mjm, nstep=200)


def test_elliptic_cones_forward_sliding():
  """The same scene thrown sideways (sliding, rolling and spinning contacts) at random
  states."""
  m, mjm = models_of(_ELLIPTIC, quiet=True)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  rng = np.random.default_rng(4)
  for trial in range(20):
    mujoco.mj_resetData(mjm, mjd)
    for b in range(4):
      mjd.qpos[7 * b + 2] -= rng.uniform(0, 0.01)
      mjd.qvel[6 * b:6 * b + 6] = rng.normal(size=6) * [1, 1, .1, 5, 5, 5]
    assert_forward_as_mujoco(m, d, mjm, mjd, f"trial {trial}", ncon=True)
