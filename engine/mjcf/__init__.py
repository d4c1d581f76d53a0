"""The MJCF (and URDF) compiler: `compile_model(source)` parses a model and compiles it into
(sizes, arrays, names), MuJoCo's compiled fields by name, with numpy only. The engine's Model is
built from them by numjoco.engine.api.build_model (engine/preview.Compiled holds them).

parse.py reads the model into a checked element tree (_node.py: elements, errors, values;
_schema.py: the elements and attributes read; _attach.py, _replicate.py, urdf.py: what it
expands); compile.py's Compiler turns the tree into fields (bodies, joints, geoms, ...; meshes
in _mesh.py, actuators in _actuator.py, sensors in _sensor.py, flexes in _flex*.py, plugins in
_plugin.py, textures in _texture.py, ...) and _assemble.py lays them out as MuJoCo's arrays.
"""
import contextlib
import sys

from numjoco.engine.mjcf import _custom, _flex, compile
from numjoco.engine.mjcf._node import MAX_DEPTH, MjcfError, MjcfWarning
from numjoco.engine.mjcf.parse import parse

# the compiler walks the element tree recursively, a few Python frames a level: room for
# MuJoCo's deepest nesting (MAX_DEPTH levels)
_RECURSION = 6 * MAX_DEPTH + 1000


@contextlib.contextmanager
def _deep_enough():
  """Python's recursion limit raised to _RECURSION for the block (and put back after)."""
  old = sys.getrecursionlimit()
  if old >= _RECURSION:
    yield
    return
  sys.setrecursionlimit(_RECURSION)
  try:
    yield
  finally:
    sys.setrecursionlimit(old)


def compile_model(source, assets=None, flex=True, simulated=False):
  """Compile an MJCF (or URDF) file path or XML string into (sizes, arrays, names): MuJoCo's
  compiled fields by name (engine/mjcf/parse.py reads the model, compile.Compiler compiles it).
  `simulated`: refuse flex features the engine does not simulate yet (_flex.check_simulated);
  `flex=False` refuses flex elements altogether."""
  with _deep_enough():
    return _compile(source, assets, flex, simulated)


def _compile(source, assets, flex, simulated):
  root = parse(source, assets, flex)   # its errors name their element
  try:
    custom = _custom.check(root)
    c = compile.Compiler(root)
    c.assets = assets
    out = c.run()
    _custom.check_tuples(*custom, out[2])
    if simulated:
      _flex.check_simulated(c, out[1])
    return out
  except MjcfError:
    raise
  except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
    # never surface a raw traceback from deep inside: attribute it to the model root
    raise MjcfError(root, f"internal compiler error: {type(e).__name__}: {e}") from e


__all__ = ["MjcfError", "MjcfWarning", "compile_model"]
