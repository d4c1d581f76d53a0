"""MJCF <replicate> vs MuJoCo's compiler: tree layout, names, poses and replicated references."""
import glob
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import numjoco
from numjoco.engine.mjcf import MjcfError, compile_model
from tests.models import assert_mjcf_error
from tests.test_mjcf_compile import assert_same

ASSETS = os.path.join(os.path.dirname(__file__), "assets", "replicate")

REFERENCES = """<mujoco><worldbody>
<geom name="before" size=".1"/>
<body name="B0" pos="0 0 1"><joint name="B0j"/><geom size=".1"/></body>
<replicate count="3" offset="0.5 0 0" euler="0 0 30" sep="_">
  <body name="b" pos="0 0 0.2"><joint name="j"/><geom name="g" size=".05"/><site name="s"/>
    <body name="c"><joint name="jc"/><geom size=".02"/></body></body>
  <geom name="loose" size=".03" pos="0 0.1 0"/>
</replicate>
<geom name="after" size=".1"/>
<body name="B1"><joint/><geom size=".1"/></body>
</worldbody>
<tendon><fixed name="t"><joint joint="j" coef="1"/><joint joint="jc" coef="-1"/></fixed></tendon>
<actuator><motor name="m" joint="j"/><motor name="m0" joint="B0j"/><motor name="mt" tendon="t"/>
</actuator>
<sensor><jointpos name="jp" joint="j"/><accelerometer name="acc" site="s"/></sensor>
<equality><joint name="e" joint1="j" joint2="jc"/></equality>
</mujoco>"""

NESTED = """<mujoco><compiler angle="radian" eulerseq="XYZ"/><worldbody>
  <replicate count="2" offset="0 1 0" euler="1.5 0 0.2">
    <replicate count="12" sep="-" offset="1 0 0" euler="0 0.5 0">
      <body name="Alice"><freejoint/><geom size=".1"/></body>
    </replicate>
  </replicate>
</worldbody>
<sensor><framepos name="Bob" objtype="body" objname="Alice"/></sensor>
</mujoco>"""


# sensors that refer to nothing (clocks): MuJoCo 4.0 copies them per replica, the copies of
# earlier replicas (and of sibling or inner replicates) included; the names show the lineage
CLOCKS = """<mujoco><worldbody>
<replicate count="3" offset="1 0 0"><body name="b"><joint name="j"/><geom size=".1"/></body>
</replicate>
<body name="c"><geom size=".1"/></body>
<replicate count="2" sep="_" offset="0 1 0">
  <replicate count="2" sep="x" offset="0 0 1"><body name="e"><joint name="k"/><geom size=".1"/>
  </body></replicate></replicate>
</worldbody>
<sensor><clock name="clk"/><jointpos joint="j"/><framepos objtype="body" objname="c"/><clock/>
  <jointvel name="v" joint="k"/></sensor>
</mujoco>"""


@pytest.mark.parametrize("xml", [REFERENCES, NESTED, CLOCKS], ids=["references", "nested",
                                                                  "clocks"])
def test_replicate_matches_mujoco(xml):
  assert_same(compile_model(xml), mujoco.MjModel.from_xml_string(xml))


def test_replicated_references_follow_their_replica():
  m = numjoco.load_model(REFERENCES)
  names = lambda obj, n: [numjoco.id2name(m, obj, i) for i in range(n)]
  assert names(numjoco.mjtObj.ACTUATOR, m.nu) == ["m0", "m_0", "mt_0", "m_1", "mt_1", "m_2",
                                                 "mt_2"]
  assert names(numjoco.mjtObj.TENDON, m.ntendon) == ["t_0", "t_1", "t_2"]
  # the n-th tendon moves the n-th replica's joints
  d = numjoco.make_data(m)
  d.qpos[:] = np.arange(m.nq) * 0.1
  numjoco.forward(m, d)
  for r in range(3):
    j = numjoco.name2id(m, numjoco.mjtObj.JOINT, f"j_{r}")
    jc = numjoco.name2id(m, numjoco.mjtObj.JOINT, f"jc_{r}")
    assert d.ten_length[r] == pytest.approx(d.qpos[j] - d.qpos[jc])


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ASSETS, "*.xml"))),
                         ids=os.path.basename)
def test_mujoco_replicate_models(path):
  assert_same(compile_model(path), mujoco.MjModel.from_xml_path(path))


def test_replicate_errors():
  bad = {
      'count="0"': "must be positive",
      'count="2" offset="1 2"': "expected 3 values",
      'count="2" scale="1"': "unknown attribute 'scale'",
      '': "missing attribute 'count'",
  }
  for attrs, msg in bad.items():
    assert_mjcf_error(f"<mujoco><worldbody>\n<replicate {attrs}><geom size='1'/></replicate>"
                      f"</worldbody></mujoco>", msg, ":2: <replicate>")
  with pytest.raises(MjcfError, match="direct child"):
    compile_model("<mujoco><worldbody><body><replicate count='2'><joint/></replicate>"
                  "</body></worldbody></mujoco>")
