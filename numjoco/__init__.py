"""numjoco: MuJoCo's computation model in numpy + Numba, with an interactive viewer.

    import numjoco
    m = numjoco.load_model("model.xml")
    d = numjoco.make_data(m)
    numjoco.step(m, d, 1000)

The functions take MuJoCo's names and arguments (mj_step -> numjoco.step, mj_forward ->
numjoco.forward, mj_name2id -> numjoco.name2id, ...); Model and Data hold MuJoCo's fields
under MuJoCo's names; numjoco.Renderer is mujoco.Renderer's offscreen renderer. The packages
under this one:

- numjoco.engine: the physics (numpy, Numba, lxml for MJCF), MuJoCo's pipeline stage by stage;
- numjoco.render: drawing with moderngl (window and headless EGL contexts, video);
- numjoco.app: the viewer (pyglet window, panels, simulation thread) and the command line;
- numjoco.assets: the bundled models.

`import numjoco` imports nothing else: each public name loads its module on first use
(PEP 562), so a window can open and draw while Numba and the engine's kernels load.
"""
import importlib as _importlib
import os as _os

# In a source checkout that is not installed (the repository on PYTHONPATH), the subpackages
# are the top-level folders next to this one; an installed numjoco holds them itself.
_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if (not _os.path.isdir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "engine"))
    and _os.path.isfile(_os.path.join(_ROOT, "engine", "__init__.py"))):
  __path__.append(_ROOT)

_API = {name: "numjoco.engine.api" for name in (
    "apply_perturb_force", "apply_perturb_pose", "compare_fwd_inv", "eval_fk", "eval_ik",
    "forward", "init_perturb", "inverse", "joint_q_start", "joint_qd_start", "load_model",
    "step")}
_API.update({name: "numjoco.engine.io" for name in (
    "Data", "Model", "id2name", "make_data", "name2id", "reset_data")})
_API.update({name: "numjoco.engine.types" for name in (
    "mjtBias", "mjtCone", "mjtConstraint", "mjtConstraintState", "mjtDisableBit", "mjtDyn",
    "mjtEnableBit", "mjtEq", "mjtGain", "mjtGeom", "mjtIntegrator", "mjtJoint", "mjtObj",
    "mjtSolver", "mjtTrn", "mjtWarning")})
_API["MjcfError"] = "numjoco.engine.mjcf.parse"
_API["rollout"] = "numjoco.engine.rollout"
_API["sweep"] = "numjoco.app.sweep"
_API["Renderer"] = "numjoco.render.offscreen"

__all__ = sorted(_API)


def __getattr__(name):
  """A public function, class or enum, imported on first use."""
  module = _API.get(name)
  if module is None:
    raise AttributeError(f"module 'numjoco' has no attribute {name!r}")
  value = getattr(_importlib.import_module(module), name)
  globals()[name] = value
  return value


def __dir__():
  return sorted({k for k in globals() if not k.startswith("_")} | set(_API))
