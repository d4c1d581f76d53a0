"""The constraint inspector's numbers (no GUI): the active constraints of a Model and Data, one
entry per constraint as MuJoCo groups its rows, with what decides each one's force.

A constraint is the rows MuJoCo gives one impedance (getposdim in engine_core_constraint.c): a
contact's 1 (frictionless), 2 (condim - 1) pyramid edges or condim elliptic rows (normal first), a
connect's 3 rows, a weld's 6, and one row for everything else. For each the table keeps the rows'
efc_pos, efc_margin, efc_vel, efc_KBIP (k, b, impedance d(r), d'(r)), efc_R, efc_aref, efc_force
and efc_state, the violation r that the impedance reads, and the solref/solimp the constraint
takes from its element (for a contact: Data's contact_solref/solimp, already mixed from both geoms
by mj_contactParam or taken from an explicit <pair>, or opt.o_solref/o_solimp under override).
`solparams` applies MuJoCo's getsolparam to them (the values the impedance is computed with) and
`impedance` is the solimp curve d(r) of getimpedance, so the panel can draw the curve with the
constraint's operating point on it. (Under the discrete integrator k and b of stiff rows are
changed further when the step is built: efc_KBIP holds what was used.)

Where the table is built: on the simulation worker, after a chunk, while the inspector is open
(the worker's "inspect" command sets the flag; Simulation._publish puts the table in
snapshot.extra["constraints"]). It reads Data fields the render snapshot does not copy, so on
the UI side they would have to be copied for every frame of every session; built on the worker
they are copied only while someone looks, and all numbers come from the same Data (between two
chunks, never from a step half done). The build is vectorised: a few copies of nefc-long arrays.
"""
import dataclasses

import numpy as np

from numjoco.engine.types import (MAXIMP, MINIMP, MINVAL, mjtConstraint, mjtConstraintState,
                                  mjtDisableBit, mjtEnableBit, mjtEq, mjtIntegrator, mjtObj)

_C = mjtConstraint   # the row kinds
CONTACTS = (int(_C.CONTACT_FRICTIONLESS), int(_C.CONTACT_PYRAMIDAL), int(_C.CONTACT_ELLIPTIC))
KINDS = {int(c): c.name.lower() for c in mjtConstraint}         # "limit_joint", ...
STATES = {int(s): s.name.lower() for s in mjtConstraintState}   # "quadratic", ...
_ONE_ROW = tuple(int(c) for c in (_C.FRICTION_DOF, _C.FRICTION_TENDON, _C.LIMIT_JOINT,
                                   _C.LIMIT_TENDON, _C.CONTACT_FRICTIONLESS))
# element type -> (solref field, solimp field) the constraint reads (getsolparam)
SOURCES = {int(_C.EQUALITY): ("eq_solref", "eq_solimp"),
           int(_C.FRICTION_DOF): ("dof_solref", "dof_solimp"),
           int(_C.FRICTION_TENDON): ("tendon_solref_fri", "tendon_solimp_fri"),
           int(_C.LIMIT_JOINT): ("jnt_solref", "jnt_solimp"),
           int(_C.LIMIT_TENDON): ("tendon_solref_lim", "tendon_solimp_lim")}
_ROW_FIELDS = ("type", "id", "pos", "margin", "vel", "KBIP", "R", "aref", "force", "state")
_CONTACT_FIELDS = ("geom", "flex", "elem", "vert", "pos", "frame", "dim", "friction", "mu",
                   "solref", "solreffriction", "solimp", "efc_address")


@dataclasses.dataclass
class Table:
  """The active constraints of one Data: rows (efc_*, the first nefc), constraints (adr, nrow,
  type, id, r, solref, solreffriction, solimp: one entry per constraint) and contacts
  (contact_*, the first ncon; contact_force as mj_contactForce decodes efc_force)."""
  time: float
  timestep: float
  refsafe: bool           # getsolparam clamps a positive timeconst to 2 timesteps
  override: bool          # contacts take opt.o_solref / o_solimp / o_margin
  efc: dict               # row field -> array (nefc, ...)
  adr: np.ndarray         # first row of each constraint
  nrow: np.ndarray        # its rows
  type: np.ndarray        # mjtConstraint
  id: np.ndarray          # efc_id: the element (contact, joint, dof, tendon, equality)
  r: np.ndarray           # the violation the impedance reads: pos - margin (getposdim)
  solref: np.ndarray      # (n, 2) as the element holds them, before getsolparam
  solreffriction: np.ndarray   # (n, 2) contacts' friction solref, else 0
  solimp: np.ndarray      # (n, 5)
  contact: dict           # contact field -> array (ncon, ...), plus "force" (ncon, 6)

  def __len__(self):
    return len(self.adr)

  @property
  def nefc(self):
    return len(self.efc["type"])


def build(m, d):
  """The Table of Data `d` of Model `m` (after forward or a step: rows, forces and states as
  the last constraint solve left them)."""
  from numjoco.render.snapshot import contact_force
  nefc, ncon = int(d.nefc), int(d.ncon)
  efc = {f: np.array(getattr(d, "efc_" + f)[:nefc]) for f in _ROW_FIELDS}
  con = {f: np.array(getattr(d, "contact_" + f)[:ncon]) for f in _CONTACT_FIELDS}
  con["force"] = contact_force(int(m.opt.cone) == 0, ncon, con["dim"], con["efc_address"],
                               con["friction"], efc["force"], np.zeros((ncon, 6)))
  typ, ids = efc["type"], efc["id"]
  # a constraint starts where the element changes, and at every row of one-row constraints
  # (two limits of one joint, the edges of a flex equality)
  one = np.isin(typ, _ONE_ROW)
  eq = typ == _C.EQUALITY
  if eq.any():
    multi = np.isin(np.asarray(m.eq_type)[ids[eq]], (int(mjtEq.CONNECT), int(mjtEq.WELD)))
    one[np.flatnonzero(eq)[~multi]] = True
  start = np.ones(nefc, bool)
  start[1:] = (typ[1:] != typ[:-1]) | (ids[1:] != ids[:-1]) | one[1:]
  adr = np.flatnonzero(start)
  nrow = np.diff(np.append(adr, nefc))
  ctyp, cid = typ[adr], ids[adr]
  # connect and weld: the norm of the rows' positions (getposdim); margins are 0 there
  pos = np.sqrt(np.add.reduceat(efc["pos"] ** 2, adr)) if nefc else np.zeros(0)
  single = ~(eq[adr] & (nrow > 1))
  pos[single] = efc["pos"][adr[single]]
  n = len(adr)
  solref, reff, solimp = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 5))
  for t, (ref_field, imp_field) in SOURCES.items():
    sel = ctyp == t
    solref[sel] = getattr(m, ref_field)[cid[sel]]
    solimp[sel] = getattr(m, imp_field)[cid[sel]]
  sel = np.isin(ctyp, CONTACTS)
  solref[sel], solimp[sel] = con["solref"][cid[sel]], con["solimp"][cid[sel]]
  reff[sel] = con["solreffriction"][cid[sel]]
  refsafe = (not int(m.opt.disableflags) & int(mjtDisableBit.REFSAFE)
             and int(m.opt.integrator) != int(mjtIntegrator.DISCRETE))
  return Table(time=float(d.time), timestep=float(m.opt.timestep), refsafe=bool(refsafe),
               override=bool(int(m.opt.enableflags) & int(mjtEnableBit.OVERRIDE)), efc=efc,
               adr=adr, nrow=nrow, type=ctyp, id=cid, r=pos - efc["margin"][adr],
               solref=solref, solreffriction=reff, solimp=solimp, contact=con)


def used_solimp(solimp):
  """solimp as the impedance reads it (getsolparam): dmin, dmax and midpoint in [mjMINIMP,
  mjMAXIMP], width >= 0, power >= 1."""
  s = np.array(solimp, float)
  for k in (0, 1, 3):
    s[..., k] = np.clip(s[..., k], MINIMP, MAXIMP)
  s[..., 2] = np.maximum(s[..., 2], 0.0)
  s[..., 4] = np.maximum(s[..., 4], 1.0)
  return s


def used_solref(solref, timestep, refsafe, fallback=(0.02, 1.0)):
  """solref as the constraint uses it (getsolparam): mixed signs give `fallback` (MuJoCo's
  default; (0, 0) for the friction solref, which then falls back to the normal one), and a
  positive timeconst is at least 2 timesteps unless refsafe is disabled."""
  s = np.array(solref, float)
  mixed = (s[..., 0] > 0) ^ (s[..., 1] > 0)
  s[mixed] = fallback
  if refsafe:
    s[..., 0] = np.where(s[..., 0] > 0, np.maximum(s[..., 0], 2 * timestep), s[..., 0])
  return s


def solparams(table, k):
  """(solref, solreffriction, solimp) constraint k is computed with (getsolparam)."""
  return (used_solref(table.solref[k], table.timestep, table.refsafe),
          used_solref(table.solreffriction[k], table.timestep, table.refsafe, (0.0, 0.0)),
          used_solimp(table.solimp[k]))


def impedance(solimp, r):
  """d(r) of solimp (dmin, dmax, width, midpoint, power; as `used_solimp` gives it) at
  violations r (MuJoCo's getimpedance): dmin at r = 0, dmax from |r| = width on, between them
  two power curves of x = |r| / width that meet at the midpoint."""
  dmin, dmax, width, mid, power = (float(v) for v in solimp)
  x = np.abs(np.asarray(r, float))
  if dmin == dmax or width <= MINVAL:
    return np.full(x.shape, 0.5 * (dmin + dmax))
  x = np.minimum(x / width, 1.0)
  if power == 1:
    y = x
  else:
    y = np.where(x <= mid, x ** power / mid ** (power - 1),
                 1 - (1 - x) ** power / (1 - mid) ** (power - 1))
  return dmin + y * (dmax - dmin)


def key(table, k):
  """The identity of constraint k across frames: ("contact", geom1, geom2) for contacts (several
  contacts of one geom pair are told apart by position, `find`), else (kind, element id, how
  many constraints of that element come before it)."""
  t, i = int(table.type[k]), int(table.id[k])
  if t in CONTACTS:
    g = table.contact["geom"][i]
    return ("contact", int(g[0]), int(g[1]))
  same = (table.type[:k] == t) & (table.id[:k] == i)
  return (KINDS[t], i, int(same.sum()))


def find(table, want, point=None):
  """Index of the constraint with identity `want` (`key`), -1 when it is not active; among the
  contacts of one geom pair the one nearest `point`."""
  if want[0] != "contact":
    kinds = {v: t for t, v in KINDS.items()}
    t = kinds.get(want[0])
    hit = np.flatnonzero((table.type == t) & (table.id == want[1]))
    return int(hit[want[2]]) if want[2] < len(hit) else -1
  ks = np.flatnonzero(np.isin(table.type, CONTACTS))
  if not len(ks):
    return -1
  g = table.contact["geom"][table.id[ks]]
  ks = ks[(g[:, 0] == want[1]) & (g[:, 1] == want[2])]
  if not len(ks) or point is None:
    return int(ks[0]) if len(ks) else -1
  dist = np.linalg.norm(table.contact["pos"][table.id[ks]] - np.asarray(point), axis=1)
  return int(ks[np.argmin(dist)])


def contact_point(table, k):
  """The world position of constraint k when it is a contact, else None."""
  if int(table.type[k]) not in CONTACTS:
    return None
  return table.contact["pos"][table.id[k]].copy()


def forces(table, k):
  """{label: value} of what the force plot follows: a contact's normal and tangential force
  (mj_contactForce), else the force of each row."""
  if int(table.type[k]) in CONTACTS:
    f = table.contact["force"][table.id[k]]
    return {"normal": float(f[0]), "tangential": float(np.hypot(f[1], f[2]))}
  rows = table.efc["force"][table.adr[k]:table.adr[k] + table.nrow[k]]
  if len(rows) == 1:
    return {"force": float(rows[0])}
  return {f"row {j}": float(v) for j, v in enumerate(rows)}


def force(table, k):
  """The force the table lists: a contact's normal force (mj_contactForce), a one-row
  constraint's efc_force, else the norm of its rows' forces (a connect's, a weld's)."""
  if int(table.type[k]) in CONTACTS:
    return float(table.contact["force"][table.id[k], 0])
  rows = table.efc["force"][table.adr[k]:table.adr[k] + table.nrow[k]]
  return float(rows[0]) if len(rows) == 1 else float(np.linalg.norm(rows))


def state(table, k):
  """The rows' mjtConstraintState names: one name when they agree, else 'a/b' in row order."""
  names = []
  for s in table.efc["state"][table.adr[k]:table.adr[k] + table.nrow[k]]:
    if STATES.get(int(s), str(s)) not in names:
      names.append(STATES.get(int(s), str(s)))
  return "/".join(names)


def _name(m, kind, i):
  """Object i's name, or 'kind i'."""
  from numjoco.engine.io import id2name
  return id2name(m, kind, int(i)) or f"{kind} {int(i)}"


def _side(m, con, i, s):
  """One side of contact i: its geom, or its flex with the element or vertex."""
  g = int(con["geom"][i, s])
  if g >= 0:
    return _name(m, "geom", g)
  f, e, v = (int(con[k][i, s]) for k in ("flex", "elem", "vert"))
  return _name(m, "flex", f) + (f" elem {e}" if e >= 0 else f" vert {v}" if v >= 0 else "")


_EQ_OBJ = {int(mjtEq.CONNECT): "body", int(mjtEq.WELD): "body", int(mjtEq.JOINT): "joint",
           int(mjtEq.TENDON): "tendon", int(mjtEq.FLEX): "flex"}


def objects(m, table, k):
  """What constraint k acts on, for the table: 'geom a / geom b', 'joint hinge', ..."""
  t, i = int(table.type[k]), int(table.id[k])
  if t in CONTACTS:
    return f"{_side(m, table.contact, i, 0)} / {_side(m, table.contact, i, 1)}"
  if t == _C.EQUALITY:
    kind = _EQ_OBJ.get(int(m.eq_type[i]), "body")
    if kind == "body" and int(m.eq_objtype[i]) == int(mjtObj.SITE):
      kind = "site"
    ends = [_name(m, kind, o) for o in (m.eq_obj1id[i], m.eq_obj2id[i]) if o >= 0]
    return f"{_name(m, 'equality', i)}: {' - '.join(ends)}"
  if t == _C.FRICTION_DOF:
    return f"dof {i} ({_name(m, 'joint', m.dof_jntid[i])})"
  return _name(m, "joint" if t == _C.LIMIT_JOINT else "tendon", i)


def bodies(m, table, k):
  """The bodies of a contact's sides ('' for other constraints and flex sides)."""
  if int(table.type[k]) not in CONTACTS:
    return ""
  g = table.contact["geom"][table.id[k]]
  return " / ".join(_name(m, "body", m.geom_bodyid[x]) if x >= 0 else "flex" for x in g)


@dataclasses.dataclass
class Target:
  """Where an edit of a constraint's solref/solimp goes: Model fields (or options, command
  'opt') and the element index, with the weight the element's values have in the contact."""
  label: str
  solref: str             # Model field (command "model") or option name (command "opt")
  solimp: str
  index: int = -1         # the element (-1 for an option)
  weight: float = 1.0
  command: str = "model"


def targets(m, table, k):
  """(targets, default choice, note) of editing constraint k's solref/solimp.

  Other constraints edit their element's fields (eq_solref, jnt_solref, dof_solref,
  tendon_solref_lim/_fri). A contact from an explicit <pair> edits pair_solref/pair_solimp;
  under the override flag every contact reads opt.o_solref/o_solimp; a flex contact is not
  edited here. A geom contact mixes its geoms' values (mj_contactParam): the geom of higher
  priority gives them as they are, else they are weighted by solmix (solref: the min of both
  when either is negative). Both geoms are offered, with their weights; the default is the
  heavier one, on a tie the one on a moving body (a floor's values reach every contact with it)."""
  t, i = int(table.type[k]), int(table.id[k])
  if t not in CONTACTS:
    ref, imp = SOURCES[t]
    return [Target(objects(m, table, k), ref, imp, i)], 0, ""
  if table.override:
    return ([Target("options o_solref / o_solimp", "o_solref", "o_solimp", command="opt")], 0,
            "the override flag is on: every contact takes the options' solref/solimp")
  g1, g2 = (int(g) for g in table.contact["geom"][i])
  if g1 < 0 or g2 < 0:
    return [], 0, "a flex contact takes the flex's solref/solimp: edit them in the XML"
  for p in range(int(m.npair)):
    if {int(m.pair_geom1[p]), int(m.pair_geom2[p])} == {g1, g2}:
      return [Target(f"pair {_name(m, 'pair', p)}", "pair_solref", "pair_solimp", p)], 0, \
          "an explicit <pair>: its own solref/solimp"
  pr1, pr2 = int(m.geom_priority[g1]), int(m.geom_priority[g2])
  if pr1 != pr2:
    g = g1 if pr1 > pr2 else g2
    return ([Target(f"geom {_name(m, 'geom', g)}", "geom_solref", "geom_solimp", g)], 0,
            f"geom {_name(m, 'geom', g)} has the higher priority: its values are used as they are")
  s1, s2 = float(m.geom_solmix[g1]), float(m.geom_solmix[g2])
  if s1 >= MINVAL and s2 >= MINVAL:
    mix = s1 / (s1 + s2)
  else:
    mix = 0.5 if (s1 < MINVAL and s2 < MINVAL) else (0.0 if s1 < MINVAL else 1.0)
  names = [_name(m, "geom", g) for g in (g1, g2)]
  out = [Target(f"geom {n}", "geom_solref", "geom_solimp", g, w)
         for g, n, w in ((g1, names[0], mix), (g2, names[1], 1 - mix))]
  moving = [int(m.geom_bodyid[g]) != 0 for g in (g1, g2)]
  best = 0 if (mix > 0.5 or (mix == 0.5 and (moving[0] or not moving[1]))) else 1
  return out, best, (f"mixed by solmix: {mix:.3g} x {names[0]} + {1 - mix:.3g} x {names[1]} "
                     "(solref: the smaller of each when either is negative)")


def pick_contact(xy, click, radius):
  """Index of the projected point in `xy` (n, 2 pixels; NaN: not visible) nearest `click`,
  -1 when none is within `radius` pixels."""
  xy = np.asarray(xy, float).reshape(-1, 2)
  if not len(xy):
    return -1
  dist = np.hypot(xy[:, 0] - click[0], xy[:, 1] - click[1])
  dist[~np.isfinite(dist)] = np.inf
  j = int(np.argmin(dist))
  return j if dist[j] <= radius else -1
