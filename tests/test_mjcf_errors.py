"""Bad MJCF input: every error names the file, the line and the element."""
import mujoco
import pytest

from numjoco.engine.mjcf import MjcfError, compile_model
from numjoco.engine.preview import Compiled


def _write(tmp_path, text, name="model.xml"):
  p = tmp_path / name
  p.write_text(text)
  return str(p)


def _error(tmp_path, text):
  path = _write(tmp_path, text)
  with pytest.raises(MjcfError) as e:
    compile_model(path)
  return str(e.value)


def test_malformed_xml(tmp_path):
  msg = _error(tmp_path, "<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>")
  assert msg.startswith("model.xml:4:") and "malformed XML" in msg


def test_unknown_element(tmp_path):
  msg = _error(tmp_path, "<mujoco>\n<worldbody>\n<bdy name='x'/>\n</worldbody>\n</mujoco>")
  assert msg.startswith("model.xml:3:") and "<bdy name=\"x\">" in msg and "unknown element" in msg


def test_unknown_attribute(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<body>\n<joint name="knee" rnage="0 1"/>\n'
               '</body>\n</worldbody>\n</mujoco>')
  assert msg == "model.xml:4: <joint name=\"knee\">: unknown attribute 'rnage'"


def test_wrong_number_of_values(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<geom name="g" pos="1 2" size=".1"/>\n'
               '</worldbody>\n</mujoco>')
  assert msg.startswith("model.xml:3: <geom name=\"g\">") and "'pos'" in msg and "3" in msg


def test_non_numeric_value(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<body name="b">\n<geom size="a.1"/>\n'
               '</body>\n</worldbody>\n</mujoco>')
  assert msg.startswith("model.xml:4: <geom>") and "non-numeric" in msg


def test_missing_include(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n\n<include file="nothere.xml"/>\n</mujoco>')
  assert msg.startswith("model.xml:3: <include>") and "nothere.xml" in msg


def test_error_inside_included_file(tmp_path):
  _write(tmp_path, '<mujoco>\n<worldbody>\n<geom nme="x"/>\n</worldbody>\n</mujoco>', "inc.xml")
  msg = _error(tmp_path, '<mujoco>\n<include file="inc.xml"/>\n</mujoco>')
  assert msg.startswith("inc.xml:3: <geom>") and "'nme'" in msg


@pytest.mark.parametrize("target", ['joint="nope"', 'tendon="nope"'])
def test_actuator_unknown_target(tmp_path, target):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<body>\n<joint name="j"/>\n<geom size=".1"/>\n'
               f'</body>\n</worldbody>\n<actuator>\n<motor name="m" {target}/>\n</actuator>\n'
               '</mujoco>')
  assert msg.startswith("model.xml:9: <motor name=\"m\">") and "'nope'" in msg


@pytest.mark.parametrize("elem, start, fragment", [
    ('<geom class="missing" size=".1"/>', "<geom>", "unknown default class 'missing'"),
    ('<geom type="mesh" mesh="m"/>', "<geom>", "unknown mesh 'm'"),
    ('<joint type="hing"/>', "<joint>", "'hing'"),
], ids=["unknown_default_class", "unknown_mesh", "invalid_keyword"])
def test_bad_element_in_a_body(tmp_path, elem, start, fragment):
  """One bad element inside a body on line 4: the message names line 4, the element and the
  fault."""
  msg = _error(tmp_path, f'<mujoco>\n<worldbody>\n<body>\n{elem}\n</body>\n</worldbody>\n</mujoco>')
  assert msg.startswith(f"model.xml:4: {start}") and fragment in msg


def test_duplicate_names(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<body name="a"><geom size=".1"/></body>\n'
               '<body name="a"><geom size=".1"/></body>\n</worldbody>\n</mujoco>')
  assert msg.startswith("model.xml:4: <body name=\"a\">") and "duplicate body name" in msg
  assert "model.xml:3" in msg


def test_string_source_reports_line():
  with pytest.raises(MjcfError) as e:
    compile_model('<mujoco>\n<worldbody>\n<site sise=".1"/>\n</worldbody>\n</mujoco>')
  assert str(e.value).startswith("<string>:3: <site>")


def test_bad_keyframe_size(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<body>\n<joint/>\n<geom size=".1"/>\n</body>\n'
               '</worldbody>\n<keyframe>\n<key qpos="1 2"/>\n</keyframe>\n</mujoco>')
  assert msg.startswith("model.xml:9: <key>") and "qpos" in msg


@pytest.mark.parametrize("attr, what", [('surfacevel="1 0 0 0 0 0 1"', "surfacevel"),
                                        ('adhesion="2 1"', "adhesion")])
def test_bad_contact_adhesion_and_surfacevel(tmp_path, attr, what):
  """Too many numbers in adhesion / surfacevel: an error naming the attribute."""
  msg = _error(tmp_path, f'<mujoco>\n<worldbody>\n<geom name="belt" type="box" size="1 1 .1" '
               f'{attr}/>\n</worldbody>\n</mujoco>')
  assert msg.startswith('model.xml:3: <geom name="belt">') and what in msg


def test_bad_pair_adhesion(tmp_path):
  msg = _error(tmp_path, '<mujoco>\n<worldbody>\n<geom name="a" size=".1"/>\n'
               '<geom name="b" size=".1" pos="1 0 0"/>\n</worldbody>\n<contact>\n'
               '<pair geom1="a" geom2="b" adhesion="x"/>\n</contact>\n</mujoco>')
  assert msg.startswith("model.xml:7: <pair>") and "adhesion" in msg


def test_zero_surfacevel_and_adhesion_load(tmp_path):
  compile_model(_write(tmp_path, '<mujoco><worldbody><geom size=".1" surfacevel="0 0 0" '
                                 'adhesion="0"/></worldbody></mujoco>'))


def test_unsupported_extras():
  """Unsupported plugins and flex features not simulated yet (engine/flex.py: collisions here)
  are errors naming the element (skins load: tests/test_skin.py; more flex refusals:
  tests/test_flex.py)."""
  for xml, msg in [
      ('<mujoco><deformable>\n<flex name="f" dim="1" body="world world" vertex="0 0 0 1 0 0"/>'
       '</deformable></mujoco>', ':2: <flex name="f">: elem is empty'),   # 4.0's words
      ('<mujoco><extension>\n<plugin plugin="mujoco.elasticity.cable"/></extension></mujoco>',
       ":2: <plugin>: plugin 'mujoco.elasticity.cable' is not supported"),
      # in a body, with attributes: the element named, not its first attribute (was
      # "unknown attribute 'name'")
      ('<mujoco><worldbody><body>\n<flexcomp name="f" type="grid" count="3 3 1" dim="2"/>'
       '</body></worldbody></mujoco>',
       ':2: <flexcomp name="f">: Parent body must have name'),   # 4.0's words
      ('<mujoco><extension><plugin plugin="mujoco.sdf.torus"><instance name="t"/></plugin>'
       '</extension><asset><mesh name="t"><plugin instance="t"/></mesh></asset><worldbody>'
       '<geom type="sdf" mesh="t"><plugin instance="t"/></geom>\n'
       '<flexcomp name="g" type="grid" count="3 3 1" dim="2"/></worldbody></mujoco>',
       ':2: <flexcomp name="g">: collisions of a flex with SDF geoms are not simulated yet'),
  ]:
    with pytest.raises(MjcfError) as e:
      Compiled(xml)   # the compiler refuses it (numjoco.load_model compiles the same way)
    assert msg in str(e.value), str(e.value)


def test_actuator_delay_without_history_is_an_error(tmp_path):
  """A control delay needs a history buffer (nsample > 0), as MuJoCo 4.0 says."""
  import mujoco
  xml = ('<mujoco>\n<worldbody>\n<body>\n<joint name="j"/>\n<geom size=".1"/>\n'
         '</body>\n</worldbody>\n<actuator>\n<motor name="m" joint="j" delay="0.01"/>\n'
         '</actuator>\n</mujoco>')
  with pytest.raises(ValueError, match="without a history buffer"):
    mujoco.MjModel.from_xml_string(xml)
  msg = _error(tmp_path, xml)
  assert msg.startswith("model.xml:9: <motor name=\"m\">") and "history buffer" in msg


_BODY = '<mujoco>\n<worldbody>\n<body>\n<joint/>\n{}\n</body>\n</worldbody>\n</mujoco>'


@pytest.mark.parametrize("model, fragment", [
    # integer attributes are C ints (MuJoCo: "number is too large", "bad format")
    (_BODY.format('<geom size=".1" conaffinity="4294967296"/>'), "expected an integer"),
    (_BODY.format('<geom size=".1" priority="1e30"/>'), "expected an integer"),
    (_BODY.format('<geom size=".1" condim="inf"/>'), "'inf' is not a finite number"),
    # NaN and inf would poison the simulation
    (_BODY.format('<geom size=".1" pos="0 inf 0"/>'), "'inf' is not a finite number"),
    (_BODY.format('<geom size=".1" euler="0 -inf 0"/>'), "'-inf' is not a finite number"),
    # absurd sizes: refused before they are allocated
    ('<mujoco>\n<asset>\n<texture name="t" type="2d" builtin="checker" width="100000" '
     'height="100000"/>\n</asset>\n</mujoco>', "more than the 67108864"),
    ('<mujoco>\n<asset>\n<hfield name="h" nrow="2147483647" ncol="4" size="1 1 1 1"/>\n'
     '</asset>\n</mujoco>', "more than the 67108864"),
    ('<mujoco>\n<size nconmax="1000000000"/>\n<worldbody/>\n</mujoco>',
     "lower <size nconmax/njmax>"),
    ('<mujoco>\n<size nuser_body="300000000"/>\n<worldbody>\n<body/>\n</worldbody>\n'
     '</mujoco>', "nuser_body=300000000"),
    ('<mujoco>\n<worldbody>\n<replicate count="1000000">\n<geom size=".1"/>\n</replicate>\n'
     '</worldbody>\n</mujoco>', "replicate would make more than"),
    # MuJoCo's own checks
    ('<mujoco>\n<worldbody>\n<body name="a">\n<joint/>\n<geom size=".1"/>\n</body>\n'
     '</worldbody>\n<equality>\n<weld body1="a" body2="a"/>\n</equality>\n</mujoco>',
     "the same element is both ends"),
    ('<mujoco>\n<asset>\n<hfield name="h" nrow="2" ncol="2" size="1 1 1 1"/>\n'
     '<hfield name="h" nrow="2" ncol="2" size="1 1 1 1"/>\n</asset>\n</mujoco>',
     "repeated name 'h' in hfield"),
])
def test_what_would_break_the_engine_is_refused_with_its_element(tmp_path, model, fragment):
  """Values that escaped as OverflowError, MemoryError or math errors, or would have made the
  kernels read out of range, found by tests/fuzz: a load error naming the element's line."""
  msg = _error(tmp_path, model)
  assert fragment in msg and ": <" in msg.split(fragment)[0], msg


def test_nesting_to_mujocos_depth(tmp_path):
  """Elements nest up to 499 levels (MuJoCo's tinyxml2 limit; libxml2 alone stops at 256),
  and the compiler's recursion follows; one level more is refused with its line."""
  def chain(n):    # the geom in the innermost body is at level n + 3
    return ("<mujoco><worldbody>" + "<body><geom size='.1'/>" * n + "</body>" * n
            + "</worldbody></mujoco>")
  assert compile_model(chain(496))[0]["nbody"] == 497
  msg = _error(tmp_path, chain(497))
  assert msg.startswith("model.xml:1: <geom>") and "nested more than 499" in msg


def test_empty_attributes_and_hexadecimal_numbers_read_as_mujoco_reads_them():
  """pos="" is no pos, condim="" the default, material="" no material, zaxis="" no
  orientation; 0x10 is 16."""
  sizes, arrays, _ = compile_model(_BODY.format(
      '<geom size=".1" pos="" condim="" material="" zaxis=""/><geom size=".1" pos="0x10 0 0"/>'))
  assert list(arrays["geom_condim"]) == [3, 3] and list(arrays["geom_matid"]) == [-1, -1]
  assert arrays["geom_pos"][1][0] == 16 and not arrays["geom_pos"][0].any()


@pytest.mark.parametrize("model, fragment", [
    ('<mujoco>\n<option>\n<flag/>\n<flag/>\n</option>\n</mujoco>',
     ":4: <flag>: <flag> given twice"),
    ('<mujoco>\n<default>\n<joint damping="1"/>\n<joint damping="2"/>\n</default>\n</mujoco>',
     ":4: <joint>: <joint> given twice in <default>"),
    ('<mujoco>\n<size nuserdata="-5"/>\n</mujoco>', ":2: <size>: nuserdata must be >= 0"),
])
def test_mujocos_schema_limits(tmp_path, model, fragment):
  """What MuJoCo's schema and sizes refuse (found by tests/fuzz --compare)."""
  assert fragment in _error(tmp_path, model)


def test_an_asset_file_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
  """A mesh file over the limit (1 GiB; 100 bytes here) is refused by its size, unread."""
  from numjoco.engine.mjcf import _limits
  monkeypatch.setattr(_limits, "MAX_FILE_BYTES", 100)
  (tmp_path / "m.stl").write_bytes(b"\0" * 200)
  msg = _error(tmp_path, '<mujoco>\n<asset>\n<mesh file="m.stl"/>\n</asset>\n</mujoco>')
  assert msg.startswith("model.xml:3: <mesh>: mesh file 'm.stl' is") and "numjoco reads" in msg


def _mujoco_error(xml):
  """MuJoCo 4.0.1's error for an XML string, None when it loads it."""
  try:
    mujoco.MjModel.from_xml_string(xml)
  except ValueError as e:
    return str(e)
  return None


_CUSTOM = ('<mujoco>\n<worldbody>\n<body name="b">\n<geom name="g" size=".1"/>\n</body>\n'
           '</worldbody>\n<custom>\n{}\n</custom>\n</mujoco>')


@pytest.mark.parametrize("custom", [
    '<numeric name="n"/>', '<numeric name="n" size="0"/>', '<numeric name="n" size="-2"/>',
    '<numeric name="n" size="2" data="1 2 3"/>', '<numeric name="n" size="3" data="1"/>',
    '<numeric data="1"/>', '<numeric name="n" data="1"/>\n<numeric name="n" data="2"/>',
    '<numeric name="n" data="1" foo="2"/>', '<text name="t"/>', '<text name="t" data="x"/>',
    '<tuple name="u">\n<element objtype="geom" objname="nope"/>\n</tuple>',
    '<tuple name="u">\n<element objtype="geom" objname="g"/>\n</tuple>',
    '<tuple name="u">\n<element objtype="body" objname="g"/>\n</tuple>',
    '<tuple name="u">\n<element objtype="nonsense" objname="g"/>\n</tuple>',
    '<tuple name="u">\n<element objtype="geom"/>\n</tuple>', '<tuple name="u"/>',
    '<tuple name="u">\n<element objtype="numeric" objname="n"/>\n</tuple>\n'
    '<numeric name="n" data="1"/>',
])
def test_custom_elements_are_checked_as_mujoco_checks_them(tmp_path, custom):
  """<custom>'s numeric, text and tuple (found by tests/fuzz --compare): refused where MuJoCo
  4.0.1 refuses them, with the element's line, and loaded where it loads them."""
  xml = _CUSTOM.format(custom)
  theirs = _mujoco_error(xml)
  try:
    compile_model(xml)
  except MjcfError as e:
    assert theirs is not None, f"MuJoCo loads it, we refuse: {e}"
    assert str(e).startswith("<string>:") and ": <" in str(e), str(e)
    line = int(str(e).split(":")[1])
    assert line >= 8, str(e)            # the custom element's own line
    return
  assert theirs is None, f"MuJoCo refuses it ({theirs}), we load it"


@pytest.mark.parametrize("section", ["sensor", "custom", "actuator"])
def test_section_elements_take_no_attributes(tmp_path, section):
  """As MuJoCo's schema ("unrecognized attribute")."""
  msg = _error(tmp_path, f'<mujoco>\n<{section} gravity="0 0 1"/>\n</mujoco>')
  assert msg.startswith(f"model.xml:2: <{section}>: unknown attribute 'gravity'"), msg


@pytest.mark.parametrize("memory", ["-1", "1K", "16m", " 2G ", "18446744073709551615",
                                    "1.5M", "1e6", "abc", "-5", "1KB", "1 M", "16E",
                                    "99999999999999999999"])
def test_size_memory_is_read_as_mujoco_reads_it(tmp_path, memory):
  """<size memory>: an unsigned integer with an optional K..E suffix that fits in a size_t, else
  MuJoCo's error, with the element; numjoco has no arena to size, so the value is not used
  (MuJoCo also refuses 15E when it cannot allocate it; numjoco loads it)."""
  xml = f'<mujoco>\n<size memory="{memory}"/>\n</mujoco>'
  theirs = _mujoco_error(xml)
  if theirs is None:
    compile_model(xml)
  else:
    assert "unsigned integer with an optional suffix" in theirs
    assert _error(tmp_path, xml).startswith(
        "model.xml:2: <size>: unsigned integer with an optional suffix {K,M,G,T,P,E}")


@pytest.mark.parametrize("xml", [
    '<mujoco>\n<worldbody>\n<geom size="1" rgba="{} 0 0 1"/>\n</worldbody>\n</mujoco>',
    '<mujoco>\n<visual>\n<global fovy="{}"/>\n</visual>\n</mujoco>',
    '<mujoco>\n<asset>\n<material name="m" specular="{}"/>\n</asset>\n</mujoco>',
    '<mujoco>\n<asset>\n<material name="m" texrepeat="1 {}"/>\n</asset>\n</mujoco>',
    '<mujoco>\n<worldbody>\n<light diffuse="{} 0 0"/>\n</worldbody>\n</mujoco>',
    '<mujoco>\n<worldbody>\n<light pos="{} 0 0"/>\n</worldbody>\n</mujoco>',   # a double
    '<mujoco>\n<asset>\n<texture name="t" type="2d" builtin="flat" width="8" height="8" '
    'rgb1="{} 0 0"/>\n</asset>\n</mujoco>',                                # a double
])
@pytest.mark.parametrize("value", ["3.4e38", "3.5e38", "-1e300", "1e400", "inf", "nan"])
def test_float_attributes_beyond_flt_max_as_mujoco(tmp_path, xml, value):
  """Attributes MuJoCo stores as float (colours, materials, lights, <visual>): a finite value
  beyond FLT_MAX is refused ("number is too large"), inf and NaN are kept, as MuJoCo 4.0.1
  does; doubles (a light's pos, a texture's rgb1) take it, or refuse it as not finite. 1e400
  overflows a double: "number is too large" wherever it is."""
  xml = xml.format(value)
  theirs = _mujoco_error(xml)
  if theirs is None:
    compile_model(xml)
  else:
    assert "number is too large" in theirs
    assert "number is too large in attribute" in _error(tmp_path, xml)
