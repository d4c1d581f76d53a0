"""Lay compiled MJCF objects out as mjModel arrays (MuJoCo's CopyTree / CopyObjects)."""
import numpy as np

from numjoco.engine import types as t
from numjoco.engine import rotation
from numjoco.engine.types import MINVAL
from numjoco.engine.mjcf import _mesh
from numjoco.engine.mjcf import _octree
from numjoco.engine.mjcf import _plugin
from numjoco.engine.mjcf import _sensor
from numjoco.engine.mjcf import _flex
from numjoco.engine.mjcf import _limits
from numjoco.engine.mjcf import _skin
from numjoco.engine.mjcf import _sparse

_NQ = {0: 7, 1: 4, 2: 1, 3: 1}
_NV = {0: 6, 1: 3, 2: 1, 3: 1}


def _sameframe(pos, quat, ipos, iquat):
  null = [1.0, 0.0, 0.0, 0.0]
  if rotation.is_same_vec(pos, [0.0] * 3) and rotation.is_same_quat(quat, null):
    return 1
  if rotation.is_same_quat(quat, null):
    return 3
  if rotation.is_same_vec(pos, ipos) and rotation.is_same_quat(quat, iquat):
    return 2
  if rotation.is_same_quat(quat, iquat):
    return 4
  return 0


def _tree(c, A, sizes):
  """Bodies, joints, dofs, geoms, sites, cameras, lights."""
  bodies = c.bodies
  nb = len(bodies)
  joints = c.all_joints()
  geoms = [g for b in bodies for g in b.geoms]
  sites = [s for b in bodies for s in b.sites]
  cams = [x for b in bodies for x in b.cams]
  lights = [x for b in bodies for x in b.lights]
  for lst in (geoms, sites, cams, lights):
    for i, o in enumerate(lst):
      o.id = i
  nq = sum(_NQ[j.type] for j in joints)
  nv = sum(_NV[j.type] for j in joints)
  sizes.update(nbody=nb, njnt=len(joints), ngeom=len(geoms), nsite=len(sites), ncam=len(cams),
               nlight=len(lights), nq=nq, nv=nv)
  f = lambda name, shape, dt=np.float64: A.setdefault(name, np.zeros(shape, dt))
  i4 = np.int32
  for k in ("body_parentid", "body_rootid", "body_weldid", "body_mocapid", "body_jntnum",
            "body_jntadr", "body_dofnum", "body_dofadr", "body_treeid", "body_geomnum",
            "body_geomadr", "body_contype", "body_conaffinity"):
    f(k, nb, i4)
  nmocap = 0
  jid = qadr = dadr = 0
  lastdof = [-1] * nb
  dof_bodyid, dof_jntid, dof_parentid = [], [], []
  qpos0, qspring = np.zeros(nq), np.zeros(nq)
  jqadr, jdadr = [], []
  simple = [0] * nb
  A["body_pos"] = np.array([b.pos for b in bodies])
  A["body_quat"] = np.array([b.quat for b in bodies])
  A["body_ipos"] = np.array([b.ipos for b in bodies])
  A["body_iquat"] = np.array([b.iquat for b in bodies])
  A["body_mass"] = np.array([b.mass for b in bodies])
  A["body_inertia"] = np.array([b.inertia for b in bodies])
  A["body_gravcomp"] = np.array([b.gravcomp for b in bodies])
  A["body_margin"] = np.array([b.margin for b in bodies])
  sameframe = np.zeros(nb, np.uint8)
  for i, b in enumerate(bodies):
    par = b.parent
    A["body_parentid"][i] = par.id if par else 0
    A["body_weldid"][i] = b.weldid
    if b.mocap:
      A["body_mocapid"][i] = nmocap
      nmocap += 1
    else:
      A["body_mocapid"][i] = -1
    A["body_jntnum"][i] = len(b.joints)
    A["body_jntadr"][i] = jid if b.joints else -1
    A["body_dofnum"][i] = b.dofnum
    A["body_dofadr"][i] = dadr if b.dofnum else -1
    A["body_geomnum"][i] = len(b.geoms)
    A["body_geomadr"][i] = b.geoms[0].id if b.geoms else -1
    A["body_contype"][i] = b.contype
    A["body_conaffinity"][i] = b.conaffinity
    A["body_rootid"][i] = i if (i == 0 or par.id == 0) else A["body_rootid"][par.id]
    last = lastdof[par.id] if par else -1
    sf = _sameframe(b.ipos, b.iquat, [0.0] * 3, [1.0, 0, 0, 0])
    sf = 1 if sf == 1 else (3 if sf == 3 else 0)
    sameframe[i] = sf
    pid = A["body_parentid"][i]
    simple[i] = int(sf == 1 and (A["body_rootid"][i] == i or (
        A["body_parentid"][pid] == 0 and A["body_dofnum"][pid] == 0)))
    if pid > 0:
      simple[pid] = 0
    rotfound = False
    for j in b.joints:
      j.id = jid
      j.qposadr, j.dofadr = qadr, dadr
      jqadr.append(qadr)
      jdadr.append(dadr)
      aligned = sum(abs(x) > rotation.EPS for x in j.axis) == 1
      if (rotfound or not rotation.is_same_vec(j.pos, [0.0] * 3)
          or (j.type in (2, 3) and not aligned)):
        simple[i] = 0
      if j.type in (1, 3):
        rotfound = True
      if j.type == 0:
        qpos0[qadr:qadr + 3] = b.pos
        qpos0[qadr + 3:qadr + 7] = b.quat
        qspring[qadr:qadr + 7] = qpos0[qadr:qadr + 7]
      elif j.type == 1:
        qpos0[qadr:qadr + 4] = [1, 0, 0, 0]
        qspring[qadr:qadr + 4] = [1, 0, 0, 0]
      else:
        qpos0[qadr] = j.ref
        qspring[qadr] = j.springref
      for _ in range(_NV[j.type]):
        dof_bodyid.append(i)
        dof_jntid.append(jid)
        dof_parentid.append(last)
        last = dadr
        dadr += 1
      jid += 1
      qadr += _NQ[j.type]
    lastdof[i] = last
    if simple[i] and b.dofnum:
      simple[i] = 2 if all(j.type == 2 for j in b.joints) else 1
  A["body_sameframe"] = sameframe
  sizes["nmocap"] = nmocap
  A["qpos0"], A["qpos_spring"] = qpos0, qspring
  # joints
  J = lambda attr, dt=np.float64: np.array([j[attr] for j in joints], dt)
  A["jnt_type"] = J("type", np.int32).ravel()
  A["jnt_qposadr"] = np.array(jqadr, np.int32)
  A["jnt_dofadr"] = np.array(jdadr, np.int32)
  A["jnt_bodyid"] = np.array([j.body.id for j in joints], np.int32)
  A["jnt_group"] = J("group", np.int32).ravel()
  A["jnt_limited"] = J("is_limited", bool).ravel()
  A["jnt_actfrclimited"] = J("is_actfrclimited", bool).ravel()
  A["jnt_actgravcomp"] = J("actgravcomp", bool).ravel()
  A["jnt_solref"], A["jnt_solimp"] = J("solref_limit"), J("solimp_limit")
  A["jnt_pos"], A["jnt_axis"] = J("pos"), J("axis")
  A["jnt_stiffness"] = J("stiffness").ravel()
  A["jnt_stiffnesspoly"] = J("stiffnesspoly").reshape(len(joints), 2)
  # plastic spring references (mjData.plastic): 4 entries for ball joints, 1 for slide/hinge
  A["jnt_springyield"] = J("springyield").ravel()
  padr, nplastic = [], 0
  for j in joints:
    padr.append(nplastic if j.springyield > 0 else -1)
    nplastic += (4 if j.type == 1 else 1) if j.springyield > 0 else 0
  A["jnt_plasticadr"] = np.array(padr, np.int32)
  sizes["nplastic"] = nplastic
  A["jnt_springdamper"] = J("springdamper").reshape(len(joints), 2)
  A["jnt_range"], A["jnt_actfrcrange"] = J("range"), J("actfrcrange")
  A["jnt_margin"] = J("margin").ravel()
  # dofs
  djs = [joints[k] for k in dof_jntid]
  D = lambda attr: np.array([j[attr] for j in djs], np.float64)
  A["dof_bodyid"] = np.array(dof_bodyid, np.int32)
  A["dof_jntid"] = np.array(dof_jntid, np.int32)
  A["dof_parentid"] = np.array(dof_parentid, np.int32)
  A["dof_solref"], A["dof_solimp"] = D("solref_fric"), D("solimp_fric")
  A["dof_frictionloss"] = D("frictionloss").ravel()
  A["dof_armature"] = D("armature").ravel()
  A["dof_damping"] = D("damping").ravel()
  A["dof_dampingpoly"] = D("dampingpoly").reshape(len(djs), 2)
  _geoms_sites(A, geoms, sites)
  _cams_lights(A, cams, lights)
  return simple


def _geoms_sites(A, geoms, sites):
  G = lambda attr, dt=np.float64: np.array([g[attr] for g in geoms], dt)
  for k in ("type", "contype", "conaffinity", "condim", "matid", "group", "priority"):
    A["geom_" + k] = G(k, np.int32).ravel()
  A["geom_bodyid"] = np.array([g.body.id for g in geoms], np.int32)
  A["geom_dataid"] = np.array([g.get("dataid", -1) for g in geoms], np.int32)
  A["geom_sameframe"] = np.array([_sameframe(g.pos, g.quat, g.body.ipos, g.body.iquat)
                                  for g in geoms], np.uint8)
  for k in ("solmix", "margin", "gap", "rbound", "adhesion"):
    A["geom_" + k] = G(k).ravel()
  A["geom_surfacevel"] = G("surfacevel").reshape(len(geoms), 6)
  for k in ("solref", "solimp", "size", "aabb", "pos", "quat", "friction", "fluid"):
    A["geom_" + k] = G(k)
  A["geom_rgba"] = G("rgba", np.float32)
  S = lambda attr, dt=np.float64: np.array([s[attr] for s in sites], dt)
  for k in ("type", "matid", "group"):
    A["site_" + k] = S(k, np.int32).ravel()
  A["site_bodyid"] = np.array([s.body.id for s in sites], np.int32)
  A["site_sameframe"] = np.array([_sameframe(s.pos, s.quat, s.body.ipos, s.body.iquat)
                                  for s in sites], np.uint8)
  for k in ("size", "pos", "quat"):
    A["site_" + k] = S(k)
  A["site_rgba"] = S("rgba", np.float32)


def _cams_lights(A, cams, lights):
  C = lambda attr, dt=np.float64: np.array([x[attr] for x in cams], dt)
  A["cam_mode"] = C("mode", np.int32).ravel()
  A["cam_bodyid"] = np.array([x.body.id for x in cams], np.int32)
  A["cam_targetbodyid"] = C("targetbodyid", np.int32).ravel()
  A["cam_pos"], A["cam_quat"] = C("pos"), C("quat")
  A["cam_fovy"], A["cam_ipd"] = C("fovy").ravel(), C("ipd").ravel()
  A["cam_projection"] = C("projection", np.int32).ravel()
  A["cam_resolution"] = C("resolution", np.int32).reshape(-1, 2)
  A["cam_sensorsize"] = C("sensorsize", np.float32).reshape(-1, 2)
  A["cam_intrinsic"] = C("intrinsic", np.float32).reshape(-1, 4)
  L = lambda attr, dt=np.float64: np.array([x[attr] for x in lights], dt)
  for k in ("mode", "targetbodyid", "type"):
    A["light_" + k] = L(k, np.int32).ravel()
  A["light_bodyid"] = np.array([x.body.id for x in lights], np.int32)
  A["light_castshadow"] = L("castshadow", bool).ravel()
  A["light_active"] = L("active", bool).ravel()
  A["light_pos"], A["light_dir"] = L("pos"), L("dir")
  for k in ("attenuation", "ambient", "diffuse", "specular"):
    A["light_" + k] = L(k, np.float32)
  A["light_cutoff"] = L("cutoff", np.float32).ravel()
  A["light_exponent"] = L("exponent", np.float32).ravel()


def _trees(A, sizes, simple):
  nv, nb = sizes["nv"], sizes["nbody"]
  parent = A["dof_parentid"]
  treeid = np.zeros(nv, np.int32)
  ntree = 0
  for i in range(nv):
    if parent[i] == -1:
      ntree += 1
    treeid[i] = ntree - 1
  sizes["ntree"] = ntree
  A["dof_treeid"] = treeid
  btree = np.full(nb, -1, np.int32)
  for i in range(nb):
    w = A["body_weldid"][i]
    if A["body_dofnum"][w]:
      btree[i] = treeid[A["body_dofadr"][w]]
  A["body_treeid"] = btree
  tb_adr, tb_num = np.zeros(ntree, np.int32), np.zeros(ntree, np.int32)
  cur = -1
  for i in range(1, nb):
    if btree[i] != -1:
      if btree[i] > cur:
        cur += 1
        tb_adr[cur] = i
      tb_num[cur] += 1
  td_adr, td_num = np.zeros(ntree, np.int32), np.zeros(ntree, np.int32)
  cur = -1
  for i in range(nv):
    if treeid[i] > cur:
      cur += 1
      td_adr[cur] = i
    td_num[cur] += 1
  A.update(tree_bodyadr=tb_adr, tree_bodynum=tb_num, tree_dofadr=td_adr, tree_dofnum=td_num)
  A["body_simple"] = np.array(simple, np.uint8)
  simplenum = np.zeros(nv, np.int32)
  cnt = 0
  for i in range(nv - 1, -1, -1):
    cnt = cnt + 1 if simple[A["dof_bodyid"][i]] else 0
    simplenum[i] = cnt
  A["dof_simplenum"] = simplenum
  madr = np.zeros(nv, np.int32)
  nM = 0
  for i in range(nv):
    madr[i] = nM
    j = i
    while j >= 0:
      nM += 1
      j = parent[j]
  A["dof_Madr"] = madr
  Dm = _sparse.dofdof(nv, parent, simplenum, reduced=False, upper=True)
  Mm = _sparse.dofdof(nv, parent, simplenum, reduced=True, upper=False)
  A["D_rownnz"], A["D_rowadr"], A["D_colind"] = Dm
  A["D_diag"] = np.array([list(Dm[2][Dm[1][i]:Dm[1][i] + Dm[0][i]]).index(i)
                          for i in range(nv)], np.int32)
  A["M_rownnz"], A["M_rowadr"], A["M_colind"] = Mm
  A["mapM2D"], A["mapD2M"], A["mapM2M"] = _sparse.maps(nv, madr, simplenum, parent, Dm, Mm)
  Bm = _sparse.body_dof(nb, A["body_dofnum"], A["body_parentid"], A["body_dofadr"])
  A["B_rownnz"], A["B_rowadr"], A["B_colind"] = Bm
  sizes.update(nM=nM, nD=len(Dm[2]), nC=len(Mm[2]), nB=len(Bm[2]))


def _subtreemass(A, nb):
  st = A["body_mass"].copy()
  for i in range(nb - 1, 0, -1):
    st[A["body_parentid"][i]] += st[i]
  A["body_subtreemass"] = st


def _body_dofs(A, b):
  """Set of dofs that move body b (its chain to the world)."""
  out = set()
  while b > 0:
    adr = int(A["body_dofadr"][b])
    out.update(range(adr, adr + int(A["body_dofnum"][b])))
    b = int(A["body_parentid"][b])
  return out


def _tendon_dofs(te, A, joints):
  """Sorted dofs a tendon's Jacobian row may touch (MuJoCo's makeTendonSparse)."""
  if te.kind == "fixed":
    return sorted(joints[oid].dofadr for _, oid, _ in te.path)
  dofs = set()
  for typ, oid, _ in te.path:
    if typ == t.mjtWrap.SITE:
      b = int(A["site_bodyid"][oid])
    elif typ in (t.mjtWrap.SPHERE, t.mjtWrap.CYLINDER):
      b = int(A["geom_bodyid"][oid])
    else:
      continue
    while b > 0:
      adr = int(A["body_dofadr"][b])
      dofs.update(range(adr, adr + int(A["body_dofnum"][b])))
      b = int(A["body_parentid"][b])
  return sorted(dofs)


def _tendons(c, A, sizes):
  tens = c.tendons
  n = len(tens)
  sizes["ntendon"] = n
  adr, wt, wo, wp = [], [], [], []
  for te in tens:
    adr.append(len(wt))
    for typ, oid, prm in te.path:
      wt.append(typ)
      wo.append(oid)
      wp.append(prm)
  sizes["nwrap"] = len(wt)
  T = lambda attr, dt=np.float64: np.array([x[attr] for x in tens], dt)
  A["tendon_adr"] = np.array(adr, np.int32)
  A["tendon_num"] = np.array([len(te.path) for te in tens], np.int32)
  A["tendon_limited"] = T("is_limited", bool).ravel()
  A["tendon_actfrclimited"] = T("is_actfrclimited", bool).ravel()
  for k in ("solref_lim", "solimp_lim", "solref_fri", "solimp_fri", "range", "actfrcrange"):
    A["tendon_" + k] = T(k)
  for k in ("margin", "stiffness", "damping", "armature", "frictionloss", "width"):
    A["tendon_" + k] = T(k).ravel()
  A["tendon_rgba"] = T("rgba", np.float32)
  A["tendon_stiffnesspoly"] = T("stiffnesspoly").reshape(n, 2)
  A["tendon_dampingpoly"] = T("dampingpoly").reshape(n, 2)
  joints = c.all_joints()
  spring = np.zeros((n, 2))
  for i, te in enumerate(tens):
    if te.springlength == [-1.0, -1.0] and te.kind == "fixed":
      # fixed tendon length at qpos_spring (what mj_setConst computes for the spring rest length)
      length = 0.0
      for _, jid, coef in te.path:
        length += coef * A["qpos_spring"][joints[jid].qposadr]
      spring[i] = length
    else:
      spring[i] = te.springlength   # spatial (-1, -1): set_const measures it at qpos_spring
  A["tendon_lengthspring"] = spring
  # plastic spring-length ranges (2 entries each) follow the joints' in mjData.plastic
  A["tendon_springyield"] = T("springyield").ravel()
  padr = []
  for te in tens:
    padr.append(sizes["nplastic"] if te.springyield > 0 else -1)
    sizes["nplastic"] += 2 if te.springyield > 0 else 0
  A["tendon_plasticadr"] = np.array(padr, np.int32)
  A["wrap_type"] = np.array(wt, np.int32)
  A["wrap_objid"] = np.array(wo, np.int32)
  A["wrap_prm"] = np.array(wp, np.float64)
  A["tendon_type"] = np.array([int(te.kind == "spatial") for te in tens], np.int32)
  # demote bodies moved along a tendon with armature to non-simple (MuJoCo's FinalizeSimple)
  for te in tens:
    if te.armature == 0 or te.kind == "fixed":
      continue
    for typ, oid, _ in te.path:
      if typ == t.mjtWrap.SITE:
        c._simple[int(A["site_bodyid"][oid])] = 0
  cols = [_tendon_dofs(te, A, joints) for te in tens]
  rownnz = np.array([len(x) for x in cols], np.int32)
  A["ten_J_rownnz"] = rownnz
  A["ten_J_rowadr"] = (np.cumsum(rownnz) - rownnz).astype(np.int32)
  A["ten_J_colind"] = np.array([d for x in cols for d in x], np.int32)
  sizes["nJten"] = int(rownnz.sum())


def _actuators(c, A, sizes):
  acts = c.actuators
  n = len(acts)
  for a in acts:
    if a.so3:
      a.trntype = int(t.mjtTrn.SO3)
  ctrlnum = np.array([a.ctrlnum for a in acts], np.int32)
  outnum = np.array([a.outnum for a in acts], np.int32)
  sizes["nactuator"] = n
  sizes["nu"] = int(ctrlnum.sum())
  sizes["nout"] = int(outnum.sum())
  A["actuator_ctrladr"] = (np.cumsum(ctrlnum) - ctrlnum).astype(np.int32)
  A["actuator_ctrlnum"] = ctrlnum
  A["actuator_outadr"] = (np.cumsum(outnum) - outnum).astype(np.int32)
  A["actuator_outnum"] = outnum
  A["actuator_ctrlspec"] = np.array([a.ctrlspec for a in acts], np.int32)
  adr = 0
  actadr = []
  for a in acts:
    actadr.append(adr if a.actdim else -1)
    adr += a.actdim
  sizes["na"] = adr
  U = lambda attr, dt=np.float64: np.array([x[attr] for x in acts], dt)
  for k in ("trntype", "dyntype", "gaintype", "biastype", "actdim", "group"):
    A["actuator_" + ("actnum" if k == "actdim" else k)] = U(k, np.int32).ravel()
  A["actuator_trnid"] = U("trnid", np.int32).reshape(n, 2)
  A["actuator_actadr"] = np.array(actadr, np.int32)
  for k in ("forcelimited", "actlimited"):
    A["actuator_" + k] = U("is_" + k, bool).ravel()
  A["actuator_actearly"] = U("actearly", bool).ravel()
  for k, w in (("dynprm", 10), ("gainprm", 10), ("biasprm", 10), ("forcerange", 2),
               ("actrange", 2)):
    A["actuator_" + k] = U(k).reshape(n, w)
  for k in ("cranklength", "damping", "armature"):
    A["actuator_" + k] = U(k).ravel()
  A["actuator_dampingpoly"] = U("dampingpoly").reshape(n, 2)
  # per-input and per-output rows, in each actuator's block
  rng = [r for a in acts for r in a.ctrlranges]
  A["actuator_ctrllimited"] = np.array([r[0] for r in rng], bool)
  A["actuator_ctrlrange"] = np.array([r[1] for r in rng], np.float64).reshape(-1, 2)
  A["actuator_gear"] = np.array([a.gear for a in acts for _ in range(a.outnum)],
                                np.float64).reshape(-1, 6)
  A["actuator_lengthrange"] = np.array([a.lengthrange for a in acts for _ in range(a.outnum)],
                                       np.float64).reshape(-1, 2)
  joints = c.all_joints()
  nj = 0
  for a in acts:
    if a.so3:
      # ball joint: 3 identity rows; site with refsite: 3 dense rows (CountNJmom)
      nj += 3 * sizes["nv"] if a.trnid[1] >= 0 else 3
    elif a.trntype in (0, 1):
      nj += _NV[joints[a.trnid[0]].type]
    elif a.trntype == 3:
      nj += int(A["ten_J_rownnz"][a.trnid[0]])
    elif a.trntype == 5:
      nj += sizes["nv"]
    else:
      # site / slider-crank: dofs of the merged chains (MuJoCo's CountNJmom, mj_mergeChain)
      b1 = int(A["site_bodyid"][a.trnid[0]])
      b2 = int(A["site_bodyid"][a.trnid[1]]) if a.trnid[1] >= 0 else 0
      c1, c2 = _body_dofs(A, b1), _body_dofs(A, b2)
      nj += len(c1 ^ c2) if a.trntype == 4 else len(c1 | c2)
  sizes["nJmom"] = nj
  # which actuator drives each joint/tendon: -1 none, -2 several (as mj_setConst)
  for kind, count, trn in (("jnt", len(joints), (0, 1)), ("tendon", len(c.tendons), (3,))):
    ids = np.full(count, -1, np.int32)
    for i, a in enumerate(acts):
      if a.trntype in trn and (a.damping != 0 or any(a.dampingpoly) or a.armature != 0):
        k = a.trnid[0]
        ids[k] = i if ids[k] == -1 else -2
    A[kind + "_actuatorid"] = ids


def _equalities(c, A, sizes):
  eqs = c.eqs
  n = len(eqs)
  sizes["neq"] = n
  E = lambda attr, dt=np.float64: np.array([x[attr] for x in eqs], dt)
  for k in ("type", "obj1id", "obj2id", "objtype"):
    A["eq_" + k] = E(k, np.int32).ravel()
  A["eq_active0"] = E("active", bool).ravel()
  A["eq_solref"], A["eq_solimp"], A["eq_data"] = E("solref"), E("solimp"), E("data")


def _contacts(c, A, sizes):
  """pair_* and exclude_signature as MuJoCo compiles them (mjCPair::Compile, sorted)."""
  gbody = A["geom_bodyid"]
  rows = []
  for p in c.pairs:
    g1, g2 = p.geom
    if gbody[g1] > gbody[g2]:
      g1, g2 = g2, g1
    rows.append(((int(gbody[g1]) << 16) + int(gbody[g2]), g1, g2, p.condim, p.friction,
                 p.solref, p.solreffriction, p.solimp, p.margin, p.gap, p.name, p.adhesion))
  rows.sort(key=lambda r: r[0])   # std::stable_sort by signature; ids follow
  c.pair_names = [r[10] for r in rows]
  sizes["npair"] = len(rows)
  col = lambda i, dt=np.float64: np.array([r[i] for r in rows], dt)
  A["pair_signature"], A["pair_geom1"], A["pair_geom2"], A["pair_dim"] = (
      col(0, np.int32), col(1, np.int32), col(2, np.int32), col(3, np.int32))
  A["pair_friction"], A["pair_solref"], A["pair_solreffriction"] = col(4), col(5), col(6)
  A["pair_solimp"], A["pair_margin"], A["pair_gap"] = col(7), col(8), col(9)
  A["pair_adhesion"] = col(11)
  ex = sorted(((min(e.body) << 16) + max(e.body), e.name) for e in c.excludes)
  sizes["nexclude"] = len(ex)
  A["exclude_signature"] = np.array([e[0] for e in ex], np.int32)
  c.exclude_names = [e[1] for e in ex]


def _keys(c, A, sizes):
  nq, nv, na, nu, nmocap = (sizes[k] for k in ("nq", "nv", "na", "nu", "nmocap"))
  keys = c.keys
  nk = len(keys) + c.nkey_default
  sizes["nkey"] = nk
  mocap = [b for b in c.bodies if b.mocap]
  _limits.check_bytes(c.size_node or c.root, f"{nk} keyframes",
                      8 * nk * (1 + nq + nv + na + nu + 7 * nmocap + sizes["nplastic"]),
                      "; lower <size nkey>")
  A["key_time"] = np.zeros(nk)
  A["key_qpos"] = np.tile(A["qpos0"], (nk, 1))
  A["key_qvel"] = np.zeros((nk, nv))
  A["key_act"] = np.zeros((nk, na))
  A["key_ctrl"] = np.zeros((nk, nu))
  A["key_mpos"] = np.tile(np.array([b.pos for b in mocap]).ravel(), (nk, 1))
  A["key_mquat"] = np.tile(np.array([b.quat for b in mocap]).ravel(), (nk, 1))
  A["key_plastic"] = np.tile(t.initial_plastic(A, sizes["nplastic"]), (nk, 1))
  from numjoco.engine.mjcf._node import floats
  for i, k in enumerate(keys):
    n = k.node
    tv = floats(n, "time", 1)
    if tv is not None:
      A["key_time"][i] = tv[0]
    for attr, field, size in (("qpos", "key_qpos", nq), ("qvel", "key_qvel", nv),
                              ("act", "key_act", na), ("ctrl", "key_ctrl", nu),
                              ("mpos", "key_mpos", 3 * nmocap), ("mquat", "key_mquat",
                                                                 4 * nmocap)):
      v = floats(n, attr)
      if v is not None:
        if len(v) > size:   # MuJoCo 4: a shorter vector sets only the leading entries
          raise n.error(f"attribute '{attr}': expected at most {size} values, got {len(v)}")
        A[field][i, :len(v)] = v
    v = floats(n, "plastic")
    if v is not None:
      if len(v) != sizes["nplastic"]:   # MuJoCo 4: the whole vector or nothing
        raise n.error(f"invalid plastic size, expected length {sizes['nplastic']}, got {len(v)}")
      A["key_plastic"][i] = v
      for jid, j in enumerate(c.all_joints()):
        a = A["jnt_plasticadr"][jid]
        if j.type == 1 and a >= 0:
          q = list(A["key_plastic"][i, a:a + 4])
          rotation.normvec(q)
          A["key_plastic"][i, a:a + 4] = q
    if hasattr(n, "fill_key"):   # a keyframe of an attached model (mjcf/_attach.py)
      n.fill_key(c, A, i)
    for j in c.all_joints():
      if j.type in (0, 1):
        a = j.qposadr + (3 if j.type == 0 else 0)
        q = list(A["key_qpos"][i, a:a + 4])
        rotation.normvec(q)
        A["key_qpos"][i, a:a + 4] = q
    for m in range(nmocap):
      q = list(A["key_mquat"][i, 4 * m:4 * m + 4])
      rotation.normvec(q)
      A["key_mquat"][i, 4 * m:4 * m + 4] = q


def _hfields(c, A, sizes):
  """hfield_* arrays: sizes, grid shape, and the normalised elevations (bottom row first)."""
  hs = c.hfields
  sizes.update(nhfield=len(hs), nhfielddata=sum(h.nrow * h.ncol for h in hs))
  A["hfield_size"] = np.array([h.size for h in hs], np.float64).reshape(len(hs), 4)
  A["hfield_nrow"] = np.array([h.nrow for h in hs], np.int32)
  A["hfield_ncol"] = np.array([h.ncol for h in hs], np.int32)
  A["hfield_adr"] = np.array(np.cumsum([0] + [h.nrow * h.ncol for h in hs])[:-1], np.int32)
  A["hfield_data"] = (np.concatenate([h.data for h in hs]) if hs
                      else np.zeros(0, np.float32)).astype(np.float32)


def _meshes(c, A, sizes):
  """mesh_* arrays; a mesh keeps its hull graph only where MuJoCo makes one (a colliding
  mesh geom, a <pair> with it, inertia='convex', or no faces given)."""
  need = set()
  paired = set(int(x) for k in ("pair_geom1", "pair_geom2") for x in A.get(k, []))
  for i, g in enumerate(gg for b in c.bodies for gg in b.geoms):
    if g.type in (7, 8) and (g.contype or g.conaffinity or i in paired):
      need.add(g.dataid)
  verts, faces, graphs = [], [], []
  cols = {k: [] for k in ("vertadr", "vertnum", "faceadr", "facenum", "graphadr", "scale",
                          "pos", "quat")}
  nv = nf = ng = 0
  for i, me in enumerate(c.meshes):
    cm = c._mesh_compiled(i)
    keep = i in need or me.inertia == 0 or me.raw[1] is None
    graph = c._mesh_hull(i) if keep else None
    cols["vertadr"].append(nv)
    cols["vertnum"].append(len(cm["vert"]))
    cols["faceadr"].append(nf)
    cols["facenum"].append(len(cm["face"]))
    cols["graphadr"].append(ng if keep else -1)
    cols["scale"].append(me.scale)
    cols["pos"].append(cm["pos"])
    cols["quat"].append(cm["quat"])
    verts.append(cm["vert"])
    faces.append(cm["face"])
    if keep:
      graphs.append(graph)
      ng += len(graph)
    nv += len(cm["vert"])
    nf += len(cm["face"])
  sizes.update(nmesh=len(c.meshes), nmeshvert=nv, nmeshface=nf, nmeshgraph=ng)
  _octrees(c, A, sizes)
  for k, v in cols.items():
    A["mesh_" + k] = np.array(v, np.float64 if k in ("scale", "pos", "quat") else np.int32)
  A["mesh_vert"] = np.concatenate(verts) if verts else np.zeros((0, 3), np.float32)
  A["mesh_face"] = np.concatenate(faces) if faces else np.zeros((0, 3), np.int32)
  A["mesh_graph"] = np.concatenate(graphs) if graphs else np.zeros(0, np.int32)
  A["mesh_extrema"] = _extrema(A)
  _polygons(c, A, sizes)


def _extrema(A):
  """mesh_extrema: per mesh with a hull graph, the hull vertex (id in the graph) farthest along
  each of the 27 directions (cx, cy, cz) in {-1, 0, 1}^3 (cz fastest), first on ties, with the
  dot product in float32 as MuJoCo's compiler takes it; the hill-climbing support's seed."""
  nmesh = len(A["mesh_graphadr"])
  out = np.zeros((nmesh, 27), np.int32)
  grid = np.array([(cx, cy, cz) for cx in (-1, 0, 1) for cy in (-1, 0, 1) for cz in (-1, 0, 1)],
                  np.float32)
  for i in range(nmesh):
    adr = A["mesh_graphadr"][i]
    if adr < 0:
      continue
    nh = A["mesh_graph"][adr]
    va = A["mesh_vertadr"][i]
    v = A["mesh_vert"][va + A["mesh_graph"][adr + 2 + nh:adr + 2 + 2 * nh]]   # float32
    dots = (v[:, 0:1] * grid[:, 0] + v[:, 1:2] * grid[:, 1]) + v[:, 2:3] * grid[:, 2]
    out[i] = np.argmax(dots, axis=0)   # (float32 throughout, as the C++ loop's float dot)
  return out


def _polygons(c, A, sizes):
  """mesh_poly*: the hull polygons of every mesh with a hull graph (mjCMesh::MakePolygons),
  which multicontact and plane-mesh collisions clip; per mesh vertex the polygons holding it
  (ascending)."""
  num, adr, normals, vadr, vnum, pverts, madr, mnum, pmap = [], [], [], [], [], [], [], [], []
  npoly = nvert = nmap = 0
  for i, me in enumerate(c.meshes):
    cm = c._mesh_compiled(i)
    polys, nrm = [], np.zeros((0, 3))
    if A["mesh_graphadr"][i] >= 0:
      raw = np.asarray(me.raw[0], np.float32).reshape(-1, 3)
      polys, nrm = _mesh.make_polygons(raw, c._mesh_hull(i), cm["dvert"],
                                       me.scale[0] * me.scale[1] * me.scale[2] > 0)
    num.append(len(polys))
    adr.append(npoly)
    normals.append(nrm)
    vmap = [[] for _ in range(len(cm["vert"]))]
    for k, p in enumerate(polys):
      vadr.append(nvert)
      vnum.append(len(p))
      pverts.extend(p)
      nvert += len(p)
      for v in p:
        vmap[v].append(k)
    for lst in vmap:
      madr.append(nmap)
      mnum.append(len(lst))
      pmap.extend(lst)
      nmap += len(lst)
    npoly += len(polys)
  sizes.update(nmeshpoly=npoly, nmeshpolyvert=nvert, nmeshpolymap=nmap,
               npolygonmax=max(vnum, default=0))
  i32 = lambda x: np.array(x, np.int32)
  A.update(mesh_polynum=i32(num), mesh_polyadr=i32(adr), mesh_polyvertadr=i32(vadr),
           mesh_polyvertnum=i32(vnum), mesh_polyvert=i32(pverts), mesh_polymapadr=i32(madr),
           mesh_polymapnum=i32(mnum), mesh_polymap=i32(pmap),
           mesh_polynormal=np.concatenate(normals) if normals else np.zeros((0, 3)))


def _octrees(c, A, sizes):
  """oct_* and mesh_octadr/octnum: the octree SDF of every mesh that an sdf geom without a
  plugin uses (MuJoCo's needsdf; a mesh made from an SDF plugin has none)."""
  need = sorted(set(g.dataid for b in c.bodies for g in b.geoms
                    if g.type == 8 and g.plugin is None))
  adr, num = [-1] * len(c.meshes), [0] * len(c.meshes)
  trees = []
  n = 0
  for i in need:
    cm = c._mesh_compiled(i)
    tree = _octree.make_octree(cm["dvert"], cm["face"], cm["aamm"])
    adr[i], num[i] = n, len(tree["depth"])
    n += num[i]
    trees.append(tree)
  sizes["noct"] = n
  A["mesh_octadr"] = np.array(adr, np.int32)
  A["mesh_octnum"] = np.array(num, np.int32)
  for k, shape, dtype in (("depth", (0,), np.int32), ("child", (0, 8), np.int32),
                          ("aabb", (0, 6), np.float64), ("coeff", (0, 8), np.float64)):
    A["oct_" + k] = (np.concatenate([t[k] for t in trees]) if trees
                     else np.zeros(shape, dtype))


NTEXROLE, TEXROLE_RGB = 10, 1      # mjNTEXROLE, mjTEXROLE_RGB
# mjModel fields that only drawing reads: Python-side Model attributes (see _textures)
DRAW_SIZES = ("ntex", "ntexdata", "nmeshtexcoord") + _skin.SIZES
DRAW_FIELDS = ("tex_type", "tex_colorspace", "tex_height", "tex_width", "tex_nchannel",
               "tex_adr", "tex_data", "mat_texid", "mat_texuniform", "mat_texrepeat",
               "mesh_texcoordadr", "mesh_texcoordnum", "mesh_texcoord", "mesh_facetexcoord",
               "mesh_facenormal") + _skin.FIELDS


def _mesh_normals(c, A, sizes):
  """mesh_normal (float32; the tactile sensor reads it too) and mesh_facenormal (drawing data,
  as the texture fields) of every mesh, by mjModel's names: given normals or MuJoCo's
  generated ones, transformed as the mesh's vertices were (engine/mjcf/_mesh.py
  compile_normals)."""
  adr, num, normals, facenormals = [], [], [], []
  n = 0
  for i, me in enumerate(c.meshes):
    cm = c._mesh_compiled(i)
    face = cm["face"]
    if me.scale[0] * me.scale[1] * me.scale[2] < 0:    # undo the winding swap for MakeNormal
      face = face[:, [0, 2, 1]]
    try:
      nrm, fnrm = _mesh.compile_normals(
          me.raw[0], face, getattr(me, "normal", None), getattr(me, "facenormal", None),
          getattr(me, "smoothnormal", False), me.scale, me.refquat, cm["quat"])
    except _mesh.MeshError as e:
      raise me.node.error(f"mesh '{me.name}': {e}") from None
    adr.append(n)
    num.append(len(nrm))
    normals.append(nrm)
    facenormals.append(fnrm)
    n += len(nrm)
  sizes["nmeshnormal"] = n
  A["mesh_normaladr"] = np.array(adr, np.int32)
  A["mesh_normalnum"] = np.array(num, np.int32)
  A["mesh_normal"] = np.concatenate(normals) if normals else np.zeros((0, 3), np.float32)
  A["mesh_facenormal"] = (np.concatenate(facenormals) if facenormals
                          else np.zeros((0, 3), np.int32))


def _textures(c, A, sizes):
  """Textures, the material texture fields and mesh texture coordinates, by mjModel's names.

  Drawing data only: these are plain attributes of the Python Model (the renderer reads them),
  not fields of the compiled struct, so physics kernels never carry them.
  """
  texs = c.textures
  A["ntex"] = len(texs)
  adr, off = [], 0
  for x in texs:
    adr.append(off)
    off += x.data.size
  A["ntexdata"] = off
  A["tex_type"] = np.array([x.type for x in texs], np.int32)
  A["tex_colorspace"] = np.array([x.colorspace for x in texs], np.int32)
  A["tex_height"] = np.array([x.data.shape[0] for x in texs], np.int32)
  A["tex_width"] = np.array([x.data.shape[1] for x in texs], np.int32)
  A["tex_nchannel"] = np.array([x.data.shape[2] for x in texs], np.int32)
  A["tex_adr"] = np.array(adr, np.int64)
  A["tex_data"] = (np.concatenate([x.data.ravel() for x in texs]) if texs
                   else np.zeros(0, np.uint8))
  names = {x.name: i for i, x in enumerate(texs) if x.name}
  texid = np.full((len(c.mats), NTEXROLE), -1, np.int32)
  for i, mat in enumerate(c.mats):
    if mat.texture is not None:
      if mat.texture not in names:
        raise mat.node.error(f"unknown texture '{mat.texture}' in material '{mat.name}'")
      texid[i, TEXROLE_RGB] = names[mat.texture]
  A["mat_texid"] = texid
  A["mat_texuniform"] = np.array([m.texuniform for m in c.mats], np.uint8)
  A["mat_texrepeat"] = np.array([m.texrepeat for m in c.mats], np.float32).reshape(-1, 2)
  tadr, tnum, uvs, fuv = [], [], [], []
  ntc = 0
  for i, me in enumerate(c.meshes):
    face = c._mesh_compiled(i)["face"]
    uv, faceuv = me.texcoord, me.facetexcoord
    if uv is None or faceuv is None or len(faceuv) != len(face):
      tadr.append(-1)
      tnum.append(0)
      fuv.append(np.zeros((len(face), 3), np.int32))
      continue
    if me.scale[0] * me.scale[1] * me.scale[2] < 0:    # the faces' winding was swapped
      faceuv = faceuv[:, [0, 2, 1]]
    tadr.append(ntc)
    tnum.append(len(uv))
    uvs.append(uv)
    fuv.append(np.asarray(faceuv, np.int32))
    ntc += len(uv)
  A["nmeshtexcoord"] = ntc
  A["mesh_texcoordadr"] = np.array(tadr, np.int32)
  A["mesh_texcoordnum"] = np.array(tnum, np.int32)
  A["mesh_texcoord"] = np.concatenate(uvs) if uvs else np.zeros((0, 2), np.float32)
  A["mesh_facetexcoord"] = np.concatenate(fuv) if fuv else np.zeros((0, 3), np.int32)


def _users(c, A, sizes):
  """nuser_* sizes and *_user arrays (mjCModel: -1 sizes from the longest list; shorter lists
  are padded with zeros; a list longer than a given size is an error)."""
  objs = {"body": c.bodies, "jnt": c.all_joints(),
          "geom": [g for b in c.bodies for g in b.geoms],
          "site": [s for b in c.bodies for s in b.sites],
          "cam": [x for b in c.bodies for x in b.cams],
          "tendon": c.tendons, "actuator": c.actuators, "sensor": c.sensors}
  what = {"jnt": "joint", "cam": "camera"}
  for kind, lst in objs.items():
    users = [o["user"] for o in lst]
    n = c.nuser[kind]
    if n == -1:
      n = max((len(u) for u in users), default=0)
    _limits.check_bytes(c.size_node or c.root, f"nuser_{kind}={n} values of {len(lst)} "
                        f"{what.get(kind, kind)}s", 8 * n * len(lst))
    arr = np.zeros((len(lst), n))
    for i, (o, u) in enumerate(zip(lst, users)):
      if len(u) > n:
        raise o["node"].error(f"user has more values than nuser_{kind} in "
                              f"{what.get(kind, kind)}")
      arr[i, :len(u)] = u
    sizes["nuser_" + kind] = n
    A[kind + "_user"] = arr


_SLEEP_POLICY = {"auto": 0, "never": 3, "allowed": 4, "init": 5}   # mjtSleepPolicy


def _sleep(c, A, sizes):
  """tree_sleep_policy (a root body's `sleep`, then mj_setConst's automatic policy: trees moved
  by an actuator, or tied by a tendon with stiffness/damping/actuator or over more than two
  trees, never sleep; the rest may) and tendon_treenum / tendon_treeid."""
  ntree, nb = sizes.get("ntree", 0), sizes["nbody"]
  btree = A["body_treeid"]
  policy = np.zeros(ntree, np.int32)
  for b in c.bodies[1:]:
    kw = b.node.get("sleep") if b.node is not None else None
    if kw is None or kw == "auto":
      continue
    if kw not in _SLEEP_POLICY:
      raise b.node.error(f"attribute 'sleep': invalid value '{kw}' (auto, never, allowed, init)")
    tr = btree[b.id]
    if tr == -1 or (b.id > 1 and btree[b.id - 1] == tr):
      raise b.node.error("sleep policy only allowed for movable root bodies")
    policy[tr] = _SLEEP_POLICY[kw]
  ntendon = sizes.get("ntendon", 0)
  wtype = np.asarray(A.get("wrap_type", np.zeros(0)), np.int32)
  wobj = np.asarray(A.get("wrap_objid", np.zeros(0)), np.int32)

  def wrap_tree(j):
    typ, obj = wtype[j], wobj[j]
    if typ == t.mjtWrap.JOINT:
      body = A["jnt_bodyid"][obj]
    elif typ == t.mjtWrap.SITE:
      body = A["site_bodyid"][obj]
    elif typ in (t.mjtWrap.SPHERE, t.mjtWrap.CYLINDER):
      body = A["geom_bodyid"][obj]
    else:
      return -1
    return int(btree[body])

  treenum = np.zeros(ntendon, np.int32)
  treeid = np.full((ntendon, 2), -1, np.int32)
  trees_of = []
  for i in range(ntendon):
    seen = []
    adr, num = int(A["tendon_adr"][i]), int(A["tendon_num"][i])
    for j in range(adr, adr + num):
      tr = wrap_tree(j)
      if tr != -1 and tr not in seen:
        if len(seen) < 2:
          treeid[i, len(seen)] = tr
        seen.append(tr)
    treenum[i] = len(seen)
    trees_of.append(seen)
  A["tendon_treenum"], A["tendon_treeid"] = treenum, treeid
  # actuated trees
  nu = sizes.get("nactuator", 0)
  trntype = np.asarray(A.get("actuator_trntype", np.zeros(0)), np.int32)
  trnid = np.asarray(A.get("actuator_trnid", np.zeros(0)), np.int32).reshape(-1, 2)
  for i in range(nu):
    tt, tid = trntype[i], trnid[i, 0]
    body = -1
    if tt in (t.mjtTrn.JOINT, t.mjtTrn.JOINTINPARENT):
      body = A["jnt_bodyid"][tid]
    elif tt == t.mjtTrn.SO3:
      body = A["site_bodyid"][tid] if trnid[i, 1] >= 0 else A["jnt_bodyid"][tid]
    elif tt in (t.mjtTrn.SITE, t.mjtTrn.SLIDERCRANK):
      body = A["site_bodyid"][tid]
    elif tt == t.mjtTrn.BODY:
      body = tid
    elif tt == t.mjtTrn.TENDON:
      adr, num = int(A["tendon_adr"][tid]), int(A["tendon_num"][tid])
      for j in range(adr, adr + num):
        tr = wrap_tree(j)
        if tr != -1 and policy[tr] == 0:
          policy[tr] = 1
      continue
    if body != -1 and btree[body] != -1 and policy[btree[body]] == 0:
      policy[btree[body]] = 1
  # inter-tree tendons with stiffness, damping or an actuator, or over more than two trees
  for i in range(ntendon):
    n = treenum[i]
    if n < 2:
      continue
    if (n == 2 and A["tendon_stiffness"][i] == 0 and not np.any(A["tendon_stiffnesspoly"][i])
        and A["tendon_damping"][i] == 0 and not np.any(A["tendon_dampingpoly"][i])
        and A["tendon_actuatorid"][i] == -1):
      continue
    for tr in trees_of[i]:
      if policy[tr] == 0:
        policy[tr] = 1
      elif policy[tr] in (4, 5):
        why = ("spans more than 2 trees" if n > 2 else "has non-zero stiffness or damping")
        raise c.tendons[i].node.error(
            f"tendon {why}: the trees it connects cannot sleep (a root body's sleep policy "
            f"is '{'allowed' if policy[tr] == 4 else 'init'}')")
  # flexes held by neither edge equality nor elasticity: their trees never sleep (MuJoCo 4.0
  # allows elastic flexes without equality, as in trampoline, floppy and jelly; its published
  # source does not)
  stiffness = np.asarray(A.get("flex_stiffness", np.zeros(0)))
  for f in range(int(sizes.get("nflex", A.get("nflex", 0)))):
    sadr = int(A["flex_stiffnessadr"][f])
    elastic = (0 <= sadr < stiffness.size and stiffness[sadr] != 0) or A["flex_bendingadr"][f] >= 0
    if A["flex_edgeequality"][f] or elastic:
      continue
    if A["flex_interp"][f]:
      adr, num, ids = A["flex_nodeadr"][f], A["flex_nodenum"][f], A["flex_nodebodyid"]
    else:
      adr, num, ids = A["flex_vertadr"][f], A["flex_vertnum"][f], A["flex_vertbodyid"]
    for b in ids[adr:adr + num]:
      if btree[b] != -1 and policy[btree[b]] == 0:
        policy[btree[b]] = 1
  policy[policy == 0] = 2
  A["tree_sleep_policy"] = policy


def _detached(node):
  """A childless copy of `node` that names it in errors (file, line, tag, name)."""
  from numjoco.engine.mjcf._node import Node
  name = node.get("name")
  return Node(node.tag, {"name": name} if name else {}, node.file, node.line)


def assemble(c):
  """(sizes, arrays, names) from a finished `Compiler`."""
  sizes, A = {}, {}
  for k, v in c.opt.items():
    A["opt_" + k] = np.array(v)
  A["vis_map_stiffness"] = np.array([c.visual.get("map", {}).get("stiffness", 100.0)])
  A["vis_map_stiffnessrot"] = np.array([c.visual.get("map", {}).get("stiffnessrot", 500.0)])
  A["_visual"], A["_statistic"] = c.visual, c.statistic  # Python-side, see engine/visual.py
  # Python-side, see engine/lengthrange.py; with the actuators' elements (detached from the
  # tree) that its errors name
  A["_lengthrange"] = dict(c.lropt, actuators=[_detached(a.node) for a in c.actuators])
  simple = _tree(c, A, sizes)
  c._simple = simple
  _tendons(c, A, sizes)
  _actuators(c, A, sizes)
  # bodies moved by tendons with armature are not simple (MuJoCo's FinalizeSimple)
  _trees(A, sizes, simple)
  _subtreemass(A, sizes["nbody"])
  _equalities(c, A, sizes)
  _contacts(c, A, sizes)
  _keys(c, A, sizes)
  _sensor.assemble(c, A, sizes)
  _users(c, A, sizes)
  _meshes(c, A, sizes)
  _plugin.assemble(c, A, sizes)
  _hfields(c, A, sizes)
  sizes["nmat"] = len(c.mats)
  M = lambda attr, dt=np.float32: np.array([x[attr] for x in c.mats], dt)
  A["mat_rgba"] = M("rgba")
  for k in ("emission", "specular", "shininess", "reflectance"):
    A["mat_" + k] = M(k).ravel()
  _textures(c, A, sizes)
  _mesh_normals(c, A, sizes)
  _skin.assemble(c, A, sizes)
  _flex.assemble(c, A, sizes)
  _sleep(c, A, sizes)
  if c.settotalmass > 0:
    total = 0.0
    for x in A["body_mass"][1:].tolist():   # mj_getTotalmass: summed in body order
      total += x
    scale = max(MINVAL, c.settotalmass / max(MINVAL, total))
    A["body_mass"][1:] *= scale
    A["body_inertia"][1:] *= scale
    _subtreemass(A, sizes["nbody"])
  names = {
      t.mjtObj.BODY: [b.name for b in c.bodies],
      t.mjtObj.JOINT: [j.name for j in c.all_joints()],
      t.mjtObj.GEOM: [g.name for b in c.bodies for g in b.geoms],
      t.mjtObj.SITE: [s.name for b in c.bodies for s in b.sites],
      t.mjtObj.CAMERA: [x.name for b in c.bodies for x in b.cams],
      t.mjtObj.LIGHT: [x.name for b in c.bodies for x in b.lights],
      t.mjtObj.MATERIAL: [m.name for m in c.mats],
      t.mjtObj.MESH: [me.name for me in c.meshes],
      t.mjtObj.HFIELD: [h.name for h in c.hfields],
      t.mjtObj.TEXTURE: [x.name for x in c.textures],
      t.mjtObj.EQUALITY: [e.name for e in c.eqs],
      t.mjtObj.TENDON: [te.name for te in c.tendons],
      t.mjtObj.ACTUATOR: [a.name for a in c.actuators],
      t.mjtObj.KEY: [k.name for k in c.keys] + [""] * c.nkey_default,
      t.mjtObj.PAIR: c.pair_names,
      t.mjtObj.EXCLUDE: c.exclude_names,
      t.mjtObj.SENSOR: [s["name"] for s in c.sensors],
  }
  if c.skins:    # as engine/interop.py: skin names only in models with skins
    names[t.mjtObj.SKIN] = [s["name"] for s in c.skins]
  if c.flexes:
    names[t.mjtObj.FLEX] = [f["name"] for f in c.flexes]
  for k in t.MODEL_SIZES:
    sizes.setdefault(k, 0)
  empty = np.zeros(0, np.int32)
  row_nnz = t.efc_row_nnz(sizes["nv"], A.get("tree_dofnum", empty), A.get("dof_treeid", empty),
                          A.get("ten_J_rowadr", empty), A.get("ten_J_rownnz", empty),
                          A.get("ten_J_colind", empty), sizes.get("nflex", 0))
  ccd = min(int(A["opt_ccd_iterations"][0]), _limits.MAX_CCD_ROOM)
  sizes.update(t.contact_capacity(sizes, c.nconmax, c.njmax, ccd, row_nnz))
  _limits.check_tables(c.size_node or c.root, sizes)
  for name, dtype, shape in t.MODEL_TABLE:
    if name in A:
      A[name] = np.asarray(A[name], dtype).reshape(t.resolve_shape(shape, sizes))
  return sizes, A, names
