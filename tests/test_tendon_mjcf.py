"""Bad spatial-tendon and actuator input: a load error that names the element and the problem,
each also rejected by MuJoCo 4.0 itself (so the rule is MuJoCo's, not ours)."""
import mujoco
import pytest

from numjoco.engine.mjcf import MjcfError, compile_model

BASE = """
<mujoco>
  <worldbody>
    <site name="s0" pos="0 0 1"/>
    <geom name="sph" type="sphere" size="0.1" pos="0 0 0.5"/>
    <geom name="box" type="box" size="0.1 0.1 0.1" pos="1 0 0.5"/>
    <body name="b" pos="0 0 0.1">
      <joint name="j" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <site name="s1" pos="0.3 0 0"/>
    </body>
  </worldbody>
  TAIL
</mujoco>
"""

CASES = {
    "geom not bracketed": ('<tendon><spatial><site site="s0"/><geom geom="sph"/></spatial>'
                           '</tendon>', "not bracketed by sites"),
    "wrap box": ('<tendon><spatial><site site="s0"/><geom geom="box"/><site site="s1"/>'
                 '</spatial></tendon>', "sphere or a cylinder"),
    "pulley last": ('<tendon><spatial><site site="s0"/><site site="s1"/><pulley divisor="2"/>'
                    '</spatial></tendon>', "ends with pulley"),
    "bad divisor": ('<tendon><spatial><site site="s0"/><site site="s1"/><pulley divisor="-1"/>'
                    '<site site="s0"/><site site="s1"/></spatial></tendon>', "divisor"),
    "unknown site": ('<tendon><spatial><site site="s0"/><site site="nope"/></spatial></tendon>',
                     "unknown site 'nope'"),
    "repeated site": ('<tendon><spatial><site site="s0"/><site site="s0"/></spatial></tendon>',
                      "repeated"),
    "no slidersite": ('<actuator><general cranksite="s1" cranklength="0.2"/></actuator>',
                      "slidersite"),
    "refsite with joint": ('<actuator><general joint="j" refsite="s0"/></actuator>',
                           "refsite"),
    "negative tausmooth": ('<tendon><spatial name="t"><site site="s0"/><site site="s1"/>'
                           '</spatial></tendon><actuator><muscle tendon="t" tausmooth="-1" '
                           'lengthrange="0.5 1"/></actuator>', "tausmooth"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_a_clear_error(case, tmp_path):
  """MuJoCo rejects the model too; we raise MjcfError naming the problem."""
  tail, words = CASES[case]
  xml = BASE.replace("TAIL", tail)
  with pytest.raises(Exception):
    mujoco.MjModel.from_xml_string(xml)
  p = tmp_path / "model.xml"
  p.write_text(xml)
  with pytest.raises(MjcfError) as e:
    compile_model(str(p))
  assert words in str(e.value), str(e.value)
  assert str(e.value).startswith("model.xml:")
