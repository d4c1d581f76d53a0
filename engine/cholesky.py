"""Cholesky factorization of symmetric positive definite matrices, dense and over a sparse
pattern (MuJoCo's engine_util_solve.c: mju_cholFactor, mju_cholSolve, mju_cholUpdate), on the
lower triangle of a row-major n x n array. The Newton solver factors its Hessian with these
(engine/solver.py)."""
import math

import numpy as np

from numjoco.engine._jit import inline, jit
from numjoco.engine.types import MINVAL as _MINVAL

# ---------------------------------------------------------------------------------------------
# small dense linear algebra (MuJoCo's engine_util_solve.c, lower triangles of row-major n x n)

@inline
def _factor_pivot(mat, j, tmp, mindiag):
  """mat[j, j] = sqrt(tmp), tmp clamped to mindiag (mju_cholFactor); whether it was clamped
  (column j below the diagonal is then zero)."""
  deficient = tmp < mindiag
  if deficient:
    tmp = mindiag
  mat[j, j] = math.sqrt(tmp)
  return deficient


@jit
def chol_factor(mat, n, mindiag):
  """In-place dense Cholesky mat = L L' (lower triangle); returns the rank (mju_cholFactor)."""
  rank = n
  for j in range(n):
    tmp = mat[j, j]
    for k in range(j):
      tmp -= mat[j, k] * mat[j, k]
    if _factor_pivot(mat, j, tmp, mindiag):
      rank -= 1
      for i in range(j + 1, n):
        mat[i, j] = 0.0
    else:
      inv = 1.0 / mat[j, j]
      for i in range(j + 1, n):
        s = mat[i, j]
        for k in range(j):
          s -= mat[i, k] * mat[j, k]
        mat[i, j] = s * inv
  return rank


@jit
def chol_solve(res, mat, vec, n):
  """res = (L L')^-1 vec for a factor from chol_factor (mju_cholSolve); res may be vec."""
  for i in range(n):
    res[i] = vec[i]
  for i in range(n):
    s = res[i]
    for k in range(i):
      s -= mat[i, k] * res[k]
    res[i] = s / mat[i, i]
  for i in range(n - 1, -1, -1):
    s = res[i]
    for j in range(i + 1, n):
      s -= mat[j, i] * res[j]
    res[i] = s / mat[i, i]


@inline
def _update_pivot(mat, x, k, plus, rank):
  """Step k of mju_cholUpdate: writes the new diagonal mat[k, k] and returns (rank, one less
  when the pivot was clamped to _MINVAL; c, 1/c, s of the rotation applied to column k and x)."""
  lkk = mat[k, k]
  tmp = lkk * lkk + (x[k] * x[k] if plus else -x[k] * x[k])
  if tmp < _MINVAL:
    tmp = _MINVAL
    rank -= 1
  r = math.sqrt(tmp)
  c = r / lkk
  s = x[k] / lkk
  mat[k, k] = r
  return rank, c, 1.0 / c, s


@jit
def chol_update(mat, x, n, plus):
  """Rank-one update L L' +/- x x' of a Cholesky factor; x is overwritten (mju_cholUpdate)."""
  rank = n
  for k in range(n):
    if x[k] != 0.0:
      rank, c, cinv, s = _update_pivot(mat, x, k, plus, rank)
      if plus:
        for i in range(k + 1, n):
          mat[i, k] = (mat[i, k] + s * x[i]) * cinv
      else:
        for i in range(k + 1, n):
          mat[i, k] = (mat[i, k] - s * x[i]) * cinv
      for i in range(k + 1, n):
        x[i] = c * x[i] - s * mat[i, k]
  return rank


# ---------------------------------------------------------------------------------------------
# sparse variants for the Newton Hessian of large contexts (n >= SPARSE_NV dofs): the factor
# is stored transposed, U = L' in the upper triangle of a row-major n x n array (U[k, i] =
# L[i, k], i >= k), so that column k of L, which the factorization, both triangular solves and
# the rank-one update walk, is one row of memory. Every loop runs over the symbolic pattern
# of L (column k's rows colpat[k*n : k*n + colnnz[k]], ascending). Each entry receives the
# same products in the same order as in the dense functions above (a product with an entry
# outside the pattern is an exact zero, which they add and these skip), so the results are
# the dense ones, up to the sign of a zero (MuJoCo's sparse path factors in another order).

SPARSE_NV = 60   # mj_isSparse's threshold, applied to the solved context's dofs

# The pattern's indices (int32) are made unsigned (np.uintp): a signed index gets a
# negative-index wraparound test at every access, which also keeps LLVM from combining the
# loads in these loops, where the Newton solve of large contexts spends most of its time.
_u = np.uintp


@jit
def chol_factor_sp(mat, n, mindiag, colpat, colnnz):
  """chol_factor of the upper triangle (H[i, k] in mat[k, i], k <= i) into U = L' over the
  symbolic pattern of L, right-looking: once column k is final, its outer product is taken
  from the columns after it, so entry (i, j) loses L[i, k] L[j, k] for ascending k, as in the
  dense function's dot products."""
  rank = n
  nu = _u(n)
  for k in range(nu):
    b = k * nu
    e = b + _u(colnnz[k])
    if _factor_pivot(mat, k, mat[k, k], mindiag):
      rank -= 1
      for t in range(b, e):
        mat[k, _u(colpat[t])] = 0.0
      continue
    inv = 1.0 / mat[k, k]
    for t in range(b, e):
      i = _u(colpat[t])
      mat[k, i] = mat[k, i] * inv
    for t in range(b, e):
      j = _u(colpat[t])
      ljk = mat[k, j]
      mat[j, j] -= ljk * ljk
      for v in range(t + _u(1), e):
        i = _u(colpat[v])
        mat[j, i] -= mat[k, i] * ljk
  return rank


@jit
def chol_solve_sp(res, mat, vec, n, colpat, colnnz):
  """chol_solve with a factor from chol_factor_sp (U = L'); res may be vec. The forward
  substitution runs by columns: res[i] loses L[i, k] res[k] for ascending k, as in the dense
  function's dot product."""
  nu = _u(n)
  for i in range(nu):
    res[i] = vec[i]
  for k in range(nu):
    x = res[k] / mat[k, k]
    res[k] = x
    b = k * nu
    for t in range(b, b + _u(colnnz[k])):
      i = _u(colpat[t])
      res[i] -= mat[k, i] * x
  for r in range(nu):
    i = nu - _u(1) - r
    s = res[i]
    b = i * nu
    for t in range(b, b + _u(colnnz[i])):
      j = _u(colpat[t])
      s -= mat[i, j] * res[j]
    res[i] = s / mat[i, i]


@jit
def chol_update_sp(mat, x, n, plus, colpat, colnnz):
  """chol_update of a factor from chol_factor_sp (U = L'): x's nonzeros (a row of J, or a
  combination of one contact's rows, all inside the pattern) stay within column k's pattern
  at step k."""
  rank = n
  nu = _u(n)
  for k in range(nu):
    if x[k] != 0.0:
      rank, c, cinv, s = _update_pivot(mat, x, k, plus, rank)
      b = k * nu
      e = b + _u(colnnz[k])
      if plus:
        for t in range(b, e):
          i = _u(colpat[t])
          mat[k, i] = (mat[k, i] + s * x[i]) * cinv
      else:
        for t in range(b, e):
          i = _u(colpat[t])
          mat[k, i] = (mat[k, i] - s * x[i]) * cinv
      for t in range(b, e):
        i = _u(colpat[t])
        x[i] = c * x[i] - s * mat[k, i]
  return rank
