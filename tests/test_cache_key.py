"""The kernel cache (engine/_jit.py, engine/_cache.py): keys by content, shared between
checkouts, and an edit rebuilds exactly the units that reach the edited code.

engine/mjcf/ and engine/rotation.py are left out of the warm stamp; that is only safe while no
kernel can reach them.
"""
import ast
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

ENGINE = pathlib.Path(__file__).resolve().parents[1] / "engine"


def _load_cache_module(root):
  spec = importlib.util.spec_from_file_location("_cache_copy", root / "_cache.py")
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod


def _plain_modules():
  """engine/mjcf/ and the engine modules _cache.stamp leaves out."""
  plain = _load_cache_module(ENGINE).PLAIN_MODULES
  return sorted((ENGINE / "mjcf").rglob("*.py")) + [ENGINE / name for name in plain]


def test_mjcf_has_no_compiled_code():
  for p in _plain_modules():
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
      assert not any(n.startswith("numjoco.engine.mjcf") for n in names), (p, ast.dump(node))


def test_warm_stamp_ignores_mjcf_but_not_kernels(tmp_path):
  root = tmp_path / "engine"
  shutil.copytree(ENGINE, root, ignore=shutil.ignore_patterns("__pycache__"))
  mod = _load_cache_module(root)
  key = mod.stamp("0")
  for name in ("mjcf/parse.py",) + mod.PLAIN_MODULES:
    with open(root / name, "a") as f:
      f.write("\n# edited\n")
  assert mod.stamp("0") == key
  with open(root / "smooth.py", "a") as f:
    f.write("\n# edited\n")
  assert mod.stamp("0") != key


_KEYS = """
import json, sys
import numjoco.engine.api
from numjoco import engine
from numjoco.engine import _jit
print(json.dumps({s: _jit._func_key(u.disp.py_func) for s, u in _jit.units().items()}))
"""

_COMPILE = """
import json, sys
import numjoco.engine.api
from numjoco import engine
from numjoco.engine import _jit
out = {}
for s in sys.argv[1:]:
  u = _jit.units()[s]
  u.disp.compile(u.sig)
  out[s] = u.disp._cache.hits
print(json.dumps(out))
"""


def _checkout(tmp_path, name):
  """A copy of the numjoco and engine packages at their own path (a second clone, as far as
  caching goes; imported from there through PYTHONPATH)."""
  root = tmp_path / name
  shutil.copytree(ENGINE, root / "engine", ignore=shutil.ignore_patterns("__pycache__"))
  shutil.copytree(ENGINE.parent / "numjoco", root / "numjoco",
                  ignore=shutil.ignore_patterns("__pycache__"))
  return root


def _run(root, code, *args, cache, base=None):
  env = dict(os.environ if base is None else base, PYTHONPATH=str(root),
             NUMJOCO_CACHE_DIR=str(cache))
  out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       env=env, cwd=str(root))
  assert out.returncode == 0, out.stderr[-3000:]
  return json.loads(out.stdout.strip().splitlines()[-1])


def test_two_checkouts_share_keys_and_an_edit_changes_exactly_its_units(tmp_path):
  """Unit keys do not depend on the checkout's path; editing `wrap.wrap` (reached only through
  smooth._spatial_tendon, from the unit smooth.tendon) changes that unit's key and no other."""
  a, b = _checkout(tmp_path, "a"), _checkout(tmp_path, "b")
  keys_a = _run(a, _KEYS, cache=tmp_path / "cache")
  keys_b = _run(b, _KEYS, cache=tmp_path / "cache")
  assert len(keys_a) >= 60 and keys_a == keys_b
  path = b / "engine" / "wrap.py"
  text = path.read_text()
  assert text.count("def wrap(") == 1
  path.write_text(_edit_wrap(text))   # one more (dead) statement in wrap()'s body
  keys_c = _run(b, _KEYS, cache=tmp_path / "cache")
  changed = {s for s in keys_a if keys_a[s] != keys_c[s]}
  assert changed == {"numjoco.engine.smooth.tendon"}


def _edit_wrap(text):
  """wrap.py with one statement added at the start of wrap()'s body (after its docstring)."""
  fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "wrap")
  first = fn.body[0]
  is_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
  at = first.end_lineno if is_doc else first.lineno - 1     # insert after this many lines
  lines = text.splitlines(keepends=True)
  return "".join(lines[:at] + ["  _edited = 1.0\n"] + lines[at:])


def test_second_checkout_loads_the_first_ones_kernels(tmp_path):
  """A unit compiled from one checkout is a cache hit from another checkout at another path,
  and after an edit only the dependent unit misses."""
  a, b = _checkout(tmp_path, "a"), _checkout(tmp_path, "b")
  cache = tmp_path / "cache"
  units = ["numjoco.engine.energy.energy_vel", "numjoco.engine.smooth.tendon"]
  assert _run(a, _COMPILE, *units, cache=cache) == {u: 0 for u in units}
  files = sorted(p.name for p in (cache / "kernels").glob("*.nbk"))
  assert _run(b, _COMPILE, *units, cache=cache) == {u: 1 for u in units}
  assert sorted(p.name for p in (cache / "kernels").glob("*.nbk")) == files
  path = b / "engine" / "wrap.py"
  path.write_text(_edit_wrap(path.read_text()))
  assert _run(b, _COMPILE, *units, cache=cache) == {units[0]: 1, units[1]: 0}


_TARGET = """
import json, sys
import numba
import numjoco.engine.api
from numjoco import engine
from numjoco.engine import _jit
u = _jit.units()[sys.argv[1]]
u.disp.compile(u.sig)
print(json.dumps({"cpu": numba.config.CPU_NAME, "features": numba.config.CPU_FEATURES,
                  "magic": [str(x) for x in u.disp.targetctx.codegen().magic_tuple()],
                  "hits": u.disp._cache.hits}))
"""


def test_a_portable_cache_compiles_and_loads_for_the_cpu_it_names(tmp_path):
  """`numjoco compile --portable DIR` writes DIR/kernels/portable-cpu; a process whose cache is
  DIR (another clone or machine) compiles and loads for that CPU, not its own, so the kernels
  built there are cache hits here."""
  from numjoco.app.warmup import PORTABLE_CPU
  (tmp_path / "cache" / "kernels").mkdir(parents=True)
  (tmp_path / "cache" / "kernels" / "portable-cpu").write_text(PORTABLE_CPU + "\n")
  root = ENGINE.parent
  env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
  unit = "numjoco.engine.smooth.factor_m"
  first = _run(root, _TARGET, unit, cache=tmp_path / "cache", base=env)
  second = _run(root, _TARGET, unit, cache=tmp_path / "cache", base=env)
  native = _run(root, _TARGET, unit, cache=tmp_path / "native", base=env)
  assert first["cpu"] == PORTABLE_CPU and first["features"] == ""
  assert first["magic"][1] == PORTABLE_CPU and native["magic"][1] != PORTABLE_CPU
  assert first["hits"] == 0 and second["hits"] == 1


def test_editing_a_docstring_changes_no_key(tmp_path):
  """A kernel's docstring is not part of its key: rewording `wrap.wrap`'s docstring keeps
  every unit's key (and so every compiled kernel), while a change of its code does not (the
  test above)."""
  a = _checkout(tmp_path, "a")
  keys_a = _run(a, _KEYS, cache=tmp_path / "cache")
  path = a / "engine" / "wrap.py"
  text = path.read_text()
  fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "wrap")
  doc = ast.get_docstring(fn, clean=False)
  assert doc and text.count(doc) == 1
  path.write_text(text.replace(doc, doc + " (reworded)"))
  keys_b = _run(a, _KEYS, cache=tmp_path / "cache")
  assert keys_b == keys_a
