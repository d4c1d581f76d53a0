"""Quaternions, rotation matrices and frames for the code that runs as plain Python: the MJCF
compiler (engine/mjcf/), the preview's kinematics (engine/preview.py), engine/articulation.py
and the viewer's mouse perturbation (app/perturb.py). The compiled kernels' own helpers, on
scalars, are engine/math.py (imported as `mm`).

Quaternions are (w, x, y, z), matrices row-major 3x3 as nine numbers. Each function sums in
the order of the MuJoCo function it follows (named in its docstring), so compiled models agree
with MuJoCo's to the last few ulps. Quaternions and vectors are read as q[0]..q[3], v[0]..v[2]:
lists, tuples and 1-D arrays work; quat_mul and mulmatvec also take arrays of shape (4, n),
(9, n) and (3, n), one quaternion, matrix or vector per column (quat2mat_rows is quat2mat's
row-wise form). Plain Python and numpy, never compiled: the kernel cache's stamp leaves this
module out as it leaves out engine/mjcf/ (engine/_cache.py).
"""
import math

import numpy as np

from numjoco.engine.types import MINVAL

EPS = 1e-14        # mjEPS
FRAME_EPS = 1e-6   # frames closer than this are considered equal (sameframe detection)


def normvec(v, n=None):
  """Normalize the first `n` entries of `v` (all by default) in place unless their squared norm
  is below EPS or their norm within EPS of 1 (mjuu_normvec); return the norm (0 when below)."""
  n = len(v) if n is None else n
  nrm = 0.0
  for i in range(n):
    nrm += v[i] * v[i]
  if nrm < EPS:
    return 0.0
  nrm = math.sqrt(nrm)
  if abs(nrm - 1) > EPS:
    for i in range(n):
      v[i] /= nrm
  return nrm


def _quat2mat(q):
  q00, q01, q02, q03 = q[0] * q[0], q[0] * q[1], q[0] * q[2], q[0] * q[3]
  q11, q12, q13 = q[1] * q[1], q[1] * q[2], q[1] * q[3]
  q22, q23, q33 = q[2] * q[2], q[2] * q[3], q[3] * q[3]
  return [q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02),
          2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01),
          2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33]


def quat2mat(q):
  """Row-major 3x3 rotation matrix of unit quaternion `q` (mjuu_quat2mat), as a list."""
  if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
    return [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
  return _quat2mat(q)


def quat2mat_rows(q):
  """Row-major rotation matrices (n, 9) of unit quaternions q (n, 4): quat2mat's sums, row by
  row (the identity is not special-cased; its sums give it exactly)."""
  return np.stack(_quat2mat(q.T), 1)


def _quat_mul(a, b):
  return [a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
          a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
          a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]]


def quat_mul(a, b):
  """Quaternion product a * b as an array, not normalized (mju_mulQuat); (4, n) arrays give the
  products of their columns."""
  return np.array(_quat_mul(a, b))


def mulquat(a, b):
  """Quaternion product a * b as a list, normalized as MuJoCo's compiler does (mjuu_mulquat)."""
  r = _quat_mul(a, b)
  normvec(r)
  return r


def conj(q):
  """Conjugate of q (the inverse of a unit quaternion; mju_negQuat)."""
  return np.asarray(q, float) * [1, -1, -1, -1]


def normalize_quat(q):
  """q divided by its norm (summed left to right) as a tuple; (1, 0, 0, 0) when the norm is
  below mjMINVAL."""
  n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
  if n < MINVAL:
    return 1.0, 0.0, 0.0, 0.0
  return q[0] / n, q[1] / n, q[2] / n, q[3] / n


def axis_angle(axis, angle):
  """Unit quaternion of a rotation by `angle` about unit `axis` (mju_axisAngle2Quat), as an
  array."""
  s = math.sin(angle / 2)
  return np.array([math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s])


def rotvec(q):
  """Rotation vector (axis * angle, the angle wrapped to (-pi, pi]) of a unit quaternion, as
  mju_quat2Vel with dt = 1."""
  q = np.asarray(q, float)
  s = float(np.linalg.norm(q[1:]))
  if s == 0:
    return np.zeros(3)
  ang = 2 * math.atan2(s, q[0])
  if ang > math.pi:
    ang -= 2 * math.pi
  return q[1:] / s * ang


def mulmatvec(mat, v):
  """mat @ v for a row-major 3x3 matrix (mju_mulMatVec3's sums), as a list."""
  return [mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2],
          mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2],
          mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2]]


def cross(b, c):
  """Cross product b x c."""
  return [b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]]


def rot_vec_quat(v, q):
  """Vector `v` rotated by unit quaternion `q` (mju_rotVecQuat), as a list."""
  if v[0] == 0 and v[1] == 0 and v[2] == 0:
    return [0.0, 0.0, 0.0]
  if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
    return list(v)
  t = [q[0] * v[0] + q[2] * v[2] - q[3] * v[1],
       q[0] * v[1] + q[3] * v[0] - q[1] * v[2],
       q[0] * v[2] + q[1] * v[1] - q[2] * v[0]]
  return [v[0] + 2 * (q[2] * t[2] - q[3] * t[1]),
          v[1] + 2 * (q[3] * t[0] - q[1] * t[2]),
          v[2] + 2 * (q[1] * t[1] - q[2] * t[0])]


def frameaccum(pos, quat, cpos, cquat):
  """Compose frame (pos, quat) with child frame (cpos, cquat); returns the new (pos, quat)."""
  vec = mulmatvec(quat2mat(quat), cpos)
  return [pos[0] + vec[0], pos[1] + vec[1], pos[2] + vec[2]], mulquat(quat, cquat)


def z2quat(vec):
  """Quaternion rotating the z axis onto `vec`."""
  axis = cross([0.0, 0.0, 1.0], vec)
  s = normvec(axis)
  if s < 1e-10:
    axis = [1.0, 0.0, 0.0]
  ang = math.atan2(s, vec[2])
  sn = math.sin(ang / 2)
  return [math.cos(ang / 2), axis[0] * sn, axis[1] * sn, axis[2] * sn]


def frame2quat(x, y, z):
  """Quaternion of the frame with axes x, y, z (matrix columns)."""
  m = (x, y, z)
  q = [0.0] * 4
  if m[0][0] + m[1][1] + m[2][2] > 0:
    q[0] = 0.5 * math.sqrt(1 + m[0][0] + m[1][1] + m[2][2])
    q[1] = 0.25 * (m[1][2] - m[2][1]) / q[0]
    q[2] = 0.25 * (m[2][0] - m[0][2]) / q[0]
    q[3] = 0.25 * (m[0][1] - m[1][0]) / q[0]
  elif m[0][0] > m[1][1] and m[0][0] > m[2][2]:
    q[1] = 0.5 * math.sqrt(1 + m[0][0] - m[1][1] - m[2][2])
    q[0] = 0.25 * (m[1][2] - m[2][1]) / q[1]
    q[2] = 0.25 * (m[1][0] + m[0][1]) / q[1]
    q[3] = 0.25 * (m[2][0] + m[0][2]) / q[1]
  elif m[1][1] > m[2][2]:
    q[2] = 0.5 * math.sqrt(1 - m[0][0] + m[1][1] - m[2][2])
    q[0] = 0.25 * (m[2][0] - m[0][2]) / q[2]
    q[1] = 0.25 * (m[1][0] + m[0][1]) / q[2]
    q[3] = 0.25 * (m[2][1] + m[1][2]) / q[2]
  else:
    q[3] = 0.5 * math.sqrt(1 - m[0][0] - m[1][1] + m[2][2])
    q[0] = 0.25 * (m[0][1] - m[1][0]) / q[3]
    q[1] = 0.25 * (m[2][0] + m[0][2]) / q[3]
    q[2] = 0.25 * (m[2][1] + m[1][2]) / q[3]
  normvec(q)
  return q


def orientation(kind, vals, degree, seq):
  """Quaternion from an alternative orientation (axisangle/xyaxes/zaxis/euler); error str or q."""
  vals = [float(v) for v in vals]
  if kind == "axisangle":
    if degree:
      vals[3] = vals[3] / 180.0 * math.pi
    axis = vals[:3]
    if normvec(axis) < EPS:
      return "axisangle too small"
    a2 = vals[3] / 2
    return [math.cos(a2), math.sin(a2) * axis[0], math.sin(a2) * axis[1], math.sin(a2) * axis[2]]
  if kind == "xyaxes":
    x, y = vals[:3], vals[3:]
    if normvec(x) < EPS:
      return "xaxis too small"
    d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
    y = [y[0] - x[0] * d, y[1] - x[1] * d, y[2] - x[2] * d]
    if normvec(y) < EPS:
      return "yaxis too small"
    z = cross(x, y)
    if normvec(z) < EPS:
      return "cross(xaxis, yaxis) too small"
    return frame2quat(x, y, z)
  if kind == "zaxis":
    if normvec(vals) < EPS:
      return "zaxis too small"
    return z2quat(vals)
  # euler: lowercase letters rotate about moving axes, uppercase about fixed axes
  if degree:
    vals = [v / 180.0 * math.pi for v in vals]
  q = [1.0, 0.0, 0.0, 0.0]
  for i in range(3):
    rot = [math.cos(vals[i] / 2), 0.0, 0.0, 0.0]
    rot["xyz".index(seq[i].lower()) + 1] = math.sin(vals[i] / 2)
    q = mulquat(q, rot) if seq[i].islower() else mulquat(rot, q)
  normvec(q)
  return q


def is_same_vec(a, b):
  """True when positions a and b are closer than FRAME_EPS in every coordinate."""
  return all(abs(a[i] - b[i]) < FRAME_EPS for i in range(3))


def is_same_quat(a, b):
  """True when quaternions a and b (or a and -b) are closer than FRAME_EPS in every entry."""
  return (all(abs(a[i] - b[i]) < FRAME_EPS for i in range(4))
          or all(abs(a[i] + b[i]) < FRAME_EPS for i in range(4)))
