"""Flexes (MuJoCo's deformables): vertex positions, element boxes, edge lengths, Jacobians and
velocities (mj_flex, mj_fwdVelocity), and their passive forces (mj_passive's flex part): edge
spring-dampers, the elasticity of 2D flexes (stretch and bending) and of 3D flexes (stretch).

Every formula agrees with MuJoCo's mjData (tests/test_flex.py compares them). What is not
simulated yet is refused when the model loads (engine/mjcf/_flex.py check_simulated):
collisions with mesh, height field and SDF geoms, interpolated flexes, 1D (rod) elasticity,
the discrete integrator.
"""
import numpy as np

from numjoco.engine import smooth
from numjoco.engine._jit import jit
from numjoco.engine.types import mjtDisableBit
from numjoco.engine._sig import unit, M, D, NEEDS_FLEX

_DSBL_SPRING = int(mjtDisableBit.SPRING)
_DSBL_DAMPER = int(mjtDisableBit.DAMPER)

# local vertex pairs of an element's edges (MuJoCo's edges[dim - 2]): triangles, tetrahedra
_TRI_EDGES = ((1, 2), (2, 0), (0, 1))
_TET_EDGES = ((0, 1), (1, 2), (2, 0), (2, 3), (0, 3), (1, 3))


@jit
def vertex_positions(m, d):
  """flexvert_xpos of non-interpolated flexes: each vertex is its body's origin (centered
  flexes) or a point fixed in its body."""
  for f in range(m.nflex):
    if m.flex_interp[f]:
      continue
    for i in range(m.flex_vertadr[f], m.flex_vertadr[f] + m.flex_vertnum[f]):
      b = m.flex_vertbodyid[i]
      v0, v1, v2 = m.flex_vert[i, 0], m.flex_vert[i, 1], m.flex_vert[i, 2]
      if m.flex_centered[f] or (v0 == 0.0 and v1 == 0.0 and v2 == 0.0):
        for k in range(3):
          d.flexvert_xpos[i, k] = d.xpos[b, k]
      else:
        r = d.xmat[b]
        for k in range(3):
          d.flexvert_xpos[i, k] = (r[3 * k] * v0 + r[3 * k + 1] * v1 + r[3 * k + 2] * v2
                                   + d.xpos[b, k])


@jit
def element_boxes(m, d):
  """flexelem_aabb: center and half sizes (plus the flex radius) of every element."""
  for f in range(m.nflex):
    dim = m.flex_dim[f]
    va = m.flex_vertadr[f]
    for e in range(m.flex_elemnum[f]):
      data = m.flex_elemdataadr[f] + e * (dim + 1)
      g = m.flex_elemadr[f] + e
      for k in range(3):
        lo = d.flexvert_xpos[va + m.flex_elem[data], k]
        hi = lo
        for i in range(1, dim + 1):
          x = d.flexvert_xpos[va + m.flex_elem[data + i], k]
          lo = min(lo, x)
          hi = max(hi, x)
        d.flexelem_aabb[g, k] = 0.5 * (hi + lo)
        d.flexelem_aabb[g, 3 + k] = 0.5 * (hi - lo) + m.flex_radius[f]


@jit
def _point_jac_add(m, d, acc, p0, p1, p2, body, sign):
  """acc[dof] += sign * (translational Jacobian column of world point p on `body`), over the
  dofs that move the body."""
  v, o0, o1, o2 = smooth.point_chain(m, d, body, p0, p1, p2)
  while v >= 0:
    j0, j1, j2 = smooth.point_jac_col(d.cdof[v], o0, o1, o2)
    acc[v, 0] += sign * j0
    acc[v, 1] += sign * j1
    acc[v, 2] += sign * j2
    v = m.dof_parentid[v]


@jit
def edges(m, d):
  """flexedge_length of every edge of a non-rigid flex, and flexedge_J (the edge's unit
  vector times the difference of its end points' Jacobians) where the flex has an edge
  force or constraint (the rows the compiler laid out)."""
  for i in range(d.flexedge_J.shape[0]):
    d.flexedge_J[i] = 0.0
  acc = d.flex_jacdif
  for f in range(m.nflex):
    if m.flex_rigid[f] or m.flex_interp[f]:
      continue
    va = m.flex_vertadr[f]
    for e in range(m.flex_edgeadr[f], m.flex_edgeadr[f] + m.flex_edgenum[f]):
      i1 = va + m.flex_edge[e, 0]
      i2 = va + m.flex_edge[e, 1]
      x1 = d.flexvert_xpos[i1]
      x2 = d.flexvert_xpos[i2]
      u0, u1, u2 = x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2]
      n = (u0 * u0 + u1 * u1 + u2 * u2) ** 0.5
      d.flexedge_length[e] = n
      if n < 1e-15:      # mju_normalize3: a degenerate edge points along x
        u0, u1, u2 = 1.0, 0.0, 0.0
      else:
        u0, u1, u2 = u0 / n, u1 / n, u2 / n
      nnz = m.flexedge_J_rownnz[e]
      if nnz == 0:
        continue
      adr = m.flexedge_J_rowadr[e]
      for k in range(nnz):
        col = m.flexedge_J_colind[adr + k]
        acc[col, 0] = 0.0
        acc[col, 1] = 0.0
        acc[col, 2] = 0.0
      _point_jac_add(m, d, acc, x2[0], x2[1], x2[2], m.flex_vertbodyid[i2], 1.0)
      _point_jac_add(m, d, acc, x1[0], x1[1], x1[2], m.flex_vertbodyid[i1], -1.0)
      for k in range(nnz):
        col = m.flexedge_J_colind[adr + k]
        d.flexedge_J[adr + k] = acc[col, 0] * u0 + acc[col, 1] * u1 + acc[col, 2] * u2


@jit
def flex(m, d):
  """mj_flex: vertex positions, element boxes, edge lengths and Jacobians."""
  if m.nflex == 0:
    return
  vertex_positions(m, d)
  element_boxes(m, d)
  edges(m, d)


@jit
def edge_velocity(m, d):
  """flexedge_velocity = flexedge_J qvel (zero for rigid and interpolated flexes)."""
  for e in range(m.nflexedge):
    d.flexedge_velocity[e] = 0.0
  for f in range(m.nflex):
    if m.flex_rigid[f] or m.flex_interp[f]:
      continue
    for e in range(m.flex_edgeadr[f], m.flex_edgeadr[f] + m.flex_edgenum[f]):
      s = 0.0
      adr = m.flexedge_J_rowadr[e]
      for k in range(adr, adr + m.flexedge_J_rownnz[e]):
        s += d.flexedge_J[k] * d.qvel[m.flexedge_J_colind[k]]
      d.flexedge_velocity[e] = s


# ------------------------------------------------------------------------ passive forces

@jit
def _add_vertex_force(m, d, b, fx, fy, fz, px, py, pz, qfrc):
  """A world force on a flex vertex's body into qfrc: rotated into the body's 3 slide dofs
  for a free vertex body (body_simple 2), through the body's Jacobian at the vertex else
  (pinned vertices)."""
  if m.body_simple[b] != 2:
    smooth.apply_ft(m, d, fx, fy, fz, 0.0, 0.0, 0.0, px, py, pz, b, qfrc)
    return
  r = d.xmat[b]
  adr = m.body_dofadr[b]
  loc0 = r[0] * fx + r[3] * fy + r[6] * fz
  loc1 = r[1] * fx + r[4] * fy + r[7] * fz
  loc2 = r[2] * fx + r[5] * fy + r[8] * fz
  n = m.body_dofnum[b]
  if n > 0:
    qfrc[adr] += loc0
  if n > 1:
    qfrc[adr + 1] += loc1
  if n > 2:
    qfrc[adr + 2] += loc2


@jit
def _stretch(m, d, f, enbl_spring, enbl_damper):
  """Elastic stretch of a 2D flex's triangles or a 3D flex's tetrahedra (MuJoCo's Saint
  Venant-Kirchhoff stretch, mj_flexPassiveStretch): each element's squared edge elongations
  through its packed edge metric (flex_stiffness: 21 numbers per triangle, 24 per tetrahedron),
  pulled back along each edge. The spring part (elongation from flexedge_length0) goes to
  qfrc_spring; the Rayleigh damping part (Kharevych et al.: the squared length's change over the
  last step, times flex_damping / h) to qfrc_damper, each gated by its disable flag as MuJoCo 4.0
  does (its published source folds both into qfrc_spring)."""
  sadr = m.flex_stiffnessadr[f]
  if sadr < 0 or m.flex_stiffness[sadr] == 0.0:
    return
  h = m.opt_timestep[0]
  kd = m.flex_damping[f] / h if h > 0 and enbl_damper else 0.0
  damp = kd != 0.0
  if not enbl_spring and not damp:
    return
  dim = m.flex_dim[f]
  nedge = 3 if dim == 2 else 6
  stride = 21 if dim == 2 else 24
  va = m.flex_vertadr[f]
  ea = m.flex_edgeadr[f]
  nvert = m.flex_vertnum[f]
  qf = d.flex_vertforce   # columns 0-2: spring, 3-5: damper
  for v in range(nvert):
    for x in range(6):
      qf[v, x] = 0.0
  els = np.empty(6)
  eld = np.empty(6)
  for t in range(m.flex_elemnum[f]):
    data = m.flex_elemdataadr[f] + (dim + 1) * t
    for e in range(nedge):
      idx = ea + m.flex_elemedge[m.flex_elemedgeadr[f] + nedge * t + e]
      cur = d.flexedge_length[idx]
      ref = m.flexedge_length0[idx]
      prev = cur - d.flexedge_velocity[idx] * h
      els[e] = cur * cur - ref * ref if enbl_spring else 0.0
      eld[e] = (cur * cur - prev * prev) * kd if damp else 0.0
    kt = sadr + stride * t
    for e2 in range(nedge):
      ws = wd = 0.0
      for e1 in range(nedge):
        lo, hi = min(e1, e2), max(e1, e2)
        # packed upper triangle of the nedge x nedge metric, row by row
        k = m.flex_stiffness[kt + lo * nedge - (lo * (lo - 1)) // 2 + hi - lo]
        ws += els[e1] * k
        if damp:
          wd += eld[e1] * k
      if dim == 2:
        a, b = data + _TRI_EDGES[e2][0], data + _TRI_EDGES[e2][1]
      else:
        a, b = data + _TET_EDGES[e2][0], data + _TET_EDGES[e2][1]
      a, b = m.flex_elem[a], m.flex_elem[b]
      for x in range(3):
        g = d.flexvert_xpos[va + a, x] - d.flexvert_xpos[va + b, x]
        qf[a, x] -= ws * g
        qf[b, x] += ws * g
        if damp:
          qf[a, 3 + x] -= wd * g
          qf[b, 3 + x] += wd * g
  for v in range(nvert):
    b = m.flex_vertbodyid[va + v]
    xv = d.flexvert_xpos[va + v]
    px, py, pz = xv[0], xv[1], xv[2]
    if enbl_spring:
      _add_vertex_force(m, d, b, qf[v, 0], qf[v, 1], qf[v, 2], px, py, pz, d.qfrc_spring)
    if damp:
      _add_vertex_force(m, d, b, qf[v, 3], qf[v, 4], qf[v, 5], px, py, pz, d.qfrc_damper)


@jit
def _bend(m, d, f, enbl_spring, enbl_damper):
  """Bending of a 2D flex (mj_flexPassiveBend): per interior edge, the 4x4 coefficients of its
  two triangles' vertices (plus a curved-reference term) on positions (spring) and on free
  vertices' velocities (damper, times flex_damping)."""
  badr = m.flex_bendingadr[f]
  if badr < 0:
    return
  va = m.flex_vertadr[f]
  ea = m.flex_edgeadr[f]
  xp = d.flexvert_xpos
  frc = np.empty((4, 3))
  for e in range(m.flex_edgenum[f]):
    if m.flex_edgeflap[ea + e, 1] == -1:   # boundary edge
      continue
    vv = (m.flex_edge[ea + e, 0], m.flex_edge[ea + e, 1], m.flex_edgeflap[ea + e, 0],
          m.flex_edgeflap[ea + e, 1])
    p0, p1, p2, p3 = va + vv[0], va + vv[1], va + vv[2], va + vv[3]
    a0, a1, a2 = xp[p1, 0] - xp[p0, 0], xp[p1, 1] - xp[p0, 1], xp[p1, 2] - xp[p0, 2]
    b0, b1, b2 = xp[p2, 0] - xp[p0, 0], xp[p2, 1] - xp[p0, 1], xp[p2, 2] - xp[p0, 2]
    c0, c1, c2 = xp[p3, 0] - xp[p0, 0], xp[p3, 1] - xp[p0, 1], xp[p3, 2] - xp[p0, 2]
    # forces of the curved reference: cross products of the flap edges
    frc[1, 0], frc[1, 1], frc[1, 2] = b1 * c2 - b2 * c1, b2 * c0 - b0 * c2, b0 * c1 - b1 * c0
    frc[2, 0], frc[2, 1], frc[2, 2] = c1 * a2 - c2 * a1, c2 * a0 - c0 * a2, c0 * a1 - c1 * a0
    frc[3, 0], frc[3, 1], frc[3, 2] = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    for x in range(3):
      frc[0, x] = -(frc[1, x] + frc[2, x] + frc[3, x])
    coef = m.flex_bending[badr + 17 * e: badr + 17 * e + 17]
    for i in range(4):
      bi = m.flex_vertbodyid[va + vv[i]]
      if m.body_dofnum[bi] != 3:   # pinned: its reaction is carried by the pin
        continue
      r = d.xmat[bi]
      adr = m.body_dofadr[bi]
      sp0 = sp1 = sp2 = 0.0
      dp0 = dp1 = dp2 = 0.0
      for j in range(4):
        k = coef[4 * i + j]
        pj = va + vv[j]
        bj = m.flex_vertbodyid[pj]
        free = m.body_dofnum[bj] == 3
        if enbl_spring:
          sp0 += k * xp[pj, 0]
          sp1 += k * xp[pj, 1]
          sp2 += k * xp[pj, 2]
        if enbl_damper and free:
          q = m.body_dofadr[bj]
          dp0 += k * d.qvel[q]
          dp1 += k * d.qvel[q + 1]
          dp2 += k * d.qvel[q + 2]
      if enbl_spring:
        sp0 += coef[16] * frc[i, 0]
        sp1 += coef[16] * frc[i, 1]
        sp2 += coef[16] * frc[i, 2]
        d.qfrc_spring[adr] -= r[0] * sp0 + r[3] * sp1 + r[6] * sp2
        d.qfrc_spring[adr + 1] -= r[1] * sp0 + r[4] * sp1 + r[7] * sp2
        d.qfrc_spring[adr + 2] -= r[2] * sp0 + r[5] * sp1 + r[8] * sp2
      if enbl_damper:
        kd = m.flex_damping[f]
        d.qfrc_damper[adr] -= (r[0] * dp0 + r[3] * dp1 + r[6] * dp2) * kd
        d.qfrc_damper[adr + 1] -= (r[1] * dp0 + r[4] * dp1 + r[7] * dp2) * kd
        d.qfrc_damper[adr + 2] -= (r[2] * dp0 + r[5] * dp1 + r[8] * dp2) * kd


@unit((M, D), needs=NEEDS_FLEX)
def passive(m, d):
  """Flex terms of qfrc_spring and qfrc_damper: 2D elasticity (bending, then stretch) and 3D
  elasticity (stretch), then edge spring-dampers along flexedge_J."""
  if m.nflex == 0:
    return
  flags = m.opt_disableflags[0]
  enbl_spring = not (flags & _DSBL_SPRING)
  enbl_damper = not (flags & _DSBL_DAMPER)
  for f in range(m.nflex):
    if m.flex_dim[f] == 1 or m.flex_rigid[f] or m.flex_interp[f]:
      continue   # 1D elasticity and interpolated flexes: refused at load
    if m.flex_dim[f] == 2:
      _bend(m, d, f, enbl_spring, enbl_damper)
    _stretch(m, d, f, enbl_spring, enbl_damper)
  for f in range(m.nflex):
    ks = m.flex_edgestiffness[f] if enbl_spring else 0.0
    kd = m.flex_edgedamping[f] if enbl_damper else 0.0
    if m.flex_rigid[f] or (ks == 0.0 and kd == 0.0):
      continue
    for e in range(m.flex_edgeadr[f], m.flex_edgeadr[f] + m.flex_edgenum[f]):
      if m.flexedge_rigid[e]:
        continue
      fs = ks * (m.flexedge_length0[e] - d.flexedge_length[e])
      fd = -kd * d.flexedge_velocity[e]
      adr = m.flexedge_J_rowadr[e]
      for k in range(adr, adr + m.flexedge_J_rownnz[e]):
        col = m.flexedge_J_colind[k]
        d.qfrc_spring[col] += d.flexedge_J[k] * fs
        d.qfrc_damper[col] += d.flexedge_J[k] * fd
