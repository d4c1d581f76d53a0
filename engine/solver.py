"""The primal constraint solvers of MuJoCo's engine_solver.c (CG and Newton: mj_solPrimal) and
what every solver shares: the J products, the constraint update (mj_constraintUpdate), the
solve metric and the statistics. The constraint stage that runs them, island by island as
MuJoCo does by default (own dense Hessian of island size, own termination, statistics at
island * mjNSOLVER in solver_*, iterations in solver_niter[island]), is
engine/forward.fwd_constraint; the dual solvers (PGS, no-slip) are engine/solver_pgs.py and the
Cholesky factorizations engine/cholesky.py.

Primal solvers (Newton, CG) minimise over qacc the Gauss cost 0.5 (qacc - qacc_smooth)' M
(qacc - qacc_smooth) plus the constraint cost s(J qacc - aref); the dual solver (PGS) minimises
0.5 f' AR f + f' b over the constraint forces f, AR = J M^-1 J' + diag(R), in their cones.
Everything follows MuJoCo's algorithms step by step (warmstart choice, exact line search,
Hessian factor updates, Hager-Zhang CG, PGS with shuffled blocks and Nesterov momentum), so
that iteration counts and per-iteration statistics agree with MuJoCo's.

Choices:
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

Work buffers (Data, engine-only): solver_L / solver_Lcone (nv x nv Hessian factor, with cones;
L in the lower triangle, or L' in the upper one for the sparse path),
solver_LTJ (6 x nv), solver_nv (12 x nv vectors), solver_efc (8 x njmax rows), solver_quad
(3 njmax line-search polynomials), solver_int (2 x njmax), solver_Y (nJmax nonzeros),
solver_ARblk (njmax x 6 diagonal blocks of AR), solver_scratch / solver_mat (small vectors and
6 x 6 matrices), solver_Ynnz / solver_Yadr / solver_Ycol (the sparse row layout of
solver_Y).
"""
import collections
import math

import numpy as np

from numjoco.engine import smooth
from numjoco.engine.constraint import ELLIPTIC as _ELLIPTIC
from numjoco.engine._borrow import borrowed as _b, rows as _rows
from numjoco.engine._jit import jit
from numjoco.engine.types import MINVAL as _MINVAL, NISLAND
from numjoco.engine.cholesky import (SPARSE_NV as _SPARSE_NV, chol_factor, chol_factor_sp,
                                     chol_solve, chol_solve_sp, chol_update, chol_update_sp)

# helpers of sol_primal inlined into it (a call would pass the flattened Primal context)
_inline = smooth.inline
# an array index known to be >= 0: Numba then skips its negative-index wraparound, which
# otherwise costs a compare and select per access and keeps sparse gathers from pipelining
# (a 17-row sparse J product: 113 -> 48 ns)
_u = np.uintp
from numjoco.engine.types import (mjtConstraintState, mjtDisableBit, mjtSolver, mjtCone,
                          mjtIntegrator)
from numjoco.engine._sig import unit, M, D, b1, i8

SATISFIED = int(mjtConstraintState.SATISFIED)
QUADRATIC = int(mjtConstraintState.QUADRATIC)
LINEARNEG = int(mjtConstraintState.LINEARNEG)
LINEARPOS = int(mjtConstraintState.LINEARPOS)
CONE = int(mjtConstraintState.CONE)
_PGS, _CG, _NEWTON = int(mjtSolver.PGS), int(mjtSolver.CG), int(mjtSolver.NEWTON)
_CONE_ELLIPTIC = int(mjtCone.ELLIPTIC)
_DSBL_WARMSTART = int(mjtDisableBit.WARMSTART)
_INT_DISCRETE = int(mjtIntegrator.DISCRETE)
_NSOLVER = 200    # mjNSOLVER
_NISLAND = NISLAND

# rows of d.solver_nv
(MA, MV, GRAD, MGRAD, SEARCH, GRADOLD, MGRADOLD, GRADDIF, MGRADDIF, CHOLUPD,
 TMP, PERMV, DSQRT) = range(13)
# rows of d.solver_efc
JAREF, JV, DH, ARINV, FPREV, FMOM, JAR = range(7)


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
  in reverse order. A tree is coupled to the trees its constraints also touch; eliminating one
  joins its neighbours into a clique. Within a tree, a dof comes after every dof below it
  (MuJoCo's reverse-order sparse Cholesky): M then factors without fill, as a dof's neighbours
  left to eliminate are its ancestors, already a clique, where eliminating the root first
  would join every dof. The whole context reversed when it has one tree or more than
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
      perm[i] = n - 1 - i
      iperm[n - 1 - i] = i
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
  # block ends (blk is ascending: trees are contiguous in the context)
  last = d.solver_Lnnz[2]
  for i in range(n):
    last[blk[i]] = i
  q = 0
  for k in range(nb):
    b = bl[k]
    i = last[b]
    while i >= 0 and blk[i] == b:
      perm[q] = i
      iperm[i] = q
      q += 1
      i -= 1


@jit
def _hessian_graph(m, d, c, g, iperm):
  """g (n x n, row-major) = the graph of H = M + J' D J in the order iperm (context dof ->
  place), edge (hi, lo) at g[hi * n + lo]: M's off-diagonal entries, and each group of rows of
  one constraint as a star from its columns to the first of them in the order."""
  n, nefc = c.nv, c.nefc
  for t in range(n * n):
    g[t] = 0
  dof2idof, off = d.map_dof2idof, c.adr
  for i in range(n):
    gi = c.dofs[i]
    adr = m.M_rowadr[gi]
    p = iperm[i]
    for a in range(adr, adr + m.M_rownnz[gi] - 1):
      q = iperm[dof2idof[m.M_colind[a]] - off]
      g[max(p, q) * n + min(p, q)] = 1
  Jadr, Jnnz, Jcol = c.Jadr, c.Jnnz, c.Jcol
  i = 0
  while i < nefc:
    j = _group_end(c.eid, c.typ, nefc, i)
    gmin = n
    for r in range(i, j):
      for a in range(Jadr[r], Jadr[r] + Jnnz[r]):
        gmin = min(gmin, iperm[Jcol[a]])
    for r in range(i, j):
      for a in range(Jadr[r], Jadr[r] + Jnnz[r]):
        u = iperm[Jcol[a]]
        if u > gmin:
          g[u * n + gmin] = 1
    i = j


@jit
def _hessian_symbolic(m, d, c):
  """Symbolic Cholesky of H = M + J' D J over every row (whatever its state, so that rank-1
  updates and cone updates stay inside), in the fill-reducing order of _tree_order: L's column
  patterns from the elimination tree (row i's pattern = the tree paths from its neighbours in
  H up to i). Each group of rows of one constraint (its union of columns) is entered as a
  star to its first column in the order: eliminating that column joins the rest, which makes
  the whole group a clique of L.

  The stored pattern is kept when the graph, drawn in the stored order, has no edge that the
  stored pattern's graph lacks (the same contacts as at the last analysis, or fewer, e.g. a
  resting pile): every group is then a star to a column eliminated before the rest of it, so
  still a clique of the stored L, and a pattern of more entries only holds some exact zeros.
  solver_Lnnz[4] holds (n of the stored pattern or 0, the solver_Hpat buffer of its graph)."""
  n = c.nv
  state = d.solver_Lnnz[4]
  colpat, nbr = d.solver_Lpat[1], d.solver_Lpat[2]
  colnnz, parent, mark = d.solver_Lnnz[1], d.solver_Lnnz[2], d.solver_Lnnz[3]
  iperm, nbrend = d.solver_Lnnz[6], d.solver_Lnnz[7]
  g = d.solver_Hpat[1 - state[1]]
  if state[0] == n:
    _hessian_graph(m, d, c, g, iperm)
    old = d.solver_Hpat[state[1]]
    diff = 0
    for t in range(n * n):
      diff |= g[t] & ~old[t]
    if diff == 0:
      return
  _tree_order(m, d, c)
  _hessian_graph(m, d, c, g, iperm)
  state[0] = n
  state[1] = 1 - state[1]
  # neighbour lists in the new order (row i: its neighbours k < i, at nbr[i*n:])
  for i in range(n):
    e = i * n
    cnt = 0
    for k in range(i):
      if g[e + k]:
        nbr[e + cnt] = k
        cnt += 1
    nbrend[i] = cnt
  # elimination tree; column patterns come out ascending
  for i in range(n):
    colnnz[i] = 0
    parent[i] = -1
    mark[i] = -1
  for i in range(n):
    mark[i] = i
    for e in range(i * n, i * n + nbrend[i]):
      j = nbr[e]
      while mark[j] != i:
        mark[j] = i
        colpat[j * n + colnnz[j]] = i
        colnnz[j] += 1
        if parent[j] == -1:
          parent[j] = i
        j = parent[j]


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
  mul_jt(d.efc_J, d.efc_J_rowadr, d.efc_J_rownnz, d.efc_J_colind, nefc, None, nv, res, f)


@jit
def dot(a, b, n):
  """a[:n] . b[:n]."""
  s = 0.0
  for i in range(n):
    s += a[i] * b[i]
  return s


@jit
def _norm(a, n):
  """Euclidean norm of a[:n]."""
  return math.sqrt(dot(a, a, n))


@jit
def stat_scale(m, d):
  """Scale of the improvement and gradient statistics: 1 / trace(M) at the current state
  (MuJoCo uses this for the monolithic solve too, not 1 / (meaninertia nv))."""
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
      state[i] = QUADRATIC
      continue
    if i < ne + nf:
      if jar[i] <= -R[i] * floss[i]:
        s += -0.5 * R[i] * floss[i] * floss[i] - floss[i] * jar[i]
        force[i] = floss[i]
        state[i] = LINEARNEG
      elif jar[i] >= R[i] * floss[i]:
        s += -0.5 * R[i] * floss[i] * floss[i] + floss[i] * jar[i]
        force[i] = -floss[i]
        state[i] = LINEARPOS
      else:
        s += 0.5 * D[i] * jar[i] * jar[i]
        state[i] = QUADRATIC
      continue
    if efc_type[i] != _ELLIPTIC:
      if jar[i] >= 0:
        force[i] = 0.0
        state[i] = SATISFIED
      else:
        s += 0.5 * D[i] * jar[i] * jar[i]
        state[i] = QUADRATIC
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
      st = SATISFIED
    elif mu * N + T <= 0 or (T <= 0 and N < 0):
      for j in range(dim):
        s += 0.5 * D[i + j] * jar[i + j] * jar[i + j]
      st = QUADRATIC
    else:
      Dm = D[i] / (mu * mu * (1 + mu * mu))
      NmT = N - mu * T
      s += 0.5 * Dm * NmT * NmT
      force[i] = -Dm * NmT * mu
      for j in range(1, dim):
        force[i + j] = -force[i] / T * U[j] * fr[j - 1]
      st = CONE
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
  cost = constraint_update_impl(d, d.ne[0], d.nf[0], d.nefc[0], jar, flg_cone_hessian)
  mul_jac_t(d, d.qfrc_constraint, d.efc_force, d.nefc[0], m.nv)
  return cost


@jit
def save_stats(d, island, it, improvement, gradient, lineslope, nactive, nchange, neval,
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
def metric(m, d):
  """(values, factor, inverse factor diagonal) of the solve metric on M's pattern: M and qLD,
  or under the discrete integrator the backbone qMhat and qLDhat (engine/discrete.py)."""
  if m.opt_integrator[0] == _INT_DISCRETE:
    return d.qMhat, d.qLDhat, d.qLDhatDiagInv
  return d.M, d.qLD, d.qLDiagInv


@_inline
def gauss_rhs(m, d):
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
def mul_jt(J, adr, nnz, col, nefc, rows, nv, res, f):
  """res = J' f for sparse rows: rows[:nefc] (the first nefc rows when rows is None; the other
  rows count as zero). One loop over whole rows: with a per-row helper inlined at numba IR level
  it runs at half this speed (tests.bench.contact --stages: efc_b + warmstart)."""
  for k in range(nv):
    res[k] = 0.0
  for c in range(nefc):
    i = c if rows is None else rows[c]
    fi = f[i]
    if fi != 0.0:
      a0 = _u(adr[i])
      for a in range(a0, a0 + _u(nnz[i])):
        res[_u(col[a])] += J[a] * fi


@jit
def _mul_m(m, d, dofs, off, nv, res, vec):
  """res = M vec on the dofs `dofs` (a context's: c.dofs, c.adr, c.nv), mj_mulM restricted to
  them in the same summation order."""
  M = metric(m, d)[0]
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
  _, qLD, diaginv = metric(m, d)
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
  Ma = _b(d.solver_nv[MA])
  cost = constraint_update_rows(d, c.ne, c.nf, nefc, c.D, c.R, c.floss, c.typ, c.eid, c.force,
                                c.state, _b(d.solver_efc[JAREF]), flg_cone_hessian)
  mul_jt(c.J, c.Jadr, c.Jnnz, c.Jcol, nefc, None, nv, c.qfrc_constraint, c.force)
  state, qfrc_smooth, qacc, qacc_smooth = c.state, c.qfrc_smooth, c.qacc, c.qacc_smooth
  nactive = 0
  ncone = 0
  for i in range(nefc):
    if state[i] != SATISFIED:
      nactive += 1
    if state[i] == CONE:
      ncone += 1
  gauss = 0.0
  for i in range(nv):
    gauss += 0.5 * (Ma[i] - qfrc_smooth[i]) * (qacc[i] - qacc_smooth[i])
  return cost + gauss, gauss, nactive, ncone


@_inline
def _primal_update_gradient(m, d, c, flg_newton, ncone):
  """grad = M qacc - qfrc_smooth - qfrc_constraint; Mgrad = H^-1 grad (Newton) or M^-1 grad."""
  grad, Ma = _b(d.solver_nv[GRAD]), _b(d.solver_nv[MA])
  qfrc_smooth, qfrc_constraint = c.qfrc_smooth, c.qfrc_constraint
  for i in range(c.nv):
    grad[i] = Ma[i] - qfrc_smooth[i] - qfrc_constraint[i]
  _primal_update_mgrad(m, d, c, flg_newton, ncone)


@_inline
def _primal_update_mgrad(m, d, c, flg_newton, ncone):
  """Mgrad = H^-1 grad (Newton, with cones when any) or M^-1 grad (CG preconditioner)."""
  grad, Mgrad = _b(d.solver_nv[GRAD]), _b(d.solver_nv[MGRAD])
  if flg_newton:
    if _sparse(d, c.nv):   # in the symbolic analysis' order
      v, perm = _b(d.solver_nv[PERMV]), d.solver_Lnnz[5]
      for i in range(c.nv):
        v[i] = grad[perm[i]]
      chol_solve_sp(v, c.Lcone if ncone else c.L, v, c.nv, d.solver_Lpat[1], d.solver_Lnnz[1])
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
  v = _b(d.solver_nv[SEARCH])
  Ma, Mv = _b(d.solver_nv[MA]), _b(d.solver_nv[MV])
  Jv, Jaref = _b(d.solver_efc[JV]), _b(d.solver_efc[JAREF])
  D, typ, eid = c.D, c.typ, c.eid
  quad = d.solver_quad
  g1 = dot(v, Ma, nv) - dot(c.qfrc_smooth, v, nv)
  g2 = 0.5 * dot(v, Mv, nv)
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
  Jaref, Jv = _b(d.solver_efc[JAREF]), _b(d.solver_efc[JV])
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
  search = _b(d.solver_nv[SEARCH])
  snorm = _norm(search, nv)
  if snorm < _MINVAL:
    return 0.0, 0.0, 0, 1.0
  gtol = tolerance * snorm / scale
  slopescl = scale / snorm
  _mul_m(m, d, c.dofs, c.adr, nv, _b(d.solver_nv[MV]), search)
  _mul_j(c.J, c.Jadr, c.Jnnz, c.Jcol, c.nefc, _b(d.solver_efc[JV]), search)
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
    if c.state[i] != CONE:
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
def _add_tri(L, r, q, v, upper):
  """Adds v to entry (r, q) of a symmetric matrix kept in its upper triangle (the sparse
  factor's storage, engine/cholesky.py) or its lower one."""
  if (q >= r) == upper:
    L[r, q] += v
  else:
    L[q, r] += v


@_inline
def _add_jtdj_rows(L, J, adr, nnz, col, Dh, i, j, iperm, sparse):
  """L += J_k' Dh_k J_k for rows k in [i, j): the lower triangle, or when sparse the upper
  one with columns through iperm (in the symbolic analysis' order)."""
  for k in range(i, j):
    di = Dh[k]
    if di == 0.0:
      continue
    ak = _u(adr[k])
    for a in range(ak, ak + _u(nnz[k])):
      r = _u(iperm[_u(col[a])]) if sparse else _u(col[a])
      jr = J[a] * di
      for b in range(ak, a + _u(1)):
        _add_tri(L, r, _u(iperm[_u(col[b])]) if sparse else _u(col[b]), jr * J[b], sparse)


@jit
def _factorize_hessian(m, d, c, ncone):
  """L = chol(M + J' D J) over quadratic rows (MakeHessian + FactorizeHessian; dense, or in
  the symbolic analysis' order and pattern for islands of _SPARSE_NV dofs or more); returns
  nupdate."""
  nv, nefc = c.nv, c.nefc
  L, D, state = c.L, c.D, c.state
  Dh = _b(d.solver_efc[DH])
  for i in range(nefc):
    Dh[i] = D[i] if state[i] == QUADRATIC else 0.0
  for r in range(nv):
    for k in range(nv):
      L[r, k] = 0.0
  J, adr, nnz, col = c.J, c.Jadr, c.Jnnz, c.Jcol
  M, dofs, dof2idof, off = metric(m, d)[0], c.dofs, d.map_dof2idof, c.adr
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
            _add_tri(L, r, iperm[col[a0 + b]], blk[t], True)
            t += 1
      else:
        _add_jtdj_rows(L, J, adr, nnz, col, Dh, i, j, iperm, True)
      i = j
  else:
    _add_jtdj_rows(L, J, adr, nnz, col, Dh, 0, nefc, iperm, False)
  for r in range(nv):
    g = _u(dofs[r])
    pr = _u(iperm[r]) if sparse else _u(r)
    a0 = _u(m.M_rowadr[g])
    for a in range(a0, a0 + _u(m.M_rownnz[g])):
      q = _u(dof2idof[_u(m.M_colind[a])] - off)
      _add_tri(L, pr, _u(iperm[q]) if sparse else q, M[a], sparse)
  if d.discrete_coupled[0]:
    _add_couplings(m, d, L)
  if sparse:
    chol_factor_sp(L, nv, _MINVAL, d.solver_Lpat[1], d.solver_Lnnz[1])
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
  cholupd = _b(d.solver_nv[CHOLUPD])
  state, D, J, Jadr, Jnnz, Jcol, L = c.state, c.D, c.J, c.Jadr, c.Jnnz, c.Jcol, c.L
  nupdate = 0
  for i in range(nefc):
    old_q = oldstate[i] == QUADRATIC
    new_q = state[i] == QUADRATIC
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
  Ma, Mv, grad, Mgrad, search = _b(ws[MA]), _b(ws[MV]), _b(ws[GRAD]), _b(ws[MGRAD]), _b(ws[SEARCH])
  jaref, jv = _b(d.solver_efc[JAREF]), _b(d.solver_efc[JV])
  oldstate = _b(d.solver_int[0])
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
  flg_gap = max(0.0, 0.5 * scale * dot(grad, Mgrad, nv)) < tol
  flg_gradient = scale * _norm(grad, nv) < tol
  flg_done = flg_gap and (not flg_newton or flg_gradient)

  nupdate = 0
  if not flg_done and flg_newton:
    if _sparse(d, nv):
      _hessian_symbolic(m, d, c)
    nupdate = _factorize_hessian(m, d, c, ncone)
    _primal_update_mgrad(m, d, c, True, ncone)
    flg_done = flg_gradient and max(0.0, 0.5 * scale * dot(grad, Mgrad, nv)) < tol

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
        ws[GRADOLD, i] = grad[i]
        ws[MGRADOLD, i] = Mgrad[i]
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
    save_stats(d, island, it, improvement, gradient, slope, nactive, nchange, neval, nupdate)
    decrement = max(0.0, 0.5 * scale * dot(grad, Mgrad, nv)) if flg_newton else 0.0
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
  grad, Mgrad, search = _b(ws[GRAD]), _b(ws[MGRAD]), _b(ws[SEARCH])
  graddif, Mgraddif = _b(ws[GRADDIF]), _b(ws[MGRADDIF])
  for i in range(nv):
    graddif[i] = grad[i] - ws[GRADOLD, i]
    Mgraddif[i] = Mgrad[i] - ws[MGRADOLD, i]
  d_dot_y = dot(search, graddif, nv)
  if d_dot_y < _MINVAL:
    beta = 0.0
  else:
    y_dot_My = dot(graddif, Mgraddif, nv)
    y_dot_Mgrad = dot(graddif, Mgrad, nv)
    d_dot_grad = dot(search, grad, nv)
    beta_hz = (y_dot_Mgrad - 2 * (y_dot_My / d_dot_y) * d_dot_grad) / d_dot_y
    d_norm = _norm(search, nv)
    grad_norm = _norm(grad, nv)
    eta_k = -1.0 / max(_MINVAL, d_norm * min(0.01, grad_norm))
    beta = max(eta_k, beta_hz)
  for i in range(nv):
    search[i] = -Mgrad[i] + beta * search[i]


# ---------------------------------------------------------------------------------------------
# the primal solves of the constraint stage (engine/forward.fwd_constraint runs them)

@jit
def _square(buf, n):
  """The first n * n entries of a C-contiguous buffer as an n x n matrix (a view)."""
  return _rows(buf, 0, n, n)


@jit
def context_all(m, d):
  """The Primal context of the one-system solve: every row and dof, in the model's order
  (map_dof2idof / map_idof2dof set to the identity)."""
  nv, nefc = m.nv, d.nefc[0]
  for i in range(nv):
    d.map_dof2idof[i] = i
    d.map_idof2dof[i] = i
  # views borrowed (engine/_borrow.py): the context goes to every solver helper, and each
  # plain view in it would be reference counted at each call
  return Primal(nv, d.ne[0], d.nf[0], nefc, 0, _b(d.map_idof2dof[:nv]), _b(d.efc_J),
                _b(d.efc_J_rowadr[:nefc]), _b(d.efc_J_rownnz[:nefc]), _b(d.efc_J_colind),
                _b(d.efc_D[:nefc]), _b(d.efc_R[:nefc]), _b(d.efc_frictionloss[:nefc]),
                _b(d.efc_aref[:nefc]), _b(d.efc_type[:nefc]), _b(d.efc_id[:nefc]),
                _b(d.efc_force[:nefc]), _b(d.efc_state[:nefc]), _b(d.qacc[:nv]),
                _b(d.qacc_smooth[:nv]), _b(gauss_rhs(m, d)[:nv]), _b(d.qfrc_constraint[:nv]),
                _b(_square(d.solver_L, nv)), _b(_square(d.solver_Lcone, nv)))


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
  return Primal(n, d.island_ne[k], d.island_nf[k], nr, na, _b(dofs), _b(J),
                _b(adr[ea:ea + nr]), _b(nnz[ea:ea + nr]), _b(col), _b(d.iefc_D[ea:ea + nr]),
                _b(d.iefc_R[ea:ea + nr]), _b(d.iefc_frictionloss[ea:ea + nr]),
                _b(d.iefc_aref[ea:ea + nr]), _b(d.iefc_type[ea:ea + nr]),
                _b(d.iefc_id[ea:ea + nr]), _b(d.iefc_force[ea:ea + nr]),
                _b(d.iefc_state[ea:ea + nr]), _b(d.iacc[na:na + n]),
                _b(d.iacc_smooth[na:na + n]), _b(d.ifrc_smooth[na:na + n]),
                _b(d.ifrc_constraint[na:na + n]), _b(_square(d.solver_L, n)),
                _b(_square(d.solver_Lcone, n)))


@unit((M, D, b1))
def solve_primal_islands(m, d, flg_newton):
  """CG or Newton island by island (mj_fwdConstraint's island branch): gather the inputs in
  island order, solve each island with its own termination and statistics, scatter qacc,
  qfrc_constraint and efc_force back. efc_state keeps the warmstart's, as in MuJoCo."""
  nidof, nefc = d.nidof[0], d.nefc[0]
  rhs = gauss_rhs(m, d)
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
    it = primal(m, d, k, flg_newton)
    if k < _NISLAND:
      d.solver_niter[k] += it
  for i in range(nidof):
    g = d.map_idof2dof[i]
    d.qacc[g] = d.iacc[i]
    d.qfrc_constraint[g] = d.ifrc_constraint[i]
  for c in range(nefc):
    d.efc_force[c] = d.iefc_force[d.map_efc2iefc[c]]


@unit((M, D, i8, b1), i8)
def primal(m, d, k, flg_newton):
  """sol_primal (CG, or Newton when flg_newton) on island k, or on the whole system when
  k < 0: one unit holds the primal solvers' code for both callers."""
  if k < 0:
    return sol_primal(m, d, context_all(m, d), 0, m.opt_iterations[0], flg_newton)
  return sol_primal(m, d, context_island(m, d, k), k, m.opt_iterations[0], flg_newton)


