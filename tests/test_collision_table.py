"""The type-pair table (engine/collision/table.py) against MuJoCo: for every pair of geom types,
two overlapping geoms give MuJoCo's contacts (none where MuJoCo has no collider), through the
collision driver and through the distance query of a distance sensor."""
import itertools

import mujoco
import numpy as np
import pytest

import numjoco
from numjoco.engine.collision import table
from tests.models import models_and_data

TYPES = ["plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"]
_SIZE = {"plane": "2 2 .1", "hfield": "", "sphere": ".2", "capsule": ".1 .2", "ellipsoid": ".2 .15 .1",
         "cylinder": ".15 .1", "box": ".15 .12 .1", "mesh": "", "sdf": ""}
_ASSETS = """<asset>
  <hfield name="h" nrow="5" ncol="5" size="1 1 .2 .1"
          elevation="0 0 0 0 0 0 1 1 1 0 0 1 1 1 0 0 1 1 1 0 0 0 0 0 0"/>
  <mesh name="m" vertex="-.15 -.15 -.1  .15 -.15 -.1  -.15 .15 -.1  .15 .15 -.1
                         -.1 -.1 .12  .1 -.1 .12  -.1 .1 .12  .1 .1 .12  0 0 .16"/>
  <mesh name="s" vertex="-.15 -.15 -.15  .15 -.15 -.15  -.15 .15 -.15  .15 .15 -.15
                         -.15 -.15 .15  .15 -.15 .15  -.15 .15 .15  .15 .15 .15"/>
</asset>"""


def _geom(typ, name, pos, quat="1 0 0 0"):
  ref = {"hfield": ' hfield="h"', "mesh": ' mesh="m"', "sdf": ' mesh="s"'}.get(typ, "")
  size = f' size="{_SIZE[typ]}"' if _SIZE[typ] else ""
  return f'<geom name="{name}" type="{typ}"{ref}{size} pos="{pos}" quat="{quat}"/>'


def _xml(t1, t2):
  """Geom 1 fixed at the origin, geom 2 on a free body overlapping it, turned so that no face is
  parallel to another; a distance sensor between them (none for a height field: MuJoCo refuses
  it)."""
  sensor = ('<sensor><distance geom1="g1" geom2="g2" cutoff="1"/></sensor>' if t1 != "hfield"
            else "")
  return f"""<mujoco><option><flag gravity="disable"/></option>{_ASSETS}<worldbody>
    {_geom(t1, "g1", "0 0 0")}
    <body pos="0.02 -0.01 0.08"><freejoint/>
      {_geom(t2, "g2", "0 0 0", ".96 .2 .15 .1")}</body>
  </worldbody>
  {sensor}</mujoco>"""


# geom 2 moves: MuJoCo makes planes and height fields static. mesh-sdf is mjc_MeshSDF, whose
# contacts differ from MuJoCo's (README: octree SDF contacts with meshes)
PAIRS = [pytest.param(a, b, marks=pytest.mark.xfail(strict=True, reason="mjc_MeshSDF differs"))
         if (a, b) == ("mesh", "sdf") else (a, b)
         for a, b in itertools.combinations_with_replacement(TYPES, 2)
         if b not in ("plane", "hfield")]


@pytest.mark.parametrize("t1,t2", PAIRS)
def test_type_pair_contacts_as_mujoco(t1, t2):
  m, d, mjm, mjd = models_and_data(_xml(t1, t2), quiet=True)
  mujoco.mj_forward(mjm, mjd)
  numjoco.forward(m, d)
  kind = table.COLLIDER[TYPES.index(t1), TYPES.index(t2)]
  assert d.ncon == mjd.ncon, f"{t1}-{t2} ({table.NAMES[kind]}): {d.ncon} contacts, MuJoCo {mjd.ncon}"
  assert (kind == table.NONE) == (mjd.ncon == 0), f"{t1}-{t2}: the table says {table.NAMES[kind]}"
  for i in range(mjd.ncon):
    np.testing.assert_allclose(d.contact_dist[i], mjd.contact.dist[i], atol=1e-9, err_msg=f"{t1}-{t2}")
    np.testing.assert_allclose(d.contact_pos[i], mjd.contact.pos[i], atol=1e-9, err_msg=f"{t1}-{t2}")
  if t2 != "sdf" and t1 != "hfield" and kind != table.NONE:   # (no sdf collider in the query)
    np.testing.assert_allclose(d.sensordata, mjd.sensordata, atol=1e-9, err_msg=f"{t1}-{t2}")


def test_table_is_symmetric_and_names_every_cell():
  assert (table.COLLIDER == table.COLLIDER.T).all()
  assert set(np.unique(table.COLLIDER)) <= set(range(len(table.NAMES)))
