"""m.vis (<visual>) and m.stat (<statistic> and mj_setConst's setStat) against MuJoCo."""
import numpy as np
import pytest

import numjoco
from numjoco.engine.mjcf._node import MjcfError
from numjoco.engine.visual import STATISTIC_DEFAULTS, VISUAL_DEFAULTS
from tests.models import load_both, models_of

VISUAL_XML = """<mujoco>
  <visual>
    <global fovy="60" azimuth="120" elevation="-20" offwidth="800"/>
    <headlight ambient=".3 .3 .3" active="0"/>
    <map stiffness="250" stiffnessrot="800" znear="0.02" force="0.1"/>
    <scale contactwidth="0.5" framelength="2"/>
    <rgba contactpoint="1 0 0 1" inertia=".1 .2 .3 .4"/>
    <quality shadowsize="1024"/>
  </visual>
  <statistic extent="3" center="0 0 1"/>
  <worldbody><geom type="plane" size="2 2 .1"/>
    <body pos="0 0 1"><freejoint/><geom type="box" size=".1 .2 .3"/></body>
    <body pos="1 0 1"><joint type="hinge"/><geom type="capsule" fromto="0 0 0 .5 0 0" size=".05"/>
      <site pos=".6 0 0"/></body>
  </worldbody></mujoco>"""


def _same_visual(m, mjm):
  for group, attrs in VISUAL_DEFAULTS.items():
    ours = getattr(m.vis, "global_" if group == "global" else group)
    theirs = getattr(mjm.vis, "global_" if group == "global" else group)
    for key in attrs:
      t = np.asarray(getattr(theirs, key))
      if t.size == 0:
        continue  # not bound in MuJoCo's Python API
      np.testing.assert_allclose(getattr(ours, key), t, rtol=0, atol=0, err_msg=f"{group}.{key}")


def _same_stat(m, mjm, rtol=1e-12):
  for key in STATISTIC_DEFAULTS:
    np.testing.assert_allclose(getattr(m.stat, key), getattr(mjm.stat, key), rtol=rtol,
                               atol=1e-14, err_msg=f"stat.{key}")


def test_visual_and_statistic_given():
  m, mjm = models_of(VISUAL_XML)
  _same_visual(m, mjm)
  _same_stat(m, mjm)
  assert m.vis.map.stiffness == 250 and m.vis.global_.fovy == 60


@pytest.mark.parametrize("name", ["cartpole", "humanoid", "walker", "cheetah", "swimmer",
                                  "humanoid_CMU"])
def test_suite_models(name):
  """Defaults and the models' own <visual>; statistics computed at qpos0 as setStat does."""
  m, mjm = load_both(name)
  _same_visual(m, mjm)
  _same_stat(m, mjm)


def test_pile_statistics():
  import os
  path = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "pile64.xml")
  _same_stat(*models_of(path))


def test_stiffness_edit_reaches_model_array():
  m = numjoco.load_model(VISUAL_XML)
  m.vis.map.stiffness = 42.0
  assert m.vis_map_stiffness[0] == 42.0 and m.vis.map.stiffness == 42.0


def test_unknown_visual_attribute_is_an_error():
  bad = VISUAL_XML.replace('<map stiffness="250"', '<map stifness="250"')
  with pytest.raises(MjcfError, match="stifness"):
    numjoco.load_model(bad)
