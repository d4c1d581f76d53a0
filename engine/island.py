"""Constraint islands (MuJoCo's engine_island.c, mj_island).

Kinematic trees coupled by constraint rows form islands: a union-find over the trees each row
touches (contacts: the geoms' trees; connect/weld: the two bodies' trees; joint friction and
limits: the joint's tree; other rows: the trees of the nonzero columns of their Jacobian row),
islands numbered by their smallest tree. Dofs of trees in no island are unconstrained.

Fills nisland, nidof, tree_island, island_ntree, island_itreeadr, map_itree2tree, dof_island,
island_nv, island_idofadr, island_dofadr, map_dof2idof, map_idof2dof, efc_island, island_ne,
island_nf, island_nefc, island_iefcadr, map_efc2iefc, map_iefc2efc and the island-ordered row
data iefc_type, iefc_id, iefc_frictionloss, iefc_D, iefc_R, as MuJoCo does. Work: island_int
(union-find parents, counters), solver_int[0] (tree of each row).
"""
from numjoco.engine.constraint import (ELLIPTIC as _CONTACT_ELLIPTIC, EQUALITY as _EQUALITY,
                                       FRICTION_DOF as _FRICTION_DOF,
                                       FRICTION_TENDON as _FRICTION_TENDON,
                                       FRICTIONLESS as _CONTACT_FRICTIONLESS,
                                       LIMIT_JOINT as _LIMIT_JOINT)
from numjoco.engine._jit import inline, jit
from numjoco.engine.types import mjtDisableBit, mjtEq, mjtObj
from numjoco.engine._sig import unit, M, D

_EQ_CONNECT, _EQ_WELD, _EQ_FLEX = int(mjtEq.CONNECT), int(mjtEq.WELD), int(mjtEq.FLEX)
_OBJ_SITE = int(mjtObj.SITE)
_DSBL_ISLAND = int(mjtDisableBit.ISLAND)
_NONE = -2   # no (more) trees


@jit
def dsu_root(parent, tree):
  """Canonical root of an active tree, compressing its path (mj_dsuRoot)."""
  root = tree
  while parent[root] != root:
    root = parent[root]
  while parent[tree] != tree:
    nxt = parent[tree]
    parent[tree] = root
    tree = nxt
  return root


@jit
def dsu_merge(parent, tree1, tree2):
  """Activate and union two trees; -1 is the static world (mj_dsuMerge). The smaller root
  wins, so islands come out numbered by their smallest tree."""
  if tree1 == -1:
    tree1 = tree2
  if tree2 == -1:
    tree2 = tree1
  if parent[tree1] == -1:
    parent[tree1] = tree1
  if parent[tree2] == -1:
    parent[tree2] = tree2
  if parent[tree1] == parent[tree2]:
    return
  root1 = dsu_root(parent, tree1)
  root2 = dsu_root(parent, tree2)
  if root1 < root2:
    parent[root2] = root1
  elif root2 < root1:
    parent[root1] = root2


@jit
def _special_trees(m, d, i):
  """The trees of row i when its type names them (contacts, connect/weld, joint friction and
  limits): (tree1, tree2), _NONE for an absent one; (_NONE, _NONE) asks for a Jacobian scan."""
  typ, eid = d.efc_type[i], d.efc_id[i]
  if typ == _FRICTION_DOF:
    return m.dof_treeid[eid], _NONE
  if typ == _LIMIT_JOINT:
    return m.dof_treeid[m.jnt_dofadr[eid]], _NONE
  if typ >= _CONTACT_FRICTIONLESS and typ <= _CONTACT_ELLIPTIC:
    g1, g2 = d.contact_geom1[eid], d.contact_geom2[eid]
    if g1 >= 0 and g2 >= 0:
      return m.body_treeid[m.geom_bodyid[g1]], m.body_treeid[m.geom_bodyid[g2]]
    return _NONE, _NONE
  if typ == _EQUALITY and (m.eq_type[eid] == _EQ_CONNECT or m.eq_type[eid] == _EQ_WELD):
    b1, b2 = m.eq_obj1id[eid], m.eq_obj2id[eid]
    if m.eq_objtype[eid] == _OBJ_SITE:
      b1, b2 = m.site_bodyid[b1], m.site_bodyid[b2]
    return m.body_treeid[b1], m.body_treeid[b2]
  return _NONE, _NONE


@jit
def _union_row(m, d, parent, i):
  """Union the trees of row i; returns the row's tree (-1: error, none or only static)."""
  t1, t2 = _special_trees(m, d, i)
  if t1 != _NONE:
    if t2 == _NONE:
      if t1 < 0:
        return -1
      dsu_merge(parent, t1, -1)
      return t1
    if t1 < 0 and t2 < 0:
      return -1
    dsu_merge(parent, t1, t2)
    return t1 if t1 >= 0 else t2
  # generic scan: trees of the nonzero columns, in column order, chained pairwise
  first = _NONE
  prev = -1
  a0 = d.efc_J_rowadr[i]
  for a in range(a0, a0 + d.efc_J_rownnz[i]):
    if d.efc_J[a] == 0.0:
      continue
    tree = m.dof_treeid[d.efc_J_colind[a]]
    if tree != prev:
      if first == _NONE:
        first = tree
      else:
        dsu_merge(parent, prev, tree)
      prev = tree
  if first == _NONE:
    return -1
  if prev == first:
    dsu_merge(parent, first, -1)
  return first


@jit
def _union_flex_stiffness(m, d, parent):
  """A stiff flex couples all its vertices (nodes, when interpolated) with no constraint row
  for the coupling: the awake trees of each flex with stretch stiffness or bending (dim >= 2,
  not rigid) join one island, a star around its first tree (mj_island's unionConstraintTrees:
  MuJoCo solves an elastic flex touched by one contact as one island of all its dofs, e.g. in
  jelly.xml). A flex with a single awake tree adds nothing."""
  for f in range(m.nflex):
    if m.flex_rigid[f] or m.flex_dim[f] < 2:
      continue
    sadr = m.flex_stiffnessadr[f]
    if m.flex_bendingadr[f] < 0 and (sadr < 0 or m.flex_stiffness[sadr] == 0.0):
      continue
    if m.flex_interp[f]:
      adr, num, bodyid = m.flex_nodeadr[f], m.flex_nodenum[f], m.flex_nodebodyid
    else:
      adr, num, bodyid = m.flex_vertadr[f], m.flex_vertnum[f], m.flex_vertbodyid
    tree1 = -1
    for j in range(num):
      tree2 = m.body_treeid[bodyid[adr + j]]
      if tree2 < 0 or tree2 == tree1 or not d.tree_awake[tree2]:
        continue
      if tree1 < 0:
        tree1 = tree2
      else:
        dsu_merge(parent, tree1, tree2)


@inline
def _starts(adr, num, count, n):
  """adr[:n] = where each island's block starts (the running sum of num), count[:n] = 0."""
  adr[0] = 0
  for k in range(1, n):
    adr[k] = adr[k - 1] + num[k - 1]
  for k in range(n):
    count[k] = 0


@inline
def _place_row(d, c, ic):
  """Row c goes to island-ordered place ic: the maps both ways and its iefc_* data."""
  d.map_efc2iefc[c] = ic
  d.map_iefc2efc[ic] = c
  d.iefc_type[ic] = d.efc_type[c]
  d.iefc_id[ic] = d.efc_id[c]
  d.iefc_frictionloss[ic] = d.efc_frictionloss[c]
  d.iefc_D[ic] = d.efc_D[c]
  d.iefc_R[ic] = d.efc_R[c]


@jit
def _one_island(m, d, nefc):
  """The dof and row maps of a single island (the common case), as the general pass makes
  them, without its per-island counters: every row is the island's, in order (the maps are
  the identity), and so are the dofs when every tree is in it."""
  nv, nidof = m.nv, d.nidof[0]
  if nidof == nv:
    for i in range(nv):
      d.dof_island[i] = 0
      d.map_dof2idof[i] = i
      d.map_idof2dof[i] = i
  else:
    inside, outside = 0, nidof
    for dof in range(nv):
      k = d.tree_island[m.dof_treeid[dof]]
      d.dof_island[dof] = k
      if k >= 0:
        idof = inside
        inside += 1
      else:
        idof = outside
        outside += 1
      d.map_dof2idof[dof] = idof
      d.map_idof2dof[idof] = dof
  d.island_nv[0] = nidof
  d.island_idofadr[0] = 0
  d.island_dofadr[0] = d.map_idof2dof[0]
  ne, nf = 0, 0
  for i in range(nefc):
    typ = d.efc_type[i]
    if typ == _EQUALITY:
      ne += 1
    elif typ == _FRICTION_DOF or typ == _FRICTION_TENDON:
      nf += 1
    d.efc_island[i] = 0
    _place_row(d, i, i)
  d.island_ne[0] = ne
  d.island_nf[0] = nf
  d.island_nefc[0] = nefc
  d.island_iefcadr[0] = 0


@unit((M, D))
def island(m, d):
  """Discover the constraint islands of the current rows (mj_island); nisland = 0 when there
  are no rows, the ISLAND disable bit is set, or a row touches no tree (then solve as one)."""
  nv, nefc, ntree = m.nv, d.nefc[0], m.ntree
  d.nisland[0] = 0
  d.nidof[0] = 0
  if (m.opt_disableflags[0] & _DSBL_ISLAND) or nefc == 0:
    return
  parent = d.island_int[0]
  efc_tree = d.solver_int[0]
  for t in range(ntree):
    parent[t] = -1
  typ, eid = -1, -1
  for i in range(nefc):
    # rows of one constraint share its trees; a flex equality's rows (one per edge) do not
    if (i > 0 and typ == d.efc_type[i] and eid == d.efc_id[i]
            and not (typ == _EQUALITY and m.eq_type[eid] == _EQ_FLEX)):
      efc_tree[i] = efc_tree[i - 1]
      continue
    typ, eid = d.efc_type[i], d.efc_id[i]
    t = _union_row(m, d, parent, i)
    if t < 0:
      return
    efc_tree[i] = t
  _union_flex_stiffness(m, d, parent)

  # islands in ascending root order (mj_dsuAssign)
  tree_island = d.tree_island
  nisland = 0
  nidof = 0
  for t in range(ntree):
    if parent[t] == -1:
      tree_island[t] = -1
      continue
    if parent[t] == t:
      tree_island[t] = nisland
      nisland += 1
    else:
      parent[t] = parent[parent[t]]
      tree_island[t] = tree_island[parent[t]]
    nidof += m.tree_dofnum[t]
  d.nisland[0] = nisland
  d.nidof[0] = nidof
  if nisland == 0:
    return
  count = d.island_int[1]

  # trees
  for k in range(nisland):
    d.island_ntree[k] = 0
  for t in range(ntree):
    if tree_island[t] >= 0:
      d.island_ntree[tree_island[t]] += 1
  _starts(d.island_itreeadr, d.island_ntree, count, nisland)
  last = d.island_itreeadr[nisland - 1] + d.island_ntree[nisland - 1]
  nfree = 0
  for t in range(ntree):
    k = tree_island[t]
    if k >= 0:
      d.map_itree2tree[d.island_itreeadr[k] + count[k]] = t
      count[k] += 1
    else:
      d.map_itree2tree[last + nfree] = t
      nfree += 1

  if nisland == 1:
    _one_island(m, d, nefc)
    return

  # dofs
  for k in range(nisland):
    d.island_nv[k] = 0
  for i in range(nv):
    k = tree_island[m.dof_treeid[i]]
    d.dof_island[i] = k
    if k >= 0:
      d.island_nv[k] += 1
  _starts(d.island_idofadr, d.island_nv, count, nisland)
  nfree = 0
  for dof in range(nv):
    k = d.dof_island[dof]
    if k >= 0:
      idof = d.island_idofadr[k] + count[k]
      count[k] += 1
    else:
      idof = nidof + nfree
      nfree += 1
    d.map_dof2idof[dof] = idof
    d.map_idof2dof[idof] = dof
  for k in range(nisland):
    d.island_dofadr[k] = d.map_idof2dof[d.island_idofadr[k]]

  # constraint rows
  for k in range(nisland):
    d.island_ne[k] = 0
    d.island_nf[k] = 0
    d.island_nefc[k] = 0
  for i in range(nefc):
    k = tree_island[efc_tree[i]]
    d.efc_island[i] = k
    d.island_nefc[k] += 1
    if d.efc_type[i] == _EQUALITY:
      d.island_ne[k] += 1
    elif d.efc_type[i] == _FRICTION_DOF or d.efc_type[i] == _FRICTION_TENDON:
      d.island_nf[k] += 1
  _starts(d.island_iefcadr, d.island_nefc, count, nisland)
  for c in range(nefc):
    k = d.efc_island[c]
    ic = d.island_iefcadr[k] + count[k]
    count[k] += 1
    _place_row(d, c, ic)
