"""Snapshot: the copy of Data the renderer draws, filled on the physics thread after each chunk.

Fields carry Data's names and shapes. Contact rows are valid up to `ncon`; `contact_force` is
MuJoCo's mj_contactForce (normal, two tangents, three torques in the contact frame) for each
contact, decoded from efc_force for pyramidal or elliptic cones. A model with flexes adds
`flexvert_xpos` (nflexvert, 3): Data's when it has the field, else computed from the body
poses (render/flex.py vertex_positions; until the flex physics fills Data's).
"""
import numpy as np

# (name, shape as a function of the model sizes) of every array copied from Data.
_ARRAYS = tuple((
    "geom_xpos geom_xmat xpos xquat xmat xipos ximat site_xpos site_xmat cam_xpos cam_xmat "
    "light_xpos light_xdir xanchor xaxis subtree_com energy qpos qvel ctrl"
).split())
_CONTACT = ("contact_pos", "contact_frame", "contact_dist", "contact_dim", "contact_efc_address")
_OPTIONAL = ("wrap_xpos", "wrap_obj", "ten_wrapadr", "ten_wrapnum", "eq_active", "efc_type",
             "efc_id", "efc_KBIP", "sensordata")


class Snapshot:
  """Preallocated copies of the Data fields the renderer needs; `capture` fills them in place."""

  def __init__(self, m, d=None):
    """Allocate for model `m` and fill from `d` (default: the model at qpos0, so a snapshot is
    drawable before the first capture)."""
    import numjoco
    if d is None:
      d = numjoco.make_data(m)
      numjoco.forward(m, d)
    self.time = 0.0
    self.ncon = 0
    self.nefc = 0
    self.ne = self.nf = self.nl = 0
    for name in _ARRAYS + _CONTACT:
      setattr(self, name, np.zeros_like(getattr(d, name)))
    nconmax = d.contact_dist.shape[0]
    self.contact_geom = np.full((nconmax, 2), -1, np.int32)
    self.contact_force = np.zeros((nconmax, 6))
    self.optional = tuple(n for n in _OPTIONAL if hasattr(d, n) or n in getattr(d, "_arrays", {}))
    for name in self.optional:
      setattr(self, name, np.zeros_like(getattr(d, name)))
    self.extra = {}
    self.nflex = int(getattr(m, "nflex", 0) or 0)
    if self.nflex:
      self.flexvert_xpos = np.zeros((int(m.nflexvert), 3))
    self.capture(m, d)

  def capture(self, m, d):
    """Copy the render state of `d` (Data of model `m`) into this snapshot."""
    for name in _ARRAYS:
      np.copyto(getattr(self, name), getattr(d, name))
    for name in self.optional:
      np.copyto(getattr(self, name), getattr(d, name))
    if self.nflex:
      if hasattr(d, "flexvert_xpos"):
        np.copyto(self.flexvert_xpos, np.asarray(d.flexvert_xpos).reshape(-1, 3))
      else:
        from numjoco.render.flex import vertex_positions
        self.flexvert_xpos[:] = vertex_positions(m, d.xpos, d.xmat)
    a = d._arrays if hasattr(d, "_arrays") else None
    self.time = float(a["time"][0]) if a is not None else float(d.time)
    n = int(a["ncon"][0]) if a is not None else int(d.ncon)
    self.ncon = n
    self.nefc = int(a["nefc"][0]) if a is not None else int(d.nefc)
    for k in ("ne", "nf", "nl"):
      setattr(self, k, int(a[k][0]) if a is not None else int(getattr(d, k)))
    for name in _CONTACT:
      getattr(self, name)[:n] = getattr(d, name)[:n]
    self.contact_geom[:n, 0] = d.contact_geom1[:n]
    self.contact_geom[:n, 1] = d.contact_geom2[:n]
    if n:   # (a preview of the model, engine/preview.py, has no contacts and no options)
      contact_force(int(m.opt.cone) == 0, n, d.contact_dim, d.contact_efc_address,
                    d.contact_friction, d.efc_force, self.contact_force)

  def copy_from(self, other):
    """Make this snapshot equal to `other` (same model), copying every array in place."""
    for name in _ARRAYS + self.optional + (("flexvert_xpos",) if self.nflex else ()):
      np.copyto(getattr(self, name), getattr(other, name))
    n = other.ncon
    for name in _CONTACT + ("contact_geom", "contact_force"):
      getattr(self, name)[:n] = getattr(other, name)[:n]
    for k in ("time", "ncon", "nefc", "ne", "nf", "nl"):
      setattr(self, k, getattr(other, k))
    self.extra = dict(other.extra)


def contact_force(pyramidal, ncon, dim, efc_address, friction, efc_force, out):
  """mj_contactForce for contacts 0..ncon-1 into out[:ncon] (zero for excluded contacts)."""
  out[:ncon] = 0.0
  if ncon == 0:
    return out
  dim, adr = dim[:ncon], efc_address[:ncon]
  for k in np.unique(dim):
    idx = np.nonzero((dim == k) & (adr >= 0))[0]
    if len(idx) == 0:
      continue
    a = adr[idx]
    if pyramidal and k > 1:
      rows = efc_force[a[:, None] + np.arange(2 * (k - 1))]
      out[idx, 0] = rows.sum(1)
      out[idx, 1:k] = (rows[:, 0::2] - rows[:, 1::2]) * friction[idx, :k - 1]
    else:
      out[idx, :k] = efc_force[a[:, None] + np.arange(k)]
  return out
