"""Flex collisions in the step (engine.collision.driver calling engine.collision.flex, contact
rows from engine.flex_contact) against MuJoCo 4.0.

Teacher-forced: at states along 4.0's own trajectory with contacts on, our contacts (ids and
order, geometry, parameters), constraint rows (efc_J dense, efc_pos, efc_diagA, efc_R) and
qacc equal 4.0's. Then whole trajectories of cloths and cables that collide with geoms, the
ground and themselves, a touch sensor under a cloth; cloths, soft blocks and ropes on a height
field and mesh geoms.
"""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from tests.models import load_flex_model
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


def compare_contacts(m, d, mjd, what, contacts=None, addresses=True):
  """Same contacts in the same order: ids exact, geometry to 1e-9, parameters to 1e-12.
  `contacts`: 4.0's list to compare with (default all of mjd's); addresses: compare
  efc_address too."""
  contacts = list(mjd.contact[:mjd.ncon]) if contacts is None else contacts
  assert d.ncon == len(contacts), f"{what}: ncon {d.ncon} vs {len(contacts)}"
  nflex = 0
  for i, c in enumerate(contacts):
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
    if addresses:
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


_ULP_KNOWN = {}


@pytest.mark.parametrize("path,steps", [
    pytest.param(p, s, id=p, marks=[pytest.mark.xfail(strict=True, reason=_ULP_KNOWN[p])]
                 if p in _ULP_KNOWN else []) for p, s in MODELS])
def test_teacher_forced_contacts(path, steps):
  """At states of 4.0's trajectory: contacts, rows and qacc (1e-6 of its scale) as 4.0's."""
  full = os.path.join(ROOT, path)
  m = load_flex_model(full)
  mjm = mujoco.MjModel.from_xml_path(full)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
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
    numjoco.forward(m, d)
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
    "cloth-equality-discrete": _DROP.format(integrator="discrete", cone="pyramidal", condim=3,
                                            body=_EQUALITY),
    "rope": _ROPE,
}


@pytest.mark.parametrize("name", list(DROPS))
def test_drop_trajectory(name):
  """numjoco.load_model loads these; 400 steps of a cloth falling on a box under a falling
  ball (or a rope on a bar) follow 4.0's: qpos within 1e-6, the contact count equal at every
  step, the touch sensor within 1e-6 of its scale. (The cloth lands tilted: flat on the box
  top, contacts at distance ~1e-11 come and go with 1e-11 differences of qpos, in 4.0 too.)"""
  xml = DROPS[name]
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  touched = nflex = 0
  for i in range(400):
    numjoco.step(m, d)
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


# a cloth, a soft block and a rope dropped on a tilted height field and a mesh wedge, with a
# free mesh tetrahedron falling on them (mj_collideGeomElem's mjc_HFieldElem and
# mjc_ConvexElem with a mesh hull; margins: 4.0 reports the distance, both sides inflated).
# The tetrahedron touches only the flex (its height-field contact is geom : geom, not tested
# here).
_TERRAIN = """<mujoco><option timestep="0.002" integrator="Euler"/>
  <asset>
    <mesh name="wedge" vertex="-.15 -.15 0  .15 -.15 0  .15 .15 0  -.15 .15 0  -.1 -.1 .12
                                .1 -.05 .16  .05 .1 .14  -.1 .1 .12"/>
    <mesh name="tet" vertex="0 0 0 1 0 0 0 1 0 0 0 1" scale=".2 .2 .2"/>
    <hfield name="hf" nrow="7" ncol="8" size=".6 .6 .12 .05"
      elevation="0 1 2 1 0 1 2 3  1 2 3 2 1 0 1 2  2 3 4 3 2 1 0 1  1 2 3 4 3 2 1 0
                 0 1 2 3 4 3 2 1  1 0 1 2 3 4 3 2  2 1 0 1 2 3 4 3"/>
  </asset>
  <worldbody>
  <geom type="hfield" hfield="hf" euler="2 -3 5" margin="{hm}" conaffinity="2"/>
  <geom type="mesh" mesh="wedge" pos="-.2 -.15 .12" euler="0 0 17" margin="{mm}"
        conaffinity="2"/>
  <body pos=".1 .15 .6" euler="20 10 0"><freejoint/>
    <geom type="mesh" mesh="tet" mass=".2" conaffinity="0"/></body>
  <flexcomp name="{name}" type="grid" dim="{dim}" count="{count}" spacing="{spacing}"
            pos="{pos}" euler="5 3 10" mass="{mass}" radius="{radius}">
    <contact condim="3" selfcollide="none" margin="{fm}"/>
    {body}
  </flexcomp></worldbody></mujoco>"""
_CLOTH = dict(name="cloth", dim=2, count="8 8 1", spacing=".06 .06 .06", pos="-.05 0 .45",
              mass=.5, radius=.01, body='<edge equality="true"/>')
_BLOCK = dict(name="block", dim=3, count="4 4 3", spacing=".08 .08 .08", pos="-.1 -.05 .45",
              mass=.5, radius=.005,
              body='<elasticity young="3e3" poisson=".2" damping=".002"/>')
_ROPE = dict(name="rope", dim=1, count="12 1 1", spacing=".05 .05 .05", pos="-.2 -.1 .45",
             mass=.2, radius=.01, body='<edge stiffness="30" damping=".1"/>')
TERRAIN = {
    "cloth": _TERRAIN.format(hm=0, mm=0, fm=0, **_CLOTH),
    "cloth-margins": _TERRAIN.format(hm=.02, mm=.01, fm=.005, **_CLOTH),
    "block": _TERRAIN.format(hm=0, mm=0, fm=0, **_BLOCK),
    "block-margins": _TERRAIN.format(hm=.01, mm=.01, fm=0, **_BLOCK),
    "rope": _TERRAIN.format(hm=0, mm=0, fm=0, **_ROPE),
    "rope-margins": _TERRAIN.format(hm=.02, mm=.01, fm=0, **_ROPE),
}
# the cloth on the wedge, the height field made a plane
TERRAIN["cloth-wedge"] = TERRAIN["cloth"].replace('type="hfield" hfield="hf"',
                                                  'type="plane" size="1 1 .1"')


def _teacher_states(xml, every=40, steps=800):
  """(m, d, mjm, mjd, step) at every `every`-th state of 4.0's trajectory, ours teacher-forced."""
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  for step in range(1, steps + 1):
    mujoco.mj_step(mjm, mjd)
    if step % every == 0:
      mujoco.mj_forward(mjm, mjd)
      copy_state(d, mjd)
      numjoco.forward(m, d)
      yield m, d, mjm, mjd, step


def _flex_kinds(mjm, mjd):
  """(height field, mesh, separated) counts of the geom : flex contacts."""
  hfield = mesh = apart = 0
  for c in mjd.contact[:mjd.ncon]:
    if c.flex[1] >= 0 and c.geom[0] >= 0:
      hfield += mjm.geom_type[c.geom[0]] == mujoco.mjtGeom.mjGEOM_HFIELD
      mesh += mjm.geom_type[c.geom[0]] == mujoco.mjtGeom.mjGEOM_MESH
      apart += c.dist > 0
  return hfield, mesh, apart


def _grazing(c):
  """A 4.0 flex contact at a depth under 1e-6 (see `_without_grazing`)."""
  return -1e-6 < c.dist <= 0 and (c.flex[0] >= 0 or c.flex[1] >= 0)


def _without_grazing(d, mjd):
  """4.0's contacts less its grazing ones we do not have, and how many those are. Grazing: a
  flex contact at a depth under 1e-6 (an element resting on a height field or a mesh; on a
  height field its normal often points into the ground). 4.0 makes these now and then where
  our GJK finds the two apart (its native CCD numerics changed after the source we follow)."""
  ref, extra, j = [], 0, 0
  for c in mjd.contact[:mjd.ncon]:
    ids = _ids(c.geom, c.flex, c.elem, c.vert)
    ours = (_ids(d.contact_geom[j], d.contact_flex[j], d.contact_elem[j], d.contact_vert[j])
            if j < d.ncon else None)
    if _grazing(c) and (ids != ours or abs(c.dist - d.contact_dist[j]) > 1e-9):
      extra += 1
      continue
    ref.append(c)
    j += 1
  return ref, extra


@pytest.mark.parametrize("name", ["cloth", "block", "rope"])
def test_height_field_and_mesh_contacts(name):
  """Teacher-forced along 4.0's 800-step trajectory (every 40th state): height field : element
  and mesh : element contacts (ids in order, geometry 1e-9, parameters), their rows and qacc as
  4.0's; both kinds must occur. Where 4.0 has extra grazing contacts (`_without_grazing`), the
  others are compared (rows and qacc are not: 4.0 has more); at most half the states."""
  hfield = mesh = grazing = 0
  for m, d, mjm, mjd, step in _teacher_states(TERRAIN[name]):
    what = f"{name} step {step}"
    ref, extra = _without_grazing(d, mjd)
    compare_contacts(m, d, mjd, what, ref, addresses=not extra)
    if extra:
      grazing += 1
      continue
    compare_rows(m, d, mjm, mjd, what)
    _close(d.qacc, mjd.qacc, f"{what} qacc", 1e-6)
    h, k, _ = _flex_kinds(mjm, mjd)
    hfield, mesh = hfield + h, mesh + k
  assert hfield >= 10 and mesh >= 5, f"too few flex contacts: {hfield} height field, {mesh} mesh"
  assert grazing <= 10, f"{grazing} of 20 states with grazing contacts of 4.0's only"


@pytest.mark.xfail(strict=True, reason=(
    "with a margin, flex contacts whose element is still apart from the mesh or height field "
    "differ from 4.0's: distances mostly to 1e-7, points up to 0.04, normals up to 0.01, and "
    "near the margin's edge a contact 4.0 keeps at 3e-4 inside it that we find outside"))
@pytest.mark.parametrize("name", ["cloth-margins", "block-margins", "rope-margins"])
def test_height_field_and_mesh_margins(name):
  """With margins (geom and flex), teacher-forced as `test_height_field_and_mesh_contacts`:
  contacts, rows and qacc as 4.0's, and contacts within the margin but apart must occur."""
  apart = 0
  for m, d, mjm, mjd, step in _teacher_states(TERRAIN[name]):
    what = f"{name} step {step}"
    ref, extra = _without_grazing(d, mjd)
    compare_contacts(m, d, mjd, what, ref, addresses=not extra)
    if not extra:
      compare_rows(m, d, mjm, mjd, what)
      _close(d.qacc, mjd.qacc, f"{what} qacc", 1e-6)
    apart += _flex_kinds(mjm, mjd)[2]
  assert apart >= 10, f"only {apart} flex contacts within the margin but apart"


def test_flex_on_mesh_trajectory():
  """The cloth dropped on the wedge (the height field made a plane), each engine on its own:
  qpos within 1e-6 and the same contact count at every step, until 4.0 has a grazing contact
  we do not (`_without_grazing`; measured at step 381), after which the trajectories part;
  that must not come before step 300."""
  xml = TERRAIN["cloth-wedge"]
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  for i in range(600):
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
    if d.ncon != mjd.ncon:
      grazing = [c for c in mjd.contact[:mjd.ncon] if _grazing(c)]
      assert grazing and d.ncon < mjd.ncon, f"step {i}: ncon {d.ncon} vs {mjd.ncon}"
      break
    _close(d.qpos, mjd.qpos, f"step {i} qpos", 1e-6)
  assert i >= 300 and mjd.ncon > 20, (i, mjd.ncon)


@pytest.mark.parametrize("name", ["elliptic", "terrain"])
def test_discrete_teacher_forced(name):
  """Under the discrete integrator (4.0 treats flexes without elasticity as any other bodies:
  their equality and contact rows in the step's metric), qacc at every 25th state of 4.0's
  400-step trajectory within 1e-6 of 4.0's (states where 4.0 has grazing contacts of its own,
  `_without_grazing`, skipped: at most half): a cloth with edge equality on a box (elliptic
  cones, condim 4) and on the wedge and a plane."""
  if name == "elliptic":
    xml = _DROP.format(integrator="discrete", cone="elliptic", condim=4, body=_EQUALITY)
  else:
    xml = TERRAIN["cloth-wedge"].replace('integrator="Euler"', 'integrator="discrete"')
  nflex = skipped = 0
  for m, d, mjm, mjd, step in _teacher_states(xml, every=25, steps=400):
    ref, extra = _without_grazing(d, mjd)
    assert d.ncon == len(ref), f"step {step}: ncon {d.ncon} vs {len(ref)}"
    if extra:
      skipped += 1
      continue
    _close(d.qacc, mjd.qacc, f"{name} step {step} qacc", 1e-6)
    nflex += sum(c.flex[1] >= 0 for c in mjd.contact[:mjd.ncon])
  assert nflex >= 20 and skipped <= 8, (nflex, skipped)
