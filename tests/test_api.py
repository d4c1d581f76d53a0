"""The public API: names, zero-copy arrays, keyframes, divergence handling, one-call nstep."""
import warnings

import numpy as np
import pytest

import numjoco
from numjoco.assets import DEMO_MODEL

XML = """
<mujoco>
  <worldbody>
    <body name="pole" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="hinge"/></actuator>
  <keyframe><key name="up" qpos="3.0" qvel="0.5" ctrl="0.25" time="1.5"/></keyframe>
</mujoco>
"""


def test_name2id_and_id2name():
  """Names resolve like mj_name2id (by object type name or mjtObj), -1 when missing."""
  m = numjoco.load_model(XML)
  assert numjoco.name2id(m, "body", "pole") == 1
  assert numjoco.name2id(m, numjoco.mjtObj.JOINT, "hinge") == 0
  assert numjoco.name2id(m, "actuator", "m") == 0
  assert numjoco.name2id(m, "body", "nope") == -1
  assert numjoco.id2name(m, "body", 1) == "pole"


def test_writes_reach_compiled_code():
  """d.qpos[:] = ... and m.opt.timestep = ... change what the compiled step sees."""
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  d.qpos[:] = 0.5
  numjoco.forward(m, d)
  # the pole tip hangs from the hinge, rotated by 0.5 rad about y
  assert d.xpos[1] == pytest.approx([0, 0, 1])
  assert d.geom_xmat[0].reshape(3, 3)[0, 2] == pytest.approx(np.sin(0.5))
  m.opt.timestep = 0.01
  numjoco.step(m, d, 3)
  assert d.time == pytest.approx(0.03)


def test_reset_to_keyframe_by_name_and_index():
  """reset_data(key=...) loads qpos, qvel, ctrl and time of the keyframe."""
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  numjoco.reset_data(m, d, key="up")
  assert (d.qpos[0], d.qvel[0], d.ctrl[0], d.time) == (3.0, 0.5, 0.25, 1.5)
  numjoco.reset_data(m, d)
  assert (d.qpos[0], d.time) == (0.0, 0.0)
  numjoco.reset_data(m, d, key=0)
  assert d.qpos[0] == 3.0
  with pytest.raises(ValueError):
    numjoco.reset_data(m, d, key=5)


def test_nstep_equals_repeated_single_steps():
  """step(m, d, n) inside one compiled call gives the same state as n calls of one step."""
  m = numjoco.load_model(DEMO_MODEL.read_text())
  d1, d2 = numjoco.make_data(m), numjoco.make_data(m)
  numjoco.reset_data(m, d1, "swing")
  numjoco.reset_data(m, d2, "swing")
  numjoco.step(m, d1, 50)
  for _ in range(50):
    numjoco.step(m, d2)
  np.testing.assert_array_equal(d1.qpos, d2.qpos)
  assert d1.time == pytest.approx(50 * m.opt.timestep)


def test_divergence_warns_and_resets():
  """A blown-up state is detected: a warning naming MuJoCo's warning and the dof, Data reset
  and that step finished from the reset state (mj_step), and the call ends there."""
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  d.qvel[0] = 1e300
  with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    n = numjoco.step(m, d, 10)
  assert n == 1
  assert any("mjWARN_BADQVEL at dof 0, time 0:" in str(x.message) for x in w)
  assert np.isfinite(d.qpos).all() and abs(d.qvel[0]) < 1 and d.time == m.opt.timestep


def test_reset_keeps_collision_work_and_steps_as_fresh_data():
  """mj_resetData's state without zeroing the GJK/EPA work and its mesh cache
  (engine/io.RESET_KEEPS): after a reset, mesh contacts step bit for bit as a fresh Data's, and
  the buffers hold what the last steps left there."""
  from numjoco.engine import io
  rng = np.random.default_rng(3)
  verts = " ".join("%.5f" % x for x in (rng.normal(size=(16, 3)) * [.1, .08, .06]).ravel())
  xml = f"""<mujoco><asset><mesh name="rock" vertex="{verts}"/></asset><worldbody>
    <geom type="plane" size="1 1 .1"/>
    <body pos="0 0 .2"><freejoint/><geom type="mesh" mesh="rock"/></body>
    <body pos=".05 .02 .45" euler="20 30 0"><freejoint/><geom type="mesh" mesh="rock"/></body>
    </worldbody></mujoco>"""
  m = numjoco.load_model(xml)
  assert io.RESET_KEEPS <= set(numjoco.make_data(m)._arrays)
  fresh, used = numjoco.make_data(m), numjoco.make_data(m)
  numjoco.step(m, used, 300)
  kept = {name: used._arrays[name].copy() for name in io.RESET_KEEPS}
  assert any(a.any() for a in kept.values())
  numjoco.reset_data(m, used)
  for name, a in kept.items():
    np.testing.assert_array_equal(used._arrays[name], a)
  for name, a in used._arrays.items():
    if name not in io.RESET_KEEPS:
      np.testing.assert_array_equal(a, fresh._arrays[name], err_msg=name)
  ncon = 0
  for _ in range(400):
    numjoco.step(m, fresh)
    numjoco.step(m, used)
    np.testing.assert_array_equal(used.qpos, fresh.qpos)
    ncon = max(ncon, int(used.ncon))
  assert ncon >= 4   # the rocks met the plane and each other: mesh narrowphase ran


def test_demo_model_runs():
  """The bundled demo loads and moves under the numjoco command's default settings."""
  from numjoco.app.__main__ import main
  assert main(["--headless", "--seconds", "0.2"]) == 0


def test_contact_overflow_warns_and_keeps_running():
  """More contacts than <size nconmax>: a clear warning naming the setting, no crash."""
  xml = """<mujoco><size nconmax="2"/><worldbody><geom type="plane" size="1 1 .1"/>
    <body pos="0 0 .09"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
    </worldbody></mujoco>"""
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  with pytest.warns(RuntimeWarning, match="nconmax"):
    numjoco.step(m, d, 5)
  assert d.ncon <= 2
  assert np.isfinite(d.qpos).all()


def _meminfo_probe():
  import numba
  from numba.core import cgutils, types
  from numba.extending import intrinsic

  @intrinsic
  def has_meminfo(typingctx, arr):
    def codegen(context, builder, signature, args):
      ary = context.make_array(arr)(context, builder, args[0])
      return builder.icmp_unsigned("!=", ary.meminfo, cgutils.get_null_value(ary.meminfo.type))
    return types.boolean(arr), codegen

  @numba.njit
  def probe(ds):
    return has_meminfo(ds.qpos), has_meminfo(ds.efc_J), has_meminfo(ds.qpos[1:])

  @numba.njit
  def state(ds):
    return ds.qpos.copy(), ds.xpos.copy(), has_meminfo(ds.qpos.copy())

  return probe, state


def test_struct_fields_skip_reference_counting():
  """Compiled code sees Data's arrays without a meminfo (no atomic refcount on each field
  read or view), while a copy made in compiled code is owned as usual."""
  probe, state = _meminfo_probe()
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  assert probe(d.struct) == (False, False, False)
  assert state(d.struct)[2]


def test_struct_keeps_its_arrays_alive():
  """The compiled-side struct owns its memory: dropping the Python Model/Data while a struct
  is still in use (a worker thread's handle) leaves its arrays valid."""
  import gc
  import importlib
  fwd = importlib.import_module("numjoco.engine.forward")
  _, state = _meminfo_probe()
  m = numjoco.load_model(XML)
  d = numjoco.make_data(m)
  d.qpos[:] = 0.5
  numjoco.forward(m, d)
  want_qpos, want_xpos = d.qpos.copy(), d.xpos.copy()
  ms, ds = m.struct, d.struct
  del m, d
  gc.collect()
  junk = [np.full(1000, 7.0) for _ in range(2000)]   # reuse any memory that was freed
  fwd.forward(ms, ds)
  qpos, xpos, _ = state(ds)
  np.testing.assert_array_equal(qpos, want_qpos)
  np.testing.assert_array_equal(xpos, want_xpos)
  assert junk[0][0] == 7.0


def test_the_package_namespace_is_the_public_api():
  """dir(numjoco) lists the public API (loaded on first use), not the modules it imports."""
  names = set(dir(numjoco))
  assert set(numjoco.__all__) <= names and {"step", "Renderer", "MjcfError"} <= names
  assert not {n for n in names if n.startswith("_")} and not {"os", "importlib"} & names


def test_data_arrays_live_in_arenas_without_overlap():
  """Data's arrays but RESET_KEEPS are views of one buffer per dtype (a reset zeroes a few
  buffers): each starts on a 64-byte boundary and none overlaps another (a value written into
  every element of one array shows in no other); arena_copy/restore_arenas give back the reset
  state after steps."""
  from numjoco.engine import io
  m = numjoco.load_model(str(DEMO_MODEL))
  d = numjoco.make_data(m)
  arrays = {k: a for k, a in d._arrays.items() if k not in io.RESET_KEEPS and a.size}
  assert len(d._arenas) <= 8 < len(arrays)
  for name, a in arrays.items():
    assert a.ctypes.data % 64 == 0 and a.flags.c_contiguous, name
    assert any(np.shares_memory(a, buf) for buf in d._arenas), name
  for k, (name, a) in enumerate(arrays.items()):   # a distinct non-zero mark per array
    a[...] = True if a.dtype == bool else k + 1
  for k, (name, a) in enumerate(arrays.items()):
    want = True if a.dtype == bool else k + 1
    assert np.all(a == want), name
  d.timer_on[0] = 0          # (a reset keeps the timers on)
  numjoco.reset_data(m, d)
  image = io.arena_copy(d)
  fresh = numjoco.make_data(m)
  numjoco.step(m, d, 50)
  io.restore_arenas(d, image)
  for name in arrays:
    np.testing.assert_array_equal(d._arrays[name], fresh._arrays[name], err_msg=name)


def test_options_changed_between_step_calls_take_effect():
  """A Python-side step links the units the model's options need at each call (Model.struct
  reads them from the option arrays): an integrator or fluid density set between two calls
  steps exactly as a model loaded with it does, from the same state."""
  from numjoco.engine import state
  xml = XML.replace("<worldbody>", '<option integrator="Euler"/><worldbody>')
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  numjoco.reset_data(m, d, "up")       # swinging
  numjoco.step(m, d, 20)
  x = state.get_state(m, d)
  m.opt.integrator = numjoco.mjtIntegrator.RK4
  m.opt.density = 1.2
  for _ in range(10):
    numjoco.step(m, d)
  ref = numjoco.load_model(XML.replace("<worldbody>", '<option integrator="RK4" density="1.2"/>'
                                       "<worldbody>"))
  dr = numjoco.make_data(ref)
  state.set_state(ref, dr, x)
  numjoco.step(ref, dr, 10)
  np.testing.assert_array_equal(d.qpos, dr.qpos)
  np.testing.assert_array_equal(d.qvel, dr.qvel)
  euler = numjoco.load_model(xml)
  de = numjoco.make_data(euler)
  state.set_state(euler, de, x)
  numjoco.step(euler, de, 10)
  assert np.abs(de.qvel - d.qvel).max() > 1e-9     # the change did change the motion
