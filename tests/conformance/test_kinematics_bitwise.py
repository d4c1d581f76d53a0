"""Kinematics equal to MuJoCo's bit for bit (not within a tolerance).

GJK on smooth or nearly parallel shapes branches on the last bits of the geom poses: MuJoCo's own
mjc_ccd moves a capsule-cylinder contact by 1e-6..1e-5 when one entry of a geom_xmat changes by
one ulp. Following MuJoCo's contacts in forward dynamics therefore needs its poses exactly, which
needs the quaternion and rotation helpers to add their terms in the order MuJoCo's compiled code
does (engine/math.py). Here: mj_kinematics against ours on the same state, every pose field
compared with ==; and the helpers against their mju_* twins on random input."""
import os

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine import interop, smooth
from tests.models import models_named, random_state

_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "assets", "mujoco_models")
POSE_FIELDS = ["xpos", "xquat", "xmat", "xanchor", "xaxis", "xipos", "ximat", "geom_xpos",
               "geom_xmat", "site_xpos", "site_xmat"]
# compiled frames the kinematics start from; those from an eigen-decomposition (body_iquat,
# mesh geoms' frames) are bit for bit since the compiler's eig3 follows MuJoCo's binary
_FRAME_INPUTS = ["body_pos", "body_quat", "body_ipos", "body_iquat", "geom_pos", "geom_quat",
                 "site_pos", "site_quat"]
MODELS = ["cartpole", "acrobot", "swimmer", "fish", "cheetah", "walker", "humanoid",
          "humanoid_CMU", "quadruped", "dog",
          "test/user/testdata/robot_arm.xml",
          "test/engine/testdata/collision_convex/perf/mixed.xml",
          "model/humanoid/22_humanoids.xml",
          # <replicate>: frames as MuJoCo accumulates them (engine/mjcf/_replicate.py)
          "model/replicate/leaves.xml", "model/replicate/helix.xml",
          "model/humanoid/100_humanoids.xml"]


@pytest.mark.parametrize("name", MODELS)
def test_kinematics_bit_for_bit(name):
  m, mjm = models_named(name)
  for f in _FRAME_INPUTS:
    ours, theirs = getattr(m, f), getattr(mjm, f)
    assert (ours.reshape(theirs.shape) == theirs).all(), f"{name}: compiled {f} differs"
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  for seed in range(3):
    random_state(mjm, mjd, seed, scale=0.5)
    if mjm.nmocap:
      rng = np.random.default_rng(seed)
      mjd.mocap_pos[:] += rng.normal(size=mjd.mocap_pos.shape) * 0.1
      mjd.mocap_quat[:] = rng.normal(size=mjd.mocap_quat.shape)
    interop.data_from_mujoco(mjd, d)
    mujoco.mj_kinematics(mjm, mjd)
    smooth.kinematics(m.struct, d.struct)
    for f in POSE_FIELDS:
      ours, theirs = getattr(d, f), getattr(mjd, f)
      differ = np.flatnonzero(ours.reshape(theirs.shape) != theirs)
      assert differ.size == 0, (f"{name} seed {seed}: {f} differs from MuJoCo's in "
                                f"{differ.size} entries, the largest by "
                                f"{np.abs(ours.reshape(theirs.shape) - theirs).max():.3g}")


def _random_quats(rng, n):
  q = rng.normal(size=(n, 4))
  q /= np.linalg.norm(q, axis=1, keepdims=True)
  q[::3] *= 1 + rng.normal(size=(len(q[::3]), 1)) * 1e-8     # not quite unit: normalize's branch
  q[1::7] *= 1 + rng.normal(size=(len(q[1::7]), 1)) * 1e-16  # within mjMINVAL of unit
  return q


def test_math_helpers_bit_for_bit():
  """Every quaternion helper the kinematics and integrators use equals its mju_* twin."""
  from numjoco.engine import constraint
  from numjoco.engine import math as mm
  rng = np.random.default_rng(0)
  qa, qb = _random_quats(rng, 2000), _random_quats(rng, 2000)
  vs, ws = rng.normal(size=(2000, 3)), rng.normal(size=(2000, 3))
  for a, b, v, w in zip(qa, qb, vs, ws):
    r4, r3, r9 = np.zeros(4), np.zeros(3), np.zeros(9)
    mujoco.mju_mulQuat(r4, a, b)
    assert tuple(r4) == mm.quat_mul(*a, *b), ("mulQuat", a, b)
    r4[:] = a
    mujoco.mju_normalize4(r4)
    assert tuple(r4) == mm.quat_normalize(*a), ("normalize4", a)
    mujoco.mju_quat2Mat(r9, a)
    o9 = np.zeros(9)
    mm.quat2mat(o9, *a)
    assert np.array_equal(r9, o9), ("quat2Mat", a)
    mujoco.mju_rotVecQuat(r3, v, a)
    assert tuple(r3) == mm.quat_rot(*a, *v), ("rotVecQuat", a, v)
    mujoco.mju_mulMatVec3(r3, r9, v)
    assert tuple(r3) == mm.mat_vec(r9, *v), ("mulMatVec3", a, v)
    mujoco.mju_mulMatTVec3(r3, r9, v)
    assert tuple(r3) == mm.mat_t_vec(r9, *v), ("mulMatTVec3", a, v)
    axis = v / np.linalg.norm(v)
    mujoco.mju_axisAngle2Quat(r4, axis, w[0])
    assert tuple(r4) == mm.axis_angle_quat(*axis, w[0]), ("axisAngle2Quat", axis, w[0])
    r4[:] = a
    o4 = a.copy()
    mujoco.mju_quatIntegrate(r4, w, 0.01 * abs(v[0]))
    mm.quat_integrate(o4, 0, *w, 0.01 * abs(v[0]))
    assert np.array_equal(r4, o4), ("quatIntegrate", a, w)
    mujoco.mju_subQuat(r3, a, b)
    assert tuple(r3) == mm.sub_quat4(*a, *b), ("subQuat", a, b)
    mujoco.mju_quat2Vel(r3, a, 0.5 + abs(v[1]))
    assert tuple(r3) == mm.quat2vel(*a, 0.5 + abs(v[1])), ("quat2Vel", a)
    mujoco.mju_mulQuatAxis(r4, a, w)
    assert tuple(r4) == constraint._mul_quat_axis(*a, *w), ("mulQuatAxis", a, w)


def test_the_comparison_can_fail():
  """The old term order (the reference source's a0*b0 - a1*b1 - a2*b2 - a3*b3) differs from
  MuJoCo's in most random products: == is a real test here."""
  rng = np.random.default_rng(1)
  qa, qb = _random_quats(rng, 200), _random_quats(rng, 200)
  differ = 0
  for a, b in zip(qa, qb):
    r4 = np.zeros(4)
    mujoco.mju_mulQuat(r4, a, b)
    differ += r4[0] != a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
  assert differ > 20
