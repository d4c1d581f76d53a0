"""Flex elasticity coefficients at compile time, as MuJoCo 4.0 stores them.

Per triangle or tetrahedron the metric of edge-strain inner products (mjCFlex's
ComputeStiffness: 21 numbers, 24 per tetrahedron in 4.0), per interior edge the bending
stencil (17 numbers), per cell of an interpolated flex the linear-elastic stiffness matrix.
Where MuJoCo 4.0 differs from its published source, the rule is 4.0's (noted at each).
"""
import math

import numpy as np

from numjoco.engine import rotation

# tetrahedron faces and the two faces not adjacent to each edge (Stencil3D)
_TET_FACE = ((2, 1, 0), (0, 1, 3), (1, 2, 3), (2, 0, 3))
_TET_EDGE2FACE = ((2, 3), (1, 3), (2, 1), (1, 0), (0, 2), (0, 3))
_TRI_FACE = ((1, 2), (2, 0), (0, 1))


def _cross(a, b):
  """Cross product of 3-lists."""
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a, b):
  """Dot product of 3-lists."""
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _sub(a, b):
  """Difference of 3-lists."""
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _metric(basis, mu, la, nedge):
  """MetricTensor: upper triangle of mu tr(Ei Ej) + la tr(Ei) tr(Ej) over the edge bases."""
  tr = [basis[e][0] + basis[e][4] + basis[e][8] for e in range(nedge)]
  out = []
  for e1 in range(nedge):
    for e2 in range(e1, nedge):
      tee = 0.0
      for i in range(3):
        for j in range(3):
          tee += basis[e1][3 * i + j] * basis[e2][3 * j + i]
      out.append(mu * tee + la * tr[e2] * tr[e1])
  return out


def stiffness3d(vx, v, young, poisson):
  """ComputeStiffness<Stencil3D>: the 21 metric coefficients of one tetrahedron (MuJoCo 4.0
  stores 24 per element, the last 3 zero)."""
  x = [list(vx[i]) for i in v]
  volume = _dot(_cross(_sub(x[1], x[0]), _sub(x[2], x[0])), _sub(x[3], x[0])) / 6
  # Lame coefficients times the volume; MuJoCo 4.0's la is half its published source's
  mu = young / (2 * (1 + poisson)) * abs(volume)
  la = young * poisson / ((1 + poisson) * (1 - 2 * poisson)) * abs(volume) / 2
  basis = []
  for e in range(6):
    fl, fr = _TET_FACE[_TET_EDGE2FACE[e][0]], _TET_FACE[_TET_EDGE2FACE[e][1]]
    nl = _cross(_sub(x[fl[1]], x[fl[0]]), _sub(x[fl[2]], x[fl[0]]))
    nr = _cross(_sub(x[fr[1]], x[fr[0]]), _sub(x[fr[2]], x[fr[0]]))
    basis.append([(nl[i] * nr[j] + nr[i] * nl[j]) / (36 * 2 * volume * volume)
                  for i in range(3) for j in range(3)])
  return np.array(_metric(basis, mu, la, 6) + [0.0, 0.0, 0.0])


def stiffness2d(vx, v, young, poisson, thickness):
  """ComputeStiffness<Stencil2D>: the 6 metric coefficients of one triangle, in a block of
  21 as MuJoCo stores them."""
  x = [list(vx[i]) for i in v]
  nrm = _cross(_sub(x[1], x[0]), _sub(x[2], x[0]))
  volume = math.sqrt(_dot(nrm, nrm)) / 2
  # MuJoCo 4.0: shear modulus and half the plane-stress la, times area and thickness (its
  # published source has both 3D coefficients over a quarter of the area)
  mu = young / (2 * (1 + poisson)) * volume * thickness
  la = young * poisson / (1 - poisson * poisson) * volume * thickness / 2
  basis = []
  for e in range(3):
    fl, fr = _TRI_FACE[_TRI_FACE[e][0]], _TRI_FACE[_TRI_FACE[e][1]]
    el = _sub(x[fl[0]], x[fl[1]])
    er = _sub(x[fr[1]], x[fr[0]])
    normal = _cross(er, el)
    rotation.normvec(normal)
    bl, br = _cross(normal, el), _cross(er, normal)
    basis.append([(bl[i] * br[j] + br[i] * bl[j]) / (8 * volume * volume)
                  for i in range(3) for j in range(3)])
  out = np.zeros(21)
  out[:6] = _metric(basis, mu, la, 3)
  return out


def _cot(x, v0, v1, v2):
  """Cotangent of the angle at vertex v0 between edges to v1 and v2."""
  e1, e2 = _sub(x[v1], x[v0]), _sub(x[v2], x[v0])
  nrm = _cross(e1, e2)
  return _dot(e1, e2) / math.sqrt(_dot(nrm, nrm))


def _area(x, v):
  """Area of triangle v."""
  nrm = _cross(_sub(x[v[1]], x[v[0]]), _sub(x[v[2]], x[v[0]]))
  return math.sqrt(_dot(nrm, nrm)) / 2


def bending(vx, v, modulus):
  """ComputeBending: the 17 bending coefficients of one edge flap (zero on the boundary):
  the cotangent stencil (Wardetzky et al.) times the flap's bending stiffness, and the
  curved-reference coefficient."""
  out = np.zeros(17)
  if v[3] == -1:
    return out
  x = {i: list(vx[i]) for i in v}
  a01, a02 = _cot(x, v[0], v[1], v[2]), _cot(x, v[0], v[3], v[1])
  a03, a04 = _cot(x, v[1], v[2], v[0]), _cot(x, v[1], v[0], v[3])
  c = [a03 + a04, a01 + a02, -(a01 + a03), -(a02 + a04)]
  volume = _area(x, v) + _area(x, [v[1], v[0], v[3]])
  stiffness = modulus / volume
  e0, e1, e2 = _sub(x[v[1]], x[v[0]]), _sub(x[v[2]], x[v[0]]), _sub(x[v[3]], x[v[0]])
  e3, e4 = _sub(x[v[2]], x[v[1]]), _sub(x[v[3]], x[v[1]])
  t0 = [-(a03 * e1[k] + a01 * e3[k]) for k in range(3)]
  t1 = [-(a04 * e2[k] + a02 * e4[k]) for k in range(3)]
  sqr = _dot(e0, e0)
  cos_theta = -_dot(t0, t1) / sqr
  for i in range(4):
    for j in range(4):
      out[4 * i + j] += c[i] * c[j] * cos_theta * stiffness
  # MuJoCo 4.0's curved-reference coefficient (the Garg et al. term of its published source
  # differs): -stiffness det(e0, e1, e2) |e0|^4 / (|e0 x e1|^2 |e0 x e2|^2)
  n1, n2 = _cross(e0, e1), _cross(e0, e2)
  out[16] = -stiffness * _dot(n1, e2) * sqr * sqr / (_dot(n1, n1) * _dot(n2, n2))
  return out


def _gauss(npt):
  """Gauss-Legendre points and weights on [0, 1] (2 or 3 points; MuJoCo 4.0 has the 3-point nodes
  at +-sqrt(3/5), where its published source divides by it)."""
  p0, h = 0.5, 0.5
  if npt == 2:
    return [-h / math.sqrt(3) + p0, h / math.sqrt(3) + p0], [h, h]
  return ([p0, -h * math.sqrt(3.0 / 5.0) + p0, h * math.sqrt(3.0 / 5.0) + p0],
          [8.0 / 9.0 * h, 5.0 / 9.0 * h, 5.0 / 9.0 * h])


def _phi(s, i, order):
  """1D Lagrange basis function i of `order` at s."""
  if order == 1:
    return 1 - s if i == 0 else s
  return (2 * s * s - 3 * s + 1, 4 * (s - s * s), 2 * s * s - s)[i]


def _dphi(s, i, order):
  """Derivative of the 1D basis function i of `order` at s."""
  if order == 1:
    return -1.0 if i == 0 else 1.0
  return (4 * s - 3, 4 * (1 - 2 * s), 4 * s - 1)[i]


def linear_stiffness(pos, young, poisson, order):
  """ComputeLinearStiffness: the (3n x 3n) linear-elastic stiffness of one axis-aligned
  trilinear or triquadratic cell (n nodes), Gauss-Legendre quadrature, negated."""
  nb = order + 1
  nn = nb ** 3
  pts, wts = _gauss(nb)
  ext = pos[nn - 1] - pos[0]
  detj = ext[0] * ext[1] * ext[2]
  invj = 1.0 / ext
  # MuJoCo 4.0: lambda tr(e)^2 + 2 mu e:e (its published source has mu e:e)
  la = young * poisson / (1 + poisson) / (1 - 2 * poisson)
  mu = young / (1 + poisson)
  K = np.zeros((3 * nn, 3 * nn))
  for ps in range(nb):
    for pt in range(nb):
      for pu in range(nb):
        s, t, u = pts[ps], pts[pt], pts[pu]
        dvol = wts[ps] * wts[pt] * wts[pu] * detj
        G = np.array([[_dphi(s, bx, order) * _phi(t, by, order) * _phi(u, bz, order),
                       _phi(s, bx, order) * _dphi(t, by, order) * _phi(u, bz, order),
                       _phi(s, bx, order) * _phi(t, by, order) * _dphi(u, bz, order)]
                      for bx in range(nb) for by in range(nb) for bz in range(nb)]) * invj
        # du = e_k G_i', dv = e_l G_j': tr(du) tr(dv) = G_ik G_jl and
        # tr(sym(du) sym(dv)) = (d_kl G_i.G_j + G_il G_jk) / 2
        gg = G @ G.T
        for k in range(3):
          for l in range(3):
            blk = la * np.outer(G[:, k], G[:, l]) * dvol
            sym = ((gg if k == l else 0.0) + np.outer(G[:, l], G[:, k])) / 2
            K[k::3, l::3] -= blk
            K[k::3, l::3] -= mu * sym * dvol
  return K


def cell_stiffness(nlocal, cells, order, empty, young, poisson):
  """Per cell (volume mode), the linear stiffness of its nodes (zeros for empty cells)."""
  cx, cy, cz = cells
  ny, nz = cy * order + 1, cz * order + 1
  nn = (order + 1) ** 3
  out = []
  for fe in range(cx * cy * cz):
    if empty is not None and empty[fe]:
      out.append(np.zeros(9 * nn * nn))
      continue
    ci, cj, ck = fe // (cy * cz), (fe // cz) % cy, fe % cz
    ids = [(ci * order + li) * ny * nz + (cj * order + lj) * nz + ck * order + lk
           for li in range(order + 1) for lj in range(order + 1) for lk in range(order + 1)]
    out.append(linear_stiffness(nlocal[ids], young, poisson, order).ravel())
  return out
