"""Test scaffolding for engine.collision.flex: MuJoCo 4.0's model and data arrays as the
namedtuples the kernels read by attribute (the engine passes its Model/Data structrefs)."""
import collections
import os
import re
import shutil
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "assets", "mujoco_models")

MODEL_FIELDS = (
  "flex_dim flex_vertadr flex_vertnum flex_elemadr flex_elemnum flex_elemdataadr flex_elem "
  "flex_vertbodyid flex_radius flex_margin flex_gap flex_contype flex_conaffinity "
  "flex_priority flex_condim flex_solmix flex_solref flex_solimp flex_friction flex_rigid "
  "flex_selfcollide flex_activelayers flex_elemlayer "
  "geom_type geom_size geom_rbound geom_bodyid geom_margin geom_gap geom_contype geom_conaffinity "
  "geom_priority geom_condim geom_solmix geom_solref geom_solimp geom_friction geom_adhesion "
  "body_geomadr body_geomnum body_dofnum body_weldid flex_bvhadr geom_dataid "
  "mesh_vert mesh_vertadr mesh_vertnum mesh_graphadr mesh_extrema mesh_graph hfield_adr hfield_nrow "
  "hfield_ncol hfield_size hfield_data").split()
NCCD = 100   # GJK/EPA iterations the work buffers hold (engine.types: nccd)
OPT_FIELDS = ("opt_enableflags opt_disableflags opt_o_margin opt_o_solref opt_o_solimp "
              "opt_o_friction opt_ccd_iterations opt_ccd_tolerance").split()
DATA_FIELDS = (
  "flexvert_xpos flexelem_aabb col_fbuf col_ibuf col_flexf col_flexi geom_xpos geom_xmat ncon warning_number "
  "warning_lastinfo col_dist col_pos "
  "col_frame scratch_small contact_dist contact_pos contact_frame contact_includemargin "
  "contact_friction contact_solref contact_solreffriction contact_solimp contact_mu contact_H "
  "contact_dim contact_geom1 contact_geom2 contact_exclude contact_efc_address "
  "contact_adhesion contact_surfacevel contact_geom contact_flex contact_elem "
  "contact_vert").split()

FlexModel = collections.namedtuple("FlexModel", MODEL_FIELDS + OPT_FIELDS + ["nccd"])
FlexData = collections.namedtuple("FlexData", DATA_FIELDS)


def load_mujoco(rel, drop_internal=False, files=(), sleep=False):
  """MuJoCo 4.0's model of a file under ROOT; with drop_internal, a copy (with `files`) in a
  temporary folder without <contact internal="...">, which 4.0 no longer accepts. Sleep is
  disabled unless asked for: a sleeping flex is the driver's to skip, not this module's."""
  import mujoco
  path = os.path.join(ROOT, rel)
  if drop_internal:
    tmp = tempfile.mkdtemp()
    for f in [rel, *files]:
      dst = os.path.join(tmp, f)
      os.makedirs(os.path.dirname(dst), exist_ok=True)
      shutil.copy(os.path.join(ROOT, f), dst)
    path = os.path.join(tmp, rel)
    with open(path) as fh:
      text = re.sub(r'\sinternal="[^"]*"', "", fh.read())
    with open(path, "w") as fh:
      fh.write(text)
  mjm = mujoco.MjModel.from_xml_path(path)
  if not sleep:
    mjm.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
  return mjm


def flex_model(mjm):
  """FlexModel of a mujoco.MjModel (its own arrays, 2D where MuJoCo's are per-row)."""
  vals = {}
  for name in MODEL_FIELDS:
    a = np.asarray(getattr(mjm, name))
    if name == "flex_rigid":
      a = a.astype(np.uint8)
    vals[name] = np.ascontiguousarray(a)
  o = mjm.opt
  vals["opt_enableflags"] = np.array([o.enableflags], np.int32)
  vals["opt_disableflags"] = np.array([o.disableflags], np.int32)
  vals["opt_ccd_iterations"] = np.array([o.ccd_iterations], np.int64)
  vals["opt_ccd_tolerance"] = np.array([o.ccd_tolerance])
  vals["opt_o_margin"] = np.array([o.o_margin])
  vals["opt_o_solref"] = np.array(o.o_solref, float)
  vals["opt_o_solimp"] = np.array(o.o_solimp, float)
  vals["opt_o_friction"] = np.array(o.o_friction, float)
  vals["nccd"] = NCCD
  return FlexModel(**vals)


def flex_data(mjm, mjd, nconmax=20000):
  """FlexData holding copies of MuJoCo's flexvert_xpos, flexelem_aabb and geom poses, empty
  contacts and GJK/EPA work buffers with room for the model's meshes."""
  from numjoco.engine.collision.work import work_sizes
  n = nconmax
  nf, ni = work_sizes(NCCD, mjm.nmeshvert, mjm.nmesh)
  return FlexData(
    flexvert_xpos=np.array(mjd.flexvert_xpos).reshape(-1, 3).copy(),
    flexelem_aabb=np.array(mjd.flexelem_aabb).reshape(-1, 6).copy(),
    col_fbuf=np.zeros(nf), col_ibuf=np.zeros(ni, np.int64), col_flexf=np.zeros(48),
    col_flexi=np.zeros(8, np.int64),
    geom_xpos=np.array(mjd.geom_xpos).copy(), geom_xmat=np.array(mjd.geom_xmat).copy(),
    ncon=np.zeros(1, np.int32), warning_number=np.zeros(8, np.int32),
    warning_lastinfo=np.zeros(8, np.int32), col_dist=np.zeros(50), col_pos=np.zeros((50, 3)),
    col_frame=np.zeros((50, 9)), scratch_small=np.zeros(16), contact_dist=np.zeros(n),
    contact_pos=np.zeros((n, 3)), contact_frame=np.zeros((n, 9)),
    contact_includemargin=np.zeros(n), contact_friction=np.zeros((n, 5)),
    contact_solref=np.zeros((n, 2)), contact_solreffriction=np.zeros((n, 2)),
    contact_solimp=np.zeros((n, 5)), contact_mu=np.zeros(n), contact_H=np.zeros((n, 36)),
    contact_dim=np.zeros(n, np.int32), contact_geom1=np.zeros(n, np.int32),
    contact_geom2=np.zeros(n, np.int32), contact_exclude=np.zeros(n, np.int32),
    contact_efc_address=np.zeros(n, np.int32), contact_adhesion=np.zeros(n),
    contact_surfacevel=np.zeros((n, 3)), contact_geom=np.zeros((n, 2), np.int32),
    contact_flex=np.zeros((n, 2), np.int32), contact_elem=np.zeros((n, 2), np.int32),
    contact_vert=np.zeros((n, 2), np.int32))


def collide_all(mjm, fm, fd):
  """All flex contacts in MuJoCo's pair order: body : flex pairs by body, flex : flex pairs,
  then self-collision. Returns the count of pair tests not handled by the module."""
  from numjoco.engine.collision import flex as cf
  missing = 0
  nb = mjm.nbody
  for b in range(nb):
    for f in range(mjm.nflex):
      if not cf.can_collide_body_flex(fm, b, f):
        continue
      missing += cf.collide_body_flex(fm, fd, b, f)
  for f1 in range(mjm.nflex):
    for f2 in range(f1 + 1, mjm.nflex):
      if (mjm.flex_contype[f1] & mjm.flex_conaffinity[f2]) or (
          mjm.flex_contype[f2] & mjm.flex_conaffinity[f1]):
        missing += cf.collide_flex_flex(fm, fd, f1, f2)
  for f in range(mjm.nflex):
    missing += cf.collide_flex_self(fm, fd, f)
  return missing


def mujoco_flex_contacts(mjd):
  """Indices of MuJoCo's contacts with a flex side."""
  return [i for i in range(mjd.ncon)
          if mjd.contact[i].flex[0] >= 0 or mjd.contact[i].flex[1] >= 0]


def _ids(c):
  return (int(c[0][0]), int(c[0][1]), int(c[1][0]), int(c[1][1]), int(c[2][0]), int(c[2][1]),
          int(c[3][0]), int(c[3][1]))


def compare_contacts(mjd, idx, fd):
  """Compare MuJoCo's contacts idx with ours (fd): in order when the id sequences agree, else
  matched by ids and nearest position. Returns (in_order, n_matched, max geometry error, max
  parameter error, unmatched MuJoCo contacts, unmatched ours)."""
  n = int(fd.ncon[0])
  theirs = [mjd.contact[i] for i in idx]
  tid = [_ids((c.geom, c.flex, c.elem, c.vert)) for c in theirs]
  oid = [_ids((fd.contact_geom[j], fd.contact_flex[j], fd.contact_elem[j], fd.contact_vert[j]))
         for j in range(n)]
  in_order = tid == oid
  if in_order:
    pairs = list(enumerate(range(n)))
  else:
    pairs = []
    free = {}
    for j, k in enumerate(oid):
      free.setdefault(k, []).append(j)
    for i, k in enumerate(tid):
      cand = free.get(k, [])
      if not cand:
        continue
      j = min(cand, key=lambda j: np.abs(theirs[i].pos - fd.contact_pos[j]).max())
      cand.remove(j)
      pairs.append((i, j))
  geo = par = 0.0
  for i, j in pairs:
    c = theirs[i]
    geo = max(geo, abs(c.dist - fd.contact_dist[j]), np.abs(c.pos - fd.contact_pos[j]).max(),
              np.abs(c.frame - fd.contact_frame[j]).max())
    par = max(par, np.abs(c.friction - fd.contact_friction[j]).max(),
              np.abs(c.solref - fd.contact_solref[j]).max(),
              np.abs(c.solreffriction - fd.contact_solreffriction[j]).max(),
              np.abs(c.solimp - fd.contact_solimp[j]).max(),
              abs(c.includemargin - fd.contact_includemargin[j]),
              float(c.dim != fd.contact_dim[j]),
              # exclude 2 (fused) and 3 (no dofs) are set later, by make_constraint
              float((c.exclude == 1) != (fd.contact_exclude[j] == 1)))
  matched_t = {i for i, _ in pairs}
  matched_o = {j for _, j in pairs}
  return (in_order, len(pairs), geo, par, [tid[i] for i in range(len(tid)) if i not in matched_t],
          [oid[j] for j in range(n) if j not in matched_o])
