"""Units gated on the model or its options (engine/_sig.py): a model links exactly the units
its gates select, and stepping it never reaches a unit it did not link (that call would raise
"unit not linked"). Each case runs in a fresh process: units linked by other tests in this
process would hide a missing one."""
import json
import subprocess
import sys

import pytest

_PROBE = r"""
import json, sys
import numjoco
from numjoco.engine import _jit, build
m = numjoco.load_model(sys.argv[1])
d = numjoco.make_data(m)
numjoco.step(m, d, 20)
out = {"ncon": d.ncon, "linked0": sorted(s for s, u in _jit.units().items() if u.linked),
       "needed0": sorted(build.needed_units(m))}
if len(sys.argv) > 2:      # an option edit while running, as the viewer's panel makes it
  setattr(m.opt, sys.argv[2], float(sys.argv[3]))
  numjoco.step(m, d, 20)
out["linked"] = sorted(s for s, u in _jit.units().items() if u.linked)
out["needed"] = sorted(build.needed_units(m))
out["qfrc_fluid"] = float(abs(d.qfrc_fluid).sum())
print(json.dumps(out))
"""

_BODY = '<body pos="{x} 0 {z}"><freejoint/><geom {geom}/></body>'


def _model(geoms, extra="", option=""):
  bodies = "".join(_BODY.format(x=0.5 * i, z=z, geom=g) for i, (g, z) in enumerate(geoms))
  return f"""<mujoco><option {option}/>{extra}<worldbody>
    <geom type="plane" size="5 5 .1"/>{bodies}</worldbody></mujoco>"""


_MESH = '<asset><mesh name="tet" vertex="0 0 0  .2 0 0  0 .2 0  0 0 .2"/></asset>'
_TENDON = """<worldbody><body pos="3 0 1"><joint name="a" type="hinge"/><geom size=".05"/>
  <body pos="0 0 -.2"><joint name="b" type="hinge"/><geom size=".05"/></body></body></worldbody>
  <tendon><fixed name="t"><joint joint="a" coef="1"/><joint joint="b" coef="-1"/></fixed></tendon>"""
# resting on the plane at the start (sizes .1): contacts from the first step
CASES = {
    "primitives": _model([('type="sphere" size=".1"', 0.09), ('type="capsule" size=".1 .1"', 0.09),
                          ('type="box" size=".1 .1 .1"', 0.09)]),
    "ellipsoid": _model([('type="ellipsoid" size=".1 .15 .1"', 0.09),
                         ('type="box" size=".1 .1 .1"', 0.09)]),
    "mesh": _model([('type="mesh" mesh="tet"', -0.01)], extra=_MESH),
    "tendon_fluid": _model([('type="sphere" size=".1"', 0.09)], extra=_TENDON,
                           option='density="1.2" integrator="implicitfast"'),
}
GATED = {"collide_convex": "numjoco.engine.collision.driver.collide_convex",
         "collide_mesh": "numjoco.engine.collision.driver.collide_mesh",
         "tendon": "numjoco.engine.smooth.tendon",
         "fluid": "numjoco.engine.fluid.fluid",
         "fluid_vel": "numjoco.engine.derivative.fluid_vel"}
EXPECT = {"primitives": set(), "ellipsoid": {"collide_convex"}, "mesh": {"collide_mesh"},
          "tendon_fluid": {"tendon", "fluid", "fluid_vel"}}


def _probe(tmp_path, name, *edit):
  path = tmp_path / f"{name}.xml"
  path.write_text(CASES[name])
  r = subprocess.run([sys.executable, "-c", _PROBE, str(path), *edit], capture_output=True,
                     text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-3000:]
  return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_model_links_exactly_the_units_its_gates_select(tmp_path, name):
  out = _probe(tmp_path, name)
  assert out["ncon"] > 0
  assert out["linked"] == out["needed"]
  linked = {k for k, s in GATED.items() if s in out["linked"]}
  assert linked == EXPECT[name]


def test_an_option_edit_links_the_units_it_needs(tmp_path):
  """Density switched on while the model runs: the fluid stage is linked at the next step,
  and its forces act."""
  out = _probe(tmp_path, "primitives", "density", "1.2")
  assert GATED["fluid"] not in out["linked0"]
  assert GATED["fluid"] in out["linked"] and out["linked"] == out["needed"]
  assert GATED["fluid_vel"] not in out["linked"]   # Euler: no velocity derivatives
  assert out["qfrc_fluid"] > 0


_FROM_MUJOCO = r"""
import mujoco, numpy as np
from numjoco.engine import interop, io
mjm = mujoco.MjModel.from_xml_string('''<mujoco><option integrator="implicit"/><worldbody>
  <body><joint type="hinge" damping=".3"/><geom size=".1" pos="0 0 -.5"/></body>
  </worldbody></mujoco>''')
mjd = mujoco.MjData(mjm)
mjd.qvel[0] = 1.0
m = interop.model_from_mujoco(mjm)
d = io.make_data(m)
interop.data_from_mujoco(mjd, d)
m.struct                    # links before anything imported the integrators' modules
import numjoco
numjoco.step(m, d)
mujoco.mj_step(mjm, mjd)
print(abs(d.qvel[0] - mjd.qvel[0]))
"""


def test_a_model_built_before_the_pipeline_is_imported_links_every_unit_it_needs():
  """A Model made through engine.io (no numjoco.load_model, which imports the whole pipeline)
  and linked before the implicit integrator's module was imported still steps: linking
  defines every unit first, so none is left a trap."""
  out = subprocess.run([sys.executable, "-c", _FROM_MUJOCO], capture_output=True, text=True)
  assert out.returncode == 0, out.stderr[-2000:]
  assert float(out.stdout.split()[-1]) < 1e-12
