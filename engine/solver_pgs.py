"""The dual solvers of MuJoCo's engine_solver.c: PGS (mj_solPGS: projected Gauss-Seidel over
constraint blocks, shuffled, with Nesterov momentum) and the no-slip pass (mj_solNoSlip), both
over a list of rows (an island's, or every row), and the matrix Y they share (AR = Y Y' + R)."""
import math

import numpy as np

from numjoco.engine.cholesky import chol_factor, chol_solve
from numjoco.engine._jit import jit
from numjoco.engine.constraint import ELLIPTIC as _ELLIPTIC, PYRAMIDAL as _PYRAMIDAL
from numjoco.engine.solver import (ARINV as _ARINV, CONE as _CONE, DSQRT as _DSQRT, FMOM as _FMOM,
                                   FPREV as _FPREV, LINEARNEG as _LINEARNEG,
                                   LINEARPOS as _LINEARPOS, QUADRATIC as _QUADRATIC,
                                   SATISFIED as _SATISFIED, TMP as _TMP,
                                   dot as _dot, metric as _metric, mul_jt,
                                   save_stats as _save_stats, stat_scale)
from numjoco.engine.types import MINVAL as _MINVAL, NISLAND as _NISLAND
from numjoco.engine._sig import unit, M, D, i4, i8, i4v, NEEDS_NOSLIP, NEEDS_PGS

_u = np.uintp   # an index known to be >= 0 (engine/solver.py)


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
  mul_jt(d.solver_Y, d.solver_Yadr, d.solver_Ynnz, d.solver_Ycol, nefc, rows, nv, w, f)


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
  when the constraint is active (mju_QCQP2 / QCQP3 / QCQP, n <= 5: closed forms for n = 2
  and 3, a Cholesky factor beyond). As, Ala (5x5), bs, tmp (5) are work arrays."""
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
    res[0], res[1] = v1, v2
  elif n == 3:
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
    res[0], res[1], res[2] = v1, v2, v3
  else:
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
  # the solution in the caller's scaling, for every n
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
  statistics scale in MuJoCo."""
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

