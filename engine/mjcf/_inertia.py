"""Inertias for the MJCF compiler: the principal frame of a full inertia (eig3, as MuJoCo's
compiler diagonalises body and mesh inertias), the volume and inertia of primitive geoms, and
the ellipsoid fluid model's coefficients (geom_fluid), each following MuJoCo's compiler (its
function named in each docstring) in its order of operations.
"""
import math

from numjoco.engine.rotation import EPS, quat2mat, quat_mul


def _normvec4(r):
  """mjuu_normvec(q, 4) as mjuu_eig3 evaluates it inline: the squared norm summed from 0,
  nothing done below 1e-14 or when the norm is within 1e-14 of 1, else divided."""
  nrm = (((0.0 + r[0] * r[0]) + r[1] * r[1]) + r[2] * r[2]) + r[3] * r[3]
  if not nrm < 1e-14:
    s = math.sqrt(nrm)
    if abs(s - 1.0) > 1e-14:
      r = [r[0] / s, r[1] / s, r[2] / s, r[3] / s]
  return r


def eig3(mat, tol):
  """Jacobi eigen-decomposition of a symmetric 3x3 matrix as MuJoCo's compiler does it
  (mjuu_eig3, bit for bit: tests/test_mjcf_compile.py test_eig3_as_mujoco): (eigenvalues in
  decreasing order, quat of the principal frame). The compiler calls it with tol 1e-7 for
  meshes, 4e-15 for body inertias.

  It stops when the largest off-diagonal of the rotated matrix is at most
  max(4e-15, tol) * max|mat| (all nine entries of the input), or after 500 rotations. Each
  rotation is the quaternion (cos, sin) of half the Jacobi angle, taken from that angle's
  tangent, not normalized before the product; the product is normalized twice. Eigenvalues
  closer than max(1e-12, tol) * max|mat| are not swapped by the sort."""
  m = [float(x) for x in mat]
  maxabs = 0.0
  for x in m:
    maxabs = abs(x) if abs(x) > maxabs else maxabs
  thr = (4e-15 if 4e-15 > tol else tol) * maxabs
  quat = [1.0, 0.0, 0.0, 0.0]
  eigval = [0.0, 0.0, 0.0]
  for _ in range(500):
    e = quat2mat(quat)
    t = [(e[r] * m[c] + e[3 + r] * m[3 + c]) + e[6 + r] * m[6 + c]     # e' mat
         for r in range(3) for c in range(3)]
    d = [(t[3 * r] * e[c] + t[3 * r + 1] * e[3 + c]) + t[3 * r + 2] * e[6 + c]   # e' mat e
         for r in range(3) for c in range(3)]
    eigval = [d[0], d[4], d[8]]
    if abs(d[1]) > abs(d[2]) and abs(d[1]) > abs(d[5]):
      rk, ck, rotk = 0, 1, 2
    elif abs(d[2]) > abs(d[5]):
      rk, ck, rotk = 0, 2, 1
    else:
      rk, ck, rotk = 1, 2, 0
    off = d[3 * rk + ck]
    if thr >= abs(off):
      break
    tau = (d[4 * ck] - d[4 * rk]) / (off + off)
    s = math.sqrt(1.0 + tau * tau)
    tn = 1.0 / (tau + s) if tau >= 0.0 else -1.0 / (s - tau)
    h = tn / (1.0 + math.sqrt(1.0 + tn * tn))     # tan of the half angle
    ch = 1.0 / math.sqrt(1.0 + h * h)
    if rotk != 1:
      h = -h
    rot = [ch, 0.0, 0.0, 0.0]
    rot[rotk + 1] = h * ch
    quat = _normvec4(_normvec4(quat_mul(quat, rot).tolist()))
  # sort in decreasing order (pairs 0-1, 1-2, 0-1), turning the frame 90 degrees per swap
  eps = (1e-12 if 1e-12 > tol else tol) * maxabs
  for j in range(3):
    j1 = j % 2
    if eigval[j1 + 1] > eps + eigval[j1]:
      eigval[j1], eigval[j1 + 1] = eigval[j1 + 1], eigval[j1]
      rot = [0.707106781186548, 0.0, 0.0, 0.0]
      rot[(j1 + 2) % 3 + 1] = rot[0]
      quat = _normvec4(_normvec4(quat_mul(quat, rot).tolist()))
  return eigval, quat


def full_inertia(full):
  """(quat, diag inertia) of a full inertia [xx yy zz xy xz yz]; None if not positive.
  Diagonalised as MuJoCo's compiler diagonalises body inertias (eig3 with tol 4e-15)."""
  m = [full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]]
  eigval, quat = eig3(m, 4e-15)
  if eigval[2] < EPS:
    return None
  return quat, eigval


def global_inertia(local, quat):
  """Rotate a diagonal inertia by `quat` into a full inertia [xx yy zz xy xz yz]."""
  m = quat2mat(quat)
  t = [m[0] * local[0], m[3] * local[0], m[6] * local[0],
       m[1] * local[1], m[4] * local[1], m[7] * local[1],
       m[2] * local[2], m[5] * local[2], m[8] * local[2]]
  return [m[0] * t[0] + m[1] * t[3] + m[2] * t[6],
          m[3] * t[1] + m[4] * t[4] + m[5] * t[7],
          m[6] * t[2] + m[7] * t[5] + m[8] * t[8],
          m[0] * t[1] + m[1] * t[4] + m[2] * t[7],
          m[0] * t[2] + m[1] * t[5] + m[2] * t[8],
          m[3] * t[2] + m[4] * t[5] + m[5] * t[8]]


def offcenter(mass, v):
  """Parallel-axis term of a point mass at offset `v`, as [xx yy zz xy xz yz]."""
  return [mass * (v[1] * v[1] + v[2] * v[2]), mass * (v[0] * v[0] + v[2] * v[2]),
          mass * (v[0] * v[0] + v[1] * v[1]), -mass * v[0] * v[1], -mass * v[0] * v[2],
          -mass * v[1] * v[2]]


SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX = 2, 3, 4, 5, 6


def geom_volume(gtype, size, shell):
  """Volume (or surface area for shell inertia) of a primitive geom."""
  pi = math.pi
  r = size[0]
  if gtype == SPHERE:
    return 4 * pi * r * r if shell else 4 * pi * r * r * r / 3
  if gtype == CAPSULE:
    h = 2 * size[1]
    return 4 * pi * r * r + 2 * pi * r * h if shell else pi * (r * r * h + 4 * r * r * r / 3)
  if gtype == CYLINDER:
    h = 2 * size[1]
    return 2 * pi * r * r + 2 * pi * r * h if shell else pi * r * r * h
  if gtype == ELLIPSOID:
    if shell:
      p = 1.6075
      tmp = ((size[0] * size[1]) ** p + (size[1] * size[2]) ** p + (size[2] * size[0]) ** p)
      return 4 * pi * (tmp / 3) ** (1 / p)
    return 4 * pi * size[0] * size[1] * size[2] / 3
  if gtype == BOX:
    if shell:
      return 8 * (size[0] * size[1] + size[1] * size[2] + size[2] * size[0])
    return size[0] * size[1] * size[2] * 8
  return 0.0


def geom_inertia(gtype, size, mass, shell):
  """Diagonal inertia of a primitive geom of given mass, in the geom frame."""
  if gtype == SPHERE:
    v = 2 * mass * size[0] * size[0] / (3 if shell else 5)
    return [v, v, v]
  if gtype == CAPSULE:
    return _capsule_inertia(size, mass, shell)
  if gtype == CYLINDER:
    return _cylinder_inertia(size, mass, shell)
  if gtype == ELLIPSOID:
    return _ellipsoid_inertia(size, mass, shell)
  if gtype == BOX:
    return _box_inertia(size, mass, shell)
  return [0.0, 0.0, 0.0]


def _capsule_inertia(size, mass, shell):
  hh, h, r = size[1], 2 * size[1], size[0]
  if not shell:
    sm = mass * 4 * r / (4 * r + 3 * h)
    cm = mass - sm
    i0 = cm * (3 * r * r + h * h) / 12
    i2 = cm * r * r / 2
    si = 2 * sm * r * r / 5
    i0 += si + sm * h * (3 * r + 2 * h) / 8
    return [i0, i0, i2 + si]
  a_sph = 4 * math.pi * r * r
  a_cyl = 2 * math.pi * r * h
  sm = mass * a_sph / (a_sph + a_cyl)
  cm = mass - sm
  i0 = cm * (6 * r * r + h * h) / 12
  i2 = cm * r * r
  si = 2 * sm * r * r / 3
  hs_com = r / 2
  hs_pos = hh + hs_com
  i0 += si + sm * (hs_pos * hs_pos - hs_com * hs_com)
  return [i0, i0, i2 + si]


def _cylinder_inertia(size, mass, shell):
  hh, h, r = size[1], 2 * size[1], size[0]
  if not shell:
    i0 = mass * (3 * r * r + h * h) / 12
    return [i0, i0, mass * r * r / 2]
  a_disk = math.pi * r * r
  a_cyl = 2 * math.pi * r * h
  md = mass * a_disk / (2 * a_disk + a_cyl)
  mc = mass - 2 * md
  i0 = mc * (6 * r * r + h * h) / 12
  i2 = mc * r * r
  idx = md * r * r / 4 + md * hh * hh
  idz = md * r * r / 2
  return [i0 + 2 * idx, i0 + 2 * idx, i2 + 2 * idz]


def _ellipsoid_inertia(size, mass, shell):
  s00, s11, s22 = size[0] * size[0], size[1] * size[1], size[2] * size[2]
  if not shell:
    return [mass * (s11 + s22) / 5, mass * (s00 + s22) / 5, mass * (s00 + s11) / 5]
  eps = 1e-6
  va = 4 * math.pi * size[0] * size[1] * size[2] / 3
  ae, be, ce = size[0] + eps, size[1] + eps, size[2] + eps
  vb = 4 * math.pi * ae * be * ce / 3
  dens = mass / (vb - va)
  ma, mb = va * dens, vb * dens
  ia = [ma * (s11 + s22) / 5, ma * (s00 + s22) / 5, ma * (s00 + s11) / 5]
  ib = [mb * (be * be + ce * ce) / 5, mb * (ae * ae + ce * ce) / 5, mb * (ae * ae + be * be) / 5]
  return [ib[0] - ia[0], ib[1] - ia[1], ib[2] - ia[2]]


def _box_inertia(size, mass, shell):
  s00, s11, s22 = size[0] * size[0], size[1] * size[1], size[2] * size[2]
  if not shell:
    return [mass * (s11 + s22) / 3, mass * (s00 + s22) / 3, mass * (s00 + s11) / 3]
  lx, ly, lz = 2 * size[0], 2 * size[1], 2 * size[2]
  a0, a1, a2 = lx * ly, ly * lz, lz * lx
  at = 2 * (a0 + a1 + a2)
  m0, m1, m2 = mass * a0 / at, mass * a1 / at, mass * a2 / at
  ix0, iy0, iz0 = m0 * ly * ly / 12, m0 * lx * lx / 12, m0 * (lx * lx + ly * ly) / 12
  ix1, iy1, iz1 = m1 * (ly * ly + lz * lz) / 12, m1 * lz * lz / 12, m1 * ly * ly / 12
  ix2, iy2, iz2 = m2 * lz * lz / 12, m2 * (lx * lx + lz * lz) / 12, m2 * lx * lx / 12
  return [2 * (m0 * s22 + m2 * s11 + ix0 + ix1 + ix2),
          2 * (m0 * s22 + m1 * s00 + iy0 + iy1 + iy2),
          2 * (m1 * s00 + m2 * s11 + iz0 + iz1 + iz2)]


# Gauss-Kronrod (K15) quadrature of the added-mass integral, mapped onto [0, inf).
_KR_W = (0.01146766, 0.03154605, 0.05239501, 0.07032663, 0.08450236, 0.09517529, 0.10221647,
         0.10474107, 0.10221647, 0.09517529, 0.08450236, 0.07032663, 0.05239501, 0.03154605,
         0.01146766)
_KR_L = (7.865151709349917e-08, 1.7347976913907274e-05, 0.0003548008144506193,
         0.002846636252924549, 0.014094260903596077, 0.053063261727396636, 0.17041978741317773,
         0.5, 1.4036301548686991, 3.9353484827022642, 11.644841677041734, 39.53187807410903,
         177.5711362220801, 1429.4772912937397, 54087.416549217705)
_KR_D = (5.538677720489877e-05, 0.002080868285293228, 0.016514126520723166, 0.07261900344370877,
         0.23985243401862602, 0.6868318249020725, 1.8551129519182894, 5.0, 14.060031152313941,
         43.28941239611009, 156.58546376397112, 747.9826085305024, 5827.4042950027115,
         116754.0197944512, 25482945.327264845)


def _kappa(dx, dy, dz):
  ix, iy, iz = 1.0 / (dx * dx), 1.0 / (dy * dy), 1.0 / (dz * dz)
  scale = (dx * dx * dx * dy * dz) ** 0.4
  kappa = 0.0
  for w, l, d in zip(_KR_W, _KR_L, _KR_D):
    lam = scale * l
    denom = (1 + lam * ix) * math.sqrt((1 + lam * ix) * (1 + lam * iy) * (1 + lam * iz))
    kappa += scale * d / denom * w
  return kappa * ix


def fluid_params(gtype, size, coefs):
  """geom_fluid row for fluidshape='ellipsoid': [1, 5 coefs, virtual mass x3, inertia x3]."""
  if gtype == SPHERE:
    dx = dy = dz = size[0]
  elif gtype == CAPSULE:
    dx, dy, dz = size[0], size[0], size[1] + size[0]
  elif gtype == CYLINDER:
    dx, dy, dz = size[0], size[0], size[1]
  else:
    dx, dy, dz = size[0], size[1], size[2]
  vol = 4.0 / 3.0 * math.pi * dx * dy * dz
  kx, ky, kz = _kappa(dx, dy, dz), _kappa(dy, dz, dx), _kappa(dz, dx, dy)

  def fac(a, b, ka, kb):
    return (a * a - b * b) ** 2 * abs(kb - ka) / max(
        EPS, abs(2 * (a * a - b * b) + (a * a + b * b) * (ka - kb)))

  ixf, iyf, izf = fac(dy, dz, ky, kz), fac(dz, dx, kz, kx), fac(dx, dy, kx, ky)
  vmass = [vol * k / max(EPS, 2 - k) for k in (kx, ky, kz)]
  vinert = [vol * f / 5 for f in (ixf, iyf, izf)]
  return [1.0] + list(coefs) + vmass + vinert
