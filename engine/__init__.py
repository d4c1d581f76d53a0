"""numjoco's physics engine: MuJoCo's computation model in numpy + numba.

Public API: load_model, make_data, reset_data, forward, step, name2id, id2name, Model, Data.

Imports are lazy (issue #4: the model on screen in under a second). `import engine` loads only
the enums; the parser and compiler (engine.mjcf), engine.types, engine.visual and
engine.preview need no numba, so the viewer compiles a model and draws it while numba still
loads. The first import of any other engine module, or the first use of a public function,
imports engine.api, which defines every stage. Kernels are cached by content
(engine/_jit.py), wherever the checkout lives.
"""
import copy
import importlib
import importlib.abc
import sys
import types as _pytypes

from engine.types import (mjtBias, mjtCone, mjtConstraint, mjtConstraintState,  # noqa: F401
                          mjtDisableBit, mjtDyn, mjtEnableBit, mjtEq, mjtGain, mjtGeom,
                          mjtIntegrator, mjtJoint, mjtObj, mjtSolver, mjtTrn, mjtWarning)

# Modules that import neither numba nor a module that does, at import time.
_NUMBA_FREE = ("engine.types", "engine.visual", "engine.preview", "engine.mjcf", "engine._cache")
# public name -> module that defines it
_API = {name: "engine.api" for name in (
    "apply_perturb_force", "apply_perturb_pose", "forward", "init_perturb", "load_model", "step",
    "compare_fwd_inv", "eval_fk", "eval_ik", "inverse", "joint_q_start", "joint_qd_start")}
_API.update({name: "engine.io" for name in (
    "Data", "Model", "id2name", "make_data", "name2id", "reset_data")})
_bound = {}          # public name -> object, once engine.api is imported
_binding = False     # engine.api is being imported by _bind


def _bind():
  """Import engine.api and engine.io and publish the API names (once)."""
  global _binding
  if _bound or _binding:
    return
  _binding = True
  try:
    mods = {name: importlib.import_module(name) for name in ("engine.api", "engine.io")}
  finally:
    _binding = False
  _bound.update({name: getattr(mods[mod], name) for name, mod in _API.items()})
  globals().update({k: v for k, v in _bound.items() if k not in ("forward", "inverse")})


def __getattr__(name):
  """A public function or class on first use (PEP 562)."""
  if name not in _API or _binding:   # while binding: let the import system find submodules
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
  _bind()
  return _bound[name]


def __dir__():
  return sorted(set(globals()) | set(_API))


def _api_or_module(name):
  """`engine.forward` and `engine.inverse` name both a module and a public function: the
  module while engine.api is not imported yet (its own imports need the modules), the
  function afterwards, whatever the import system assigns later."""
  def get(mod):
    if _bound:
      return _bound[name]
    api = sys.modules.get("engine.api")
    if api is not None and not getattr(api.__spec__, "_initializing", False):
      _bind()   # engine.api was imported directly
      return _bound[name]
    sub = sys.modules.get("engine." + name)
    if sub is None:
      raise AttributeError(name)   # -> __getattr__, or the import system loads the module
    return sub

  def set_(mod, value):
    pass   # the import system binds the submodule here: reachable through sys.modules
  return property(get, set_)


class _Engine(_pytypes.ModuleType):
  """The `engine` package with its two names that are both a module and a function."""
  forward = _api_or_module("forward")
  inverse = _api_or_module("inverse")


class _Loaded(importlib.abc.Loader):
  """Loader of a module that the cache hook already imported (as part of engine.api)."""

  def __init__(self, module, spec):
    self.module, self.spec = module, spec

  def create_module(self, spec):
    return self.module

  def exec_module(self, module):
    module.__spec__ = self.spec


class _ApiFirst(importlib.abc.MetaPathFinder):
  """On the first import of an engine module that defines compiled kernels: import engine.api
  (which imports most of the others) and step aside."""

  def find_spec(self, name, path, target=None):
    """Never finds a module itself, except one it imported meanwhile (returned as loaded)."""
    if not name.startswith("engine.") or name.startswith(_NUMBA_FREE):
      return None
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _ApiFirst)]
    if name == "engine.api" or _binding:
      return None
    _bind()
    module = sys.modules.get(name)
    if module is None:
      return None
    spec = copy.copy(module.__spec__)
    spec.loader = _Loaded(module, module.__spec__)
    module.__spec__ = spec   # importlib returns the spec of a module already in sys.modules
    return spec


sys.modules[__name__].__class__ = _Engine
if not any(isinstance(f, _ApiFirst) for f in sys.meta_path) and "engine._structs" not in sys.modules:
  sys.meta_path.insert(0, _ApiFirst())

__all__ = ["load_model", "make_data", "reset_data", "forward", "step", "name2id", "id2name",
           "init_perturb", "apply_perturb_pose", "apply_perturb_force",
           "Model", "Data", "mjtBias", "mjtCone", "mjtConstraint", "mjtConstraintState",
           "mjtDisableBit", "mjtDyn", "mjtEnableBit", "mjtEq", "mjtGain", "mjtGeom",
           "mjtIntegrator", "mjtJoint", "mjtObj", "mjtSolver", "mjtTrn", "mjtWarning",
           "inverse", "compare_fwd_inv", "eval_fk", "eval_ik", "joint_q_start", "joint_qd_start"]
