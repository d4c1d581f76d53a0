"""Quaternion, rotation and spatial-algebra helpers (@njit, scalar locals, no allocation).
Code that runs as plain Python (the MJCF compiler, the preview, the viewer) uses
engine/rotation.py instead.

Spatial vectors are MuJoCo's (rot:lin) 6-vectors; cinert is MuJoCo's 10-number layout
(I00 I11 I22 I01 I02 I12, m*com[3], m).
"""
import math


from numjoco.engine._jit import inline as _jit, jit


@_jit
def quat_mul(a0, a1, a2, a3, b0, b1, b2, b3):
  """Hamilton product a*b of two quaternions (w, x, y, z).

  The sums are grouped as MuJoCo's compiled mju_mulQuat adds them (pairs, then the
  pairs), so the product agrees with MuJoCo's bit for bit.
  """
  return ((a0 * b0 - a1 * b1) + ((-a2) * b2 + (-a3) * b3),
          (a0 * b1 + a1 * b0) + (a2 * b3 + (-a3) * b2),
          (a0 * b2 - a1 * b3) + (a2 * b0 + a3 * b1),
          (a0 * b3 + a1 * b2) + ((-a2) * b1 + a3 * b0))


@_jit
def quat_normalize(q0, q1, q2, q3):
  """Unit quaternion as MuJoCo's mju_normalize4, bit for bit.

  (1,0,0,0) when the norm is below mjMINVAL; q times 1/norm when the norm is more than
  mjMINVAL away from 1; q unchanged otherwise.
  """
  n = math.sqrt((q0 * q0 + q1 * q1) + (q2 * q2 + q3 * q3))
  if n < 1e-15:
    return 1.0, 0.0, 0.0, 0.0
  if abs(n - 1.0) > 1e-15:
    inv = 1.0 / n
    return q0 * inv, q1 * inv, q2 * inv, q3 * inv
  return q0, q1, q2, q3


@_jit
def quat_rot(q0, q1, q2, q3, v0, v1, v2):
  """Rotate vector v by unit quaternion q (MuJoCo's mju_rotVecQuat)."""
  if v0 == 0.0 and v1 == 0.0 and v2 == 0.0:
    return 0.0, 0.0, 0.0
  # tmp = w*v + q_vec x v ; res = v + 2 * q_vec x tmp
  t0 = q0 * v0 + q2 * v2 - q3 * v1
  t1 = q0 * v1 + q3 * v0 - q1 * v2
  t2 = q0 * v2 + q1 * v1 - q2 * v0
  return (v0 + 2.0 * (q2 * t2 - q3 * t1),
          v1 + 2.0 * (q3 * t0 - q1 * t2),
          v2 + 2.0 * (q1 * t1 - q2 * t0))


@jit
def quat2mat(out, q0, q1, q2, q3):
  """Write the row-major 3x3 rotation matrix of unit quaternion q into out[0:9] (mju_quat2Mat)."""
  if q0 == 1.0 and q1 == 0.0 and q2 == 0.0 and q3 == 0.0:
    for k in range(9):
      out[k] = 0.0
    out[0] = out[4] = out[8] = 1.0
    return
  q00 = q0 * q0; q01 = q0 * q1; q02 = q0 * q2; q03 = q0 * q3
  q11 = q1 * q1; q12 = q1 * q2; q13 = q1 * q3
  q22 = q2 * q2; q23 = q2 * q3; q33 = q3 * q3
  # the diagonal grouped as MuJoCo's compiled mju_quat2Mat (bit for bit)
  out[0] = (q00 - q22) + (q11 - q33)
  out[4] = (q00 + q22) - (q11 + q33)
  out[8] = (q00 - q22) - (q11 - q33)
  out[1] = 2 * (q12 - q03)
  out[2] = 2 * (q13 + q02)
  out[3] = 2 * (q12 + q03)
  out[5] = 2 * (q23 - q01)
  out[6] = 2 * (q13 - q02)
  out[7] = 2 * (q23 + q01)


@_jit
def axis_angle_quat(a0, a1, a2, angle):
  """Quaternion of a rotation by `angle` about unit axis a."""
  s = math.sin(angle * 0.5)
  return math.cos(angle * 0.5), a0 * s, a1 * s, a2 * s


@_jit
def normalize3(x, y, z):
  """mju_normalize3: (x, y, z) times 1/norm; (1, 0, 0) when the norm is below mjMINVAL."""
  n = math.sqrt(x * x + y * y + z * z)
  if n < 1e-15:
    return 1.0, 0.0, 0.0
  inv = 1.0 / n
  return x * inv, y * inv, z * inv


@_jit
def mat_vec(mat, v0, v1, v2):
  """mat (row-major 9-array) times v."""
  return (mat[0] * v0 + mat[1] * v1 + mat[2] * v2,
          mat[3] * v0 + mat[4] * v1 + mat[5] * v2,
          mat[6] * v0 + mat[7] * v1 + mat[8] * v2)


@_jit
def mat_t_vec(mat, v0, v1, v2):
  """Transpose of mat (row-major 9-array) times v."""
  return (mat[0] * v0 + mat[3] * v1 + mat[6] * v2,
          mat[1] * v0 + mat[4] * v1 + mat[7] * v2,
          mat[2] * v0 + mat[5] * v1 + mat[8] * v2)


@_jit
def cross(a0, a1, a2, b0, b1, b2):
  """a x b."""
  return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@_jit
def quat2vel(q0, q1, q2, q3, dt):
  """3D velocity that rotates by unit quaternion q in time dt (mju_quat2Vel, bit for bit):
  the normalised axis times the angle (wrapped to (-pi, pi]) over dt."""
  a0, a1, a2 = normalize3(q1, q2, q3)
  s = math.sqrt(q1 * q1 + q2 * q2 + q3 * q3)
  speed = 2.0 * math.atan2(s, q0)
  if speed > math.pi:
    speed -= 2.0 * math.pi
  speed /= dt
  return a0 * speed, a1 * speed, a2 * speed


@jit
def quat_integrate(q, adr, w0, w1, w2, scale):
  """q[adr:adr+4] <- q * exp(w*scale/2), normalised (MuJoCo's mju_quatIntegrate)."""
  a0, a1, a2 = normalize3(w0, w1, w2)
  angle = scale * math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
  r0, r1, r2, r3 = axis_angle_quat(a0, a1, a2, angle)
  p0, p1, p2, p3 = quat_normalize(q[adr], q[adr + 1], q[adr + 2], q[adr + 3])
  p0, p1, p2, p3 = quat_mul(p0, p1, p2, p3, r0, r1, r2, r3)
  p0, p1, p2, p3 = quat_normalize(p0, p1, p2, p3)
  q[adr], q[adr + 1], q[adr + 2], q[adr + 3] = p0, p1, p2, p3


@jit
def mul_inert_vec(out, i, v):
  """out[0:6] = cinert i (10-array) times spatial motion vector v. The inputs are read before
  `out` is written (out must not overlap them), so no store forces them to be loaded again."""
  i0, i1, i2, i3, i4 = i[0], i[1], i[2], i[3], i[4]
  i5, i6, i7, i8, i9 = i[5], i[6], i[7], i[8], i[9]
  v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
  out[0] = i0 * v0 + i3 * v1 + i4 * v2 - i8 * v4 + i7 * v5
  out[1] = i3 * v0 + i1 * v1 + i5 * v2 + i8 * v3 - i6 * v5
  out[2] = i4 * v0 + i5 * v1 + i2 * v2 - i7 * v3 + i6 * v4
  out[3] = i8 * v1 - i7 * v2 + i9 * v3
  out[4] = i6 * v2 - i8 * v0 + i9 * v4
  out[5] = i7 * v0 - i6 * v1 + i9 * v5


@jit
def cross_motion(out, vel, v):
  """out[0:6] = vel x v for spatial motion vectors (inputs read first; out must not overlap
  them)."""
  w0, w1, w2, w3, w4, w5 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
  v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
  out[0] = -w2 * v1 + w1 * v2
  out[1] = w2 * v0 - w0 * v2
  out[2] = -w1 * v0 + w0 * v1
  out[3] = -w2 * v4 + w1 * v5 - w5 * v1 + w4 * v2
  out[4] = w2 * v3 - w0 * v5 + w5 * v0 - w3 * v2
  out[5] = -w1 * v3 + w0 * v4 - w4 * v0 + w3 * v1


@jit
def cross_force_add(out, vel, f):
  """out[0:6] += vel x* f (spatial force cross product; inputs read first, out must not
  overlap them)."""
  w0, w1, w2, w3, w4, w5 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
  f0, f1, f2, f3, f4, f5 = f[0], f[1], f[2], f[3], f[4], f[5]
  out[0] += -w2 * f1 + w1 * f2 - w5 * f4 + w4 * f5
  out[1] += w2 * f0 - w0 * f2 + w5 * f3 - w3 * f5
  out[2] += -w1 * f0 + w0 * f1 - w4 * f3 + w3 * f4
  out[3] += -w2 * f4 + w1 * f5
  out[4] += w2 * f3 - w0 * f5
  out[5] += -w1 * f3 + w0 * f4


@_jit
def dot6(a, b):
  """Dot product of two 6-vectors."""
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@_jit
def sub_quat4(a0, a1, a2, a3, b0, b1, b2, b3):
  """3D velocity that rotates quaternion b into a in unit time (mju_subQuat, bit for bit)."""
  d0, d1, d2, d3 = quat_mul(b0, -b1, -b2, -b3, a0, a1, a2, a3)
  return quat2vel(d0, d1, d2, d3, 1.0)


@jit
def sub_quat(qa, ia, qb, ib):
  """sub_quat4 of the quaternions qa[ia:ia+4] and qb[ib:ib+4]."""
  return sub_quat4(qa[ia], qa[ia + 1], qa[ia + 2], qa[ia + 3],
                   qb[ib], qb[ib + 1], qb[ib + 2], qb[ib + 3])
