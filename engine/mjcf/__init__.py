"""MJCF loading: parse an MJCF model and compile it into an `engine.io.Model`."""
from engine.mjcf.compile import compile_model
from engine.mjcf.parse import MjcfError, MjcfWarning


def load_model(source, assets=None):
  """Compile an MJCF file path or XML string (plus optional include assets) into a Model."""
  from engine import io
  sizes, arrays, names = compile_model(source, assets)
  path = source if isinstance(source, str) and not source.lstrip().startswith("<") else None
  return io.Model(sizes, arrays, names, source=path)


__all__ = ["MjcfError", "MjcfWarning", "compile_model", "load_model"]
