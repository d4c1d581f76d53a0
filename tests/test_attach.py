"""MJCF <attach> and <asset><model> vs MuJoCo 4's compiler: every compiled field of small models
covering each rule (tree placement, names, defaults, assets, referencing elements, keyframes,
angles, self-attach, nesting), MuJoCo's own attach models, clear errors, and one forward pass."""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from numjoco.engine.mjcf import MjcfError, compile_model
from tests.test_mjcf_compile import assert_same

ASSETS = os.path.join(os.path.dirname(__file__), "assets", "attach")

CHILD = b"""<mujoco model="kid">
  <default>
    <geom rgba="1 0 0 1" size=".1"/>
    <motor ctrlrange="-2 2"/>
    <default class="big"><geom size=".3" material="m"/></default>
    <default class="stiff"><joint stiffness="5" range="-30 60"/></default>
  </default>
  <asset>
    <texture name="tex" type="2d" builtin="checker" width="8" height="8"/>
    <material name="m" texture="tex" rgba="0 1 0 1"/>
    <material name="unused" rgba="0 0 1 1"/>
  </asset>
  <worldbody>
    <geom name="wg" size=".05" pos="0 0 -1"/>
    <site name="ws" pos="0 0 -1"/>
    <frame name="fr" pos="0 .5 0" euler="0 0 30">
      <body name="b" pos="1 0 0" euler="0 0 90" childclass="stiff">
        <joint name="j"/>
        <geom name="g" class="big"/>
        <site name="s" pos=".1 0 0"/>
        <body name="c" pos="0 0 -.5"><joint name="j2" type="slide" axis="0 0 1"/>
          <geom name="g2"/><site name="s2"/>
          <frame name="inner" pos="0 0 .2" euler="0 90 0"><geom name="gi" size=".05"/></frame>
        </body>
      </body>
    </frame>
    <body name="other" pos="0 2 0"><freejoint name="f"/><geom name="go" size=".2"/>
      <body name="oc" pos="0 0 -.3"><joint name="oj"/><geom size=".1"/></body></body>
  </worldbody>
  <contact>
    <pair name="p" geom1="g" geom2="g2"/>
    <pair name="po" geom1="g" geom2="go"/>
    <exclude name="x" body1="b" body2="c"/>
  </contact>
  <tendon>
    <fixed name="t"><joint joint="j" coef="1"/><joint joint="j2" coef="-1"/></fixed>
    <spatial name="sp"><site site="s"/><site site="s2"/></spatial>
    <fixed name="to"><joint joint="j" coef="1"/><joint joint="oj" coef="1"/></fixed>
  </tendon>
  <equality>
    <joint name="e" joint1="j" joint2="j2"/>
    <weld name="w" body1="c" body2="other" relpose="0 0 1 1 0 0 0"/>
  </equality>
  <actuator>
    <motor name="a" joint="j"/>
    <position name="a2" joint="j2" kp="10" timeconst=".1"/>
    <motor name="at" tendon="t"/>
    <motor name="ao" joint="f"/>
    <motor name="ato" tendon="to"/>
  </actuator>
  <sensor>
    <jointpos joint="j"/>
    <clock name="clk"/>
    <framepos name="fo" objtype="body" objname="other"/>
    <framepos name="fc" objtype="body" objname="c" reftype="site" refname="s"/>
    <tendonpos name="tp" tendon="t"/>
    <actuatorfrc name="af" actuator="a2"/>
    <subtreecom name="sc" body="b"/>
  </sensor>
  <keyframe>
    <key name="k" time="2" qpos=".3 .2 5 6 7 1 0 0 0 .1" qvel="1 2 3 4 5 6 7 8 9" act=".5"
         ctrl="1 2 3 4 5"/>
    <key name="k2" qvel="0 0 1 1 1 1 1 1 1"/>
  </keyframe>
</mujoco>"""


def _same(xml, assets=None):
  """Compile `xml` in both engines and compare every field."""
  assets = {"child.xml": CHILD, **(assets or {})}
  ours = compile_model(xml, assets)
  theirs = mujoco.MjModel.from_xml_string(xml, assets)
  assert_same(ours, theirs)
  return ours, theirs


def _names(mjm, obj, n):
  return [mujoco.mj_id2name(mjm, obj, i) for i in range(n)]


PLACEMENT = """<mujoco>
  <asset><model name="kid" file="child.xml"/></asset>
  <worldbody>
    <body name="p" pos="0 0 1"><joint name="pj"/><geom name="pg" size=".1"/>
      <attach model="kid" body="b" prefix="x-"/>
      <geom name="after" size=".1" pos=".2 0 0"/>
      <site name="after_s"/>
    </body>
    <frame pos="0 1 0" euler="10 20 30"><attach model="kid" body="b" prefix="y-"/></frame>
    <attach model="kid" frame="fr" prefix="z-"/>
    <frame name="top" pos="0 0 4"><attach model="kid" frame="fr" prefix="u-"/></frame>
    <body name="q" pos="3 0 0"><attach model="kid" frame="fr" prefix="v-"/><geom name="qg" size=".1"/></body>
    <frame pos="-3 0 0"><attach model="kid" prefix="w-"/></frame>
    <body name="r" pos="0 0 -2"><geom name="rg" size=".1"/>
      <attach model="kid" frame="inner" prefix="i-"/></body>
  </worldbody>
</mujoco>"""


def test_body_frame_and_world_attach_in_body_frame_and_world():
  """A body, a frame and the whole world body of the child, attached in a body, a frame and the
  world, and a frame from inside a child body: tree order, poses (enclosing child frames and
  bodies dropped), prefixed names."""
  _, mjm = _same(PLACEMENT)
  bodies = _names(mjm, mujoco.mjtObj.mjOBJ_BODY, mjm.nbody)
  assert bodies[:4] == ["world", "p", "x-b", "x-c"]
  assert "w-other" in bodies and "u-b" in bodies


def test_the_same_model_attached_several_times_keeps_each_copy_apart():
  """Each attach copies the referencing elements that resolve in its own copy: the pair, tendon
  and actuators on the free joint only where 'other' came along (world attach)."""
  _, mjm = _same(PLACEMENT)
  acts = _names(mjm, mujoco.mjtObj.mjOBJ_ACTUATOR, mjm.nu)
  assert acts[:4] == ["x-a", "x-a2", "x-at", "y-a"]
  assert "w-ao" in acts and "x-ao" not in acts and "w-ato" in acts
  sensors = _names(mjm, mujoco.mjtObj.mjOBJ_SENSOR, mjm.nsensor)
  assert "x-clk" in sensors and "x-fo" not in sensors and "w-fo" in sensors
  assert _names(mjm, mujoco.mjtObj.mjOBJ_PAIR, mjm.npair).count("w-po") == 1


DEFAULTS = """<mujoco>
  <default>
    <geom rgba="0 0 1 1" solimp=".8 .9 .01" size=".4"/>
    <joint damping="3" range="-1 1"/>
    <motor gear="7"/>
    <default class="big"><geom size=".7"/></default>
    <default class="mine"><geom friction=".3"/></default>
  </default>
  <asset><model name="kid" file="child.xml"/>
    <material name="m" rgba=".5 .5 .5 1"/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" material="m"/>
    <body name="p" childclass="mine"><joint name="pj"/><geom name="pg" class="big"/>
      <attach model="kid" body="b" prefix="x-"/>
      <geom name="pg2"/>
    </body>
    <attach model="kid" prefix="y-"/>
  </worldbody>
  <tendon><fixed name="pt"><joint joint="pj" coef="1"/></fixed></tendon>
  <actuator><motor name="pa" joint="pj"/></actuator>
</mujoco>"""


def test_defaults_stay_with_their_model():
  """The child's classes (same names as the parent's) apply to its copies, the parent's main
  defaults and childclass do not, and the parent's own elements keep theirs."""
  _same(DEFAULTS)


ANGLES = b"""<mujoco model="rad">
  <compiler angle="radian" eulerseq="zyx"/>
  <default><joint range="-1 .5"/><default class="s"><joint type="slide" range="-2 2"/></default>
  </default>
  <worldbody>
    <body name="b" euler=".1 .2 .3"><joint name="h" ref=".2" springref=".3"/>
      <geom size=".1" axisangle="0 0 1 .5"/>
      <body name="c"><joint name="sl" class="s" ref=".4"/><geom size=".1"/>
        <body name="d"><joint name="ba" type="ball" range="0 1"/><geom size=".1"/></body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_child_angles_and_euler_sequence_are_the_childs():
  """A child in radians with another euler sequence, attached to a model in degrees: its
  orientations, hinge/ball ranges and refs read in its own units (slide ranges untouched)."""
  xml = """<mujoco><asset><model name="r" file="rad.xml"/></asset><worldbody>
    <frame euler="0 0 45"><attach model="r" body="b" prefix="r-"/></frame>
    <body name="p"><joint range="-20 30"/><geom size=".1"/></body></worldbody></mujoco>"""
  _same(xml, {"rad.xml": ANGLES})


def test_keyframes_follow_the_copied_elements():
  """Every child key is added (prefixed) per attach with the child's values for the joints,
  actuators and mocap bodies it copied; a copy also takes the keys of earlier attaches of the
  same model that did not copy it (MuJoCo's per-element key state); qpos0 elsewhere."""
  kid = b"""<mujoco model="kid"><worldbody>
      <body name="b" pos="1 0 0"><freejoint name="f"/><geom size=".1"/>
        <body name="c"><joint name="j2" ref="10"/><geom size=".1"/></body></body>
      <body name="m" mocap="true" pos="0 0 3"><geom size=".1" contype="0" conaffinity="0"/></body>
      <body name="o"><freejoint name="fo"/><geom size=".2"/></body></worldbody>
    <actuator><motor name="a2" joint="j2"/><general name="ad" joint="j2" dyntype="integrator"/>
    </actuator>
    <keyframe><key name="k" time="3" qpos="5 6 7 1 0 0 0 .3 0 0 0 1 0 0 0"
      qvel="1 2 3 4 5 6 7 8 9 10 11 12 13" act=".9" ctrl="1 2" mpos="4 4 4" mquat="0 1 0 0"/>
    <key name="k2"/></keyframe></mujoco>"""
  xml = """<mujoco><asset><model name="kid" file="kid.xml"/></asset><worldbody>
    <body name="p" pos="0 0 2"><freejoint/><geom size=".1"/></body>
    <body name="q"><joint name="qj" ref="30"/><geom size=".1"/></body>
    <body name="mp" mocap="true" pos="1 2 3"/>
    <attach model="kid" body="m" prefix="z-"/>
    <attach model="kid" body="o" prefix="o-"/>
    <frame pos="0 1 0" euler="0 0 90"><attach model="kid" body="b" prefix="y-"/></frame>
    <attach model="kid" body="b" prefix="w-"/>
  </worldbody>
  <actuator><general name="pa" joint="qj" dyntype="integrator"/></actuator>
  <keyframe><key name="pk" qpos="0 0 2 1 0 0 0 .7"/></keyframe></mujoco>"""
  _, mjm = _same(xml, {"kid.xml": kid})
  assert _names(mjm, mujoco.mjtObj.mjOBJ_KEY, mjm.nkey)[:4] == ["pk", "z-k", "z-k2", "o-k"]


def test_attach_inside_replicate_keys_set_the_first_replica():
  """<attach> in <replicate> (MuJoCo's 22_humanoids layout): the copies are replicated with
  their referencing elements; the attached keys are added once and set the first replica.
  (No clock: MuJoCo's replicate also copies, per replica, sensors that refer to nothing, which
  engine/mjcf/_replicate.py does not reproduce.)"""
  xml = """<mujoco><asset><model name="kid" file="kid.xml"/></asset><worldbody>
    <replicate count="3" euler="0 0 40" sep="-">
      <frame pos="0 -2 0"><attach model="kid" prefix="_"/></frame>
    </replicate></worldbody></mujoco>"""
  _, mjm = _same(xml, {"kid.xml": CHILD.replace(b'<clock name="clk"/>', b"")})
  assert mjm.nkey == 2


def test_self_attach_copies_within_the_model():
  """<attach> without model (the carousel's conveyors): a copy of this model's own frame, its
  classes and asset references unchanged, referencing elements copied with the prefix."""
  xml = """<mujoco>
    <default><default class="c"><geom rgba="0 1 0 1"/></default></default>
    <asset><material name="belt" rgba="1 0 0 1"/></asset>
    <worldbody>
      <frame pos="0 1 0" euler="0 0 90"><frame name="conveyor" pos="1 0 0">
        <geom name="g" size=".1" material="belt" class="c"/>
        <body name="b"><joint name="j"/><geom size=".1"/></body>
      </frame></frame>
      <frame pos="0 0 1"><attach frame="conveyor" prefix="top_"/></frame>
      <body name="p"><attach body="b" prefix="again_"/></body>
    </worldbody>
    <actuator><motor name="m" joint="j"/></actuator>
    <sensor><clock name="clk"/></sensor>
    <keyframe><key name="k" qpos=".5" ctrl="1"/></keyframe>
  </mujoco>"""
  _same(xml)


def test_nested_models_attach_through_each_other():
  """A child that itself attaches a grandchild: prefixes accumulate; the keys the child got
  from its attach keep their names and values, after the child's own keys."""
  mid = b"""<mujoco model="mid"><asset><model name="kid" file="child.xml"/></asset>
    <worldbody><body name="base"><geom size=".1"/>
      <attach model="kid" body="b" prefix="in-"/></body></worldbody>
    <actuator><motor name="mb" joint="in-j"/></actuator>
    <keyframe><key name="mk" qpos="1 2" ctrl="0 0 0 5"/></keyframe></mujoco>"""
  xml = """<mujoco><asset><model name="mid" file="mid.xml"/></asset><worldbody>
    <body name="p"><joint/><geom size="1"/></body>
    <attach model="mid" body="base" prefix="out-"/></worldbody></mujoco>"""
  _, mjm = _same(xml, {"mid.xml": mid})
  assert "out-in-j" in _names(mjm, mujoco.mjtObj.mjOBJ_JOINT, mjm.njnt)
  assert _names(mjm, mujoco.mjtObj.mjOBJ_KEY, mjm.nkey) == ["out-mk", "in-k", "in-k2"]


def test_assets_in_other_directories(tmp_path):
  """Mesh files of a child in another directory, with its own meshdir, are found; a mesh
  named after its file gets the prefix too."""
  (tmp_path / "sub" / "meshes").mkdir(parents=True)
  (tmp_path / "sub" / "meshes" / "tet.obj").write_text(
      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
  (tmp_path / "sub" / "kid.xml").write_text(
      """<mujoco><compiler meshdir="meshes"/><asset><mesh file="tet.obj"/></asset>
      <worldbody><body name="b"><freejoint/><geom type="mesh" mesh="tet"/></body></worldbody>
      </mujoco>""")
  (tmp_path / "scene.xml").write_text(
      """<mujoco><asset><model name="kid" file="sub/kid.xml"/></asset><worldbody>
      <attach model="kid" body="b" prefix="k-"/></worldbody></mujoco>""")
  path = str(tmp_path / "scene.xml")
  ours, mjm = compile_model(path), mujoco.MjModel.from_xml_path(path)
  assert_same(ours, mjm)


@pytest.mark.parametrize("name", ["parent.xml", "parent_model.xml", "contact_subtree.xml",
                                  "ten_armature_1_compare.xml", "22_humanoids.xml",
                                  "humanoid100.xml", "parent_merge.xml", "parent_warn.xml"])
def test_mujoco_attach_models(name):
  """MuJoCo's own models built with <attach> (tests/assets/attach/README.md): every field and
  name, e.g. 22_humanoids' replicated copies '_torso-00'... and its keys '_squat'... named by
  the attach prefix only."""
  path = os.path.join(ASSETS, name)
  assert_same(compile_model(path), mujoco.MjModel.from_xml_path(path))


# ------------------------------------------------------------------ <compiler conflict=>

_GLOBALS = [   # (parent's globals, child's globals): each resolved in every conflict mode
    ('<option timestep="0.005" iterations="50"/>', '<option timestep="0.002" iterations="100"/>'),
    ('', '<option timestep="0.005" tolerance="1e-5" iterations="20"/>'),
    ('<option gravity="0 0 -10"/>', '<option gravity="0 0 0"/>'),
    ('<option gravity="0 0 -9.81"/>', '<option gravity="0 0 0"/>'),
    ('', '<option gravity="0 0 0" impratio="2" o_margin="0.1" cone="elliptic"/>'),
    ('<option cone="pyramidal"/>', '<option cone="elliptic"/>'),
    ('<option><flag damper="disable"/></option>', '<option><flag constraint="disable"/></option>'),
    ('<option><flag damper="disable"/></option>', '<option><flag damper="enable"/></option>'),
    ('<option><flag energy="disable"/></option>', '<option><flag energy="enable"/></option>'),
    ('<option><flag energy="enable"/></option>', '<option><flag energy="disable"/></option>'),
    ('', '<option><flag energy="enable" gravity="disable"/></option>'),
    ('<option noslip_iterations="3"/>', '<option noslip_iterations="5"/>'),
    ('<option actuatorgroupdisable="3"/>', '<option actuatorgroupdisable="1 2"/>'),
    ('<visual><map znear="0.01" zfar="10" fogstart="2"/><headlight ambient=".2 .2 .2"/></visual>',
     '<visual><map znear="0.001" zfar="100" fogstart="5"/><headlight ambient=".5 .5 .5"/>'
     '<global realtime="0.5"/></visual>'),
    ('', '<visual><map znear="0.001" zfar="100"/></visual>'),
    ('<size nkey="2" njmax="100" nconmax="10"/>',
     '<size nkey="5" nuser_body="3" njmax="200" nconmax="5" nuserdata="3"/>'),
    ('<option timestep="0.002"/>', '<option timestep="0.002"/><statistic meansize="3"/>'),
]


@pytest.mark.parametrize("mode", ["warning", "merge", "error"])
@pytest.mark.parametrize("case", range(len(_GLOBALS)))
def test_conflicting_globals_resolve_as_mujoco(case, mode):
  """MuJoCo 4.0's attribute merging (programming/modeledit.rst "Attribute Merging"): the
  compiled options, flags, sizes and visual fields equal 4.0's, and where 4.0 refuses the
  attach we do too."""
  pglobals, cglobals = _GLOBALS[case]
  child = (f'<mujoco model="c">{cglobals}<worldbody><body name="cb"><geom size="1"/></body>'
           '</worldbody></mujoco>').encode()
  xml = (f'<mujoco model="p"><compiler conflict="{mode}"/>{pglobals}<asset><model name="child" '
         'file="kid.xml"/></asset><worldbody><body name="pb"><geom size="2"/>'
         '<attach model="child" body="cb" prefix="c/"/></body></worldbody></mujoco>')
  try:
    theirs = mujoco.MjModel.from_xml_string(xml, {"kid.xml": child})
  except ValueError as e:
    assert "Attach conflict" in str(e)
    with pytest.raises(MjcfError, match="attach conflict"):
      compile_model(xml, {"kid.xml": child})
    return
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ours = compile_model(xml, {"kid.xml": child})
  assert_same(ours, theirs)


def test_conflict_keyword_is_checked():
  xml = ('<mujoco><compiler conflict="maybe"/><asset><model name="child" file="kid.xml"/>'
         '</asset><worldbody><attach model="child" body="cb" prefix="c/"/></worldbody></mujoco>')
  child = b'<mujoco><worldbody><body name="cb"><geom size="1"/></body></worldbody></mujoco>'
  with pytest.raises(MjcfError, match="conflict"):
    compile_model(xml, {"kid.xml": child})


# ------------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("attach,message", [
    ('<attach model="nope" body="b" prefix="x"/>', "could not find model 'nope'"),
    ('<attach model="kid" body="nope" prefix="x"/>', "could not find body 'nope' in model asset"),
    ('<attach model="kid" frame="nope" prefix="x"/>', "could not find frame 'nope'"),
    ('<attach model="kid" body="b"/>', "missing attribute 'prefix'"),
    ('<attach model="kid" body="b" prefix="x" pos="1 0 0"/>', "unknown attribute 'pos'"),
    ('<attach body="nope" prefix="x"/>', "could not find body 'nope' in the current model"),
    ('<attach prefix="x"/>', "either 'body' or 'frame' attribute must be specified"),
    ('<body name="x-b"/><attach model="kid" body="b" prefix="x-"/>',
     "cannot attach: element b already exists with prefix x-"),
])
def test_errors_name_the_attach(attach, message):
  """Bad attaches fail in both engines; ours names the file, line and <attach>."""
  xml = f"""<mujoco><asset><model name="kid" file="child.xml"/></asset>
  <worldbody>
    {attach}
  </worldbody></mujoco>"""
  with pytest.raises(MjcfError, match=r"<string>:3: <attach>: .*" + message.split("'")[0]) as e:
    compile_model(xml, {"child.xml": CHILD})
  assert message in str(e.value)
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml, {"child.xml": CHILD})


def test_error_for_name_clashes_of_copied_elements():
  """Two attaches with the same prefix clash on the copied names: an error naming one."""
  xml = """<mujoco><asset><model name="kid" file="child.xml"/></asset><worldbody>
    <body name="p"><attach model="kid" body="c" prefix="x-"/></body>
    <body name="q"><attach model="kid" frame="fr" prefix="x-"/></body></worldbody></mujoco>"""
  with pytest.raises(MjcfError, match="repeated name|x-c"):
    compile_model(xml, {"child.xml": CHILD})
  with pytest.raises(ValueError):
    mujoco.MjModel.from_xml_string(xml, {"child.xml": CHILD})


def test_error_for_missing_model_file_and_other_compiler_settings():
  """A missing model file, and a child read with other compiler settings (not supported)."""
  xml = """<mujoco><asset><model name="kid" file="gone.xml"/></asset><worldbody>
    <attach model="kid" body="b" prefix="x-"/></worldbody></mujoco>"""
  with pytest.raises(MjcfError, match=r"<string>:1: <model name=\"kid\">: model file 'gone.xml' "
                                      "not found"):
    compile_model(xml)
  kid = CHILD.replace(b'<mujoco model="kid">', b'<mujoco model="kid"><compiler autolimits='
                      b'"false"/>')
  xml = """<mujoco><asset><model name="kid" file="child.xml"/></asset><worldbody>
    <attach model="kid" body="b" prefix="x-"/></worldbody></mujoco>"""
  with pytest.raises(MjcfError, match=r"<attach>: the attached model's <compiler autolimits"):
    compile_model(xml, {"child.xml": kid})


def test_error_for_a_model_that_attaches_itself():
  """A model asset naming its own file: an error, not an endless recursion (MuJoCo's known
  issue: it loops)."""
  loop = b"""<mujoco model="loop"><asset><model name="me" file="loop.xml"/></asset><worldbody>
    <body name="b"><attach model="me" body="b" prefix="x"/></body></worldbody></mujoco>"""
  with pytest.raises(MjcfError, match="model nesting too deep"):
    compile_model(loop, {"loop.xml": loop})


# ------------------------------------------------------------------------------------- forward

def test_forward_as_mujoco_on_attached_humanoids():
  """qacc and sensordata (contact sensors on the attached subtrees) at a random state of two
  attached humanoids, as MuJoCo computes them."""
  import numjoco
  from tests.models import random_state
  path = os.path.join(ASSETS, "contact_subtree.xml")
  m = numjoco.load_model(path)
  mjm = mujoco.MjModel.from_xml_path(path)
  mjd, d = mujoco.MjData(mjm), numjoco.make_data(m)
  random_state(mjm, mjd, 0, scale=0.1)
  mjd.qpos[2] -= 0.55   # the upper humanoid lies on the lower one (10 contacts)
  mujoco.mj_forward(mjm, mjd)
  assert mjd.ncon > 0
  for f in ("qpos", "qvel", "ctrl", "act", "qfrc_applied", "xfrc_applied"):
    getattr(d, f)[:] = getattr(mjd, f)
  numjoco.forward(m, d)
  assert d.ncon == mjd.ncon
  scale = 1.0 + np.abs(mjd.qacc).max()
  np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=0, atol=1e-6 * scale)
  np.testing.assert_allclose(d.sensordata, mjd.sensordata, rtol=1e-6, atol=1e-6)
