"""Constraint solvers (MuJoCo's engine_solver.c) and the constraint stage (mj_fwdConstraint).

The stage finds the constraint islands (engine.island) and, as MuJoCo 4.0 does by default,
solves each island on its own (own dense Hessian of island size, own termination, statistics
at island * mjNSOLVER in solver_*, iterations in solver_niter[island]); with the ISLAND disable
bit set, or when no island structure exists, everything is solved as one system.

Primal solvers (Newton, CG) minimise over qacc the Gauss cost 0.5 (qacc - qacc_smooth)' M
(qacc - qacc_smooth) plus the constraint cost s(J qacc - aref); the dual solver (PGS) minimises
0.5 f' AR f + f' b over the constraint forces f, AR = J M^-1 J' + diag(R), in their cones.
Everything follows MuJoCo's algorithms step by step (warmstart choice, exact line search,
Hessian factor updates, Hager-Zhang CG, PGS with shuffled blocks and Nesterov momentum), so
that iteration counts and per-iteration statistics agree with MuJoCo's.

Choices (see also the report in the commit history):
- Primal solvers run on a `Primal` context (views of all rows/dofs, or of one island's
  gathered rows iefc_* / iefc_J and dofs iacc etc.); PGS and no-slip run over a list of rows
  (map_iefc2efc: an island's, or the identity) on the global arrays, as MuJoCo's efclist.
- Sparse rows: efc_J is in MuJoCo's sparse row layout (efc_J_rownnz / efc_J_rowadr /
  efc_J_colind, columns ascending, nonzeros only); an island's rows are gathered into the same
  layout over its local dofs (iefc_J, iefc_J_*). Every J product costs the row's nonzeros.
  The Newton Hessian is MuJoCo's dense path (island-size n x n Cholesky of the lower
  triangle, rank-1 updates as states change).
- PGS keeps Y = D^-1/2 L^-T J' (`solver_Y`, M = L'DL the sparse factor qLD; in sparse rows:
  row i covers the ancestors of J_i's dofs, which for a body's Jacobian is J_i's own pattern,
  so a row of Y has no more nonzeros than the row of J) and the vector w = Y' f, so that
  AR f = Y Y' f + R f: a residual row costs its nonzeros and no (njmax x njmax) AR is ever
  formed (MuJoCo forms AR from the same half solve, mj_solveM2).

Work buffers (Data, engine-only): solver_L / solver_Lcone (nv x nv Hessian factor, with cones),
solver_LTJ (6 x nv), solver_nv (12 x nv vectors), solver_efc (8 x njmax rows), solver_quad
(3 njmax line-search polynomials), solver_int (2 x njmax), solver_Y (nJmax nonzeros),
solver_ARblk (njmax x 6 diagonal blocks of AR), solver_scratch / solver_mat (small vectors and
6 x 6 matrices), solver_Ynnz / solver_Yadr / solver_Ycol (the sparse row layout of
solver_Y).
"""
import collections
import math

import numpy as np

from numjoco.engine import island
from numjoco.engine import smooth
from numjoco.engine.smooth import jit
from numjoco.engine.types import MINVAL as _MINVAL

# helpers of sol_primal inlined into it (a call would pass the flattened Primal context)
_inline = smooth.inline
# an array index known to be >= 0: Numba then skips its negative-index wraparound, which
# otherwise costs a compare and select per access and keeps sparse gathers from pipelining
# (a 17-row sparse J product: 113 -> 48 ns)
_u = np.uintp
from numjoco.engine.types import (mjtConstraint, mjtConstraintState, mjtDisableBit, mjtSolver, mjtCone,
                          mjtIntegrator)
from numjoco.engine._sig import unit, M, D, b1, i4, i8, i4v, NEEDS_NOSLIP, NEEDS_PGS

_ELLIPTIC = int(mjtConstraint.CONTACT_ELLIPTIC)
_PYRAMIDAL = int(mjtConstraint.CONTACT_PYRAMIDAL)
_SATISFIED = int(mjtConstraintState.SATISFIED)
_QUADRATIC = int(mjtConstraintState.QUADRATIC)
_LINEARNEG = int(mjtConstraintState.LINEARNEG)
_LINEARPOS = int(mjtConstraintState.LINEARPOS)
_CONE = int(mjtConstraintState.CONE)
_PGS, _CG, _NEWTON = int(mjtSolver.PGS), int(mjtSolver.CG), int(mjtSolver.NEWTON)
_CONE_ELLIPTIC = int(mjtCone.ELLIPTIC)
_DSBL_WARMSTART = int(mjtDisableBit.WARMSTART)
_INT_DISCRETE = int(mjtIntegrator.DISCRETE)
_NSOLVER = 200    # mjNSOLVER
_NISLAND = 20     # mjNISLAND: islands with statistics

# rows of d.solver_nv
(_MA, _MV, _GRAD, _MGRAD, _SEARCH, _GRADOLD, _MGRADOLD, _GRADDIF, _MGRADDIF, _CHOLUPD,
 _TMP, _PERMV, _DSQRT) = range(13)
# rows of d.solver_efc
_JAREF, _JV, _DH, _ARINV, _FPREV, _FMOM, _JAR = range(7)


# ---------------------------------------------------------------------------------------------
# small dense linear algebra (MuJoCo's engine_util_solve.c, lower triangles of row-major n x n)

@jit
def chol_factor(mat, n, mindiag):
  """In-place dense Cholesky mat = L L' (lower triangle); returns the rank (mju_cholFactor)."""
  rank = n
  for j in range(n):
    tmp = mat[j, j]
    for k in range(j):
      tmp -= mat[j, k] * mat[j, k]
    deficient = tmp < mindiag
    if deficient:
      tmp = mindiag
      rank -= 1
    mat[j, j] = math.sqrt(tmp)
    if deficient:
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


@jit
def chol_update(mat, x, n, plus):
  """Rank-one update L L' +/- x x' of a Cholesky factor; x is overwritten (mju_cholUpdate)."""
  rank = n
  for k in range(n):
    if x[k] != 0.0:
      lkk = mat[k, k]
      tmp = lkk * lkk + (x[k] * x[k] if plus else -x[k] * x[k])
      if tmp < _MINVAL:
        tmp = _MINVAL
        rank -= 1
      r = math.sqrt(tmp)
      c = r / lkk
      cinv = 1.0 / c
      s = x[k] / lkk
      mat[k, k] = r
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
# sparse variants for the Newton Hessian of large contexts (n >= _SPARSE_NV dofs): the factor
# keeps its dense n x n storage, but every loop runs over the symbolic pattern of L (row i's
# columns rowpat[i*n : i*n + rownnz[i]], ascending; column k's rows colpat[k*n : ...]). Entries
# outside the pattern are exact zeros that the dense loops would only add, so each result is
# the dense one bit for bit, at the cost of the pattern's nonzeros (MuJoCo's sparse path
# factors in another order; ours stays the dense one's).

_SPARSE_NV = 60   # mj_isSparse's threshold, applied to the solved context's dofs


@jit
def chol_factor_sp(mat, n, mindiag, rowpat, rownnz, colpat, colnnz):
  """chol_factor over the symbolic pattern of L."""
  rank = n
  for j in range(n):
    bj = j * n
    tmp = mat[j, j]
    for t in range(bj, bj + rownnz[j]):
      k = rowpat[t]
      tmp -= mat[j, k] * mat[j, k]
    deficient = tmp < mindiag
    if deficient:
      tmp = mindiag
      rank -= 1
    mat[j, j] = math.sqrt(tmp)
    if deficient:
      for t in range(bj, bj + colnnz[j]):
        mat[colpat[t], j] = 0.0
    else:
      inv = 1.0 / mat[j, j]
      for u in range(bj, bj + colnnz[j]):
        i = colpat[u]
        s = mat[i, j]
        for t in range(bj, bj + rownnz[j]):
          k = rowpat[t]
          s -= mat[i, k] * mat[j, k]
        mat[i, j] = s * inv
  return rank


@jit
def chol_solve_sp(res, mat, vec, n, rowpat, rownnz, colpat, colnnz):
  """chol_solve over the symbolic pattern of L."""
  for i in range(n):
    res[i] = vec[i]
  for i in range(n):
    s = res[i]
    for t in range(i * n, i * n + rownnz[i]):
      k = rowpat[t]
      s -= mat[i, k] * res[k]
    res[i] = s / mat[i, i]
  for i in range(n - 1, -1, -1):
    s = res[i]
    for t in range(i * n, i * n + colnnz[i]):
      j = colpat[t]
      s -= mat[j, i] * res[j]
    res[i] = s / mat[i, i]


@jit
def chol_update_sp(mat, x, n, plus, colpat, colnnz):
  """chol_update over the symbolic pattern of L: x's nonzeros (a row of J, or a combination
  of one contact's rows, all inside the pattern) stay within column k's pattern at step k."""
  rank = n
  for k in range(n):
    if x[k] != 0.0:
      lkk = mat[k, k]
      tmp = lkk * lkk + (x[k] * x[k] if plus else -x[k] * x[k])
      if tmp < _MINVAL:
        tmp = _MINVAL
        rank -= 1
      r = math.sqrt(tmp)
      c = r / lkk
      cinv = 1.0 / c
      s = x[k] / lkk
      mat[k, k] = r
      b = k * n
      if plus:
        for t in range(b, b + colnnz[k]):
          i = colpat[t]
          mat[i, k] = (mat[i, k] + s * x[i]) * cinv
      else:
        for t in range(b, b + colnnz[k]):
          i = colpat[t]
          mat[i, k] = (mat[i, k] - s * x[i]) * cinv
      for t in range(b, b + colnnz[k]):
        i = colpat[t]
        x[i] = c * x[i] - s * mat[i, k]
  return rank


_NBLOCK = 256     # trees an ordered context may have (one bit each in a solver_tadj row)
_NWORD = _NBLOCK // 64   # uint64 words per row of solver_tadj (types.py sizes it)
_ONE = np.uint64(1)


@jit
def _popcount(x):
  """Set bits of a uint64."""
  x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
  x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
  x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
  return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@_inline
def _group_end(eid, typ, nefc, i):
  """End of the group of rows of one constraint starting at row i (same id and type)."""
  j = i
  while j < nefc and eid[j] == eid[i] and typ[j] == typ[i]:
    j += 1
  return j


@jit
def _tree_order(m, d, c):
  """A fill-reducing order of the context's dofs (solver_Lnnz rows 5/6: perm new -> old,
  iperm old -> new): minimum degree over its kinematic trees, each tree's dofs kept together
  in their order. A tree is coupled to the trees its constraints also touch; eliminating one
  joins its neighbours into a clique. Identity when the context has one tree or more than
  _NBLOCK."""
  n = c.nv
  perm, iperm, blk = d.solver_Lnnz[5], d.solver_Lnnz[6], d.solver_Lnnz[7]
  nb = 0
  prev = -1
  for i in range(n):
    t = m.dof_treeid[c.dofs[i]]
    if t != prev:
      nb += 1
      prev = t
    blk[i] = nb - 1
  if nb < 2 or nb > _NBLOCK:
    for i in range(n):
      perm[i] = i
      iperm[i] = i
    return
  # adjacency bit sets: row b (words b*_NWORD ..) for each tree, then three scratch rows
  # (the trees of one constraint, the trees alive, the neighbours of the one eliminated)
  nw = (nb + 63) >> 6
  tadj = d.solver_tadj
  mask, alive, nbrs = _NBLOCK * _NWORD, (_NBLOCK + 1) * _NWORD, (_NBLOCK + 2) * _NWORD
  for b in range(nb):
    for w in range(nw):
      tadj[b * _NWORD + w] = np.uint64(0)
  Jadr, Jnnz, Jcol = c.Jadr, c.Jnnz, c.Jcol
  i = 0
  while i < c.nefc:
    j = _group_end(c.eid, c.typ, c.nefc, i)
    for w in range(nw):
      tadj[mask + w] = np.uint64(0)
    for r in range(i, j):
      for a in range(Jadr[r], Jadr[r] + Jnnz[r]):
        b = blk[Jcol[a]]
        tadj[mask + (b >> 6)] |= _ONE << np.uint64(b & 63)
    for b in range(nb):
      if (tadj[mask + (b >> 6)] >> np.uint64(b & 63)) & _ONE:
        for w in range(nw):
          tadj[b * _NWORD + w] |= tadj[mask + w]
    i = j
  for w in range(nw):
    tadj[alive + w] = np.uint64(0)
  for b in range(nb):
    tadj[alive + (b >> 6)] |= _ONE << np.uint64(b & 63)
  # eliminate blocks by minimum degree (ties: the lowest index); bl[k] = k-th eliminated block
  bl = d.solver_Lnnz[3]
  for k in range(nb):
    best = -1
    bdeg = np.uint64(_NBLOCK + 1)
    for b in range(nb):
      if (tadj[alive + (b >> 6)] >> np.uint64(b & 63)) & _ONE:
        deg = np.uint64(0)
        for w in range(nw):
          deg += _popcount(tadj[b * _NWORD + w] & tadj[alive + w])
        if deg < bdeg:
          bdeg = deg
          best = b
    bl[k] = best
    tadj[alive + (best >> 6)] &= ~(_ONE << np.uint64(best & 63))
    for w in range(nw):
      tadj[nbrs + w] = tadj[best * _NWORD + w] & tadj[alive + w]
    for b in range(nb):
      if (tadj[nbrs + (b >> 6)] >> np.uint64(b & 63)) & _ONE:
        for w in range(nw):
          tadj[b * _NWORD + w] |= tadj[nbrs + w]
  # block starts (blk is ascending: trees are contiguous in the context)
  start = d.solver_Lnnz[2]
  for i in range(n - 1, -1, -1):
    start[blk[i]] = i
  q = 0
  for k in range(nb):
    b = bl[k]
    i = start[b]
    while i < n and blk[i] == b:
      perm[q] = i
      iperm[i] = q
      q += 1
      i += 1


@jit
def _hessian_symbolic(m, d, c):
  """Symbolic Cholesky of H = M + J' D J over every row (whatever its state, so that rank-1
  updates and cone updates stay inside), in the fill-reducing order of _tree_order: L's row
  and column patterns from the elimination tree (row i's pattern = the tree paths from its
  neighbours in H up to i). Each group of rows of one constraint (its union of columns) is
  entered as a star to its first column in the order, which makes the whole group a clique of
  L."""
  n, nefc = c.nv, c.nefc
  # the adjacency (in the context's dof order) is built in one of two buffers and compared
  # with the other's, which holds the adjacency of the pattern now stored: when it has no
  # entry the stored one lacks (the same contacts as at the last analysis, or fewer, e.g. a
  # resting pile) the stored pattern and order are kept: a pattern of more entries only
  # holds some exact zeros. solver_Lnnz[4] holds (n of the stored pattern or 0, its buffer).
  state = d.solver_Lnnz[4]
  old = d.solver_Hpat[state[1]]
  adj = d.solver_Hpat[1 - state[1]]
  rowpat, colpat, nbr = d.solver_Lpat[0], d.solver_Lpat[1], d.solver_Lpat[2]
  rownnz, colnnz, parent, mark = (d.solver_Lnnz[0], d.solver_Lnnz[1], d.solver_Lnnz[2],
                                  d.solver_Lnnz[3])
  perm, iperm, nbrend = d.solver_Lnnz[5], d.solver_Lnnz[6], d.solver_Lnnz[7]
  for t in range(n * n):
    adj[t] = 0
  dof2idof, off = d.map_dof2idof, c.adr
  for i in range(n):
    g = c.dofs[i]
    adr = m.M_rowadr[g]
    for a in range(adr, adr + m.M_rownnz[g] - 1):
      adj[i * n + dof2idof[m.M_colind[a]] - off] = 1
  J, Jadr, Jnnz, Jcol = c.J, c.Jadr, c.Jnnz, c.Jcol
  i = 0
  while i < nefc:
    j = _group_end(c.eid, c.typ, c.nefc, i)
    gmin = n
    for r in range(i, j):
      if Jnnz[r] > 0 and Jcol[Jadr[r]] < gmin:
        gmin = Jcol[Jadr[r]]
    for r in range(i, j):
      for a in range(Jadr[r], Jadr[r] + Jnnz[r]):
        u = Jcol[a]
        if u > gmin:
          adj[u * n + gmin] = 1
    i = j
  if state[0] == n:
    diff = 0
    for t in range(n * n):
      diff |= adj[t] & ~old[t]
    if diff == 0:
      return
  state[0] = n
  state[1] = 1 - state[1]
  _tree_order(m, d, c)
  # neighbour lists in the new order (row i: its neighbours k < i, each once, at nbr[i*n:]);
  # `old` (no longer needed) marks the edges in the new order
  seen = old
  for t in range(n * n):
    seen[t] = 0
  for i in range(n):
    nbrend[i] = 0
  for i in range(n):
    g = c.dofs[i]
    adr = m.M_rowadr[g]
    p = iperm[i]
    for a in range(adr, adr + m.M_rownnz[g] - 1):
      q = iperm[dof2idof[m.M_colind[a]] - off]
      hi, lo = max(p, q), min(p, q)
      e = hi * n + lo
      if seen[e] == 0:
        seen[e] = 1
        nbr[hi * n + nbrend[hi]] = lo
        nbrend[hi] += 1
  i = 0
  while i < nefc:
    j = _group_end(c.eid, c.typ, c.nefc, i)
    gmin = n
    for r in range(i, j):
      for a in range(Jadr[r], Jadr[r] + Jnnz[r]):
        gmin = min(gmin, iperm[Jcol[a]])
    for r in range(i, j):
      for a in range(Jadr[r], Jadr[r] + Jnnz[r]):
        u = iperm[Jcol[a]]
        e = u * n + gmin
        if u > gmin and seen[e] == 0:
          seen[e] = 1
          nbr[u * n + nbrend[u]] = gmin
          nbrend[u] += 1
    i = j
  # elimination tree; column patterns come out ascending, row patterns are read off them
  for i in range(n):
    colnnz[i] = 0
    parent[i] = -1
    mark[i] = -1
  for i in range(n):
    mark[i] = i
    cnt = 0
    for e in range(i * n, i * n + nbrend[i]):
      j = nbr[e]
      while mark[j] != i:
        mark[j] = i
        cnt += 1
        colpat[j * n + colnnz[j]] = i
        colnnz[j] += 1
        if parent[j] == -1:
          parent[j] = i
        j = parent[j]
    rownnz[i] = cnt
  for i in range(n):
    mark[i] = 0
  for j in range(n):
    for t in range(j * n, j * n + colnnz[j]):
      i = colpat[t]
      rowpat[i * n + mark[i]] = j
      mark[i] += 1


@jit
def _chol_update_ctx(d, mat, x, n, plus):
  """chol_update of a context's factor (sparse pattern for n >= _SPARSE_NV)."""
  if _sparse(d, n):
    return chol_update_sp(mat, x, n, plus, d.solver_Lpat[1], d.solver_Lnnz[1])
  return chol_update(mat, x, n, plus)


@jit
def mul_jac(d, res, vec, nefc, nv):
  """res = efc_J vec."""
  _mul_j(d.efc_J, d.efc_J_rowadr, d.efc_J_rownnz, d.efc_J_colind, nefc, res, vec)


@jit
def mul_jac_t(d, res, f, nefc, nv):
  """res = efc_J' f."""
  _mul_jt(d.efc_J, d.efc_J_rowadr, d.efc_J_rownnz, d.efc_J_colind, nefc, nv, res, f)


@jit
def _dot(a, b, n):
  """a[:n] . b[:n]."""
  s = 0.0
  for i in range(n):
    s += a[i] * b[i]
  return s


@jit
def _norm(a, n):
  """Euclidean norm of a[:n]."""
  return math.sqrt(_dot(a, a, n))


@jit
def stat_scale(m, d):
  """Scale of the improvement and gradient statistics: 1 / trace(M) at the current state
  (MuJoCo 4.0 uses this for the monolithic solve too, not 1 / (meaninertia nv))."""
  s = 0.0
  for i in range(m.nv):
    s += d.M[m.M_rowadr[i] + m.M_rownnz[i] - 1]
  return 1.0 / s if s > 0 else 1.0


# ---------------------------------------------------------------------------------------------
# constraint state, force and cost (engine_core_constraint.c)

@jit
def constraint_update_impl(d, ne, nf, nefc, jar, flg_cone_hessian):
  """efc_state, efc_force from jar = J qacc - aref; returns the constraint cost s(jar) and, for
  elliptic contacts in the cone state, writes their cone Hessian to contact_H
  (mj_constraintUpdate_impl)."""
  return constraint_update_rows(d, ne, nf, nefc, d.efc_D, d.efc_R, d.efc_frictionloss,
                                d.efc_type, d.efc_id, d.efc_force, d.efc_state, jar,
                                flg_cone_hessian)


@jit
def constraint_update_rows(d, ne, nf, nefc, D, R, floss, efc_type, efc_id, force, state, jar,
                           flg_cone_hessian):
  """constraint_update_impl on given row arrays (all rows, or one island's in its order)."""
  s = 0.0
  if nefc == 0:
    return 0.0
  for i in range(nefc):
    force[i] = -D[i] * jar[i]
  U = d.solver_scratch[0:6]
  skip = 0
  for i in range(nefc):
    if i < skip:
      continue
    if i < ne:
      s += 0.5 * D[i] * jar[i] * jar[i]
      state[i] = _QUADRATIC
      continue
    if i < ne + nf:
      if jar[i] <= -R[i] * floss[i]:
        s += -0.5 * R[i] * floss[i] * floss[i] - floss[i] * jar[i]
        force[i] = floss[i]
        state[i] = _LINEARNEG
      elif jar[i] >= R[i] * floss[i]:
        s += -0.5 * R[i] * floss[i] * floss[i] + floss[i] * jar[i]
        force[i] = -floss[i]
        state[i] = _LINEARPOS
      else:
        s += 0.5 * D[i] * jar[i] * jar[i]
        state[i] = _QUADRATIC
      continue
    if efc_type[i] != _ELLIPTIC:
      if jar[i] >= 0:
        force[i] = 0.0
        state[i] = _SATISFIED
      else:
        s += 0.5 * D[i] * jar[i] * jar[i]
        state[i] = _QUADRATIC
      continue
    # elliptic cone contact: rows i .. i+dim-1
    con = efc_id[i]
    mu = d.contact_mu[con]
    fr = d.contact_friction[con]
    dim = d.contact_dim[con]
    U[0] = jar[i] * mu
    for j in range(1, dim):
      U[j] = jar[i + j] * fr[j - 1]
    N = U[0]
    T = 0.0
    for j in range(1, dim):
      T += U[j] * U[j]
    T = math.sqrt(T)
    if N >= mu * T or (T <= 0 and N >= 0):
      for j in range(dim):
        force[i + j] = 0.0
      st = _SATISFIED
    elif mu * N + T <= 0 or (T <= 0 and N < 0):
      for j in range(dim):
        s += 0.5 * D[i + j] * jar[i + j] * jar[i + j]
      st = _QUADRATIC
    else:
      Dm = D[i] / (mu * mu * (1 + mu * mu))
      NmT = N - mu * T
      s += 0.5 * Dm * NmT * NmT
      force[i] = -Dm * NmT * mu
      for j in range(1, dim):
        force[i + j] = -force[i] / T * U[j] * fr[j - 1]
      st = _CONE
      if flg_cone_hessian:
        H = d.contact_H[con]
        scl = -mu / T
        H[0] = 1.0
        for j in range(1, dim):
          H[j] = scl * U[j]
        scl = mu * N / (T * T * T)
        for k in range(1, dim):
          for j in range(k, dim):
            H[k * dim + j] = scl * U[j] * U[k]
        scl = mu * mu - mu * N / T
        for j in range(1, dim):
          H[j * (dim + 1)] += scl
        for k in range(dim):
          scl = Dm * (mu if k == 0 else fr[k - 1])
          for j in range(k, dim):
            H[k * dim + j] *= scl * (mu if j == 0 else fr[j - 1])
        for k in range(dim):
          for j in range(k + 1, dim):
            H[j * dim + k] = H[k * dim + j]
    for j in range(dim):
      state[i + j] = st
    skip = i + dim
  return s


@jit
def constraint_update(m, d, jar, flg_cone_hessian):
  """efc_state, efc_force, qfrc_constraint = J' efc_force from jar = J qacc - aref; returns
  the constraint cost (mj_constraintUpdate)."""
  return _constraint_update(m, d, jar, flg_cone_hessian)


@jit
def _constraint_update(m, d, jar, flg_cone_hessian):
  """constraint_update (kept as the name the warmstart calls)."""
  cost = constraint_update_impl(d, d.ne[0], d.nf[0], d.nefc[0], jar, flg_cone_hessian)
  mul_jac_t(d, d.qfrc_constraint, d.efc_force, d.nefc[0], m.nv)
  return cost


@jit
def _save_stats(d, island, it, improvement, gradient, lineslope, nactive, nchange, neval,
                nupdate):
  """Statistics of iteration `it` of an island (0 for a one-system solve) at island * mjNSOLVER
  + it; dropped past mjNISLAND islands or mjNSOLVER iterations, as MuJoCo does."""
  if it >= _NSOLVER or island >= _NISLAND:
    return
  it += island * _NSOLVER
  d.solver_improvement[it] = improvement
  d.solver_gradient[it] = gradient
  d.solver_lineslope[it] = lineslope
  d.solver_nactive[it] = nactive
  d.solver_nchange[it] = nchange
  d.solver_neval[it] = neval
  d.solver_nupdate[it] = nupdate


# ---------------------------------------------------------------------------------------------
# primal solvers (CG, Newton): mj_solPrimal
#
# A Primal context names the rows and dofs being solved: all of them (one-system solve: views
# of efc_* and qacc etc.) or one island's (views of the island-ordered iefc_*, iefc_J and iacc
# etc.). Island dofs are local 0 .. nv-1; `dofs` maps them to the model's dofs, and
# map_dof2idof - adr maps back (identity for the one-system solve), so products with M and its
# factor run over the island's rows of M in the model's order. Work vectors (solver_nv rows,
# solver_efc rows, solver_quad, solver_int[0]) are used from index 0.

Primal = collections.namedtuple(
    "Primal", "nv ne nf nefc adr dofs J Jadr Jnnz Jcol D R floss aref typ eid force state qacc "
    "qacc_smooth qfrc_smooth qfrc_constraint L Lcone")


@_inline
def _metric(m, d):
  """(values, factor, inverse factor diagonal) of the solve metric on M's pattern: M and qLD,
  or under the discrete integrator the backbone qMhat and qLDhat (engine/discrete.py)."""
  if m.opt_integrator[0] == _INT_DISCRETE:
    return d.qMhat, d.qLDhat, d.qLDhatDiagInv
  return d.M, d.qLD, d.qLDiagInv


@_inline
def _rhs(m, d):
  """The force the Gauss term balances: qfrc_smooth, or the discrete integrator's qfrc_hat."""
  if m.opt_integrator[0] == _INT_DISCRETE:
    return d.qfrc_hat
  return d.qfrc_smooth


@_inline
def _sparse(d, nv):
  """The Newton Hessian in sparse form: contexts of _SPARSE_NV dofs or more, unless the
  discrete integrator's couplings make it dense."""
  return nv >= _SPARSE_NV and d.discrete_coupled[0] == 0


@jit
def _add_outer_rows(L, nrow, rowadr, rownnz, colind, vals, weights):
  """L (lower triangle, model order) += sum_r weights[r] g_r g_r' over sparse rows g_r."""
  for r in range(nrow):
    w = weights[r]
    if w == 0.0:
      continue
    a0 = rowadr[r]
    for a in range(a0, a0 + rownnz[r]):
      wa = w * vals[a]
      for b in range(a0, a + 1):
        _add_lower(L, colind[a], colind[b], wa * vals[b])


@jit
def _mul_outer_rows(res, vec, nrow, rowadr, rownnz, colind, vals, weights):
  """res += sum_r weights[r] g_r (g_r . vec) over sparse rows g_r."""
  for r in range(nrow):
    w = weights[r]
    if w == 0.0:
      continue
    a0, a1 = rowadr[r], rowadr[r] + rownnz[r]
    s = 0.0
    for a in range(a0, a1):
      s += vals[a] * vec[colind[a]]
    s *= w
    for a in range(a0, a1):
      res[colind[a]] += s * vals[a]


@jit
def _add_couplings(m, d, L):
  """L (lower triangle, model order) += sum w g g' over the discrete integrator's tendon and
  actuator-output couplings."""
  _add_outer_rows(L, m.ntendon, m.ten_J_rowadr, m.ten_J_rownnz, m.ten_J_colind, d.ten_J,
                  d.ten_mhat)
  _add_outer_rows(L, m.nout, d.moment_rowadr, d.moment_rownnz, d.moment_colind,
                  d.actuator_moment, d.actuator_mhat)


@jit
def _mul_couplings(m, d, res, vec):
  """res += sum w g (g . vec) over the couplings (model order: the solve is one system)."""
  _mul_outer_rows(res, vec, m.ntendon, m.ten_J_rowadr, m.ten_J_rownnz, m.ten_J_colind, d.ten_J,
                  d.ten_mhat)
  _mul_outer_rows(res, vec, m.nout, d.moment_rowadr, d.moment_rownnz, d.moment_colind,
                  d.actuator_moment, d.actuator_mhat)


@jit
def mul_metric(m, d, res, vec):
  """res = Mhat vec over all dofs (the discrete integrator's metric with its couplings)."""
  Mh, rowadr, rownnz, colind = d.qMhat, m.M_rowadr, m.M_rownnz, m.M_colind
  for i in range(m.nv):
    res[i] = 0.0
  for i in range(m.nv):
    adr = rowadr[i]
    n = rownnz[i] - 1
    res[i] += Mh[adr + n] * vec[i]
    for a in range(adr, adr + n):
      k = colind[a]
      res[i] += Mh[a] * vec[k]
      res[k] += Mh[a] * vec[i]
  if d.discrete_coupled[0]:
    _mul_couplings(m, d, res, vec)


@jit
def solve_metric_dense(m, d, x, y):
  """x = Mhat^-1 y for the discrete integrator with couplings: a dense Cholesky of the backbone
  plus the couplings (solver_L as scratch; it runs before the constraint solve)."""
  nv = m.nv
  L = _square(d.solver_L, nv)
  for r in range(nv):
    for k in range(nv):
      L[r, k] = 0.0
  for i in range(nv):
    for a in range(m.M_rowadr[i], m.M_rowadr[i] + m.M_rownnz[i]):
      _add_lower(L, i, m.M_colind[a], d.qMhat[a])
  _add_couplings(m, d, L)
  chol_factor(L, nv, _MINVAL)
  chol_solve(x, L, y, nv)


@jit
def _mul_j(J, adr, nnz, col, nefc, res, vec):
  """res = J vec for sparse rows (a context's: c.J, c.Jadr, c.Jnnz, c.Jcol, c.nefc)."""
  for i in range(nefc):
    s = 0.0
    a0 = _u(adr[i])
    for a in range(a0, a0 + _u(nnz[i])):
      s += J[a] * vec[_u(col[a])]
    res[i] = s


@jit
def _mul_jt(J, adr, nnz, col, nefc, nv, res, f):
  """res = J' f for sparse rows."""
  for k in range(nv):
    res[k] = 0.0
  for i in range(nefc):
    fi = f[i]
    if fi != 0.0:
      a0 = _u(adr[i])
      for a in range(a0, a0 + _u(nnz[i])):
        res[_u(col[a])] += J[a] * fi


@jit
def _mul_m(m, d, dofs, off, nv, res, vec):
  """res = M vec on the dofs `dofs` (a context's: c.dofs, c.adr, c.nv), mj_mulM restricted to
  them in the same summation order."""
  M = _metric(m, d)[0]
  rowadr, rownnz, colind = m.M_rowadr, m.M_rownnz, m.M_colind
  dof2idof = d.map_dof2idof
  for i in range(nv):
    res[i] = 0.0
  for i in range(nv):
    g = _u(dofs[i])
    adr = _u(rowadr[g])
    n = _u(rownnz[g] - 1)
    res[i] += M[adr + n] * vec[i]
    for a in range(adr, adr + n):
      k = _u(dof2idof[_u(colind[a])] - off)
      res[i] += M[a] * vec[k]
      res[k] += M[a] * vec[i]
  if d.discrete_coupled[0]:
    _mul_couplings(m, d, res, vec)


@jit
def _solve_m(m, d, dofs, off, nv, x, y):
  """x = M^-1 y on the dofs `dofs` with the factor qLD (mj_solveLD restricted to them)."""
  _, qLD, diaginv = _metric(m, d)
  rowadr, rownnz, colind = m.M_rowadr, m.M_rownnz, m.M_colind
  dof2idof = d.map_dof2idof
  for i in range(nv):
    x[i] = y[i]
  for r in range(nv):
    i = _u(nv - 1 - r)
    g = _u(dofs[i])
    xi = x[i]
    if rownnz[g] == 1 or xi == 0.0:
      continue
    start = _u(rowadr[g])
    for a in range(start, start + _u(rownnz[g] - 1)):
      x[_u(dof2idof[_u(colind[a])] - off)] -= qLD[a] * xi
  for i in range(nv):
    x[i] *= diaginv[_u(dofs[i])]
  for i in range(nv):
    g = _u(dofs[i])
    n = rownnz[g] - 1
    if n > 0:
      start = _u(rowadr[g])
      s = 0.0
      for a in range(start, start + _u(n)):
        s += qLD[a] * x[_u(dof2idof[_u(colind[a])] - off)]
      x[i] -= s


@_inline
def _primal_update_constraint(m, d, c, flg_cone_hessian):
  """Constraint update at the current qacc; returns (cost incl. Gauss, Gauss, nactive, ncone)."""
  nv, nefc = c.nv, c.nefc
  Ma = d.solver_nv[_MA]
  cost = constraint_update_rows(d, c.ne, c.nf, nefc, c.D, c.R, c.floss, c.typ, c.eid, c.force,
                                c.state, d.solver_efc[_JAREF], flg_cone_hessian)
  _mul_jt(c.J, c.Jadr, c.Jnnz, c.Jcol, nefc, nv, c.qfrc_constraint, c.force)
  state, qfrc_smooth, qacc, qacc_smooth = c.state, c.qfrc_smooth, c.qacc, c.qacc_smooth
  nactive = 0
  ncone = 0
  for i in range(nefc):
    if state[i] != _SATISFIED:
      nactive += 1
    if state[i] == _CONE:
      ncone += 1
  gauss = 0.0
  for i in range(nv):
    gauss += 0.5 * (Ma[i] - qfrc_smooth[i]) * (qacc[i] - qacc_smooth[i])
  return cost + gauss, gauss, nactive, ncone


@_inline
def _primal_update_gradient(m, d, c, flg_newton, ncone):
  """grad = M qacc - qfrc_smooth - qfrc_constraint; Mgrad = H^-1 grad (Newton) or M^-1 grad."""
  grad, Ma = d.solver_nv[_GRAD], d.solver_nv[_MA]
  qfrc_smooth, qfrc_constraint = c.qfrc_smooth, c.qfrc_constraint
  for i in range(c.nv):
    grad[i] = Ma[i] - qfrc_smooth[i] - qfrc_constraint[i]
  _primal_update_mgrad(m, d, c, flg_newton, ncone)


@_inline
def _primal_update_mgrad(m, d, c, flg_newton, ncone):
  """Mgrad = H^-1 grad (Newton, with cones when any) or M^-1 grad (CG preconditioner)."""
  grad, Mgrad = d.solver_nv[_GRAD], d.solver_nv[_MGRAD]
  if flg_newton:
    if _sparse(d, c.nv):   # in the symbolic analysis' order
      v, perm = d.solver_nv[_PERMV], d.solver_Lnnz[5]
      for i in range(c.nv):
        v[i] = grad[perm[i]]
      chol_solve_sp(v, c.Lcone if ncone else c.L, v, c.nv, d.solver_Lpat[0],
                    d.solver_Lnnz[0], d.solver_Lpat[1], d.solver_Lnnz[1])
      for i in range(c.nv):
        Mgrad[perm[i]] = v[i]
    else:
      chol_solve(Mgrad, c.Lcone if ncone else c.L, grad, c.nv)
  elif d.discrete_coupled[0]:
    # the discrete integrator's metric with its couplings: its dense factor, which
    # solve_metric_dense left in solver_L (the Newton Hessian factorises there only later)
    chol_solve(Mgrad, c.L, grad, c.nv)
  else:
    _solve_m(m, d, c.dofs, c.adr, c.nv, Mgrad, grad)


@_inline
def _primal_prepare(m, d, c):
  """Line-search polynomials along `search`: Gauss (returned) and per row (solver_quad)."""
  nv, nefc = c.nv, c.nefc
  v = d.solver_nv[_SEARCH]
  Ma, Mv = d.solver_nv[_MA], d.solver_nv[_MV]
  Jv, Jaref = d.solver_efc[_JV], d.solver_efc[_JAREF]
  D, typ, eid = c.D, c.typ, c.eid
  quad = d.solver_quad
  g1 = _dot(v, Ma, nv) - _dot(c.qfrc_smooth, v, nv)
  g2 = 0.5 * _dot(v, Mv, nv)
  skip = 0
  for i in range(nefc):
    if i < skip:
      continue
    q = 3 * i
    DJ0 = D[i] * Jaref[i]
    quad[q] = Jaref[i] * DJ0
    quad[q + 1] = Jv[i] * DJ0
    quad[q + 2] = Jv[i] * D[i] * Jv[i]
    step = 1
    if typ[i] == _ELLIPTIC:
      con = eid[i]
      dim = d.contact_dim[con]
      mu = d.contact_mu[con]
      fr = d.contact_friction[con]
      for j in range(1, dim):
        DJj = D[i + j] * Jaref[i + j]
        quad[q] += Jaref[i + j] * DJj
        quad[q + 1] += Jv[i + j] * DJj
        quad[q + 2] += Jv[i + j] * D[i + j] * Jv[i + j]
      UU = 0.0
      UV = 0.0
      VV = 0.0
      for j in range(1, dim):
        uj = Jaref[i + j] * fr[j - 1]
        vj = Jv[i + j] * fr[j - 1]
        UU += uj * uj
        UV += uj * vj
        VV += vj * vj
      quad[q + 3] = Jaref[i] * mu
      quad[q + 4] = Jv[i] * mu
      quad[q + 5] = UU
      quad[q + 6] = UV
      quad[q + 7] = VV
      quad[q + 8] = D[i] / ((mu * mu) * (1 + (mu * mu)))
      step = dim
    quad[q] *= 0.5
    quad[q + 2] *= 0.5
    skip = i + step
  return g1, g2


@jit
def _friction_cost(x, f, Rf, D):
  """Huber cost of a friction-loss row at x = J qacc - aref."""
  if -Rf < x and x < Rf:
    return 0.5 * D * x * x
  elif x <= -Rf:
    return f * (-0.5 * Rf - x)
  return f * (-0.5 * Rf + x)


@jit
def _friction_cost_dif(start, x, f, Rf, D):
  """_friction_cost(x) - _friction_cost(start), without cancellation in a shared zone."""
  s0 = 0 if (-Rf < start and start < Rf) else (-1 if start <= -Rf else 1)
  sx = 0 if (-Rf < x and x < Rf) else (-1 if x <= -Rf else 1)
  if s0 == 0 and sx == 0:
    return 0.5 * D * (x - start) * (x + start)
  if s0 == -1 and sx == -1:
    return f * (start - x)
  if s0 == 1 and sx == 1:
    return f * (x - start)
  return _friction_cost(x, f, Rf, D) - _friction_cost(start, f, Rf, D)


@jit
def _zone(N, Tsqr, mu):
  """Elliptic zone (1 top, 2 bottom, 3 middle) and T = sqrt(Tsqr)."""
  if Tsqr <= 0:
    return (2 if N < 0 else 1), 0.0
  T = math.sqrt(Tsqr)
  if N >= mu * T:
    return 1, T
  if mu * N + T <= 0:
    return 2, T
  return 3, T


@jit
def _elliptic_cost_dif(quad, q, alpha, mu, Dm):
  """cost(alpha) - cost(0) of one elliptic contact, in closed form by zones (ellipticCostDif)."""
  U0, V0, UU, UV, VV = quad[q + 3], quad[q + 4], quad[q + 5], quad[q + 6], quad[q + 7]
  z0, T0 = _zone(U0, UU, mu)
  N = U0 + alpha * V0
  Tsqr = UU + alpha * (2 * UV + alpha * VV)
  za, T = _zone(N, Tsqr, mu)
  if z0 == 1 and za == 1:
    return 0.0
  if z0 == 2 and za == 2:
    return alpha * alpha * quad[q + 2] + alpha * quad[q + 1]
  if z0 == 3 and za == 3:
    Tsqr_delta = alpha * (2 * UV + alpha * VV)
    T_delta = Tsqr_delta / (T + T0)
    r_delta = alpha * V0 - mu * T_delta
    r0 = U0 - mu * T0
    return 0.5 * Dm * r_delta * (2 * r0 + r_delta)
  if z0 == 3 and za == 2:
    dq = alpha * (alpha * quad[q + 2] + quad[q + 1])
    b0 = mu * U0 + T0
    return dq + 0.5 * Dm * b0 * b0
  if z0 == 2 and za == 3:
    dq = alpha * (alpha * quad[q + 2] + quad[q + 1])
    b = mu * N + T
    return dq - 0.5 * Dm * b * b
  if z0 == 1 and za == 2:
    return alpha * alpha * quad[q + 2] + alpha * quad[q + 1] + quad[q]
  if z0 == 1 and za == 3:
    r = N - mu * T
    return 0.5 * Dm * r * r
  if z0 == 3 and za == 1:
    r0 = U0 - mu * T0
    return -0.5 * Dm * r0 * r0
  if z0 == 2 and za == 1:
    return -quad[q]
  return 0.0


@jit
def _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, alpha, g1, g2):
  """(cost(alpha) - cost(0), first and second derivative) along the search (PrimalEval)."""
  quad = d.solver_quad
  Jaref, Jv = d.solver_efc[_JAREF], d.solver_efc[_JV]
  cost = 0.0
  d0 = 0.0
  d1 = 0.0
  t0 = 0.0
  t1 = g1
  t2 = g2
  skip = 0
  for i in range(nefc):
    if i < skip:
      continue
    q = 3 * i
    if i < ne:
      t1 += quad[q + 1]
      t2 += quad[q + 2]
      continue
    if i < ne + nf:
      start = Jaref[i]
      dr = Jv[i]
      x = start + alpha * dr
      f = floss[i]
      D = Dv[i]
      Rf = Rv[i] * f
      cost += _friction_cost_dif(start, x, f, Rf, D)
      if -Rf < x and x < Rf:
        d0 += D * x * dr
        d1 += D * dr * dr
      elif x <= -Rf:
        d0 += -f * dr
      else:
        d0 += f * dr
      continue
    if typ[i] == _ELLIPTIC:
      con = eid[i]
      dim = d.contact_dim[con]
      mu = d.contact_mu[con]
      U0, V0, UU, UV, VV, Dm = (quad[q + 3], quad[q + 4], quad[q + 5], quad[q + 6], quad[q + 7],
                                quad[q + 8])
      cost += _elliptic_cost_dif(quad, q, alpha, mu, Dm)
      N = U0 + alpha * V0
      Tsqr = UU + alpha * (2 * UV + alpha * VV)
      if Tsqr <= 0:
        if N < 0:
          d0 += 2 * alpha * quad[q + 2] + quad[q + 1]
          d1 += 2 * quad[q + 2]
      else:
        T = math.sqrt(Tsqr)
        if N >= mu * T:
          pass
        elif mu * N + T <= 0:
          d0 += 2 * alpha * quad[q + 2] + quad[q + 1]
          d1 += 2 * quad[q + 2]
        else:
          N1 = V0
          T1 = (UV + alpha * VV) / T
          T2 = VV / T - (UV + alpha * VV) * T1 / (T * T)
          d0 += Dm * (N - mu * T) * (N1 - mu * T1)
          d1 += Dm * ((N1 - mu * T1) * (N1 - mu * T1) + (N - mu * T) * (-mu * T2))
      skip = i + dim
      continue
    start = Jaref[i]
    x = start + alpha * Jv[i]
    cost0 = quad[q] if start < 0 else 0.0
    if x < 0:
      t0 += quad[q] - cost0
      t1 += quad[q + 1]
      t2 += quad[q + 2]
    else:
      cost -= cost0
  cost += alpha * alpha * t2 + alpha * t1 + t0
  d0 += 2 * alpha * t2 + t1
  d1 += 2 * t2
  if d1 <= 0:
    d1 = _MINVAL
  return cost, d0, d1


@jit
def _update_bracket(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, g1, g2, p, c0, c1, c2):
  """MuJoCo's updateBracket: move bracket end p to the best same-sign candidate; returns
  (flag, new p, next point from p's Newton step or p itself when flag is 0)."""
  flag = 0
  for q in (c0, c1, c2):
    if p[2] < 0 and q[2] < 0 and p[2] < q[2]:
      p = q
      flag = 1
    elif p[2] > 0 and q[2] > 0 and p[2] > q[2]:
      p = q
      flag = 2
  pnext = p
  if flag:
    a = p[0] - p[2] / p[3]
    cst, g, h = _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, a, g1, g2)
    pnext = (a, cst, g, h)
  return flag, p, pnext


@jit
def _primal_search(m, d, c, tolerance, ls_iterations, scale):
  """MuJoCo's exact line search (PrimalSearch); returns (alpha, improvement, neval, slope)."""
  nv = c.nv
  search = d.solver_nv[_SEARCH]
  snorm = _norm(search, nv)
  if snorm < _MINVAL:
    return 0.0, 0.0, 0, 1.0
  gtol = tolerance * snorm / scale
  slopescl = scale / snorm
  _mul_m(m, d, c.dofs, c.adr, nv, d.solver_nv[_MV], search)
  _mul_j(c.J, c.Jadr, c.Jnnz, c.Jcol, c.nefc, d.solver_efc[_JV], search)
  g1, g2 = _primal_prepare(m, d, c)
  ne, nf, nefc = c.ne, c.nf, c.nefc
  floss, Dv, Rv, typ, eid = c.floss, c.D, c.R, c.typ, c.eid

  neval = 0
  cst, g, h = _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, 0.0, g1, g2)
  p0 = (0.0, cst, g, h)
  neval += 1
  a = p0[0] - p0[2] / p0[3]
  cst, g, h = _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, a, g1, g2)
  p1 = (a, cst, g, h)
  neval += 1
  if abs(p1[2]) < gtol and (p1[0] == 0 or p1[1] < 0):
    return p1[0], -p1[1], neval, abs(p1[2]) * slopescl

  direction = 1.0 if p1[2] < 0 else -1.0
  p2 = p0
  p2update = True
  while p1[2] * direction <= -gtol and neval < ls_iterations:
    p2 = p1
    p2update = True
    a = p1[0] - p1[2] / p1[3]
    cst, g, h = _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, a, g1, g2)
    p1 = (a, cst, g, h)
    neval += 1
    if abs(p1[2]) < gtol and p1[1] < 0:
      return p1[0], -p1[1], neval, abs(p1[2]) * slopescl

  if neval >= ls_iterations:
    return p1[0], -p1[1], neval, abs(p1[2]) * slopescl
  if not p2update:
    return p1[0], -p1[1], neval, abs(p1[2]) * slopescl

  p2next = p1
  a = p1[0] - p1[2] / p1[3]
  cst, g, h = _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, a, g1, g2)
  p1next = (a, cst, g, h)
  neval += 1

  while neval < ls_iterations:
    a = 0.5 * (p1[0] + p2[0])
    cst, g, h = _primal_eval(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, a, g1, g2)
    pmid = (a, cst, g, h)
    neval += 1
    c0, c1, c2 = p1next, p2next, pmid
    bestcost = 0.0
    best = -1
    k = 0
    for cand in (c0, c1, c2):
      if abs(cand[2]) < gtol and (best == -1 or cand[1] < bestcost):
        bestcost = cand[1]
        best = k
      k += 1
    if best >= 0:
      cand = c0 if best == 0 else (c1 if best == 1 else c2)
      return cand[0], -cand[1], neval, abs(cand[2]) * slopescl
    b1, p1, p1next_new = _update_bracket(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, g1,
                                           g2, p1, c0, c1, c2)
    if b1:
      p1next = p1next_new
      neval += 1
    b2, p2, p2next_new = _update_bracket(d, ne, nf, nefc, floss, Dv, Rv, typ, eid, g1,
                                           g2, p2, c0, c1, c2)
    if b2:
      p2next = p2next_new
      neval += 1
    if not b1 and not b2:
      return pmid[0], -pmid[1], neval, abs(pmid[2]) * slopescl

  if p1[1] <= p2[1] and p1[1] < 0:
    return p1[0], -p1[1], neval, abs(p1[2]) * slopescl
  elif p2[1] <= p1[1] and p2[1] < 0:
    return p2[0], -p2[1], neval, abs(p2[2]) * slopescl
  return 0.0, 0.0, neval, 1.0


@jit
def _hessian_cone(m, d, c):
  """Lcone = L with each cone contact's Hessian added by rank-1 updates; returns the count."""
  nv, nefc = c.nv, c.nefc
  L, Lcone, LTJ = c.L, c.Lcone, d.solver_LTJ
  for r in range(nv):
    for k in range(nv):
      Lcone[r, k] = L[r, k]
  local = d.solver_mat[0]
  iperm = d.solver_Lnnz[6]
  sparse = _sparse(d, nv)
  nupdate = 0
  i = 0
  while i < nefc:
    if c.state[i] != _CONE:
      i += 1
      continue
    con = c.eid[i]
    dim = d.contact_dim[con]
    H = d.contact_H[con]
    for r in range(dim):
      for k in range(dim):
        local[r, k] = H[r * dim + k]
    chol_factor(local, dim, _MINVAL)
    for r in range(dim):
      for k in range(nv):
        LTJ[r, k] = 0.0
    for r in range(dim):
      a0 = c.Jadr[i + r]
      a1 = a0 + c.Jnnz[i + r]
      for q in range(r + 1):
        s = local[r, q]
        for a in range(a0, a1):
          LTJ[q, iperm[c.Jcol[a]] if sparse else c.Jcol[a]] += s * c.J[a]
    for r in range(dim):
      _chol_update_ctx(d, Lcone, LTJ[r], nv, True)
    nupdate += dim
    i += dim
  return nupdate


@_inline
def _add_lower(L, r, q, v):
  """Adds v to the lower triangle's copy of entry (r, q) of a symmetric matrix."""
  if q <= r:
    L[r, q] += v
  else:
    L[q, r] += v


@_inline
def _add_jtdj_rows(L, J, adr, nnz, col, Dh, i, j, iperm, sparse):
  """L += J_k' Dh_k J_k for rows k in [i, j), lower triangle, columns through iperm when
  sparse (in the symbolic analysis' order)."""
  for k in range(i, j):
    di = Dh[k]
    if di == 0.0:
      continue
    ak = adr[k]
    for a in range(ak, ak + nnz[k]):
      r = iperm[col[a]] if sparse else col[a]
      jr = J[a] * di
      for b in range(ak, a + 1):
        _add_lower(L, r, iperm[col[b]] if sparse else col[b], jr * J[b])


@jit
def _factorize_hessian(m, d, c, ncone):
  """L = chol(M + J' D J) over quadratic rows (MakeHessian + FactorizeHessian; dense, or in
  the symbolic analysis' order and pattern for islands of _SPARSE_NV dofs or more); returns
  nupdate."""
  nv, nefc = c.nv, c.nefc
  L, D, state = c.L, c.D, c.state
  Dh = d.solver_efc[_DH]
  for i in range(nefc):
    Dh[i] = D[i] if state[i] == _QUADRATIC else 0.0
  for r in range(nv):
    for k in range(nv):
      L[r, k] = 0.0
  J, adr, nnz, col = c.J, c.Jadr, c.Jnnz, c.Jcol
  M, dofs, dof2idof, off = _metric(m, d)[0], c.dofs, d.map_dof2idof, c.adr
  sparse = _sparse(d, nv)
  iperm = d.solver_Lnnz[6]   # dof -> its place in the symbolic order (sparse only)
  if sparse:
    blk = d.solver_scratch
    i = 0
    while i < nefc:
      # rows i..j-1 with the same columns (a contact's rows, mostly) are summed in a small
      # dense block first, which is added to L once
      nz, a0 = nnz[i], adr[i]
      j = i + 1
      while j < nefc and nnz[j] == nz and j - i < 8:
        same = True
        for t in range(nz):
          if col[adr[j] + t] != col[a0 + t]:
            same = False
            break
        if not same:
          break
        j += 1
      ntri = nz * (nz + 1) // 2
      if j - i > 1 and ntri <= blk.shape[0]:
        for t in range(ntri):
          blk[t] = 0.0
        for r in range(i, j):
          di = Dh[r]
          if di == 0.0:
            continue
          ar = adr[r]
          t = 0
          for a in range(nz):
            jr = J[ar + a] * di
            for b in range(a + 1):
              blk[t] += jr * J[ar + b]
              t += 1
        t = 0
        for a in range(nz):
          r = iperm[col[a0 + a]]
          for b in range(a + 1):
            _add_lower(L, r, iperm[col[a0 + b]], blk[t])
            t += 1
      else:
        _add_jtdj_rows(L, J, adr, nnz, col, Dh, i, j, iperm, True)
      i = j
  else:
    _add_jtdj_rows(L, J, adr, nnz, col, Dh, 0, nefc, iperm, False)
  for r in range(nv):
    g = dofs[r]
    pr = iperm[r] if sparse else r
    for a in range(m.M_rowadr[g], m.M_rowadr[g] + m.M_rownnz[g]):
      q = dof2idof[m.M_colind[a]] - off
      _add_lower(L, pr, iperm[q] if sparse else q, M[a])
  if d.discrete_coupled[0]:
    _add_couplings(m, d, L)
  if sparse:
    chol_factor_sp(L, nv, _MINVAL, d.solver_Lpat[0], d.solver_Lnnz[0], d.solver_Lpat[1],
                   d.solver_Lnnz[1])
  else:
    chol_factor(L, nv, _MINVAL)
  if ncone:
    _hessian_cone(m, d, c)
  return nefc


@jit
def _hessian_incremental(m, d, c, oldstate, ncone):
  """Rank-1 updates of L for rows entering/leaving the quadratic state; refactor when the
  factor loses rank (HessianIncremental); returns nupdate."""
  nv, nefc = c.nv, c.nefc
  cholupd = d.solver_nv[_CHOLUPD]
  state, D, J, Jadr, Jnnz, Jcol, L = c.state, c.D, c.J, c.Jadr, c.Jnnz, c.Jcol, c.L
  nupdate = 0
  for i in range(nefc):
    old_q = oldstate[i] == _QUADRATIC
    new_q = state[i] == _QUADRATIC
    if old_q == new_q:
      continue
    sq = math.sqrt(D[i])
    for k in range(nv):
      cholupd[k] = 0.0
    if _sparse(d, nv):
      iperm = d.solver_Lnnz[6]
      for a in range(Jadr[i], Jadr[i] + Jnnz[i]):
        cholupd[iperm[Jcol[a]]] = J[a] * sq
    else:
      for a in range(Jadr[i], Jadr[i] + Jnnz[i]):
        cholupd[Jcol[a]] = J[a] * sq
    rank = _chol_update_ctx(d, L, cholupd, nv, new_q)
    nupdate += 1
    if rank < nv:
      return _factorize_hessian(m, d, c, ncone)
  if ncone:
    nupdate += _hessian_cone(m, d, c)
  return nupdate


@_inline
def _island_inertia_scale(m, d, c):
  """1 / trace of the context's block of M: the statistics' scale (MuJoCo 4.0, islands and the
  one-system solve alike)."""
  M, dofs = d.M, c.dofs
  s = 0.0
  for i in range(c.nv):
    g = dofs[i]
    s += M[m.M_rowadr[g] + m.M_rownnz[g] - 1]
  return 1.0 / s if s > 0 else 1.0


@jit
def sol_primal(m, d, c, island, maxiter, flg_newton):
  """CG or Newton on one context from its current qacc (mj_solPrimal); statistics go to
  `island` (0 for the one-system solve); returns iterations."""
  nv, nefc = c.nv, c.nefc
  ws = d.solver_nv
  Ma, Mv, grad, Mgrad, search = ws[_MA], ws[_MV], ws[_GRAD], ws[_MGRAD], ws[_SEARCH]
  jaref, jv = d.solver_efc[_JAREF], d.solver_efc[_JV]
  oldstate = d.solver_int[0]
  tol = m.opt_tolerance[0]
  cone_hessian = flg_newton and m.opt_cone[0] == _CONE_ELLIPTIC
  qacc, aref, state = c.qacc, c.aref, c.state
  qfrc_smooth, qfrc_constraint = c.qfrc_smooth, c.qfrc_constraint

  _mul_m(m, d, c.dofs, c.adr, nv, Ma, qacc)
  _mul_j(c.J, c.Jadr, c.Jnnz, c.Jcol, nefc, jaref, qacc)
  for i in range(nefc):
    jaref[i] -= aref[i]

  cost, gauss, nactive, ncone = _primal_update_constraint(m, d, c, cone_hessian)
  for i in range(nv):
    grad[i] = Ma[i] - qfrc_smooth[i] - qfrc_constraint[i]
  scale = _island_inertia_scale(m, d, c)

  _primal_update_mgrad(m, d, c, False, 0)
  flg_gap = max(0.0, 0.5 * scale * _dot(grad, Mgrad, nv)) < tol
  flg_gradient = scale * _norm(grad, nv) < tol
  flg_done = flg_gap and (not flg_newton or flg_gradient)

  nupdate = 0
  if not flg_done and flg_newton:
    if _sparse(d, nv):
      _hessian_symbolic(m, d, c)
    nupdate = _factorize_hessian(m, d, c, ncone)
    _primal_update_mgrad(m, d, c, True, ncone)
    flg_done = flg_gradient and max(0.0, 0.5 * scale * _dot(grad, Mgrad, nv)) < tol

  if not flg_done:
    for i in range(nv):
      search[i] = -Mgrad[i]

  it = 0
  while not flg_done and it < maxiter:
    alpha, ls_improvement, neval, slope = _primal_search(
        m, d, c, tol * m.opt_ls_tolerance[0], m.opt_ls_iterations[0], scale)
    if alpha == 0:
      break
    for i in range(nv):
      qacc[i] += alpha * search[i]
      Ma[i] += alpha * Mv[i]
    for i in range(nefc):
      jaref[i] += alpha * jv[i]
    if not flg_newton:
      for i in range(nv):
        ws[_GRADOLD, i] = grad[i]
        ws[_MGRADOLD, i] = Mgrad[i]
    for i in range(nefc):
      oldstate[i] = state[i]

    cost, gauss, nactive, ncone = _primal_update_constraint(m, d, c, cone_hessian)
    if flg_newton:
      nupdate = _hessian_incremental(m, d, c, oldstate, ncone)
    _primal_update_gradient(m, d, c, flg_newton, ncone)

    nchange = 0
    for i in range(nefc):
      if state[i] != oldstate[i]:
        nchange += 1
    improvement = scale * ls_improvement
    gradient = scale * _norm(grad, nv)
    _save_stats(d, island, it, improvement, gradient, slope, nactive, nchange, neval, nupdate)
    decrement = max(0.0, 0.5 * scale * _dot(grad, Mgrad, nv)) if flg_newton else 0.0
    it += 1
    if ((improvement > 0 and improvement < tol) or gradient < tol
        or (flg_newton and decrement < tol)):
      break

    if flg_newton:
      for i in range(nv):
        search[i] = -Mgrad[i]
    else:
      _cg_direction(d, nv)
  return it


@jit
def _cg_direction(d, nv):
  """search = -Mgrad + beta search, Hager-Zhang beta with MuJoCo's truncation."""
  ws = d.solver_nv
  grad, Mgrad, search = ws[_GRAD], ws[_MGRAD], ws[_SEARCH]
  graddif, Mgraddif = ws[_GRADDIF], ws[_MGRADDIF]
  for i in range(nv):
    graddif[i] = grad[i] - ws[_GRADOLD, i]
    Mgraddif[i] = Mgrad[i] - ws[_MGRADOLD, i]
  d_dot_y = _dot(search, graddif, nv)
  if d_dot_y < _MINVAL:
    beta = 0.0
  else:
    y_dot_My = _dot(graddif, Mgraddif, nv)
    y_dot_Mgrad = _dot(graddif, Mgrad, nv)
    d_dot_grad = _dot(search, grad, nv)
    beta_hz = (y_dot_Mgrad - 2 * (y_dot_My / d_dot_y) * d_dot_grad) / d_dot_y
    d_norm = _norm(search, nv)
    grad_norm = _norm(grad, nv)
    eta_k = -1.0 / max(_MINVAL, d_norm * min(0.01, grad_norm))
    beta = max(eta_k, beta_hz)
  for i in range(nv):
    search[i] = -Mgrad[i] + beta * search[i]


# ---------------------------------------------------------------------------------------------
# dual solver (PGS): mj_solPGS

@jit
def _pcg32_next(state):
  """PCG32 step with increment 1 (MuJoCo's shuffle generator): (new state, uint32 output)."""
  new = state * np.uint64(6364136223846793005) + np.uint64(1)
  xs = (((state >> np.uint64(18)) ^ state) >> np.uint64(27)) & np.uint64(0xFFFFFFFF)
  rot = state >> np.uint64(59)
  left = (np.uint64(32) - rot) & np.uint64(31)
  r = ((xs >> rot) | (xs << left)) & np.uint64(0xFFFFFFFF)
  return new, np.int64(r)


@jit
def make_y(m, d):
  """solver_Y row i = D^-1/2 L^-T J_i' for every row, M = L'DL the tree factor qLD (the half
  solve of MuJoCo's mj_solveM2), so that AR = Y Y' + diag(R). L^-T carries a dof's entry to
  its ancestors only, so row i covers the ancestors of J_i's dofs (J_i's own pattern for a
  body's Jacobian): a row of Y costs what the row of J does. Sparse rows, columns ascending,
  exact zeros left out."""
  nv = m.nv
  x = d.cnstr_vec
  dsq = d.solver_nv[_DSQRT]
  _, qLD, diaginv = _metric(m, d)   # the backbone under the discrete integrator
  for k in range(nv):
    x[k] = 0.0
    dsq[k] = math.sqrt(diaginv[k])
  J, adr, nnz, col = d.efc_J, d.efc_J_rowadr, d.efc_J_rownnz, d.efc_J_colind
  Y, Yadr, Ynnz, Ycol = d.solver_Y, d.solver_Yadr, d.solver_Ynnz, d.solver_Ycol
  rowadr, rownnz, colind = m.M_rowadr, m.M_rownnz, m.M_colind
  treeid, tadr, tnum = m.dof_treeid, m.tree_dofadr, m.tree_dofnum
  y0 = 0
  for i in range(d.nefc[0]):
    a0, a1 = adr[i], adr[i] + nnz[i]
    Yadr[i] = y0
    a = a0
    while a < a1:
      t = treeid[col[a]]
      lo, hi = tadr[t], tadr[t] + tnum[t]
      while a < a1 and col[a] < hi:
        x[col[a]] = J[a]
        a += 1
      last = col[a - 1]
      for k in range(last, lo - 1, -1):   # L^-T, as mj_solveM's first pass
        xk = x[k]
        if xk == 0.0 or rownnz[k] == 1:
          continue
        start = rowadr[k]
        for q in range(start, start + rownnz[k] - 1):
          x[colind[q]] -= qLD[q] * xk
      for k in range(lo, last + 1):
        if x[k] != 0.0:
          Y[y0] = x[k] * dsq[k]
          Ycol[y0] = k
          x[k] = 0.0
          y0 += 1
    Ynnz[i] = y0 - Yadr[i]


@jit
def _ar_entry(d, a, b):
  """AR[a, b] = Y_a . Y_b (+ R_a on the diagonal): a merge of the two sorted sparse rows."""
  Y, Ycol = d.solver_Y, d.solver_Ycol
  p = _u(d.solver_Yadr[a])
  p1 = p + _u(d.solver_Ynnz[a])
  s = 0.0
  if a == b:
    for t in range(p, p1):
      s += Y[t] * Y[t]
    return s + d.efc_R[a]
  q = _u(d.solver_Yadr[b])
  q1 = q + _u(d.solver_Ynnz[b])
  while p < p1 and q < q1:
    cp, cq = Ycol[p], Ycol[q]
    if cp == cq:
      s += Y[p] * Y[q]
      p += _u(1)
      q += _u(1)
    elif cp < cq:
      p += _u(1)
    else:
      q += _u(1)
  return s


@jit
def _yt_f(d, w, f, nefc, rows, nv):
  """w = Y' f over rows[:nefc] (all rows when rows is None; other rows count as zero)."""
  for k in range(nv):
    w[k] = 0.0
  Y, adr, nnz, col = d.solver_Y, d.solver_Yadr, d.solver_Ynnz, d.solver_Ycol
  for c in range(nefc):
    i = c if rows is None else rows[c]
    fi = f[i]
    if fi != 0.0:
      a0 = _u(adr[i])
      for a in range(a0, a0 + _u(nnz[i])):
        w[_u(col[a])] += Y[a] * fi


@jit
def dual_cost(m, d, f):
  """0.5 f' AR f + f' b = 0.5 |Y' f|^2 + sum 0.5 R f^2 + f b (the cost PGS decreases)."""
  nefc = d.nefc[0]
  w = d.solver_nv[_TMP]
  _yt_f(d, w, f, nefc, None, m.nv)
  s = 0.5 * _dot(w, w, m.nv)
  for i in range(nefc):
    s += f[i] * d.efc_b[i] + 0.5 * d.efc_R[i] * f[i] * f[i]
  return s


@jit
def _dual_state(d, state, ne, nf, nefc, rows):
  """efc_state of rows[:nefc] from the forces (dual classification); returns nactive
  (dualState)."""
  force, floss = d.efc_force, d.efc_frictionloss
  nactive = ne + nf
  for c in range(ne):
    state[rows[c]] = _QUADRATIC
  for c in range(ne, ne + nf):
    i = rows[c]
    if force[i] <= -floss[i]:
      state[i] = _LINEARPOS
    elif force[i] >= floss[i]:
      state[i] = _LINEARNEG
    else:
      state[i] = _QUADRATIC
  c = ne + nf
  while c < nefc:
    i = rows[c]
    if d.efc_type[i] != _ELLIPTIC:
      if force[i] <= 0:
        state[i] = _SATISFIED
      else:
        state[i] = _QUADRATIC
        nactive += 1
      c += 1
      continue
    con = d.efc_id[i]
    dim = d.contact_dim[con]
    mu = d.contact_mu[con]
    fr = d.contact_friction[con]
    N = force[i] / mu
    T = 0.0
    for j in range(1, dim):
      fj = force[i + j] / fr[j - 1]
      T += fj * fj
    T = math.sqrt(T)
    if mu * N >= T:
      st = _SATISFIED
    elif N + mu * T <= 0:
      st = _QUADRATIC
      nactive += dim
    else:
      st = _CONE
      nactive += dim
    for j in range(dim):
      state[i + j] = st
    c += dim
  return nactive


@jit
def _project_ellipsoid(force, i0, normal, fr, dim, feasible):
  """Scale tangential force[i0:i0+dim-1] onto/into the friction ellipsoid."""
  s = 0.0
  for j in range(dim - 1):
    s += force[i0 + j] * force[i0 + j] / (fr[j] * fr[j])
  n2 = normal * normal
  if not feasible or s > n2:
    scl = math.sqrt(n2 / max(_MINVAL, s))
    for j in range(dim - 1):
      force[i0 + j] *= scl


@jit
def qcqp(res, A, b, dd, r, n, As, Ala, bs, tmp):
  """min 0.5 x'Ax + x'b s.t. sum (x_i/d_i)^2 <= r^2 by Newton on the multiplier; returns True
  when the constraint is active (mju_QCQP2 / QCQP3 / QCQP, n <= 5). As, Ala (5x5), bs, tmp
  (5) are work arrays."""
  for i in range(n):
    bs[i] = b[i] * dd[i]
    for j in range(n):
      As[i, j] = A[i, j] * dd[i] * dd[j]
  la = 0.0
  if n == 2:
    A11, A22, A12, b1, b2 = As[0, 0], As[1, 1], As[0, 1], bs[0], bs[1]
    v1 = 0.0
    v2 = 0.0
    for _ in range(20):
      det = (A11 + la) * (A22 + la) - A12 * A12
      if det < 1e-10:
        res[0] = 0.0
        res[1] = 0.0
        return False
      detinv = 1.0 / det
      P11 = (A22 + la) * detinv
      P22 = (A11 + la) * detinv
      P12 = -A12 * detinv
      v1 = -P11 * b1 - P12 * b2
      v2 = -P12 * b1 - P22 * b2
      val = v1 * v1 + v2 * v2 - r * r
      if val < 1e-10:
        break
      deriv = -2.0 * (P11 * v1 * v1 + 2.0 * P12 * v1 * v2 + P22 * v2 * v2)
      delta = -val / deriv
      if delta < 1e-10:
        break
      la += delta
    res[0] = v1 * dd[0]
    res[1] = v2 * dd[1]
    return la != 0
  if n == 3:
    A11, A22, A33 = As[0, 0], As[1, 1], As[2, 2]
    A12, A13, A23 = As[0, 1], As[0, 2], As[1, 2]
    b1, b2, b3 = bs[0], bs[1], bs[2]
    v1 = 0.0
    v2 = 0.0
    v3 = 0.0
    for _ in range(20):
      P11 = (A22 + la) * (A33 + la) - A23 * A23
      P22 = (A11 + la) * (A33 + la) - A13 * A13
      P33 = (A11 + la) * (A22 + la) - A12 * A12
      P12 = A13 * A23 - A12 * (A33 + la)
      P13 = A12 * A23 - A13 * (A22 + la)
      P23 = A12 * A13 - A23 * (A11 + la)
      det = (A11 + la) * P11 + A12 * P12 + A13 * P13
      if det < 1e-10:
        res[0] = 0.0
        res[1] = 0.0
        res[2] = 0.0
        return False
      detinv = 1.0 / det
      P11 *= detinv
      P22 *= detinv
      P33 *= detinv
      P12 *= detinv
      P13 *= detinv
      P23 *= detinv
      v1 = -P11 * b1 - P12 * b2 - P13 * b3
      v2 = -P12 * b1 - P22 * b2 - P23 * b3
      v3 = -P13 * b1 - P23 * b2 - P33 * b3
      val = v1 * v1 + v2 * v2 + v3 * v3 - r * r
      if val < 1e-10:
        break
      deriv = (-2.0 * (P11 * v1 * v1 + P22 * v2 * v2 + P33 * v3 * v3)
               - 4.0 * (P12 * v1 * v2 + P13 * v1 * v3 + P23 * v2 * v3))
      delta = -val / deriv
      if delta < 1e-10:
        break
      la += delta
    res[0] = v1 * dd[0]
    res[1] = v2 * dd[1]
    res[2] = v3 * dd[2]
    return la != 0
  for _ in range(20):
    for i in range(n):
      for j in range(n):
        Ala[i, j] = As[i, j]
      Ala[i, i] += la
    if chol_factor(Ala, n, 1e-10) < n:
      for i in range(n):
        res[i] = 0.0
      return False
    chol_solve(res, Ala, bs, n)
    for i in range(n):
      res[i] = -res[i]
    val = _dot(res, res, n) - r * r
    if val < 1e-10:
      break
    chol_solve(tmp, Ala, res, n)
    deriv = -2.0 * _dot(res, tmp, n)
    delta = -val / deriv
    if delta < 1e-10:
      break
    la += delta
  for i in range(n):
    res[i] = res[i] * dd[i]
  return la != 0


@jit
def _solve_qcqp(d, force, i, dim, Ac, bc, fr):
  """Friction of the elliptic contact at row i: the QCQP in its ellipsoid of radius force[i],
  put on the ellipsoid when the constraint is active (solveQCQP)."""
  s = d.solver_scratch
  qres = s[40:46]
  active = qcqp(qres, Ac, bc, fr, force[i], dim - 1, d.solver_mat[3], d.solver_mat[4], s[56:62],
                s[64:70])
  for j in range(dim - 1):
    force[i + 1 + j] = qres[j]
  if active:
    _project_ellipsoid(force, i + 1, force[i], fr, dim, False)


@jit
def _project_cone(force, i, fr, dim, elliptic):
  """Project a contact's forces on its cone (elliptic) or the normal force on >= 0."""
  if elliptic:
    if force[i] < 0:
      for j in range(dim):
        force[i + j] = 0.0
    else:
      _project_ellipsoid(force, i + 1, force[i], fr, dim, True)
  elif force[i] < 0:
    force[i] = 0.0


@jit
def _block_dim(d, i):
  """Rows of the PGS block starting at row i: condim for elliptic contacts, else 1."""
  if d.efc_type[i] == _ELLIPTIC:
    return d.contact_dim[d.efc_id[i]]
  return 1


@jit
def _cost_change(A, force, i0, oldf, res, n):
  """Dual cost change of a block update; restores the block when the cost went up (costChange)."""
  change = 0.0
  for a in range(n):
    da = force[i0 + a] - oldf[a]
    s = 0.0
    for b in range(n):
      s += A[a, b] * (force[i0 + b] - oldf[b])
    change += 0.5 * da * s + da * res[a]
  if change > 1e-10:
    for a in range(n):
      force[i0 + a] = oldf[a]
    change = 0.0
  return change


@jit
def _residual(d, res, i, n, v, sub_r):
  """res[k] = (b + AR f)[i+k] for k < n, v = Y' f, without the R f term when sub_r
  (residual)."""
  for k in range(n):
    s = d.efc_b[i + k]
    if not sub_r:
      s += d.efc_R[i + k] * d.efc_force[i + k]
    a0 = _u(d.solver_Yadr[i + k])
    for a in range(a0, a0 + _u(d.solver_Ynnz[i + k])):
      s += d.solver_Y[a] * v[_u(d.solver_Ycol[a])]
    res[k] = s


@jit
def _apply_delta(d, v, i, n, oldf):
  """v += Y' (force - oldf) over rows i .. i+n-1: keeps v = Y' force current."""
  for k in range(n):
    dl = d.efc_force[i + k] - oldf[k]
    if dl != 0.0:
      a0 = _u(d.solver_Yadr[i + k])
      for a in range(a0, a0 + _u(d.solver_Ynnz[i + k])):
        v[_u(d.solver_Ycol[a])] += d.solver_Y[a] * dl


@jit
def _pgs_sweep(m, d, blockstart, nblocks, v, ne, nf, rows):
  """One PGS sweep over the blocks in the given order (positions in `rows`, whose first ne
  rows are equalities and next nf friction loss); returns the (unscaled) improvement."""
  force, floss = d.efc_force, d.efc_frictionloss
  ARinv, ARblk = d.solver_efc[_ARINV], d.solver_ARblk
  s = d.solver_scratch
  bc, res, oldf, vv = s[8:14], s[16:22], s[24:30], s[32:38]
  Athis, Ac = d.solver_mat[1], d.solver_mat[2]
  Y, Yadr, Ynnz, Ycol = d.solver_Y, d.solver_Yadr, d.solver_Ynnz, d.solver_Ycol
  improvement = 0.0
  for bi in range(nblocks):
    c = blockstart[bi]
    i = rows[c]
    dim = _block_dim(d, i)
    if dim == 1:
      # scalar row, written out: most rows take this path
      r = d.efc_b[i] + d.efc_R[i] * force[i]
      y0 = _u(Yadr[i])
      for a in range(y0, y0 + _u(Ynnz[i])):
        r += Y[a] * v[_u(Ycol[a])]
      old = force[i]
      f = old - r * ARinv[i]
      if c >= ne and c < ne + nf:
        if f < -floss[i]:
          f = -floss[i]
        elif f > floss[i]:
          f = floss[i]
      elif c >= ne + nf:
        if f < 0:
          f = 0.0
      dl = f - old
      change = 0.5 * dl * dl * (1.0 / ARinv[i]) + dl * r
      if change > 1e-10:
        f = old
        change = 0.0
      force[i] = f
      improvement -= change
      dl = f - old
      if dl != 0.0:
        for a in range(y0, y0 + _u(Ynnz[i])):
          v[_u(Ycol[a])] += Y[a] * dl
      continue
    # elliptic contact: ray update, then friction by QCQP with the normal force fixed
    _residual(d, res, i, dim, v, False)
    for j in range(dim):
      oldf[j] = force[i + j]
    for a in range(dim):
      for b in range(dim):
        Athis[a, b] = ARblk[i + a, b]
    fr = d.contact_friction[d.efc_id[i]]
    # normal force too small: normal update; else ray update along the current force
    if force[i] < _MINVAL:
      force[i] -= res[0] * ARinv[i]
      if force[i] < 0:
        force[i] = 0.0
      for j in range(1, dim):
        force[i + j] = 0.0
    else:
      for j in range(dim):
        vv[j] = force[i + j]
      denom = 0.0
      for a in range(dim):
        t = 0.0
        for b in range(dim):
          t += Athis[a, b] * vv[b]
        denom += vv[a] * t
      if denom >= _MINVAL:
        x = -_dot(vv, res, dim) / denom
        if force[i] + x * vv[0] < 0:
          x = -vv[0] / force[i]
        for j in range(dim):
          force[i + j] += x * vv[j]
    # friction update with the normal force fixed
    for a in range(dim - 1):
      t = res[a + 1]
      for b in range(dim - 1):
        Ac[a, b] = Athis[a + 1, b + 1]
        t -= Ac[a, b] * oldf[b + 1]
      t += Athis[a + 1, 0] * (force[i] - oldf[0])
      bc[a] = t
    if force[i] < _MINVAL:
      for j in range(1, dim):
        force[i + j] = 0.0
    else:
      _solve_qcqp(d, force, i, dim, Ac, bc, fr)
    improvement -= _cost_change(Athis, force, i, oldf, res, dim)
    _apply_delta(d, v, i, dim, oldf)
  return improvement


@jit
def _nesterov_extrapolate(m, d, beta, ne, nf, nefc, rows):
  """force += beta (force - force_prev) over rows[:nefc], projected back on the bounds and
  cones."""
  force, floss = d.efc_force, d.efc_frictionloss
  fprev = d.solver_efc[_FPREV]
  for c in range(nefc):
    i = rows[c]
    fs = force[i]
    force[i] += beta * (force[i] - fprev[i])
    fprev[i] = fs
  for c in range(ne, ne + nf):
    i = rows[c]
    force[i] = min(max(force[i], -floss[i]), floss[i])
  c = ne + nf
  while c < nefc:
    i = rows[c]
    dim = _block_dim(d, i)
    _project_cone(force, i, d.contact_friction[d.efc_id[i]], dim, d.efc_type[i] == _ELLIPTIC)
    c += dim


@jit
def _dual_state_change(d, ne, nf, nefc, rows):
  """Update efc_state of rows[:nefc] from the forces; returns (nactive, nchange)."""
  oldstate = d.solver_int[0]
  for c in range(nefc):
    oldstate[c] = d.efc_state[rows[c]]
  nactive = _dual_state(d, d.efc_state, ne, nf, nefc, rows)
  nchange = 0
  for c in range(nefc):
    if oldstate[c] != d.efc_state[rows[c]]:
      nchange += 1
  return nactive, nchange


@jit
def _island_scale(m, d, island):
  """1 / trace of M over an island's dofs (all dofs for island < 0): the dual solvers'
  statistics scale in MuJoCo 4.0."""
  if island < 0:
    return stat_scale(m, d)
  s = 0.0
  a = d.island_idofadr[island]
  for i in range(a, a + d.island_nv[island]):
    g = d.map_idof2dof[i]
    s += d.M[m.M_rowadr[g] + m.M_rownnz[g] - 1]
  return 1.0 / s if s > 0 else 1.0


@unit((M, D, i4, i4, i4, i4, i4v, i4), i8, needs=NEEDS_PGS)
def sol_pgs(m, d, island, ne, nf, nefc, rows, maxiter):
  """Projected Gauss-Seidel on the dual over rows[:nefc] (all rows, or one island's), from the
  current efc_force (mj_solPGS / mj_solPGS_island: Nesterov momentum with gradient restart,
  blocks visited in PCG32-shuffled order); statistics go to `island` (-1: the one-system
  solve, reported as 0); returns iterations. Needs solver_Y (make_y) and efc_b."""
  nv = m.nv
  force = d.efc_force
  ARinv, ARblk = d.solver_efc[_ARINV], d.solver_ARblk
  fprev, fmom = d.solver_efc[_FPREV], d.solver_efc[_FMOM]
  blockstart = d.solver_int[1]
  v = d.solver_nv[_TMP]   # Y' force, kept current
  scale = _island_scale(m, d, island)
  tol = m.opt_tolerance[0]
  stat = max(island, 0)

  # blocks (positions in rows), and the diagonal blocks of AR (row i: AR[i, i .. i+dim))
  nblocks = 0
  c = 0
  while c < nefc:
    blockstart[nblocks] = c
    nblocks += 1
    i = rows[c]
    dim = _block_dim(d, i)
    for a in range(dim):
      for b in range(dim):
        ARblk[i + a, b] = _ar_entry(d, i + a, i + b)
      ARinv[i + a] = 1.0 / ARblk[i + a, a]
    c += dim
  for c in range(nefc):
    fprev[rows[c]] = force[rows[c]]
  _dual_state(d, d.efc_state, ne, nf, nefc, rows)

  rng, _ = _pcg32_next(np.uint64(0))

  it = 0
  nest_k = 0
  _yt_f(d, v, force, nefc, rows, nv)
  while it < maxiter:
    beta = (nest_k - 1) / (nest_k + 2) if it > 0 else 0.0
    if beta > 0:
      _nesterov_extrapolate(m, d, beta, ne, nf, nefc, rows)
      _yt_f(d, v, force, nefc, rows, nv)
    else:
      for c in range(nefc):
        fprev[rows[c]] = force[rows[c]]
    for c in range(nefc):
      fmom[rows[c]] = force[rows[c]]

    for k in range(nblocks - 1, 0, -1):
      rng, r = _pcg32_next(rng)
      j = r % (k + 1)
      tmpb = blockstart[k]
      blockstart[k] = blockstart[j]
      blockstart[j] = tmpb
    improvement = _pgs_sweep(m, d, blockstart, nblocks, v, ne, nf, rows)

    nactive, nchange = _dual_state_change(d, ne, nf, nefc, rows)
    improvement *= scale
    _save_stats(d, stat, it, improvement, 0.0, 0.0, nactive, nchange, 0, 0)

    # gradient restart (O'Donoghue-Candes) when the correction opposes the extrapolation
    restart = False
    if it > 0:
      dot = 0.0
      for c in range(nefc):
        i = rows[c]
        dot += (force[i] - fmom[i]) * (fmom[i] - fprev[i])
      restart = dot < 0
    nest_k = 0 if restart else nest_k + 1
    it += 1
    if improvement < tol:
      break
  if stat < _NISLAND:
    d.solver_niter[stat] += it
  return it


@unit((M, D, i4, i4, i4, i4, i4v, i4), needs=NEEDS_NOSLIP)
def sol_noslip(m, d, island, ne, nf, nefc, rows, maxiter):
  """No-slip post-pass over rows[:nefc] (all rows, or one island's): Gauss-Seidel on the
  friction forces (friction loss, pyramid edge pairs, elliptic friction) with normal forces
  fixed and R removed (mj_solNoSlip / mj_solNoSlip_island); statistics continue after the main
  solver's for `island` (-1: one-system solve, reported as 0). Needs solver_Y, efc_b."""
  nv = m.nv
  force, floss, R = d.efc_force, d.efc_frictionloss, d.efc_R
  ARinv = d.solver_efc[_ARINV]
  v = d.solver_nv[_TMP]
  s = d.solver_scratch
  bc, res, oldf = s[8:14], s[16:22], s[24:30]
  Ac = d.solver_mat[2]
  scale = _island_scale(m, d, island)
  stat = max(island, 0)
  for c in range(nefc):
    i = rows[c]
    ARinv[i] = 1.0 / max(_MINVAL, _ar_entry(d, i, i) - R[i])
  _dual_state(d, d.efc_state, ne, nf, nefc, rows)
  _yt_f(d, v, force, nefc, rows, nv)
  niter0 = d.solver_niter[stat] if stat < _NISLAND else 0
  it = 0
  while it < maxiter:
    improvement = 0.0
    if it == 0:
      for c in range(nefc):
        i = rows[c]
        improvement += 0.5 * force[i] * force[i] * R[i]
    for c in range(ne, ne + nf):
      i = rows[c]
      _residual(d, res, i, 1, v, True)
      oldf[0] = force[i]
      force[i] -= res[0] * ARinv[i]
      if force[i] < -floss[i]:
        force[i] = -floss[i]
      elif force[i] > floss[i]:
        force[i] = floss[i]
      dl = force[i] - oldf[0]
      improvement -= 0.5 * dl * dl / ARinv[i] + dl * res[0]
      _apply_delta(d, v, i, 1, oldf)
    c = ne + nf
    while c < nefc:
      i = rows[c]
      typ = d.efc_type[i]
      if typ == _PYRAMIDAL:
        dim = d.contact_dim[d.efc_id[i]]
        for j in range(i, i + 2 * (dim - 1), 2):
          _residual(d, res, j, 2, v, True)
          oldf[0] = force[j]
          oldf[1] = force[j + 1]
          _noslip_block(d, Ac, j, 2)
          for a in range(2):
            bc[a] = res[a] - Ac[a, 0] * oldf[0] - Ac[a, 1] * oldf[1]
          mid = 0.5 * (force[j] + force[j + 1])
          K1 = Ac[0, 0] + Ac[1, 1] - Ac[0, 1] - Ac[1, 0]
          K0 = mid * (Ac[0, 0] - Ac[1, 1]) + bc[0] - bc[1]
          if K1 < _MINVAL:
            force[j] = mid
            force[j + 1] = mid
          else:
            y = -K0 / K1
            if y < -mid:
              force[j] = 0.0
              force[j + 1] = 2 * mid
            elif y > mid:
              force[j] = 2 * mid
              force[j + 1] = 0.0
            else:
              force[j] = mid + y
              force[j + 1] = mid - y
          improvement -= _cost_change(Ac, force, j, oldf, res, 2)
          _apply_delta(d, v, j, 2, oldf)
        c += 2 * (dim - 1)
      elif typ == _ELLIPTIC:
        con = d.efc_id[i]
        dim = d.contact_dim[con]
        n = dim - 1
        _residual(d, res, i + 1, n, v, True)
        for a in range(n):
          oldf[a] = force[i + 1 + a]
        _noslip_block(d, Ac, i + 1, n)
        for a in range(n):
          t = res[a]
          for b in range(n):
            t -= Ac[a, b] * oldf[b]
          bc[a] = t
        if force[i] < _MINVAL:
          for a in range(n):
            force[i + 1 + a] = 0.0
        else:
          _solve_qcqp(d, force, i, dim, Ac, bc, d.contact_friction[con])
        improvement -= _cost_change(Ac, force, i + 1, oldf, res, n)
        _apply_delta(d, v, i + 1, n, oldf)
        c += dim
      else:
        c += 1
    nactive, nchange = _dual_state_change(d, ne, nf, nefc, rows)
    improvement *= scale
    _save_stats(d, stat, niter0 + it, improvement, 0.0, 0.0, nactive, nchange, 0, 0)
    it += 1
    if improvement < m.opt_noslip_tolerance[0]:
      break
  if stat < _NISLAND:
    d.solver_niter[stat] = niter0 + it


@jit
def _noslip_block(d, Ac, start, n):
  """Ac = AR[start:start+n, start:start+n] - diag(R), diagonal clamped to >= 1e-10."""
  for a in range(n):
    for b in range(n):
      Ac[a, b] = _ar_entry(d, start + a, start + b)
    Ac[a, a] = max(1e-10, Ac[a, a] - d.efc_R[start + a])


# ---------------------------------------------------------------------------------------------
# the constraint stage

@jit
def warmstart(m, d):
  """qacc (and for PGS efc_force) to start from: the better of qacc_warmstart and qacc_smooth
  by cost, or qacc_smooth and zero forces with warmstart disabled (engine_forward.c)."""
  nv, nefc = m.nv, d.nefc[0]
  if m.opt_disableflags[0] & _DSBL_WARMSTART:
    for i in range(nv):
      d.qacc[i] = d.qacc_smooth[i]
    for i in range(nefc):
      d.efc_force[i] = 0.0
    return
  jar = d.solver_efc[_JAR]
  for i in range(nv):
    d.qacc[i] = d.qacc_warmstart[i]
  mul_jac(d, jar, d.qacc_warmstart, nefc, nv)
  for i in range(nefc):
    jar[i] -= d.efc_aref[i]
  cost_warm = _constraint_update(m, d, jar, False)
  if m.opt_solver[0] == _PGS:
    if dual_cost(m, d, d.efc_force) > 0:
      for i in range(nefc):
        d.efc_force[i] = 0.0
      for i in range(nv):
        d.qfrc_constraint[i] = 0.0
  else:
    Ma = d.solver_nv[_MA]
    rhs = _rhs(m, d)
    if m.opt_integrator[0] == _INT_DISCRETE:
      mul_metric(m, d, Ma, d.qacc_warmstart)
    else:
      smooth.mul_m(m, d, Ma, d.qacc_warmstart)
    for i in range(nv):
      cost_warm += 0.5 * (Ma[i] - rhs[i]) * (d.qacc_warmstart[i] - d.qacc_smooth[i])
    cost_smooth = _constraint_update(m, d, d.efc_b, False)
    if cost_warm > cost_smooth:
      for i in range(nv):
        d.qacc[i] = d.qacc_smooth[i]
  # with islands, dofs in none start (and stay) at qacc_smooth
  if d.nisland[0] > 0:
    for i in range(d.nidof[0], nv):
      g = d.map_idof2dof[i]
      d.qacc[g] = d.qacc_smooth[g]


@jit
def _square(buf, n):
  """The first n * n entries of a C-contiguous buffer as an n x n matrix (a view)."""
  return buf.reshape(buf.size)[:n * n].reshape((n, n))


@jit
def context_all(m, d):
  """The Primal context of the one-system solve: every row and dof, in the model's order
  (map_dof2idof / map_idof2dof set to the identity)."""
  nv, nefc = m.nv, d.nefc[0]
  for i in range(nv):
    d.map_dof2idof[i] = i
    d.map_idof2dof[i] = i
  return Primal(nv, d.ne[0], d.nf[0], nefc, 0, d.map_idof2dof[:nv], d.efc_J,
                d.efc_J_rowadr[:nefc], d.efc_J_rownnz[:nefc], d.efc_J_colind, d.efc_D[:nefc],
                d.efc_R[:nefc],
                d.efc_frictionloss[:nefc], d.efc_aref[:nefc], d.efc_type[:nefc],
                d.efc_id[:nefc], d.efc_force[:nefc], d.efc_state[:nefc], d.qacc[:nv],
                d.qacc_smooth[:nv], _rhs(m, d)[:nv], d.qfrc_constraint[:nv],
                _square(d.solver_L, nv), _square(d.solver_Lcone, nv))


@jit
def context_island(m, d, k):
  """The Primal context of island k: its rows of efc_J gathered to its dofs (iefc_J in sparse
  rows over the island's local dofs, rows in island order; island dofs keep the model's order,
  so columns stay ascending; islands are gathered in order, each after the previous one's
  rows), views of its iefc_* rows and iacc etc. dofs."""
  na, n = d.island_idofadr[k], d.island_nv[k]
  ea, nr = d.island_iefcadr[k], d.island_nefc[k]
  dofs = d.map_idof2dof[na:na + n]
  J, adr, nnz, col = d.iefc_J, d.iefc_J_rowadr, d.iefc_J_rownnz, d.iefc_J_colind
  efc_J, efc_adr, efc_nnz, efc_col = d.efc_J, d.efc_J_rowadr, d.efc_J_rownnz, d.efc_J_colind
  iefc2efc, dof2idof = d.map_iefc2efc, d.map_dof2idof
  q = adr[ea - 1] + nnz[ea - 1] if ea > 0 else 0
  for r in range(nr):
    i = iefc2efc[ea + r]
    adr[ea + r] = q
    a0 = efc_adr[i]
    for a in range(a0, a0 + efc_nnz[i]):
      J[q] = efc_J[a]
      col[q] = dof2idof[efc_col[a]] - na
      q += 1
    nnz[ea + r] = efc_nnz[i]
  return Primal(n, d.island_ne[k], d.island_nf[k], nr, na, dofs, J, adr[ea:ea + nr],
                nnz[ea:ea + nr], col,
                d.iefc_D[ea:ea + nr], d.iefc_R[ea:ea + nr], d.iefc_frictionloss[ea:ea + nr],
                d.iefc_aref[ea:ea + nr], d.iefc_type[ea:ea + nr], d.iefc_id[ea:ea + nr],
                d.iefc_force[ea:ea + nr], d.iefc_state[ea:ea + nr], d.iacc[na:na + n],
                d.iacc_smooth[na:na + n], d.ifrc_smooth[na:na + n],
                d.ifrc_constraint[na:na + n], _square(d.solver_L, n),
                _square(d.solver_Lcone, n))


@unit((M, D, b1))
def _solve_primal_islands(m, d, flg_newton):
  """CG or Newton island by island (mj_fwdConstraint's island branch): gather the inputs in
  island order, solve each island with its own termination and statistics, scatter qacc,
  qfrc_constraint and efc_force back. efc_state keeps the warmstart's, as in MuJoCo."""
  nidof, nefc = d.nidof[0], d.nefc[0]
  rhs = _rhs(m, d)
  for i in range(nidof):
    g = d.map_idof2dof[i]
    d.ifrc_smooth[i] = rhs[g]
    d.ifrc_constraint[i] = d.qfrc_constraint[g]
    d.iacc_smooth[i] = d.qacc_smooth[g]
    d.iacc[i] = d.qacc[g]
  for ic in range(nefc):
    c = d.map_iefc2efc[ic]
    d.iefc_force[ic] = d.efc_force[c]
    d.iefc_aref[ic] = d.efc_aref[c]
  for k in range(d.nisland[0]):
    it = _primal(m, d, k, flg_newton)
    if k < _NISLAND:
      d.solver_niter[k] += it
  for i in range(nidof):
    g = d.map_idof2dof[i]
    d.qacc[g] = d.iacc[i]
    d.qfrc_constraint[g] = d.ifrc_constraint[i]
  for c in range(nefc):
    d.efc_force[c] = d.iefc_force[d.map_efc2iefc[c]]


@unit((M, D, i8, b1), i8)
def _primal(m, d, k, flg_newton):
  """sol_primal (CG, or Newton when flg_newton) on island k, or on the whole system when
  k < 0: one unit holds the primal solvers' code for both callers."""
  if k < 0:
    return sol_primal(m, d, context_all(m, d), 0, m.opt_iterations[0], flg_newton)
  return sol_primal(m, d, context_island(m, d, k), k, m.opt_iterations[0], flg_newton)


@unit((M, D))
def fwd_constraint(m, d):
  """Islands, efc_b, warmstart, the model's solver, then qacc, efc_force, efc_state,
  qfrc_constraint and the solver statistics (mj_island + mj_fwdConstraint). Every solver and
  the no-slip pass work island by island unless the ISLAND disable bit is set."""
  nv, nefc = m.nv, d.nefc[0]
  for i in range(nv):
    d.qfrc_constraint[i] = 0.0
  for k in range(_NISLAND):
    d.solver_niter[k] = 0
  island.island(m, d)
  if d.discrete_coupled[0]:
    d.nisland[0] = 0   # the couplings join trees: one system
  if nefc == 0:
    for i in range(nv):
      d.qacc[i] = d.qacc_smooth[i]
    return
  mul_jac(d, d.efc_b, d.qacc_smooth, nefc, nv)
  for i in range(nefc):
    d.efc_b[i] -= d.efc_aref[i]
  solver = m.opt_solver[0]
  noslip = m.opt_noslip_iterations[0] > 0
  if solver == _PGS or noslip:
    make_y(m, d)
  warmstart(m, d)
  nisland = d.nisland[0]
  if nisland == 0:
    for i in range(nefc):
      d.map_iefc2efc[i] = i   # the one-system solve's row list
  if solver == _PGS:
    if nisland > 0:
      for k in range(nisland):
        a = d.island_iefcadr[k]
        sol_pgs(m, d, k, d.island_ne[k], d.island_nf[k], d.island_nefc[k],
                d.map_iefc2efc[a:a + d.island_nefc[k]], m.opt_iterations[0])
    else:
      sol_pgs(m, d, -1, d.ne[0], d.nf[0], nefc, d.map_iefc2efc[:nefc], m.opt_iterations[0])
  elif nisland == 1 and d.nidof[0] == nv:
    # one island holding every dof: its rows and dofs are all of them, in the model's order,
    # so the one-system solve is the island's solve (without gathering); MuJoCo's efc_state
    # keeps the warmstart's, as for any island solve
    saved = d.solver_int[1]
    for i in range(nefc):
      saved[i] = d.efc_state[i]
    d.solver_niter[0] = _primal(m, d, -1, solver == _NEWTON)
    for i in range(nefc):
      d.efc_state[i] = saved[i]
  elif nisland > 0:
    _solve_primal_islands(m, d, solver == _NEWTON)
  else:
    d.solver_niter[0] = _primal(m, d, -1, solver == _NEWTON)
  if noslip:
    if nisland > 0:
      for k in range(nisland):
        a = d.island_iefcadr[k]
        sol_noslip(m, d, k, d.island_ne[k], d.island_nf[k], d.island_nefc[k],
                   d.map_iefc2efc[a:a + d.island_nefc[k]], m.opt_noslip_iterations[0])
    else:
      sol_noslip(m, d, -1, d.ne[0], d.nf[0], nefc, d.map_iefc2efc[:nefc],
                 m.opt_noslip_iterations[0])
  if solver == _PGS or noslip:
    # dual finish: qacc = qacc_smooth + M^-1 J' efc_force
    mul_jac_t(d, d.qfrc_constraint, d.efc_force, nefc, nv)
    if m.opt_integrator[0] == _INT_DISCRETE:
      for i in range(nv):
        d.qacc[i] = d.qfrc_constraint[i]
      smooth.solve_ld(d.qacc, d.qLDhat, d.qLDhatDiagInv, m.M_rownnz, m.M_rowadr, m.M_colind,
                      nv)
    else:
      smooth.solve_m(m, d, d.qacc, d.qfrc_constraint)
    for i in range(nv):
      d.qacc[i] += d.qacc_smooth[i]
