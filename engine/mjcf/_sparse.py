"""Sparsity layouts of the mass matrix (M, D) and the body-dof matrix (B), as MuJoCo 4 builds them.

M is the lower triangle in CSR form with rows of "simple" dofs reduced to their diagonal; D is
the full symmetric pattern; B holds, for each body, the dofs of its subtree and its ancestors.
"""
import numpy as np


def dofdof(nv, parent, simplenum, reduced, upper):
  """(rownnz, rowadr, colind) of a dof-dof matrix (mj_makeDofDofSparse)."""
  rows = [[i] for i in range(nv)]
  for i in range(nv - 1, -1, -1):
    if reduced and simplenum[i]:
      continue
    j = parent[i]
    while j >= 0:
      rows[i].append(j)
      if upper:
        rows[j].append(i)
      j = parent[j]
  rows = [sorted(r) for r in rows]
  rownnz = np.array([len(r) for r in rows], np.int32)
  rowadr = np.concatenate([[0], np.cumsum(rownnz)[:-1]]).astype(np.int32) if nv else rownnz
  colind = np.array([c for r in rows for c in r], np.int32)
  return rownnz, rowadr, colind


def body_dof(nbody, dofnum, parentid, dofadr):
  """(rownnz, rowadr, colind) of B (mj_makeBSparse): subtree and ancestor dofs per body."""
  sub = [[] for _ in range(nbody)]
  for i in range(nbody - 1, 0, -1):
    sub[i] = list(range(dofadr[i], dofadr[i] + dofnum[i])) + sub[i]
    sub[parentid[i]] += sub[i]
  rows = []
  for i in range(nbody):
    r = list(sub[i])
    p = parentid[i]
    while p > 0:
      r += list(range(dofadr[p], dofadr[p] + dofnum[p]))
      p = parentid[p]
    rows.append(sorted(r))
  rownnz = np.array([len(r) for r in rows], np.int32)
  rowadr = np.concatenate([[0], np.cumsum(rownnz)[:-1]]).astype(np.int32)
  colind = np.array([c for r in rows for c in r], np.int32)
  return rownnz, rowadr, colind


def _index(rownnz, rowadr, colind):
  return {(i, int(colind[k])): k for i in range(len(rownnz))
          for k in range(rowadr[i], rowadr[i] + rownnz[i])}


def maps(nv, Madr, simplenum, parent, D, M):
  """(mapM2D, mapD2M, mapM2M) index maps between the legacy M, CSR M and D layouts."""
  dpos, mpos = _index(*D), _index(*M)
  nD, nC = len(D[2]), len(M[2])
  mapM2D = np.full(nD, -1, np.int32)
  for (i, j), k in dpos.items():
    key = (i, j) if j <= i else (j, i)
    if key in mpos:
      mapM2D[k] = mpos[key]
  mapD2M = np.zeros(nC, np.int32)
  for key, k in mpos.items():
    mapD2M[k] = dpos[key]
  # legacy M stores each row as diagonal then ancestors; CSR M rows are sorted ascending
  mapM2M = np.full(nC, -1, np.int32)
  for i in range(nv):
    adr = Madr[i]
    mapM2M[mpos[(i, i)]] = adr
    if simplenum[i]:
      continue
    j = parent[i]
    while j >= 0:
      adr += 1
      mapM2M[mpos[(i, j)]] = adr
      j = parent[j]
  return mapM2D, mapD2M, mapM2M
