"""Sleeping trees (MuJoCo 4's engine_sleep.c, `<flag sleep="enable"/>`).

A kinematic tree whose weighted velocity stays under `opt.sleep_tolerance` (|qvel_i| times
dof_length_i, so rotations count as the speed of the body's edge) for MINAWAKE steps is ready
to sleep; an island (trees coupled by constraint rows) sleeps when all its trees are ready, an
unconstrained tree on its own. A sleeping tree has zero qvel, is not integrated, collides with
no sleeping or static body, gives no equality, joint-limit or dof-friction rows, keeps its
sensors' values and its qacc. It wakes, with its whole island, when an awake tree touches it
(contact, an active inter-tree tendon limit, an equality), when its pose changes (qpos written
by the user), or when a force is applied to it (xfrc_applied, qfrc_applied, or the viewer's
mouse perturbation).

State (MuJoCo's fields): tree_asleep[t] < 0 awake (counting up from -(1 + MINAWAKE) while
ready to sleep: -1 ready), >= 0 asleep, the next tree of its island's sleep cycle; tree_awake,
body_awake (AWAKE, ASLEEP, STATIC), and the index lists dof_awake_ind, body_awake_ind,
parent_awake_ind with their counts.

Ours computes every stage for every tree (MuJoCo skips sleeping ones): a sleeping tree's
poses, recomputed from the same qpos, are the same numbers; its force fields (qfrc_*,
actuator_force) are recomputed where MuJoCo keeps their last values.
"""
import math

from numjoco.engine import flex_contact as fc
from numjoco.engine._jit import jit
from numjoco.engine.types import mjtEnableBit, mjtEq, mjtObj, mjtSensor, mjtTrn

_ENBL_SLEEP = int(mjtEnableBit.SLEEP)
MINAWAKE = 10                       # mjMINAWAKE: steps under tolerance before sleeping
AWAKE_VALUE = -(1 + MINAWAKE)       # tree_asleep of a fully awake tree
STATIC, ASLEEP, AWAKE = -1, 0, 1    # mjtSleepState
# mjtSleepPolicy
POLICY_AUTO, POLICY_AUTO_NEVER, POLICY_AUTO_ALLOWED = 0, 1, 2
POLICY_NEVER, POLICY_ALLOWED, POLICY_INIT = 3, 4, 5

_OBJ_UNKNOWN, _OBJ_BODY, _OBJ_XBODY = int(mjtObj.UNKNOWN), int(mjtObj.BODY), int(mjtObj.XBODY)
_OBJ_JOINT, _OBJ_DOF, _OBJ_GEOM = int(mjtObj.JOINT), int(mjtObj.DOF), int(mjtObj.GEOM)
_OBJ_SITE, _OBJ_CAMERA, _OBJ_LIGHT = int(mjtObj.SITE), int(mjtObj.CAMERA), int(mjtObj.LIGHT)
_OBJ_EQUALITY, _OBJ_TENDON = int(mjtObj.EQUALITY), int(mjtObj.TENDON)
_OBJ_ACTUATOR, _OBJ_SENSOR = int(mjtObj.ACTUATOR), int(mjtObj.SENSOR)
_EQ_CONNECT, _EQ_WELD, _EQ_JOINT, _EQ_TENDON = (int(mjtEq.CONNECT), int(mjtEq.WELD),
                                                int(mjtEq.JOINT), int(mjtEq.TENDON))
_TRN_JOINT, _TRN_JOINTINPARENT = int(mjtTrn.JOINT), int(mjtTrn.JOINTINPARENT)
_TRN_SLIDERCRANK, _TRN_TENDON = int(mjtTrn.SLIDERCRANK), int(mjtTrn.TENDON)
_TRN_SITE, _TRN_BODY, _TRN_SO3 = int(mjtTrn.SITE), int(mjtTrn.BODY), int(mjtTrn.SO3)
_SENS_USER, _SENS_PLUGIN = int(mjtSensor.USER), int(mjtSensor.PLUGIN)
_SENS_CONTACT, _SENS_RANGEFINDER = int(mjtSensor.CONTACT), int(mjtSensor.RANGEFINDER)


@jit
def enabled(m):
  return (m.opt_enableflags[0] & _ENBL_SLEEP) != 0


@jit
def filtering(m, d):
  """Whether some tree sleeps (MuJoCo's sleep_filter): stages then leave sleeping trees out."""
  return enabled(m) and d.ntree_awake[0] < m.ntree


@jit
def filtering_bodies(m, d):
  """Some body sleeps (the test MuJoCo's kinematics, collision and sensors use)."""
  return enabled(m) and d.nbody_awake[0] < m.nbody


# ------------------------------------------------------------------------------------- update

@jit
def update(m, d, static_awake=False):
  """tree_awake, body_awake and the awake index lists from tree_asleep (mj_updateSleepInit);
  `static_awake` marks static bodies awake (used while resetting)."""
  ntree_awake = 0
  for i in range(m.ntree):
    a = 1 if d.tree_asleep[i] < 0 else 0
    d.tree_awake[i] = a
    ntree_awake += a
  d.ntree_awake[0] = ntree_awake
  nbody_awake = 0
  nparent_awake = 0
  for i in range(m.nbody):
    t = m.body_treeid[i]
    if t < 0:
      if m.body_mocapid[m.body_rootid[i]] >= 0 or static_awake:
        d.body_awake[i] = AWAKE   # mocap bodies are always awake
      else:
        d.body_awake[i] = STATIC
    else:
      d.body_awake[i] = AWAKE if d.tree_awake[t] else ASLEEP
    if d.body_awake[i] != ASLEEP:
      d.body_awake_ind[nbody_awake] = i
      nbody_awake += 1
    if i > 0 and d.body_awake[m.body_parentid[i]] != ASLEEP:
      d.parent_awake_ind[nparent_awake] = i
      nparent_awake += 1
  d.nbody_awake[0] = nbody_awake
  d.nparent_awake[0] = nparent_awake
  nv_awake = 0
  for i in range(m.nv):
    b = m.dof_bodyid[i]
    if m.body_treeid[b] >= 0 and d.body_awake[b] == AWAKE:
      d.dof_awake_ind[nv_awake] = i
      nv_awake += 1
  d.nv_awake[0] = nv_awake


@jit
def reset_state(m, d):
  """Every tree fully awake, arrays updated (mj_resetData, before any INIT policy)."""
  for i in range(m.ntree):
    d.tree_asleep[i] = AWAKE_VALUE
  update(m, d)


# ---------------------------------------------------------------------------------- utilities

@jit
def _zero_bits(x):
  """x is +0.0 (MuJoCo compares bytes: -0.0 is not zero)."""
  return x == 0.0 and math.copysign(1.0, x) > 0.0


@jit
def tree_can_sleep(m, d, i, tol):
  """Tree i may sleep: its policy allows it, no applied force (xfrc_applied, qfrc_applied, the
  viewer's perturbation) acts on it, and its weighted velocity is under tol (exactly zero when
  tol is 0)."""
  policy = m.tree_sleep_policy[i]
  if policy == POLICY_NEVER or policy == POLICY_AUTO_NEVER:
    return False
  b0 = m.tree_bodyadr[i]
  for b in range(b0, b0 + m.tree_bodynum[i]):
    for k in range(6):
      if not _zero_bits(d.xfrc_applied[b, k]) or d.xfrc_perturb[b, k] != 0.0:
        return False
  a0 = m.tree_dofadr[i]
  n = m.tree_dofnum[i]
  for j in range(a0, a0 + n):
    if not _zero_bits(d.qfrc_applied[j]):
      return False
  if tol != 0.0:
    mx = 0.0
    for j in range(a0, a0 + n):
      mx = max(mx, m.dof_length[j] * abs(d.qvel[j]))
      if mx >= tol:
        return False
    return True
  for j in range(a0, a0 + n):
    if not _zero_bits(d.qvel[j]):
      return False
  return True


@jit
def sleep_cycle(tree_asleep, ntree, i):
  """The smallest tree of the sleep cycle through tree i; -1 if tree_asleep is not a cycle."""
  if i < 0 or i >= ntree:
    return -1
  smallest = i
  current = i
  count = 0
  while True:
    if count > ntree:
      return -1
    nxt = tree_asleep[current]
    if nxt < 0 or nxt >= ntree:
      return -1
    smallest = min(smallest, nxt)
    current = nxt
    count += 1
    if current == i:
      return smallest


# --------------------------------------------------------------------------------------- wake

@jit
def wake_island(tree_asleep, ntree, i, wakeval):
  """Wake tree i and its sleep cycle, setting them to `wakeval`; an awake tree takes the
  smaller of its value and wakeval. Returns the number of trees woken (mj_wakeIsland)."""
  v = tree_asleep[i]
  if v < 0:
    tree_asleep[i] = min(wakeval, v)
    return 0
  nwoke = 0
  current = i
  while True:
    nxt = tree_asleep[current]
    if nxt < 0 or nxt >= ntree:   # not a cycle: should not occur
      return nwoke
    tree_asleep[current] = wakeval
    nwoke += 1
    current = nxt
    if current == i or nwoke >= ntree:
      return nwoke


@jit
def wake(m, d):
  """Wake sleeping trees the user changed: a pose that does not match the sleeping one (flagged by
  kinematics in tree_awake) or an applied force; with sleep disabled, every tree (mj_wake)."""
  ntree = m.ntree
  if not enabled(m):
    if d.ntree_awake[0] < ntree:
      for i in range(ntree):
        d.tree_asleep[i] = AWAKE_VALUE
    return ntree - d.ntree_awake[0]
  nwoke = 0
  for i in range(ntree):
    if d.tree_asleep[i] < 0:
      continue
    if d.tree_awake[i] or not tree_can_sleep(m, d, i, 0.0):
      nwoke += wake_island(d.tree_asleep, ntree, i, AWAKE_VALUE)
  return nwoke


@jit
def wake_collision(m, d):
  """Wake the sleeping side of every contact with an awake tree (or an awake mocap body)."""
  if not enabled(m):
    return 0
  ntree = m.ntree
  nwoke = 0
  for c in range(d.ncon[0]):
    b1 = fc.contact_body(m, d, c, 0)
    b2 = fc.contact_body(m, d, c, 1)
    t1, t2 = m.body_treeid[b1], m.body_treeid[b2]
    if t1 < 0 or t2 < 0:
      # a dof-less body: wakes the other side only when marked awake (mocap)
      t = t2 if t1 < 0 else t1
      b = b1 if t1 < 0 else b2
      if t >= 0 and not d.tree_awake[t] and d.body_awake[b] == AWAKE:
        nwoke += wake_island(d.tree_asleep, ntree, t, AWAKE_VALUE)
      continue
    a1, a2 = d.tree_awake[t1], d.tree_awake[t2]
    if (a1 and a2) or (not a1 and not a2):
      continue
    sleeping = t2 if a1 else t1
    wakeval = d.tree_asleep[t1] if a1 else d.tree_asleep[t2]
    nwoke += wake_island(d.tree_asleep, ntree, sleeping, wakeval)
  return nwoke


@jit
def _tendon_limit(m, d, i):
  """Number of active sides of tendon i's limit (tendonLimit)."""
  if not m.tendon_limited[i]:
    return 0
  n = 0
  v = d.ten_length[i]
  if -(m.tendon_range[i, 0] - v) < m.tendon_margin[i]:
    n += 1
  if m.tendon_range[i, 1] - v < m.tendon_margin[i]:
    n += 1
  return n


@jit
def wake_tendon(m, d):
  """Wake the sleeping tree of a limited two-tree tendon at its limit with an awake tree."""
  if not enabled(m):
    return 0
  nwoke = 0
  for i in range(m.ntendon):
    if m.tendon_treenum[i] != 2 or _tendon_limit(m, d, i) == 0:
      continue
    t1, t2 = m.tendon_treeid[i, 0], m.tendon_treeid[i, 1]
    a1, a2 = d.tree_awake[t1], d.tree_awake[t2]
    if a1 != a2:
      sleeping = t2 if a1 else t1
      wakeval = d.tree_asleep[t1] if a1 else d.tree_asleep[t2]
      nwoke += wake_island(d.tree_asleep, m.ntree, sleeping, wakeval)
  return nwoke


@jit
def wake_equality(m, d):
  """Wake sleeping trees an active equality ties to an awake tree, or to a sleeping tree of
  another island (mj_wakeEquality; tendon equalities are left alone)."""
  if not enabled(m):
    return 0
  nwoke = 0
  for i in range(m.neq):
    if not d.eq_active[i]:
      continue
    typ = m.eq_type[i]
    id1, id2 = m.eq_obj1id[i], m.eq_obj2id[i]
    if typ == _EQ_CONNECT or typ == _EQ_WELD:
      if m.eq_objtype[i] == _OBJ_BODY:
        body1, body2 = id1, id2
      else:
        body1, body2 = m.site_bodyid[id1], m.site_bodyid[id2]
    elif typ == _EQ_JOINT:
      body1 = m.jnt_bodyid[id1] if id1 >= 0 else -1
      body2 = m.jnt_bodyid[id2] if id2 >= 0 else -1
    else:
      continue
    t1 = m.body_treeid[body1] if body1 >= 0 else -1
    t2 = m.body_treeid[body2] if body2 >= 0 else -1
    s1 = d.tree_awake[t1] if t1 >= 0 else (d.body_awake[body1] if body1 >= 0 else STATIC)
    s2 = d.tree_awake[t2] if t2 >= 0 else (d.body_awake[body2] if body2 >= 0 else STATIC)
    if s1 != ASLEEP and s2 != ASLEEP:
      continue
    if s1 == STATIC or s2 == STATIC or t1 == t2:
      continue
    if s1 == ASLEEP and s2 == ASLEEP:
      if sleep_cycle(d.tree_asleep, m.ntree, t1) != sleep_cycle(d.tree_asleep, m.ntree, t2):
        nwoke += wake_island(d.tree_asleep, m.ntree, t1, AWAKE_VALUE)
        nwoke += wake_island(d.tree_asleep, m.ntree, t2, AWAKE_VALUE)
      continue
    nwoke += wake_island(d.tree_asleep, m.ntree, t1 if s1 == ASLEEP else t2, AWAKE_VALUE)
  return nwoke


# -------------------------------------------------------------------------------------- sleep

@jit
def _sleep_trees(m, d, trees, adr, n):
  """Put trees[adr:adr+n] to sleep as one cycle, their qvel and qacc zeroed."""
  for k in range(n):
    cur = trees[adr + k]
    nxt = trees[adr] if k == n - 1 else trees[adr + k + 1]
    if d.tree_asleep[cur] == -1:
      d.tree_asleep[cur] = nxt
    a0 = m.tree_dofadr[cur]
    for j in range(a0, a0 + m.tree_dofnum[cur]):
      d.qvel[j] = 0.0
      d.qacc[j] = 0.0


@jit
def sleep(m, d):
  """Count ready trees up, then put to sleep every island whose trees are all ready and every
  ready unconstrained tree; returns the number of trees put to sleep (mj_sleep)."""
  if not enabled(m):
    return 0
  nisland = d.nisland[0]
  if d.nefc[0] and not nisland:   # rows but no islands (island disabled): cannot sleep
    return 0
  for i in range(m.ntree):
    if d.tree_asleep[i] >= 0:
      continue
    if tree_can_sleep(m, d, i, m.opt_sleep_tolerance[0]):
      if d.tree_asleep[i] < -1:
        d.tree_asleep[i] += 1
    else:
      d.tree_asleep[i] = AWAKE_VALUE
  nslept = 0
  for k in range(nisland):
    start = d.island_itreeadr[k]
    n = d.island_ntree[k]
    ok = True
    for j in range(start, start + n):
      if d.tree_asleep[d.map_itree2tree[j]] < -1:
        ok = False
        break
    if ok:
      _sleep_trees(m, d, d.map_itree2tree, start, n)
      nslept += n
  start = d.island_itreeadr[nisland - 1] + d.island_ntree[nisland - 1] if nisland else 0
  one = d.ivec_nv[0]
  for j in range(start, m.ntree):
    i = d.map_itree2tree[j] if nisland else j
    if d.tree_asleep[i] == -1:
      one[0] = i
      _sleep_trees(m, d, one, 0, 1)
      nslept += 1
  return nslept


# -------------------------------------------------------------------------------- sleep state

@jit
def flex_awake(m, d, f):
  """A flex is awake when one of its vertices' bodies is (MuJoCo's mj_sleepState of a flex:
  asleep when every vertex body is)."""
  for v in range(m.flex_vertadr[f], m.flex_vertadr[f] + m.flex_vertnum[f]):
    b = m.flex_vertbodyid[v]
    if m.body_treeid[b] >= 0 and d.body_awake[b] != 0:
      return True
  return False


@jit
def tendon_state(m, d, i):
  n = m.tendon_treenum[i]
  if n == 0:
    return STATIC
  t1 = m.tendon_treeid[i, 0]
  if n == 1:
    return AWAKE if d.tree_awake[t1] else ASLEEP
  if n == 2:
    t2 = m.tendon_treeid[i, 1]
    return AWAKE if (d.tree_awake[t1] or d.tree_awake[t2]) else ASLEEP
  return AWAKE


@jit
def object_body(m, objtype, i):
  """The body object i of type `objtype` belongs to: itself for a body (or xbody), the body of
  a joint, dof, geom, site, camera or light; -1 for other types."""
  if objtype == _OBJ_BODY or objtype == _OBJ_XBODY:
    return i
  for t, bodyid in ((_OBJ_JOINT, m.jnt_bodyid), (_OBJ_DOF, m.dof_bodyid),
                    (_OBJ_GEOM, m.geom_bodyid), (_OBJ_SITE, m.site_bodyid),
                    (_OBJ_CAMERA, m.cam_bodyid), (_OBJ_LIGHT, m.light_bodyid)):
    if objtype == t:
      return bodyid[i]
  return -1


@jit
def _simple_state(m, d, objtype, i):
  """Sleep state of a body, joint, dof, geom, site, camera or light (its body's), or of a
  tendon; AWAKE for others."""
  if objtype == _OBJ_TENDON:
    return tendon_state(m, d, i)
  b = object_body(m, objtype, i)
  return d.body_awake[b] if b >= 0 else AWAKE


@jit
def equality_state(m, d, i):
  """ASLEEP when neither object of equality i is awake (mj_equalitySleepState)."""
  typ = m.eq_type[i]
  if typ == _EQ_CONNECT or typ == _EQ_WELD:
    ot = m.eq_objtype[i]
  elif typ == _EQ_JOINT:
    ot = _OBJ_JOINT
  elif typ == _EQ_TENDON:
    ot = _OBJ_TENDON
  else:
    return AWAKE
  id1, id2 = m.eq_obj1id[i], m.eq_obj2id[i]
  s1 = _simple_state(m, d, ot, id1) if id1 >= 0 else STATIC
  s2 = _simple_state(m, d, ot, id2) if id2 >= 0 else STATIC
  return ASLEEP if (s1 != AWAKE and s2 != AWAKE) else AWAKE


@jit
def sensor_state(m, d, i):
  """AWAKE or ASLEEP (mj_sensorSleepState): sleeping sensors keep their values."""
  typ = m.sensor_type[i]
  ot, rt = m.sensor_objtype[i], m.sensor_reftype[i]
  if typ == _SENS_USER or typ == _SENS_PLUGIN or typ == _SENS_RANGEFINDER:
    return AWAKE
  if typ == _SENS_CONTACT and (ot == _OBJ_SITE or rt == _OBJ_SITE):
    return AWAKE
  if ot == _OBJ_UNKNOWN and rt == _OBJ_UNKNOWN:
    return AWAKE
  so = _object_state(m, d, ot, m.sensor_objid[i])
  sr = _object_state(m, d, rt, m.sensor_refid[i])
  if ot == _OBJ_UNKNOWN:
    return ASLEEP if sr == ASLEEP else AWAKE
  if rt == _OBJ_UNKNOWN:
    return ASLEEP if so == ASLEEP else AWAKE
  return AWAKE if (so == AWAKE or sr == AWAKE) else ASLEEP


@jit
def actuator_state(m, d, i):
  """Sleep state of actuator i's transmission target (mj_actuatorSleepState)."""
  tt = m.actuator_trntype[i]
  tid = m.actuator_trnid[i, 0]
  if tt == _TRN_JOINT or tt == _TRN_JOINTINPARENT:
    return _simple_state(m, d, _OBJ_JOINT, tid)
  if tt == _TRN_SLIDERCRANK:
    s1 = _simple_state(m, d, _OBJ_SITE, tid)
    s2 = _simple_state(m, d, _OBJ_SITE, m.actuator_trnid[i, 1])
    return AWAKE if (s1 == AWAKE or s2 == AWAKE) else ASLEEP
  if tt == _TRN_TENDON:
    return tendon_state(m, d, tid)
  if tt == _TRN_SITE:
    return _simple_state(m, d, _OBJ_SITE, tid)
  if tt == _TRN_SO3:
    if m.actuator_trnid[i, 1] == -1:
      return _simple_state(m, d, _OBJ_JOINT, tid)
    s1 = _simple_state(m, d, _OBJ_SITE, tid)
    s2 = _simple_state(m, d, _OBJ_SITE, m.actuator_trnid[i, 1])
    return AWAKE if (s1 == AWAKE or s2 == AWAKE) else ASLEEP
  if tt == _TRN_BODY:
    return _simple_state(m, d, _OBJ_BODY, tid)
  return AWAKE


@jit
def _object_state(m, d, objtype, i):
  """mj_sleepState for the object types sensors refer to."""
  if objtype == _OBJ_EQUALITY:
    return equality_state(m, d, i)
  if objtype == _OBJ_ACTUATOR:
    return actuator_state(m, d, i)
  if objtype == _OBJ_UNKNOWN:
    return AWAKE
  return _simple_state(m, d, objtype, i)
