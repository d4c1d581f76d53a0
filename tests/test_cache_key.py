"""The Numba cache key (engine/_cache.py) covers every source that compiled code can see.

engine/mjcf/ is left out of the key; that is only safe while no kernel can reach it.
"""
import ast
import importlib.util
import pathlib
import shutil

ENGINE = pathlib.Path(__file__).resolve().parents[1] / "engine"


def _load_cache_module(root):
  spec = importlib.util.spec_from_file_location("_cache_copy", root / "_cache.py")
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod


def test_mjcf_has_no_compiled_code():
  for p in (ENGINE / "mjcf").rglob("*.py"):
    text = p.read_text()
    assert "numba" not in text and "jit" not in text, p


def test_compiled_modules_do_not_import_mjcf_at_module_level():
  for p in ENGINE.glob("*.py"):
    text = p.read_text()
    if "numba" not in text and "jit" not in text:
      continue
    for node in ast.parse(text).body:          # module level only: a kernel sees these globals
      names = []
      if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
      elif isinstance(node, ast.ImportFrom):
        names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
      assert not any(n.startswith("engine.mjcf") for n in names), (p, ast.dump(node))


def test_cache_key_ignores_mjcf_but_not_kernels(tmp_path):
  root = tmp_path / "engine"
  shutil.copytree(ENGINE, root, ignore=shutil.ignore_patterns("__pycache__"))
  mod = _load_cache_module(root)
  key = mod.cache_dir()
  with open(root / "mjcf" / "parse.py", "a") as f:
    f.write("\n# edited\n")
  assert mod.cache_dir() == key
  with open(root / "smooth.py", "a") as f:
    f.write("\n# edited\n")
  assert mod.cache_dir() != key
