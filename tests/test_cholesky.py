"""The Newton Hessian's Cholesky functions (engine/cholesky.py): the sparse variants, which keep
U = L' in the upper triangle and run over the symbolic pattern of L, give the dense functions'
results (each entry the same products in the same order) and the factorization numpy checks:
L L' = H, H x = b, and L L' +/- x x' after a rank-one update."""
import numpy as np
import pytest

from numjoco.engine.cholesky import (chol_factor, chol_factor_sp, chol_solve, chol_solve_sp,
                                     chol_update, chol_update_sp)
from numjoco.engine.types import MINVAL


def _problem(seed, n=70, nrow=40):
  """A Hessian M + J' D J of the solver's shape: M block diagonal over small kinematic chains,
  J rows touching a few chains each; returns (H, J, D, colpat, colnnz), the column pattern of
  L from the elimination tree, in the layout of solver_Lpat / solver_Lnnz."""
  rng = np.random.default_rng(seed)
  H = np.zeros((n, n))
  starts = np.cumsum(rng.integers(3, 9, size=n))
  starts = np.concatenate(([0], starts[starts < n], [n]))
  for a, b in zip(starts[:-1], starts[1:]):
    B = rng.normal(size=(b - a, b - a))
    H[a:b, a:b] = B @ B.T + (b - a) * np.eye(b - a)
  J = np.zeros((nrow, n))
  for r in range(nrow):
    cols = rng.choice(n, size=rng.integers(2, 9), replace=False)
    J[r, cols] = rng.normal(size=cols.size)
  D = rng.uniform(0.1, 10, size=nrow)
  H = H + J.T @ (D[:, None] * J)
  H = np.tril(H) + np.tril(H, -1).T     # exactly symmetric (matmul's rounding is not)
  struct = H != 0
  colpat = np.zeros(n * n, np.int32)
  colnnz = np.zeros(n, np.int32)
  pat = [set(np.nonzero(struct[k + 1:, k])[0] + k + 1) for k in range(n)]
  for k in range(n):
    rows = sorted(pat[k])
    if rows:
      pat[rows[0]] |= set(rows[1:])   # the elimination tree: column k's fill goes to its parent
    colpat[k * n:k * n + len(rows)] = rows
    colnnz[k] = len(rows)
  return H, J, D, colpat, colnnz


def _factors(H, colpat, colnnz):
  n = H.shape[0]
  dense = np.tril(H).copy()
  rank_d = chol_factor(dense, n, MINVAL)
  U = np.triu(H).copy()
  rank_s = chol_factor_sp(U, n, MINVAL, colpat, colnnz)
  return dense, rank_d, U, rank_s


@pytest.mark.parametrize("seed", range(4))
def test_sparse_factor_and_solve_equal_the_dense_ones(seed):
  H, _, _, colpat, colnnz = _problem(seed)
  n = H.shape[0]
  dense, rank_d, U, rank_s = _factors(H, colpat, colnnz)
  assert rank_s == rank_d == n
  assert np.array_equal(U.T, dense)   # bit for bit (-0.0 == 0.0)
  assert np.array_equal(np.tril(U, -1), np.zeros((n, n)))
  L = np.tril(dense)
  assert np.allclose(L @ L.T, H, rtol=0, atol=1e-12 * np.abs(H).max())
  b = np.random.default_rng(seed + 100).normal(size=n)
  x_d, x_s = np.empty(n), b.copy()
  chol_solve(x_d, dense, b, n)
  chol_solve_sp(x_s, U, x_s, n, colpat, colnnz)   # in place, as the solver calls it
  assert np.array_equal(x_s, x_d)
  assert np.allclose(H @ x_s, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("plus", [True, False])
def test_sparse_update_equals_the_dense_one(plus):
  H, J, D, colpat, colnnz = _problem(7)
  n = H.shape[0]
  dense, _, U, _ = _factors(H, colpat, colnnz)
  for r in range(0, J.shape[0], 5):   # a row of J scaled by sqrt(D): inside the pattern
    x = J[r] * np.sqrt(D[r]) * (1.0 if plus else 0.5)
    xd, xs = x.copy(), x.copy()
    rank_d = chol_update(dense, xd, n, plus)
    rank_s = chol_update_sp(U, xs, n, plus, colpat, colnnz)
    assert rank_s == rank_d == n
    assert np.array_equal(U.T, dense)
    assert np.array_equal(xs, xd)
    H = H + np.outer(x, x) if plus else H - np.outer(x, x)
    L = np.tril(dense)
    assert np.allclose(L @ L.T, H, rtol=0, atol=1e-11 * np.abs(H).max())


def test_sparse_factor_of_a_singular_matrix_clamps_as_the_dense_one():
  H, _, _, colpat, colnnz = _problem(3)
  n = H.shape[0]
  H[:, 10] = H[10, :] = 0.0      # dof 10 free of everything: a zero pivot
  dense, rank_d, U, rank_s = _factors(H, colpat, colnnz)
  assert rank_s == rank_d == n - 1
  assert U[10, 10] == dense[10, 10] == np.sqrt(MINVAL)
  assert np.array_equal(U.T, dense)
