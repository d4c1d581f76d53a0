"""Flex collisions in the step (engine.collision_driver calling engine.collision_flex, contact
rows from engine.flex_contact) against MuJoCo 4.0.

Teacher-forced: at states along 4.0's own trajectory with contacts on, our contacts (ids and
order, geometry, parameters), constraint rows (efc_J dense, efc_pos, efc_diagA, efc_R) and
qacc equal 4.0's. Then whole trajectories of cloths and cables that collide with geoms, the
ground and themselves, a touch sensor under a cloth, and the load refusal of what is not
simulated (flex against mesh geoms).
"""
import os

import mujoco
import numpy as np
import pytest

import engine
from engine.mjcf import MjcfError
from engine.mjcf._flex import load_flex_model
from tests.test_flex import copy_state

ROOT = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")

# MuJoCo's flex models whose flexes collide and whose forces we compute (2D and 3D elasticity,
# edge springs and equality, rigid flexes); (model, steps of 4.0's trajectory compared)
MODELS = [
    ("model/flex/flag.xml", (900, 1500)),          # self-collision (SAP order, GJK)
    ("model/flex/trampoline.xml", (300, 600)),     # sphere : triangle
    ("model/flex/pancake.xml", (300, 600)),        # 81 plane : vertex in one pair
    ("model/flex/basket.xml", (350, 500)),         # sphere : triangle, plane : vertex
    ("model/flex/plate.xml", (250, 400)),          # capsule : triangle
    ("model/flex/pinch.xml", (100, 200)),          # box : triangle
    ("test/engine/testdata/sleep/flex_contact.xml", (200, 210)),
    ("test/engine/testdata/sleep/flex_mocap.xml", (50, 100)),
    ("model/flex/jelly.xml", (450, 900)),          # 3D elastic : planes, mocap capsule (CG)
    ("model/flex/floppy.xml", (600, 1500)),        # 3D elastic : cylinder, 101 contacts (CG)
]


def _close(ours, ref, what, tol):
  ours, ref = np.asarray(ours, float), np.asarray(ref, float)
  assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs {ref.shape}"
  scale = max(1.0, float(np.abs(ref).max(initial=0)))
  np.testing.assert_allclose(ours, ref, rtol=0, atol=tol * scale, err_msg=what)


def _dense(nrow, nv, rownnz, rowadr, colind, val):
  J = np.zeros((nrow, nv))
  for r in range(nrow):
    a = rowadr[r]
    J[r, colind[a:a + rownnz[r]]] = val[a:a + rownnz[r]]
  return J


def _mj_dense_j(mjm, mjd):
  if not mujoco.mj_isSparse(mjm):
    return np.array(mjd.efc_J[:mjd.nefc * mjm.nv]).reshape(mjd.nefc, mjm.nv)
  return _dense(mjd.nefc, mjm.nv, mjd.efc_J_rownnz, mjd.efc_J_rowadr, mjd.efc_J_colind,
                mjd.efc_J)


def _our_dense_j(m, d):
  return _dense(d.nefc, m.nv, d.efc_J_rownnz, d.efc_J_rowadr, d.efc_J_colind, d.efc_J)


def _ids(geom, flex, elem, vert):
  return tuple(int(x) for x in (*geom, *flex, *elem, *vert))


def compare_contacts(m, d, mjd, what):
  """Same contacts in the same order: ids exact, geometry to 1e-9, parameters to 1e-12."""
  assert d.ncon == mjd.ncon, f"{what}: ncon {d.ncon} vs {mjd.ncon}"
  nflex = 0
  for i in range(mjd.ncon):
    c = mjd.contact[i]
    theirs = _ids(c.geom, c.flex, c.elem, c.vert)
    ours = _ids(d.contact_geom[i], d.contact_flex[i], d.contact_elem[i], d.contact_vert[i])
    assert ours == theirs, f"{what}: contact {i} ids {ours} vs {theirs}"
    assert (d.contact_geom1[i], d.contact_geom2[i]) == (c.geom1, c.geom2)
    nflex += c.flex[0] >= 0 or c.flex[1] >= 0
    _close(d.contact_dist[i], c.dist, f"{what} contact {i} dist", 1e-9)
    _close(d.contact_pos[i], c.pos, f"{what} contact {i} pos", 1e-9)
    _close(d.contact_frame[i], c.frame, f"{what} contact {i} frame", 1e-9)
    _close(d.contact_friction[i], c.friction, f"{what} contact {i} friction", 1e-12)
    _close(d.contact_solref[i], c.solref, f"{what} contact {i} solref", 1e-12)
    _close(d.contact_solimp[i], c.solimp, f"{what} contact {i} solimp", 1e-12)
    assert d.contact_dim[i] == c.dim and d.contact_exclude[i] == c.exclude, what
    assert d.contact_efc_address[i] == c.efc_address, f"{what} contact {i} efc_address"
  return nflex


def compare_rows(m, d, mjm, mjd, what):
  assert d.nefc == mjd.nefc, f"{what}: nefc {d.nefc} vs {mjd.nefc}"
  np.testing.assert_array_equal(d.efc_type[:d.nefc], mjd.efc_type, err_msg=what)
  np.testing.assert_array_equal(d.efc_id[:d.nefc], mjd.efc_id, err_msg=what)
  _close(_our_dense_j(m, d), _mj_dense_j(mjm, mjd), f"{what} efc_J", 1e-9)
  _close(d.efc_pos[:d.nefc], mjd.efc_pos, f"{what} efc_pos", 1e-9)
  _close(d.efc_diagA[:d.nefc], mjd.efc_diagA, f"{what} efc_diagA", 1e-9)
  _close(d.efc_R[:d.nefc], mjd.efc_R, f"{what} efc_R", 1e-9)
  _close(d.efc_aref[:d.nefc], mjd.efc_aref, f"{what} efc_aref", 1e-8)


@pytest.mark.parametrize("path,steps", MODELS, ids=[p for p, _ in MODELS])
def test_teacher_forced_contacts(path, steps):
  """At states of 4.0's trajectory: contacts, rows and qacc (1e-6 of its scale) as 4.0's."""
  full = os.path.join(ROOT, path)
  m = load_flex_model(full)
  mjm = mujoco.MjModel.from_xml_path(full)
  d, mjd = engine.make_data(m), mujoco.MjData(mjm)
  nflex = 0
  done = 0
  for target in steps:
    while done < target:
      mujoco.mj_step(mjm, mjd)
      done += 1
    mujoco.mj_forward(mjm, mjd)
    copy_state(d, mjd)
    # sleeping models: the sleep state too
    d.tree_asleep[:] = mjd.tree_asleep
    engine.forward(m, d)
    what = f"{path} step {target}"
    nflex += compare_contacts(m, d, mjd, what)
    compare_rows(m, d, mjm, mjd, what)
    # islands as 4.0's (an elastic flex is one island of all its vertex trees)
    assert d.nisland == mjd.nisland, f"{what}: nisland {d.nisland} vs {mjd.nisland}"
    np.testing.assert_array_equal(d.island_nv[:mjd.nisland], mjd.island_nv, err_msg=what)
    _close(d.qacc, mjd.qacc, f"{what} qacc", 1e-6)
  assert nflex > 0, "no flex contact along the trajectory: the comparison proves little"


# ------------------------------------------------------------- models load_model accepts

_DROP = """<mujoco><option timestep="0.002" integrator="{integrator}" cone="{cone}"/>
  <worldbody>
  <geom type="plane" size="1 1 .1"/>
  <body name="ball" pos=".12 .1 .35"><freejoint/>
    <geom type="sphere" size=".08" mass=".4"/></body>
  <body name="post" pos=".12 .1 .1"><geom type="box" size=".04 .04 .1"/>
    <site name="top" pos="0 0 .1" size=".05 .05 .02" type="box"/></body>
  <flexcomp name="cloth" type="grid" dim="2" count="6 5 1" spacing=".05 .05 .05"
            pos=".12 .1 .25" euler="7 4 20" mass=".3" radius=".01">
    <contact condim="{condim}" selfcollide="auto"/>
    {body}
  </flexcomp></worldbody>
  <sensor><touch site="top"/></sensor></mujoco>"""
_ELASTIC = '<elasticity young="2e4" poisson=".2" thickness=".005" damping=".001"/>'
_EQUALITY = '<edge equality="true"/>'
_ROPE = """<mujoco><option timestep="0.002"/><worldbody>
  <geom type="plane" size="1 1 .1"/>
  <geom type="capsule" fromto="-.3 0 .2 .3 0 .2" size=".03"/>
  <flexcomp name="rope" type="grid" dim="1" count="10 1 1" spacing=".05 .05 .05"
            pos="-.2 .02 .35" mass=".2" radius=".01">
    <edge stiffness="50" damping=".2"/>
  </flexcomp></worldbody></mujoco>"""

DROPS = {
    "cloth-elastic-euler": _DROP.format(integrator="Euler", cone="pyramidal", condim=3,
                                        body=_ELASTIC),
    "cloth-equality-implicitfast": _DROP.format(integrator="implicitfast", cone="pyramidal",
                                                condim=3, body=_EQUALITY),
    "cloth-equality-elliptic-condim4": _DROP.format(integrator="Euler", cone="elliptic",
                                                    condim=4, body=_EQUALITY),
    "cloth-elastic-rk4": _DROP.format(integrator="RK4", cone="pyramidal", condim=3,
                                      body=_ELASTIC),
    "rope": _ROPE,
}


@pytest.mark.parametrize("name", list(DROPS))
def test_drop_trajectory(name):
  """engine.load_model loads these; 400 steps of a cloth falling on a box under a falling
  ball (or a rope on a bar) follow 4.0's: qpos within 1e-6, the contact count equal at every
  step, the touch sensor within 1e-6 of its scale. (The cloth lands tilted: flat on the box
  top, contacts at distance ~1e-11 come and go with 1e-11 differences of qpos, in 4.0 too.)"""
  xml = DROPS[name]
  m = engine.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  d, mjd = engine.make_data(m), mujoco.MjData(mjm)
  touched = nflex = 0
  for i in range(400):
    engine.step(m, d)
    mujoco.mj_step(mjm, mjd)
    what = f"{name} step {i}"
    assert d.ncon == mjd.ncon, f"{what}: ncon {d.ncon} vs {mjd.ncon}"
    _close(d.qpos, mjd.qpos, f"{what} qpos", 1e-6)
    _close(d.sensordata, mjd.sensordata, f"{what} sensordata", 1e-6)
    touched = max(touched, float(np.abs(mjd.sensordata).max(initial=0)))
    nflex = max(nflex, sum(mjd.contact[k].flex[0] >= 0 or mjd.contact[k].flex[1] >= 0
                           for k in range(mjd.ncon)))
  assert nflex >= 5, "the flex barely touched anything"
  if m.nsensor:
    assert touched > 0, "the touch sensor never read a force"


def test_flex_against_mesh_is_refused():
  """A flex that can touch a mesh geom is a load error naming the flexcomp (4.0 loads it)."""
  xml = """<mujoco><asset><mesh name="tet" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>
    <worldbody><geom type="mesh" mesh="tet"/>
    <flexcomp name="f" type="grid" dim="2" count="3 3 1" spacing=".1 .1 .1" mass="1"
              pos="0 0 1"/></worldbody></mujoco>"""
  mujoco.MjModel.from_xml_string(xml)
  with pytest.raises(MjcfError, match=r"<flexcomp name=\"f\">: collisions of a flex with mesh "
                                      "geoms are not simulated yet"):
    engine.load_model(xml)
  # without matching bitmasks it loads
  engine.load_model(xml.replace('mesh="tet"/>', 'mesh="tet" contype="2" conaffinity="2"/>'))
