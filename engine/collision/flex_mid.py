"""Midphase of flex element pairs: which elements of one flex can touch which of another (or of
the same flex), from the element boxes d.flexelem_aabb (vertex extent grown by flex_radius, as
mj_flex computes them) grown by the pair's margin.

MuJoCo passes these pairs to mj_collideElems from its midphase: mj_collideTree over the
flexes' BVHs (flex : flex, and self-collision in selfcollide "bvh", or "auto" on a 3D flex)
or mj_collideFlexSAP (selfcollide "sap", or "auto" on a 1D/2D flex; engine/collision/flex.py
follows that one's sweep). mj_collideElems rejects every pair whose boxes are apart
(filterBox), so any midphase that keeps all pairs with overlapping boxes gives the same
contacts. This one is a sort along the longest axis of the flex's box: `sweep_index` sorts the
active elements of the second flex by the low end of their box, with the running maximum of
the high end; `overlaps` lists the elements whose box overlaps one element's box, by a binary
search on that running maximum and a scan up to the element's high end, in ascending id order
so that a pair loop over them visits pairs in the order of the all-pairs loop (e1, then e2
ascending). The comparisons are filterBox's own (`boxes_apart`), so the kept set is exactly
the set of pairs filterBox passes.
"""
import numpy as np

from numjoco.engine._jit import jit


@jit
def elem_active(m, f, e):
  """mj_isElemActive: every 1D/2D element; 3D elements below flex_activelayers."""
  if m.flex_dim[f] < 3:
    return True
  return m.flex_elemlayer[m.flex_elemadr[f] + e] < m.flex_activelayers[f]


@jit
def elem_range(m, d, f, e, k):
  """Extent of element e of flex f along axis k, grown by flex_radius: d.flexelem_aabb's
  center -/+ half size, as filterBox compares them (mj_flex fills it before collision)."""
  g = m.flex_elemadr[f] + e
  c, h = d.flexelem_aabb[g, k], d.flexelem_aabb[g, 3 + k]
  return c - h, c + h


@jit
def boxes_apart(m, d, f1, e1, f2, e2, margin):
  """filterBox on the two elements' axis-aligned boxes (vertices grown by flex_radius)."""
  for k in range(3):
    lo1, hi1 = elem_range(m, d, f1, e1, k)
    lo2, hi2 = elem_range(m, d, f2, e2, k)
    if hi1 + margin < lo2 or hi2 + margin < lo1:
      return True
  return False


@jit
def _half_extent(m, d, f, k):
  """Half the extent along axis k of the box around flex f's active element boxes."""
  a, b = np.inf, -np.inf
  for e in range(m.flex_elemnum[f]):
    if elem_active(m, f, e):
      lo, hi = elem_range(m, d, f, e, k)
      a = min(a, lo)
      b = max(b, hi)
  return 0.5 * (b - a)


@jit
def longest_axis(m, d, f):
  """Axis (0, 1, 2) along which the box around flex f's active element boxes is longest, as
  mj_collideFlexSAP picks it from the flex's root box (ties go to the later axis)."""
  x, y, z = _half_extent(m, d, f, 0), _half_extent(m, d, f, 1), _half_extent(m, d, f, 2)
  return 0 if (x > y and x > z) else (1 if y > z else 2)


@jit
def sweep_index(m, d, f, ax, order, slo, smax):
  """Active elements of flex f sorted by the low end of their box along axis ax: their ids in
  order[:n], those low ends in slo[:n] and the running maximum of the high ends in smax[:n]
  (arrays of flex_elemnum entries). Returns n."""
  n = 0
  for e in range(m.flex_elemnum[f]):
    if elem_active(m, f, e):
      order[n] = e
      slo[n], smax[n] = elem_range(m, d, f, e, ax)
      n += 1
  lo = slo[:n].copy()
  hi = smax[:n].copy()
  ids = order[:n].copy()
  perm = np.argsort(lo, kind="mergesort")
  top = -np.inf
  for s in range(n):
    i = perm[s]
    order[s] = ids[i]
    slo[s] = lo[i]
    top = max(top, hi[i])
    smax[s] = top
  return n


@jit
def overlaps(m, d, f1, e1, f2, ax, order, slo, smax, n, margin, emin, out):
  """Elements e2 > emin of flex f2 (sorted by `sweep_index` along ax into order, slo, smax
  of n entries) whose box is not apart from element e1 of flex f1 by more than margin
  (`boxes_apart`): written ascending into out; returns their count."""
  lo1, hi1 = elem_range(m, d, f1, e1, ax)
  # the first position whose running maximum reaches lo1: every element before it ends
  # below lo1 - margin
  a, b = 0, n
  while a < b:
    c = (a + b) // 2
    if smax[c] + margin < lo1:
      a = c + 1
    else:
      b = c
  cnt = 0
  for s in range(a, n):
    if hi1 + margin < slo[s]:
      break
    e2 = order[s]
    if e2 <= emin or boxes_apart(m, d, f1, e1, f2, e2, margin):
      continue
    # insertion into the ascending list (a handful of neighbours per element)
    j = cnt
    while j > 0 and out[j - 1] > e2:
      out[j] = out[j - 1]
      j -= 1
    out[j] = e2
    cnt += 1
  return cnt
