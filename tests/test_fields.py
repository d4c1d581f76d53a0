"""The field tables of engine/types.py against MuJoCo's structs: engine/_structs.py is what
`python -m numjoco.engine._gen` makes of them, every row has a doc, the fields MuJoCo has stand in
the order of mjOption, mjModel and mjData in the `mujoco` wheel's headers with ours after them,
and their shapes and dtypes are MuJoCo's on a model with most features."""
import functools
import os
import re

import numpy as np
import pytest

from numjoco.engine import _gen
from numjoco.engine import types as t

_MEMBER = re.compile(r"^(?:const\s+)?(\w+)\s*(\*?)\s*(\w+)\s*(\[[^\]]*\])?\s*;")
_ROWS = re.compile(r"\((\w+) x")

# MuJoCo's C types as numpy dtypes (a char array is text: a byte, signed or not by platform)
_CTYPES = {"mjtNum": np.float64, "float": np.float32, "int": np.int32, "mjtByte": np.uint8,
           "mjtBool": np.bool_, "char": np.uint8, "uint64_t": np.uint64}
# sizes of mjData's arena arrays: MuJoCo allocates what this step needs, ours preallocates room
_VARIABLE = {"ncon", "nefc", "nJ", "nisland", "nidof"}
# fields whose dtype is ours: mjVisual's float perturbation stiffnesses, held as float64 for the
# compiled perturbation (engine/perturb.py)
_OUR_DTYPE = {"vis_map_stiffness", "vis_map_stiffnessrot"}


@functools.lru_cache(maxsize=None)
def _header_structs():
  """{struct: [(member, C type, is pointer, rows or None)]} of mjmodel.h and mjdata.h, in
  declaration order; rows is the leading size of a pointer's `(rows x cols)` comment. An
  anonymous nested struct's members (mjVisual's `global`, `map`, ...) are `<name>_<member>`."""
  import mujoco
  inc = os.path.join(os.path.dirname(mujoco.__file__), "include", "mujoco")
  text = "".join(open(os.path.join(inc, f)).read() for f in ("mjmodel.h", "mjdata.h"))
  structs = {}
  for block in re.finditer(r"typedef struct (\w+)_ \{(.*?)\n\} \1;", text, re.S):
    members, nested = [], None
    for line in block.group(2).splitlines():
      code, _, comment = line.partition("//")
      code = code.strip()
      end = re.match(r"\}\s*(\w+);", code)
      member = _MEMBER.match(code)
      if code.startswith("struct") and code.endswith("{"):
        nested = []
      elif end and nested is not None:
        members += [(f"{end.group(1)}_{m[0]}",) + m[1:] for m in nested]
        nested = None
      elif member:
        ctype, pointer, name, _ = member.groups()
        rows = _ROWS.search(comment)
        (members if nested is None else nested).append(
            (name, ctype, bool(pointer), rows.group(1) if rows else None))
    structs[block.group(1)] = members
  return structs


def _flat(struct):
  """[(field name, attribute path in the bindings, C type, rows)] of a MuJoCo struct, a member
  of struct type expanded to one field per member (`opt_timestep`, `contact_dist`, ...)."""
  structs = _header_structs()
  out = []
  for name, ctype, _, rows in structs[struct]:
    if ctype in structs:
      for sub, path, subtype, subrows in _flat(ctype):
        out.append((f"{name}_{sub}", (name,) + path, subtype, subrows or rows))
    else:
      path = (name,)
      if struct == "mjVisual":   # the bindings name the group `global` as `global_`
        group, member = name.split("_", 1)
        path = (group + "_" if group == "global" else group, member)
      out.append((name, path, ctype, rows))
  return out


def _order(struct):
  return {name: i for i, (name, *_) in enumerate(_flat(struct))}


def test_header_parse_sees_the_structs():
  """The parse finds MuJoCo's fields where the headers declare them (guards the tests below
  against a header layout the parse misreads)."""
  model, data = _order("mjModel"), _order("mjData")
  assert model["nq"] < model["opt_timestep"] < model["vis_map_stiffness"] < model["qpos0"]
  assert model["qpos0"] < model["body_parentid"] < model["jnt_type"] < model["mapD2M"]
  assert data["solver_improvement"] < data["ncon"] < data["time"] < data["qpos"]
  assert data["cfrc_ext"] < data["contact_dist"] < data["contact_efc_address"] < data["efc_type"]
  assert len(model) > 600 and len(data) > 200


def test_structs_module_is_current():
  """engine/_structs.py is what the generator makes of the tables: a table edited without
  `python -m numjoco.engine._gen` fails here, not as a typing error in some kernel."""
  path = _gen.path()
  text = path.read_text()
  assert text == _gen.source(text), "run `python -m numjoco.engine._gen`"


def test_generator_writes_every_field():
  """The generated setters fill every table field and size (so the check above means
  something), and the struct types hold each array with its table's dtype and rank."""
  from numjoco.engine import _structs
  generated = _gen.path().read_text().partition(_gen.MARKER)[2]
  for name, _, _ in t.MODEL_TABLE + t.DATA_TABLE:
    assert f"  s.{name} = borrowed({name})\n" in generated, name
  for name in t.MODEL_SIZES:
    assert f"  s.{name} = {name}\n" in generated, name
  for struct, table in ((_structs.ModelType, t.MODEL_TABLE), (_structs.DataType, t.DATA_TABLE)):
    for name, dtype, shape in table:
      a = struct.field_dict[name]
      assert (a.dtype.name, a.ndim, a.layout) == (np.dtype(dtype).name, len(shape), "C"), name


@pytest.mark.parametrize("table, docs", [(t.MODEL_TABLE, t.MODEL_DOCS),
                                         (t.DATA_TABLE, t.DATA_DOCS)], ids=["Model", "Data"])
def test_every_row_has_a_doc(table, docs):
  """Every row of the table carries a doc after its `#`."""
  assert [name for name, _, _ in table] == list(docs)
  missing = [name for name, doc in docs.items() if not doc]
  assert missing == []


def test_docs_are_read_from_the_rows():
  """Group lines are skipped; a row's doc is what follows its `#`."""
  assert t.table_docs("a f8 1  # the a\n# a group\nb i4 nv # b's doc", "x_") == {
      "x_a": "the a", "x_b": "b's doc"}
  assert t.parse_table("a f8 1  # the a\n# a group\nb i4 nv 3") == [
      ("a", np.dtype(np.float64), (1,)), ("b", np.dtype(np.int32), ("nv", 3))]


@pytest.mark.parametrize("table, struct", [(t.MODEL_TABLE, "mjModel"), (t.DATA_TABLE, "mjData")])
def test_mujoco_fields_first_in_mujocos_order(table, struct):
  """The fields MuJoCo has stand in the order of its struct (mjOption's inside mjModel's as
  opt_*), then ours: moving a row breaks this."""
  order = _order(struct)
  names = [name for name, _, _ in table]
  shared = [n for n in names if n in order]
  assert shared == sorted(shared, key=order.get)
  assert names[:len(shared)] == shared, "fields of ours only come after MuJoCo's"


def test_sizes_in_mujocos_order():
  """MODEL_SIZES: MuJoCo's sizes in mjModel's order, then ours."""
  order = _order("mjModel")
  shared = [n for n in t.MODEL_SIZES if n in order]
  assert shared == sorted(shared, key=order.get)
  assert list(t.MODEL_SIZES[:len(shared)]) == shared


def test_order_check_fails_on_a_moved_row():
  """The order check above rejects a table with two rows swapped."""
  order = _order("mjModel")
  names = [name for name, _, _ in t.MODEL_TABLE]
  i = names.index("jnt_type")
  names[i], names[i + 1] = names[i + 1], names[i]
  shared = [n for n in names if n in order]
  assert shared != sorted(shared, key=order.get)


# most of mjModel's feature groups: joints of every type, geoms of several types, a mesh, a
# height field, sites, cameras, lights, a material, pairs, excludes, equalities, both tendon kinds,
# actuators, sensors, a keyframe, mocap, user data
_XML = """
<mujoco model="fields">
  <size nuser_body="1" nuser_jnt="2" nuser_geom="1" nuser_site="1" nuser_cam="1"
        nuser_tendon="1" nuser_actuator="1" nuser_sensor="1"/>
  <asset>
    <mesh name="tet" vertex="0 0 0  .1 0 0  0 .1 0  0 0 .1"/>
    <hfield name="hf" nrow="3" ncol="4" size="1 1 .1 .05" elevation="0 1 0 1 1 0 1 0 0 1 0 1"/>
    <material name="mat" rgba=".5 .5 .5 1"/>
  </asset>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/> <camera name="fixed" pos="0 -2 1" xyaxes="1 0 0 0 .5 1"/>
    <geom name="floor" type="plane" size="2 2 .1" material="mat"/>
    <geom type="hfield" hfield="hf" pos="5 0 0"/>
    <body name="torso" pos="0 0 .11"> <freejoint/>
      <geom name="torso" type="capsule" size=".1" fromto="0 0 0 0 0 .3" user="1"/>
      <site name="s0" pos="0 0 .3" user="1"/>
      <camera name="track" mode="trackcom" pos="0 -1 0" user="1"/>
      <body name="arm" pos=".2 0 .2"> <joint name="shoulder" type="ball" range="0 60"/>
        <geom type="box" size=".05 .05 .1"/>
        <body name="forearm" pos="0 0 -.2"> <geom type="mesh" mesh="tet"/>
          <joint name="elbow" axis="0 1 0" range="-90 90" damping=".1" stiffness="1" user="1 2"/>
          <site name="s1" pos="0 0 -.1"/> </body> </body>
      <body name="leg" pos="0 0 -.05"> <geom type="ellipsoid" size=".05 .06 .07"/>
        <joint name="hip" type="slide" axis="0 0 1" range="-.1 .1" frictionloss=".1"/>
        <geom type="cylinder" size=".04 .1" pos=".1 0 0"/> </body> </body>
    <body name="target" mocap="true" pos="1 1 1">
      <geom type="sphere" size=".05" contype="0" conaffinity="0"/> </body>
  </worldbody>
  <contact> <pair geom1="floor" geom2="torso"/> <exclude body1="torso" body2="arm"/> </contact>
  <equality> <connect body1="target" body2="torso" anchor="0 0 0" active="false"/>
    <joint joint1="hip" joint2="elbow"/> </equality>
  <tendon>
    <fixed name="fixed"> <joint joint="elbow" coef="1"/> <joint joint="hip" coef="-1"/> </fixed>
    <spatial name="spatial" range="0 1"> <site site="s0"/> <site site="s1"/> </spatial>
  </tendon>
  <actuator> <motor joint="elbow" ctrlrange="-1 1" user="1"/> <position joint="hip" kp="10"/>
    <general tendon="fixed" dyntype="filter" dynprm=".1"/> </actuator>
  <sensor> <jointpos joint="elbow" user="1"/> <accelerometer site="s0"/> <touch site="s1"/>
    <framequat objtype="body" objname="arm"/> <tendonpos tendon="spatial"/> </sensor>
  <keyframe> <key time="1"/> </keyframe>
</mujoco>
"""


@pytest.fixture(scope="module")
def both():
  """(our Model, our Data, MuJoCo's, its MjData after mj_forward) of _XML."""
  import mujoco
  import numjoco
  m = numjoco.load_model(_XML)
  mjm = mujoco.MjModel.from_xml_string(_XML)
  mjd = mujoco.MjData(mjm)
  mujoco.mj_forward(mjm, mjd)
  return m, numjoco.make_data(m), mjm, mjd


def _compare(ours, theirs, struct):
  """Fields (of ours: name -> array) whose shape or dtype differs from MuJoCo's object
  `theirs`; a scalar of MuJoCo's is a 1-element array of ours, and a size MuJoCo allocates
  per step (_VARIABLE) need only hold MuJoCo's rows; _OUR_DTYPE keep their dtype."""
  bad, seen = [], 0
  for name, path, ctype, rows in _flat(struct):
    if name not in ours:
      continue
    seen += 1
    a = ours[name]
    b = np.asarray(functools.reduce(getattr, path, theirs))
    want = b.shape or (1,)
    if rows in _VARIABLE:
      shape_ok = a.shape[1:] == want[1:] and a.shape[0] >= want[0]
    else:
      shape_ok = a.shape == want
    if not shape_ok or (a.dtype != np.dtype(_CTYPES[ctype]) and name not in _OUR_DTYPE):
      bad.append(f"{name}: ours {a.shape} {a.dtype}, MuJoCo's {b.shape} {ctype}")
  return bad, seen


def test_model_fields_are_mujocos(both):
  """Sizes, shapes and dtypes of the Model fields MuJoCo has equal MuJoCo's."""
  m, _, mjm, _ = both
  assert m.ntendon == 2 and m.nmesh == m.nhfield == m.nmocap == m.nkey == 1
  # nconmax and njmax: MuJoCo's are -1 unless the model sets them; ours hold the room allocated
  shared = [k for k in t.MODEL_SIZES if hasattr(mjm, k) and k not in ("nconmax", "njmax")]
  assert {k: getattr(m, k) for k in shared} == {k: getattr(mjm, k) for k in shared}
  bad, seen = _compare({n: m._arrays[n] for n, _, _ in t.MODEL_TABLE}, mjm, "mjModel")
  assert bad == []
  assert seen == sum(name in _order("mjModel") for name, _, _ in t.MODEL_TABLE)


def test_data_fields_are_mujocos(both):
  """Shapes and dtypes of the Data fields MuJoCo has equal MuJoCo's (arena arrays: room
  for at least MuJoCo's rows)."""
  _, d, _, mjd = both
  assert mjd.ncon > 0 and mjd.nefc > 0
  bad, seen = _compare({n: d._arrays[n] for n, _, _ in t.DATA_TABLE}, mjd, "mjData")
  assert bad == []
  assert seen == sum(name in _order("mjData") for name, _, _ in t.DATA_TABLE)


def test_comparison_finds_a_wrong_shape_and_dtype(both):
  """The comparison above reports a reshaped field and a field of another dtype."""
  _, d, _, mjd = both
  ours = {n: d._arrays[n] for n, _, _ in t.DATA_TABLE}
  ours["xpos"] = ours["xpos"].reshape(-1)
  ours["ten_J"] = ours["ten_J"].astype(np.float32)
  bad, _ = _compare(ours, mjd, "mjData")
  assert sorted(b.split(":")[0] for b in bad) == ["ten_J", "xpos"]
