"""Flex simulation (engine/flex.py) against MuJoCo 4.0.

Teacher-forced: at states along 4.0's own trajectory (contacts disabled in both engines:
tests/test_flex_contact.py compares them), our flexvert_xpos, flexelem_aabb, flexedge_length,
flexedge_J, flexedge_velocity, passive forces, constraint rows and qacc equal 4.0's. Then whole
trajectories of models `numjoco.load_model` accepts, and its refusals.
"""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.mjcf import MjcfError
from tests.models import load_flex_model

ROOT = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")
_CONTACT = int(mujoco.mjtDisableBit.mjDSBL_CONTACT)

# MuJoCo's non-interpolated flex models (2D cloth and plates, 1D cables, 3D soft bodies, rigid
# flexes): every stage compared
MODELS = ["model/flex/flag.xml", "model/flex/trampoline.xml", "model/flex/pancake.xml",
          "model/flex/basket.xml", "model/flex/pulley.xml", "model/flex/plate.xml",
          "model/flex/pinch.xml", "test/engine/testdata/sleep/flex_nocnstr.xml",
          "test/engine/testdata/sleep/flex_contact.xml",
          "model/flex/floppy.xml",   # 3D elasticity with Rayleigh damping, pinned on a hinge
          "model/flex/jelly.xml"]    # 3D elasticity and edge dampers
# kinematics and edge quantities only: rigid flexes (no flex forces without contacts)
MODELS_3D = ["test/user/testdata/rigid_flex.xml"]


def _pair(path):
  m = load_flex_model(os.path.join(ROOT, path))
  mjm = mujoco.MjModel.from_xml_path(os.path.join(ROOT, path))
  m.opt.disableflags = m.opt.disableflags | _CONTACT
  mjm.opt.disableflags |= _CONTACT
  return m, numjoco.make_data(m), mjm, mujoco.MjData(mjm)


def _close(ours, ref, what, tol):
  ours, ref = np.asarray(ours, float), np.asarray(ref, float)
  assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs {ref.shape}"
  scale = max(1.0, float(np.abs(ref).max(initial=0)))
  np.testing.assert_allclose(ours, ref, rtol=0, atol=tol * scale, err_msg=what)


def _states(mjm, mjd, n=4, every=40, seed=0):
  """4.0's own trajectory from reset, with a random velocity kick so that dampers act."""
  rng = np.random.default_rng(seed)
  for k in range(n):
    for _ in range(every):
      mujoco.mj_step(mjm, mjd)
    mjd.qvel[:] += 0.05 * rng.standard_normal(mjm.nv)
    mujoco.mj_forward(mjm, mjd)
    yield k


def copy_state(d, mjd):
  """4.0's state into ours: qpos, qvel, act, ctrl, mocap poses, time, qacc_warmstart."""
  for f in ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "qacc_warmstart"):
    getattr(d, f)[:] = getattr(mjd, f)
  d.time = mjd.time


def _compare_stages(m, d, mjm, mjd, what, dynamics=True):
  _close(d.flexvert_xpos, mjd.flexvert_xpos, f"{what} flexvert_xpos", 1e-12)
  _close(d.flexelem_aabb, mjd.flexelem_aabb, f"{what} flexelem_aabb", 1e-12)
  _close(d.flexedge_length, mjd.flexedge_length, f"{what} flexedge_length", 1e-12)
  _close(d.flexedge_J, mjd.flexedge_J, f"{what} flexedge_J", 1e-12)
  _close(d.flexedge_velocity, mjd.flexedge_velocity, f"{what} flexedge_velocity", 1e-12)
  if not dynamics:
    return
  _close(d.qfrc_spring, mjd.qfrc_spring, f"{what} qfrc_spring", 1e-9)
  _close(d.qfrc_damper, mjd.qfrc_damper, f"{what} qfrc_damper", 1e-9)
  _close(d.qfrc_passive, mjd.qfrc_passive, f"{what} qfrc_passive", 1e-9)
  assert d.nefc == mjd.nefc, f"{what} nefc {d.nefc} vs {mjd.nefc}"
  _close(d.efc_pos[:d.nefc], mjd.efc_pos, f"{what} efc_pos", 1e-12)
  _close(d.efc_diagA[:d.nefc], mjd.efc_diagA, f"{what} efc_diagA", 1e-9)
  _close(d.efc_R[:d.nefc], mjd.efc_R, f"{what} efc_R", 1e-9)
  _close(d.qacc, mjd.qacc, f"{what} qacc", 1e-6)


def _sizes_used(m, mjm):
  assert (m.nflex, m.nflexvert, m.nflexedge, m.nJfe) == (
      mjm.nflex, mjm.nflexvert, mjm.nflexedge, mjm.nJfe)


@pytest.mark.parametrize("path", MODELS)
def test_teacher_forced(path):
  m, d, mjm, mjd = _pair(path)
  _sizes_used(m, mjm)
  forces = 0.0
  for k in _states(mjm, mjd):
    copy_state(d, mjd)
    numjoco.forward(m, d)
    _compare_stages(m, d, mjm, mjd, f"{path} state {k}")
    forces += float(np.abs(mjd.qfrc_passive).sum() + mjd.nefc)
  assert forces > 0, "nothing flex-specific happened along the trajectory"


@pytest.mark.parametrize("path", MODELS_3D)
def test_teacher_forced_3d_kinematics(path):
  m, d, mjm, mjd = _pair(path)
  for k in _states(mjm, mjd, n=2):
    copy_state(d, mjd)
    numjoco.forward(m, d)
    _compare_stages(m, d, mjm, mjd, f"{path} state {k}", dynamics=False)


# ------------------------------------------------------------------ models load_model accepts

_CLOTH = """<mujoco><option timestep="0.002" integrator="{integrator}"/><worldbody>
  <body name="pin" pos="0 0 1"><geom type="box" size=".05 .05 .05" contype="0" conaffinity="0"/>
  </body>
  <flexcomp name="cloth" type="grid" dim="2" count="6 5 1" spacing=".05 .05 .05" pos="0 0 .8"
            mass=".5" radius=".005">
    <contact contype="0" conaffinity="0"/>
    {body}
    <pin id="0 1"/>
  </flexcomp></worldbody></mujoco>"""
_ELASTIC = '<elasticity young="3e4" poisson=".2" thickness=".005" damping=".002"/>'
_EQUALITY = '<edge equality="true"/>'
_CABLE = """<mujoco><option timestep="0.002" integrator="{integrator}"/><worldbody>
  <flexcomp name="cable" type="grid" dim="1" count="8 1 1" spacing=".06 .06 .06" pos="0 0 1"
            mass=".3" radius=".005">
    <contact contype="0" conaffinity="0"/>
    <edge stiffness="200" damping=".5"/>
    <pin id="0"/>
  </flexcomp></worldbody></mujoco>"""
# a soft block hanging from two pinned corners: tetrahedral elasticity with Rayleigh damping
_BLOCK = """<mujoco><option timestep="0.002" integrator="{integrator}"/><worldbody>
  <flexcomp name="block" type="grid" dim="3" count="3 3 3" spacing=".05 .05 .05" pos="0 0 1"
            mass=".5" radius=".002">
    <contact contype="0" conaffinity="0"/>
    <elasticity young="2e3" poisson=".3" damping=".002"/>
    <pin id="0 2"/>
  </flexcomp></worldbody></mujoco>"""
SNIPPETS = {
    "cloth-elastic": _CLOTH.replace("{body}", _ELASTIC),
    "cloth-equality": _CLOTH.replace("{body}", _EQUALITY),
    "cable-springs": _CABLE,
    "block-elastic": _BLOCK,
}


# (4.0 refuses flex elasticity under implicit/implicitfast: tests/test_flex_compile.py)
TRAJECTORIES = [(n, i) for n in SNIPPETS for i in ("Euler", "implicitfast", "RK4")
                if not ("elastic" in n and i == "implicitfast")]


@pytest.mark.parametrize("name,integrator", TRAJECTORIES)
def test_trajectory(name, integrator):
  """numjoco.load_model loads these (no flex collisions); 300 steps from a kicked state follow
  4.0's within 1e-8 (qpos, qvel) and 1e-6 relative (qacc)."""
  xml = SNIPPETS[name].replace("{integrator}", integrator)
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(1)
  kick = 0.3 * rng.standard_normal(mjm.nv)
  d.qvel[:] = kick
  mjd.qvel[:] = kick
  moved = 0.0
  for i in range(300):
    numjoco.step(m, d)
    mujoco.mj_step(mjm, mjd)
    _close(d.qpos, mjd.qpos, f"{name} step {i} qpos", 1e-8)
    _close(d.qvel, mjd.qvel, f"{name} step {i} qvel", 1e-8)
    # (after an RK4 step 4.0's qacc is the step's combined acceleration, not a stage's)
    _close(d.qacc, mjd.qacc, f"{name} step {i} qacc", 1e-6)
    moved = max(moved, float(np.abs(mjd.qpos - mjm.qpos0).max()))
  assert moved > 0.05, "the flex barely moved: the comparison would prove little"
  assert d.nefc == mjd.nefc


_SPLIT = """<mujoco><option gravity="0 0 0" timestep="0.001"/><worldbody>
  <flexcomp type="grid" count="{count}" spacing=".1 .1 .1" name="s" dim="{dim}" mass="1"
            radius=".001"><contact contype="0" conaffinity="0"/>
    <elasticity young="5e4" damping=".002" poisson=".2" {extra}/></flexcomp></worldbody></mujoco>"""


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("disable", ["", "spring", "damper"])
def test_stretch_spring_and_damper(dim, disable):
  """Element stretch of triangles and tetrahedra at a random deformed, moving state: the spring
  part in qfrc_spring and the Rayleigh damping part in qfrc_damper, each switched off by its
  disable flag, as 4.0 splits them (the Aug-2026 source put both in qfrc_spring)."""
  xml = _SPLIT.format(count="3 3 3" if dim == 3 else "3 3 1", dim=dim,
                      extra='thickness=".01" elastic2d="stretch"' if dim == 2 else "")
  m = numjoco.load_model(xml)
  mjm = mujoco.MjModel.from_xml_string(xml)
  if disable:
    bit = getattr(mujoco.mjtDisableBit, "mjDSBL_" + disable.upper())
    m.opt.disableflags = m.opt.disableflags | int(bit)
    mjm.opt.disableflags |= bit
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  rng = np.random.default_rng(dim)
  mjd.qpos[:] = mjm.qpos0 + 0.01 * rng.standard_normal(mjm.nq)
  mjd.qvel[:] = 0.1 * rng.standard_normal(mjm.nv)
  mujoco.mj_forward(mjm, mjd)
  copy_state(d, mjd)
  numjoco.forward(m, d)
  assert (np.abs(mjd.qfrc_spring).max() > 1) == (disable != "spring")
  assert (np.abs(mjd.qfrc_damper).max() > 0.01) == (disable != "damper")
  for name in ("qfrc_spring", "qfrc_damper", "qfrc_passive", "qacc"):
    _close(getattr(d, name), getattr(mjd, name), f"dim {dim} {name}", 1e-9)


_FLEXCOMP = """<mujoco><worldbody><flexcomp name="f" type="grid" dim="{dim}" count="3 3 {nz}"
  spacing=".1 .1 .1" mass="1" {extra}>{inner}</flexcomp></worldbody></mujoco>"""
_OFF = '<contact contype="0" conaffinity="0"/>'
REFUSED = {
    "1D elasticity": (_FLEXCOMP.replace('count="3 3 {nz}"', 'count="5 1 1"').format(
        dim=1, extra='radius=".001"', inner=_OFF + '<elasticity young="1e4"/>'),
        "1D flex \\(rod\\) elasticity"),
    "interpolated": (_FLEXCOMP.format(dim=3, nz=3, extra='dof="trilinear"', inner=_OFF.replace(
        "/>", ' selfcollide="none"/>')),
                     "interpolated flexes"),
    "discrete": (_FLEXCOMP.format(dim=3, nz=3, extra="", inner=_OFF + '<elasticity young="1e3"/>')
                 .replace("<worldbody>", '<option integrator="discrete"/><worldbody>'),
                 "flex elasticity under the discrete integrator"),
    "passive contact": (_FLEXCOMP.format(dim=2, nz=1, extra="", inner=(
        '<contact passive="true"/><edge equality="true"/>')).replace(
            "<worldbody>", '<option integrator="discrete"/><worldbody>'),
        "passive flex contact"),
    "libccd geom": (_FLEXCOMP.format(dim=2, nz=1, extra="", inner=(
        '<contact selfcollide="none"/><edge equality="true"/>')).replace(
            "<worldbody>", '<option><flag nativeccd="disable"/></option><worldbody>'
            '<geom type="cylinder" size=".1 .1" pos="0 0 -.2"/>'),
        "flex collisions through libccd"),
    "libccd self": (_FLEXCOMP.format(dim=2, nz=1, extra="", inner='<edge equality="true"/>')
                    .replace("<worldbody>", '<option><flag nativeccd="disable"/></option>'
                             '<worldbody>'),
                    "flex self-collisions through libccd"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused(name):
  """What is not simulated yet is a load error naming the flexcomp, not a wrong motion."""
  xml, words = REFUSED[name]
  mujoco.MjModel.from_xml_string(xml)    # 4.0 loads it: the refusal is ours
  with pytest.raises(MjcfError, match=words) as e:
    numjoco.load_model(xml)
  assert "<flexcomp" in str(e.value) and 'name="f"' in str(e.value)
