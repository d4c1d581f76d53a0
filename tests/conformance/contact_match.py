"""How many geom pairs' contact lists equal MuJoCo's: a diagnostic, not a test.

The collision driver's narrowphase (GJK/EPA, multicontact, plane-mesh) runs pair by pair on
MuJoCo's own geom poses (no kinematics of ours in between), for the pairs MuJoCo reports in contact, in
random states of MuJoCo's models (tests.models.random_state, scale 0.05, as
tests/test_mujoco_models.py). A pair matches when its contact count and every contact's dist,
pos and normal are within 1e-6; mismatches are counted by kind: "order" (the same contacts in
another order), "ncon" (another count) or the size of the largest difference. Only the
narrowphase is compiled, so a change to engine/collision/convex.py is measured in minutes
instead of the whole engine's rebuild.

    python -m tests.conformance.contact_match [--models a.xml,b.xml] [--seeds 10] [-v]

Models are paths under tests/assets/mujoco_models; the default is those of
tests/test_mujoco_models.py _PAIRS_MATCHING (the mesh-heavy models, and those whose forward
dynamics differ from MuJoCo's).
"""
import argparse
import collections
import os

import numpy as np

_MESH = 7


_PAIR = None


def _pair_kernel():
  """A compiled call of the driver's narrowphase on one geom pair with d's work buffers (their
  views are borrowed arrays, which stay in compiled code)."""
  global _PAIR
  if _PAIR is None:
    from numjoco.engine._jit import jit
    from numjoco.engine.collision.driver import _narrowphase, work_views

    @jit
    def pair(m, d, g1, g2):
      _narrowphase(m, d, g1, g2, -1, work_views(m, d))

    _PAIR = pair
  return _PAIR


def _collide(m, d, mjd, g1, g2):
  """Our contacts of geoms g1, g2 (MuJoCo's order, type1 <= type2) at MuJoCo's geom poses: the
  driver's own narrowphase of that pair, alone. Returns (count, dist, pos, frame)."""
  d.geom_xpos[:] = mjd.geom_xpos
  d.geom_xmat[:] = mjd.geom_xmat
  d.ncon = 0
  _pair_kernel()(m.struct, d.struct, g1, g2)
  n = d.ncon
  return n, d.contact_dist[:n], d.contact_pos[:n], d.contact_frame[:n]


def _worst(dist, pos, frame, j, c, i):
  return max(abs(dist[j] - c.dist[i]), np.abs(pos[j] - c.pos[i]).max(),
             np.abs(frame[j, :3] - c.frame[i, :3]).max())


def compare_state(m, d, mjd, tol=1e-6):
  """{(g1, g2): None (match) or the kind of mismatch} for MuJoCo's convex contact pairs."""
  from numjoco.engine.collision import table
  c = mjd.contact
  groups = collections.OrderedDict()
  for i in range(mjd.ncon):
    if c.flex[i, 0] < 0 and c.flex[i, 1] < 0:
      groups.setdefault((int(c.geom1[i]), int(c.geom2[i])), []).append(i)
  out = {}
  for (g1, g2), idx in groups.items():
    t1, t2 = m.geom_type[g1], m.geom_type[g2]
    if table.COLLIDER[t1, t2] not in (table.CONVEX, table.MESH) or t2 > _MESH:
      continue
    n, dist, pos, frame = _collide(m, d, mjd, g1, g2)
    if n != len(idx):
      out[g1, g2] = "ncon"
      continue
    worst = max(_worst(dist, pos, frame, j, c, i) for j, i in enumerate(idx))
    if worst <= tol:
      out[g1, g2] = None
      continue
    free = list(idx)
    for j in range(n):
      hit = [i for i in free if _worst(dist, pos, frame, j, c, i) <= tol]
      if not hit:
        break
      free.remove(hit[0])
    out[g1, g2] = "order" if not free else "%.0e" % 10 ** np.ceil(np.log10(worst))
  return out


def run(path, seeds, verbose=False):
  import mujoco

  from tests.models import models_and_data, random_state
  from tests.test_mujoco_models import _DIR
  m, d, mjm, mjd = models_and_data(os.path.join(_DIR, path), quiet=True)
  kinds = collections.Counter()
  for seed in range(seeds):
    random_state(mjm, mjd, seed, scale=0.05)
    mujoco.mj_forward(mjm, mjd)
    for pair, kind in compare_state(m, d, mjd).items():
      kinds[kind or "match"] += 1
      if verbose and kind:
        print(f"    seed {seed} geoms {pair}: {kind}")
  return kinds


def main():
  from tests.test_mujoco_models import _PAIRS_MATCHING
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--models", default=",".join(_PAIRS_MATCHING))
  ap.add_argument("--seeds", type=int, default=10)
  ap.add_argument("-v", action="store_true", help="list the mismatching pairs")
  a = ap.parse_args()
  total = collections.Counter()
  for path in a.models.split(","):
    kinds = run(path, a.seeds, a.v)
    total.update(kinds)
    rest = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()) if k != "match")
    print(f"{path:62s} {kinds['match']:5d}/{sum(kinds.values()):5d}  {rest}")
  print(f"{'all':62s} {total['match']:5d}/{sum(total.values()):5d}")


if __name__ == "__main__":
  main()
