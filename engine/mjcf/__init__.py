"""MJCF loading: parse an MJCF model and compile it into an `engine.io.Model`."""
from numjoco.engine.mjcf.compile import compile_model
from numjoco.engine.mjcf.parse import MjcfError, MjcfWarning


def load_model(source, assets=None):
  """Compile an MJCF file path or XML string (plus optional include assets) into a Model."""
  from numjoco.engine import io
  sizes, arrays, names = compile_model(source, assets, simulated=True)
  path = source if isinstance(source, str) and not source.lstrip().startswith("<") else None
  lropt = arrays.pop("_lengthrange")
  m = io.Model(sizes, arrays, names, source=path)
  m.__dict__["lropt"] = lropt   # compiler <lengthrange> options, used by engine.lengthrange
  return m


__all__ = ["MjcfError", "MjcfWarning", "compile_model", "load_model"]
