"""MJCF as real third-party models write it, each case against MuJoCo 4.0.1: includes nested in
included files, attributes without a space between them, default classes whose own elements
come after their nested classes, actuator shortcuts sharing one default class, a moving body
without mass, NaN in the XML. Compiled fields equal MuJoCo's; where the case moves, forward
qacc and a teacher-forced rollout agree too."""
import itertools
import warnings

import mujoco
import numpy as np
import pytest

from numjoco.engine.mjcf import MjcfError, MjcfWarning, compile_model
from tests.models import assert_compiles_as_mujoco, assert_teacher_forced, models_of

_BOX_OBJ = "\n".join(
    [f"v {x} {y} {z}" for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)] +
    ["f 1 3 4 2", "f 5 6 8 7", "f 1 2 6 5", "f 3 7 8 4", "f 1 5 7 3", "f 2 4 8 6"]) + "\n"


def _files(root, files):
  for name, text in files.items():
    p = root / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
  return str(root / "main.xml")


def _load_both(path):
  return models_of(path, quiet=True)


# ------------------------------------------------------------------------------- includes

_NESTED = {
    "main.xml": """<mujoco>
  <compiler meshdir="meshes"/>
  <include file="parts/robot.xml"/>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <include file="parts/body.xml"/>
  </worldbody>
</mujoco>""",
    # an include inside an included file, written relative to the main file's folder
    "parts/robot.xml": """<mujoco>
  <include file="parts/assets/meshes.xml"/>
  <option timestep="0.004"/>
</mujoco>""",
    # two levels down, written relative to its own folder (MuJoCo 4 finds it there too)
    "parts/assets/meshes.xml": """<mujoco>
  <include file="materials.xml"/>
  <asset><mesh name="cube" file="cube.obj" scale=".1 .1 .1"/></asset>
</mujoco>""",
    "parts/assets/materials.xml": """<mujoco>
  <asset><material name="red" rgba="1 0 0 1"/></asset>
</mujoco>""",
    "parts/body.xml": """<mujoco>
  <body pos="0 0 .3" euler="10 20 30"><freejoint/>
    <geom type="mesh" mesh="cube" material="red"/>
  </body>
</mujoco>""",
    "meshes/cube.obj": _BOX_OBJ,
}


def test_nested_includes_with_meshes(tmp_path):
  """Includes two and three levels deep, meshes from meshdir: compiled as MuJoCo and the cube
  falls on the plane as it does there."""
  path = _files(tmp_path, _NESTED)
  assert_compiles_as_mujoco(path)
  m, mjm = _load_both(path)
  assert m.opt.timestep == 0.004 and m.nmesh == 1 and m.nmat == 1
  assert_teacher_forced(m, mjm, nstep=200)


def test_include_resolved_from_main_folder_first(tmp_path):
  """A name found both beside the main file and beside the including file: MuJoCo takes the
  main folder's."""
  files = dict(_NESTED)
  files["materials.xml"] = '<mujoco><asset><material name="red" rgba="0 0 1 1"/></asset></mujoco>'
  path = _files(tmp_path, files)
  ours, mjm = assert_compiles_as_mujoco(path)
  np.testing.assert_array_equal(mjm.mat_rgba[0], [0, 0, 1, 1])


def test_file_included_twice(tmp_path):
  path = _files(tmp_path, {
      "main.xml": '<mujoco>\n<include file="a.xml"/>\n<include file="a.xml"/>\n</mujoco>',
      "a.xml": '<mujoco><option timestep="0.004"/></mujoco>'})
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_path(path)
  with pytest.raises(MjcfError) as e:
    compile_model(path)
  assert str(e.value) == "main.xml:3: <include>: file 'a.xml' already included"


def test_missing_nested_include_names_file_and_line(tmp_path):
  path = _files(tmp_path, {
      "main.xml": '<mujoco>\n<include file="sub/a.xml"/>\n</mujoco>',
      "sub/a.xml": '<mujoco>\n\n<include file="nowhere.xml"/>\n</mujoco>'})
  with pytest.raises(MjcfError) as e:
    compile_model(path)
  assert str(e.value).startswith("a.xml:3: <include>: include file 'nowhere.xml' not found")


# --------------------------------------------------------------------- lenient attributes

_NO_SPACE = """<mujoco>
  <worldbody>
    <geom name="floor"type="plane" size="1 1 .1"/>
    <body pos='0 0 .5'name="ball"><freejoint/><geom type="sphere"size=".1"/></body>
    <body pos="0 .3 .5"><freejoint/><geom type="box" size=".1 .1 .1" rgba='1 0 0 1'/></body>
  </worldbody>
</mujoco>
"""


def test_attributes_without_space(tmp_path):
  """Read as MuJoCo reads them, with a warning naming file and line of each such element."""
  path = _files(tmp_path, {"main.xml": _NO_SPACE})
  with pytest.warns(MjcfWarning) as rec:
    ours = compile_model(path)
  lines = sorted(str(w.message).split(":")[1] for w in rec
                 if "without a space" in str(w.message))
  assert lines == ["3", "4"], [str(w.message) for w in rec]
  assert all(str(w.message).startswith("main.xml:") for w in rec)
  assert_compiles_as_mujoco(path)
  assert [n for k, n in ours[2].items() if int(k) == 1][0] == ["world", "ball", ""]   # bodies
  m, mjm = _load_both(path)
  assert_teacher_forced(m, mjm, nstep=200)


def test_malformed_xml_still_an_error(tmp_path):
  """Only the missing space is forgiven: an attribute without a value stays an error."""
  path = _files(tmp_path, {"main.xml": '<mujoco>\n<worldbody>\n<geom name="a"type size=".1"/>'
                           '\n</worldbody>\n</mujoco>'})
  with pytest.raises(MjcfError) as e:
    compile_model(path)
  assert str(e.value).startswith("main.xml:3: malformed XML")


def test_text_and_comments_left_alone(tmp_path):
  """Quotes outside tags (comments, text) are not touched by the fallback."""
  path = _files(tmp_path, {"main.xml": """<mujoco>
  <!-- a "comment"with quotes -->
  <custom><text name="t"data="say 'hi'there"/></custom>
  <worldbody><geom name="g"size=".1"/></worldbody>
</mujoco>"""})
  with pytest.warns(MjcfWarning, match="without a space"):
    compile_model(path)
  assert_compiles_as_mujoco(path)


def test_double_hyphen_in_comment(tmp_path):
  """'--' inside a comment: MuJoCo reads the model; so do we, warning with the line, and the
  lines after the comment keep their numbers in errors."""
  text = ('<mujoco>\n<!-- legacy -- settings\n  spanning lines -->\n<worldbody>\n'
          '<body><freejoint/><geom size=".1" BAD/></body>\n</worldbody>\n</mujoco>')
  good = _files(tmp_path, {"main.xml": text.replace(" BAD", "")})
  with pytest.warns(MjcfWarning, match=r"main\.xml:2: '--' inside a comment"):
    compile_model(good)
  assert_compiles_as_mujoco(good)
  bad = _files(tmp_path / "bad", {"main.xml": text.replace("BAD", 'rnage="1"')})
  with pytest.raises(MjcfError) as e:
    compile_model(bad)
  assert str(e.value).startswith("main.xml:5: <geom>: unknown attribute 'rnage'")


# ------------------------------------------------------------------- defaults in any order

_CLASS_AFTER_CHILDREN = """<mujoco>
  <default>
    <default class="robot">
      <default class="visual">
        <geom group="2" rgba=".5 .5 .5 1"/>
      </default>
      <default class="collision">
        <geom group="3" contype="1" conaffinity="1"/>
        <default class="foot"><geom friction="2 .01 .001"/></default>
      </default>
      <geom contype="0" conaffinity="0" density="500"/>
      <joint damping=".5" armature=".01"/>
    </default>
  </default>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body childclass="robot" pos="0 0 .4">
      <freejoint/>
      <geom type="box" size=".2 .1 .05"/>
      <geom class="visual" type="sphere" size=".12"/>
      <body pos=".2 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom class="visual" type="capsule" fromto="0 0 0 0 0 -.25" size=".03"/>
        <geom class="foot" type="sphere" pos="0 0 -.25" size=".04"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_class_attributes_after_nested_classes(tmp_path):
  """The robot class turns collisions off after its nested classes are written: they inherit
  it anyway (MuJoCo reads a class's own elements before its nested classes)."""
  path = _files(tmp_path, {"main.xml": _CLASS_AFTER_CHILDREN})
  ours, mjm = assert_compiles_as_mujoco(path)
  np.testing.assert_array_equal(mjm.geom_contype, [1, 0, 0, 0, 1])   # plane, box, 2 visual, foot
  m, mjm = _load_both(path)
  assert_teacher_forced(m, mjm, nstep=200)


def test_default_element_twice_in_one_class(tmp_path):
  path = _files(tmp_path, {"main.xml": '<mujoco>\n<default>\n<geom size=".1"/>\n'
                           '<geom size=".2"/>\n</default>\n</mujoco>'})
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_path(path)
  with pytest.raises(MjcfError) as e:
    compile_model(path)
  assert str(e.value).startswith("main.xml:4: <geom>:")


# ------------------------------------------------------- actuator shortcuts in one class

# each shortcut with the attributes a model would set on it in a default class
_SHORTCUTS = {
    "motor": 'gear="2" ctrlrange="-1 1"',
    "position": 'kp="50" kv="3"',
    "velocity": 'kv="7"',
    "intvelocity": 'kp="20" actrange="-1 1"',
    "damper": 'kv="4" ctrlrange="0 1"',
    "cylinder": 'timeconst="0.2" area="3" bias="1 2 3"',
    "muscle": 'timeconst="0.02 0.05" range="0.6 1.3" force="100" scale="150" lmin="0.4" '
              'lmax="1.7" vmax="1.2" fpmax="1.4" fvmax="1.3"',
    "adhesion": 'gain="3" ctrlrange="0 1"',
    "general": 'gaintype="fixed" biastype="affine" gainprm="5 0 0" biasprm="1 -5 -1" '
               'dyntype="filter" dynprm="0.3"',
    "pid": 'kp="30" ki="2" kv="1"',
    "dcmotor": 'resistance="2" motorconst="0.5"',
}
_ACT_FIELDS = ("actuator_gainprm", "actuator_biasprm", "actuator_dynprm", "actuator_dyntype",
               "actuator_gaintype", "actuator_biastype", "actuator_ctrlrange",
               "actuator_ctrllimited", "actuator_actnum", "actuator_actrange",
               "actuator_actlimited", "actuator_gear", "actuator_forcerange",
               "actuator_forcelimited", "actuator_ctrlspec")


def _act_model(defaults, instance, own=""):
  target = 'body="b"' if instance == "adhesion" else 'joint="j"'
  return f"""<mujoco><default>{defaults}</default>
  <worldbody><body name="b"><joint name="j" type="hinge" range="-1 1" limited="true"/>
  <geom size=".1" mass="1"/></body></worldbody>
  <actuator><{instance} class="c" {target} {own}/></actuator></mujoco>"""


def _assert_actuators_as_mujoco(xml):
  try:
    mjm = mujoco.MjModel.from_xml_string(xml)
  except ValueError:
    mjm = None
  if mjm is None:
    with pytest.raises(MjcfError):
      compile_model(xml)
    return False
  arrays = compile_model(xml)[1]
  for f in _ACT_FIELDS:
    np.testing.assert_allclose(arrays[f].astype(float).ravel(),
                               getattr(mjm, f).astype(float).ravel(), rtol=1e-12, atol=1e-12,
                               err_msg=f)
  return True


@pytest.mark.parametrize("default", list(_SHORTCUTS))
def test_shortcut_in_class_of_another(default):
  """Every shortcut (bare and with its own attributes) in a class whose default was written
  with every other one: MuJoCo 4 inherits the parameters (kp, kv, area...) only from a
  default of the same shortcut or a general one of its gain type."""
  loaded = 0
  for inst in _SHORTCUTS:
    for own in ("", _SHORTCUTS[inst]):
      defaults = f'<default class="c"><{default} {_SHORTCUTS[default]}/></default>'
      loaded += _assert_actuators_as_mujoco(_act_model(defaults, inst, own))
  assert loaded >= len(_SHORTCUTS) - 1   # the rest both refuse (e.g. actrange on a motor)


@pytest.mark.parametrize("kind", ["same class", "nested"])
def test_two_shortcuts_then_a_third(kind):
  """Two actuator defaults written in one class (the later resets the parameters) or in a
  parent and a child class (the child's shortcut looks up the parent's), then every shortcut
  as the actuator: 11^3 cases."""
  loaded = 0
  for a, b, c in itertools.product(_SHORTCUTS, repeat=3):
    if kind == "same class" and a == b:
      continue
    if kind == "same class":
      defaults = f'<default class="c"><{a} {_SHORTCUTS[a]}/><{b} {_SHORTCUTS[b]}/></default>'
    else:
      defaults = (f'<default class="p"><{a} {_SHORTCUTS[a]}/><default class="c">'
                  f'<{b} {_SHORTCUTS[b]}/></default></default>')
    loaded += _assert_actuators_as_mujoco(_act_model(defaults, c))
  assert loaded > 800   # the rest both refuse


_MUSCLE_AND_SERVO = """<mujoco>
  <default>
    <default class="arm">
      <muscle ctrllimited="true" ctrlrange="0 1" force="200"/>
      <position kp="40" kv="2" ctrlrange="-1 1"/>
    </default>
    <default class="muscles">
      <muscle ctrllimited="true" ctrlrange="0 1" force="200"/>
    </default>
  </default>
  <worldbody>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0" range="-90 90" limited="true"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body pos=".3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" range="0 120" limited="true"/>
        <geom type="capsule" fromto="0 0 0 .25 0 0" size=".025"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position class="arm" joint="shoulder"/>
    <muscle class="muscles" joint="elbow"/>
    <position class="muscles" joint="elbow" kp="10"/>
  </actuator>
</mujoco>
"""


def test_position_in_muscle_class_moves_as_mujoco(tmp_path):
  """The reported case: position servos in classes whose muscle default sets biasprm are
  plain servos ([0, -kp, -kv] bias), and the arm moves as in MuJoCo."""
  path = _files(tmp_path, {"main.xml": _MUSCLE_AND_SERVO})
  assert_compiles_as_mujoco(path)
  m, mjm = _load_both(path)
  np.testing.assert_array_equal(mjm.actuator_biasprm[2, :3], [0, -10, 0])
  assert_teacher_forced(m, mjm, nstep=200)


# ------------------------------------------------------------------- mass and NaN checks

def test_massless_moving_body(tmp_path):
  path = _files(tmp_path, {"main.xml": '<mujoco>\n<worldbody>\n<body name="arm">\n'
                           '<joint type="hinge"/>\n</body>\n</worldbody>\n</mujoco>'})
  with pytest.raises(ValueError, match="mass and inertia of moving bodies"):
    mujoco.MjModel.from_xml_path(path)
  with pytest.raises(MjcfError) as e:
    compile_model(path)
  assert str(e.value) == ('main.xml:3: <body name="arm">: mass and inertia of moving bodies '
                          'must be larger than mjMINVAL')


def test_massless_body_with_massive_static_child(tmp_path):
  """A moving body without mass of its own is valid when a child welded to it has mass."""
  path = _files(tmp_path, {"main.xml": """<mujoco><worldbody>
  <body name="arm"><joint type="hinge"/>
    <body name="hand" pos=".1 0 0"><geom size=".05"/></body>
  </body></worldbody></mujoco>"""})
  assert_compiles_as_mujoco(path)


def test_nan_in_xml_warns(tmp_path):
  path = _files(tmp_path, {"main.xml": '<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n'
                           '<geom size=".1" rgba="1 0 0 NaN"/>\n</body>\n</worldbody>\n'
                           '</mujoco>'})
  mujoco.MjModel.from_xml_path(path)   # MuJoCo loads it, warning "XML contains a 'NaN'"
  with pytest.warns(MjcfWarning, match=r"main\.xml:5: <geom>: attribute 'rgba': XML contains "
                    r"a 'NaN'"):
    compile_model(path)


def test_name_nan_is_no_warning(tmp_path):
  path = _files(tmp_path, {"main.xml": '<mujoco><worldbody><body name="nan"><freejoint/>'
                           '<geom size=".1"/></body></worldbody></mujoco>'})
  with warnings.catch_warnings():
    warnings.simplefilter("error", MjcfWarning)
    compile_model(path)
