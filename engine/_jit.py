"""The engine's jit decorators: `jit`, `inline` and `unit`, and the kernel cache they share.

Why units. When an @njit function calls another, numba links the callee's optimized LLVM module
into the caller's and optimizes and code-generates the union again, so compile work grows with
the sum of every function's transitive closure (quadratic in call depth; the engine's call
chains are over 20 deep). A **unit** is a function compiled on
its own and called from other compiled code through a pointer kept in a table cell, so no
unit's code is ever linked into another's:

- `@unit(args, ret)` declares the signature. A call to a unit from compiled code is typed from
  that declaration (the unit is not compiled then) and lowered to a load of the cell's address
  (an external global `numjoco.<module>.<name>` registered with `llvmlite.binding.add_symbol`)
  and a call with numba's own calling convention, so exceptions propagate as from a direct
  call. Callers cached on disk resolve the symbol when they are loaded.
- A cell holds the trap (a kernel raising "unit not linked") until `link` fills it with the
  unit's compiled address. `link_for(m)` links what a model needs: every unit, except those
  whose `needs` predicate (engine/_sig.py: flexes, height fields, SDF geoms, sensors, the
  integrator, the solver, ...) is false for the model, which are then never compiled.
  `Model.struct` calls it, again when an option a predicate reads changes. A unit called
  from Python links itself and the ungated units.
- Small helpers stay `@jit`/`@inline` and are linked into each unit that calls them.

Indexing. In the engine's functions an array index is never negative: Python's wraparound
(`a[-1]`) is compiled out of them (`_fix_integer_index`), so a negative index reads before the
array. numba's own functions and all other compiled code keep Python's meaning.

The cache. Every jitted function is cached under a key of its own bytecode (its docstring left
out: rewording one recompiles nothing) and of everything it reaches without going through a
unit: the helpers it calls (recursively), the constants and enums it reads, a called unit's
declared signature; plus numba/llvmlite/Python versions, the flags and the CPU target. The
key does not depend on the checkout's path, so two clones of one commit share one cache, and
editing a file rebuilds only the functions whose key it changes. Files live in
`engine._cache.cache_dir()`; each function keeps its few newest versions there (older ones are
deleted when a new one is written).
"""
import ctypes
import enum
import hashlib
import os
import pickle
import re
import sys
import threading
import types as pytypes

import llvmlite
import numba
import numpy as np
from llvmlite import binding as llb
from llvmlite import ir
from numba.core import cgutils, compiler, serialize, types
from numba.core.callconv import excinfo_t
from numba.core.dispatcher import Dispatcher
from numba.core.imputils import lower_builtin
from numba.extending import typeof_impl, register_model, models

from numjoco.engine._cache import cache_dir as cache_root

_OPTIONS = dict(nogil=True, error_model="numpy")
# Part of every kernel's key: raise it when a change here alters compiled code (the lowering of
# unit calls, the cache format, _inline_refcounts), so that kernels compiled before are not
# reused.
_ABI = 4


# NRT_incref/NRT_decref, which numba links into every module marked noinline, made inline once
# numba's reference-count pruning has run: a view of a Model/Data field has a NULL meminfo
# (engine/_borrow.py), so a count on it as a call only returns, after the registers were
# spilled around it. Inline, the NULL test is one predicted branch, or nothing where LLVM
# sees the NULL.
_NRT_DEF = re.compile(r"^(define [^\n]*@NRT_(?:incref|decref)\([^)]*\)[^{#]*)(#\d+ *)?\{", re.M)


def _inline_refcounts(module):
  """`module` with NRT_incref/NRT_decref's definitions marked alwaysinline (a text round
  trip: LLVM's C API offers no way to drop an attribute), or `module` itself."""
  text = str(module)
  text, n = _NRT_DEF.subn(lambda mo: mo.group(1).rstrip() + " alwaysinline {", text)
  if not n:
    return module
  out = llb.parse_assembly(text)
  out.verify()
  return out


def _optimize_final_module(self):
  """numba's CPUCodeLibrary._optimize_final_module (cheap module passes, which end with the
  reference-count pruning, then the full ones) with _inline_refcounts between the two."""
  from numba.core import codegen as cg
  from numba.core import config
  mpm_cheap, mpb_cheap = self._codegen._module_pass_manager(
      loop_vectorize=self._codegen._loopvect, slp_vectorize=False,
      opt=self._codegen._opt_level, cost="cheap")
  mpm_full, mpb_full = self._codegen._module_pass_manager()
  mpm_cheap.run(self._final_module, mpb_cheap)
  if not config.LLVM_REFPRUNE_PASS:
    self._final_module = cg.remove_redundant_nrt_refct(self._final_module)
  self._final_module = _inline_refcounts(self._final_module)
  mpm_full.run(self._final_module, mpb_full)


def _install_refcount_inlining():
  """Put _optimize_final_module in place of numba's, for every library compiled in this
  process (the change keeps each function's meaning), when numba's is the one it follows."""
  from numba.core import codegen as cg
  import inspect
  try:
    src = inspect.getsource(cg.CPUCodeLibrary._optimize_final_module)
  except (OSError, TypeError):
    return
  if 'cost="cheap"' in src and "mpm_full.run" in src:
    global NUMBA_OPTIMIZE_FINAL_MODULE
    NUMBA_OPTIMIZE_FINAL_MODULE = cg.CPUCodeLibrary._optimize_final_module
    cg.CPUCodeLibrary._optimize_final_module = _optimize_final_module


NUMBA_OPTIMIZE_FINAL_MODULE = None   # numba's own, once replaced (tests compare the two)


_install_refcount_inlining()


# Python's negative-index wraparound is compiled out of the engine's own functions: the engine
# never indexes an array with a negative integer (module docstring), and the wrap costs every
# signed index a shift, a mask and a spilled dimension length, in the hottest loops and in code
# size. numba's own functions and anything else keep Python's meaning (a[-1] is the last).
_ENGINE_MARK = "7numjoco6engine"   # in the mangled name of every function of numjoco.engine


def _fix_integer_index(context, builder, idxty, idx, size):
  """numba's fix_integer_index (numba.np.arrayobj), without the wrap of negative indices in
  functions of numjoco.engine."""
  if idxty.signed and _ENGINE_MARK in builder.function.name:
    return context.cast(builder, idx, idxty, numba.types.intp)
  return NUMBA_FIX_INTEGER_INDEX(context, builder, idxty, idx, size)


def _install_engine_indexing():
  """Put _fix_integer_index in place of numba's for every function compiled in this process."""
  from numba.np import arrayobj
  global NUMBA_FIX_INTEGER_INDEX
  if NUMBA_FIX_INTEGER_INDEX is None:
    NUMBA_FIX_INTEGER_INDEX = arrayobj.fix_integer_index
    arrayobj.fix_integer_index = _fix_integer_index


NUMBA_FIX_INTEGER_INDEX = None   # numba's own, once replaced


_install_engine_indexing()


def _use_portable_target():
  """A cache built by `numjoco compile --portable DIR` names its CPU target in
  `kernels/portable-cpu`; a process using that cache compiles and loads for the same target
  (numba's CPU name and features are part of every kernel's key). Runs before the first kernel
  is defined, which is when numba creates its target machine."""
  try:
    with open(os.path.join(cache_root(), "portable-cpu")) as f:
      cpu = f.read().strip()
  except OSError:
    return
  if cpu and os.environ.get("NUMBA_CPU_NAME") in (None, cpu):
    os.environ["NUMBA_CPU_NAME"] = cpu
    os.environ["NUMBA_CPU_FEATURES"] = ""
    numba.config.reload_config()


_use_portable_target()


_KEEP_VERSIONS = 3          # versions of one function kept on disk
_HERE = os.path.dirname(os.path.abspath(__file__))


def _env_key():
  """What every kernel's key shares: tool versions, flags, this mechanism's `_ABI` and the
  files that define the Model/Data struct machinery (their field types, built from
  engine/types.py's tables, are spelled in the signature of every kernel that takes them)."""
  h = hashlib.sha256()
  for part in (numba.__version__, llvmlite.__version__, sys.version, np.__version__,
               os.environ.get("NUMBA_BOUNDSCHECK", ""), os.environ.get("NUMBA_OPT", ""),
               str(numba.config.BOUNDSCHECK), str(numba.config.OPT)):
    h.update(part.encode() + b"\0")
  h.update(f"abi {_ABI}".encode())
  for name in ("_structs.py", "_borrow.py"):
    with open(os.path.join(_HERE, name), "rb") as f:
      h.update(f.read())
  return h.hexdigest()


_ENV_KEY = None
_keys = {}                  # py_func -> content key (hex)
_keys_lock = threading.RLock()


def _code_names(code):
  """Global and attribute names, and constants, of a code object and the ones nested in it."""
  names, consts = set(code.co_names), []
  for c in code.co_consts:
    if isinstance(c, pytypes.CodeType):
      n, k = _code_names(c)
      names |= n
      consts += k
    else:
      consts.append(c)
  return names, consts


def _code_bytes(code, doc=None):
  """Bytecode of a function and its nested code objects, without file names or line numbers,
  and without the docstring `doc` (a function's first constant): editing a docstring
  recompiles nothing."""
  parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode(),
           repr(code.co_freevars).encode(), repr(code.co_cellvars).encode()]
  for i, c in enumerate(code.co_consts):
    if i == 0 and doc is not None and c is doc:
      continue
    parts.append(_code_bytes(c) if isinstance(c, pytypes.CodeType) else repr(c).encode())
  return b"\1".join(parts)


def _value_key(v, names, deps, depth=0):
  """Key text of one value a function reads; the Python functions it calls go to `deps`."""
  if isinstance(v, Unit):
    return f"unit {v.symbol} {v.sig}"
  if isinstance(v, Dispatcher):
    deps.append(v.py_func)
    return f"jit {v.py_func.__module__}.{v.py_func.__qualname__} {sorted(v.targetoptions.items())}"
  if isinstance(v, (bool, int, float, complex, str, bytes, type(None))):
    return repr(v)
  if isinstance(v, enum.Enum):
    return f"{type(v).__name__}.{v.name}={v.value!r}"
  if isinstance(v, tuple):
    return "(" + ",".join(_value_key(x, names, deps, depth) for x in v) + ")"
  if isinstance(v, np.ndarray):
    return f"array {v.dtype} {v.shape} {hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()}"
  if isinstance(v, np.generic):
    return f"{type(v).__name__} {v!r}"
  if isinstance(v, type) and issubclass(v, enum.Enum):
    return f"enum {v.__name__} " + ",".join(f"{m.name}={m.value!r}" for m in v)
  if isinstance(v, pytypes.ModuleType):
    if depth > 2 or not v.__name__.startswith("numjoco.engine"):
      return f"module {v.__name__}"
    parts = [f"module {v.__name__}"]
    for n in sorted(names):
      if n in v.__dict__:
        parts.append(n + "=" + _value_key(v.__dict__[n], names, deps, depth + 1))
    return ";".join(parts)
  if isinstance(v, pytypes.FunctionType):
    if (v.__module__ or "").startswith("numjoco.engine"):
      deps.append(v)
    return f"py {v.__module__}.{v.__qualname__}"
  defn = getattr(v, "_defn", None)          # @intrinsic / @overload objects
  if isinstance(defn, pytypes.FunctionType):
    return f"{type(v).__name__} " + _value_key(defn, names, deps, depth)
  if isinstance(v, types.Type):
    return f"nbtype {v}"
  return f"{type(v).__module__}.{type(v).__qualname__}"


_own = {}                   # py_func -> (hash of its own content, functions it calls)


def _own_key(fn):
  """Hash of one function's bytecode and of the values it reads, and the functions it calls
  (not through units)."""
  got = _own.get(fn)
  if got is not None:
    return got
  h, deps = hashlib.sha256(), []
  h.update(f"{fn.__module__}.{fn.__qualname__}\0".encode())
  h.update(_code_bytes(fn.__code__, fn.__doc__))
  names, consts = _code_names(fn.__code__)
  g = fn.__globals__
  for n in sorted(names):
    if n in g:
      h.update(f"\0{n}=".encode() + _value_key(g[n], names, deps).encode())
  for c in consts:
    if isinstance(c, tuple) or not isinstance(c, (int, float, str, bytes, type(None))):
      h.update(repr(c).encode())
  if fn.__closure__:
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
      try:
        val = cell.cell_contents
      except ValueError:
        continue
      h.update(f"\0{name}=".encode() + _value_key(val, names, deps).encode())
  if fn.__defaults__:
    h.update(repr(fn.__defaults__).encode())
  got = _own[fn] = (h.hexdigest(), tuple(deps))
  return got


def _closure(fn):
  """fn and every function it reaches without going through a unit."""
  seen, todo = {fn}, [fn]
  while todo:
    for dep in _own_key(todo.pop())[1]:
      if dep not in seen:
        seen.add(dep)
        todo.append(dep)
  return seen


def _func_key(fn):
  """Content key of a Python function: the own keys of every function it reaches without
  going through a unit, itself included (a set: independent of the order of discovery, and
  well defined for recursive functions)."""
  with _keys_lock:
    key = _keys.get(fn)
    if key is not None:
      return key
    own = _own_key(fn)[0]
    rest = sorted(_own_key(f)[0] for f in _closure(fn) if f is not fn)
    key = _keys[fn] = hashlib.sha256((own + "|" + ",".join(rest)).encode()).hexdigest()
    return key


def closure_size(fn):
  """Bytes of bytecode a function compiles: its own and its helpers' (not through units)."""
  return sum(len(f.__code__.co_code) for f in _closure(fn))


class _KernelCache:
  """numba's per-dispatcher cache interface, with files named by content key (see module)."""

  def __init__(self, py_func):
    self._py_func = py_func
    self._enabled = True
    self._base = f"{py_func.__module__}.{py_func.__qualname__}".replace("<locals>.", "")
    self.hits = 0

  @property
  def cache_path(self):
    return cache_root()

  def enable(self):
    self._enabled = True

  def disable(self):
    self._enabled = False

  def flush(self):
    pass

  def _path(self, sig, codegen):
    global _ENV_KEY
    if _ENV_KEY is None:
      _ENV_KEY = _env_key()
    text = repr((_func_key(self._py_func), str(sig), codegen.magic_tuple(), _ENV_KEY))
    return os.path.join(cache_root(),
                        f"{self._base}-{hashlib.sha256(text.encode()).hexdigest()[:20]}.nbk")

  def load_overload(self, sig, target_context):
    if not self._enabled:
      return None
    target_context.refresh()
    path = self._path(sig, target_context.codegen())
    try:
      with open(path, "rb") as f:
        payload = pickle.loads(f.read())
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
      return None
    try:
      os.utime(path)                     # newest use first when old versions are pruned
    except OSError:
      pass
    self.hits += 1
    return compiler.CompileResult._rebuild(target_context, *payload)

  def save_overload(self, sig, cres):
    if not self._enabled or cres.library.has_dynamic_globals or any(
        not x.can_cache for x in cres.lifted):
      return
    path = self._path(sig, cres.library.codegen)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = serialize.dumps(cres._reduce())
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "wb") as f:
      f.write(data)
    os.replace(tmp, path)
    _prune(os.path.dirname(path), self._base)


def _prune(folder, base):
  """Keep the `_KEEP_VERSIONS` most recently used files of one function."""
  try:
    files = [e for e in os.scandir(folder)
             if e.name.startswith(base + "-") and e.name.endswith(".nbk")
             and "." not in e.name[len(base) + 1:-4]]
    files.sort(key=lambda e: e.stat().st_mtime, reverse=True)
    for e in files[_KEEP_VERSIONS:]:
      os.unlink(e.path)
  except OSError:
    pass


def _cached(disp):
  disp._cache = _KernelCache(disp.py_func)
  return disp


def jit(fn=None, **options):
  """`numba.njit(nogil=True, error_model="numpy")` with the engine's content-keyed cache."""
  if fn is None:
    return lambda f: jit(f, **options)
  return _cached(numba.njit(**{**_OPTIONS, **options})(fn))


def inline(fn=None, **options):
  """`jit` inlined into its callers at numba IR level (`inline='always'`)."""
  if fn is None:
    return lambda f: inline(f, **options)
  return jit(fn, inline="always", **options)


# ---------------------------------------------------------------------------------------------
# Units

_units = {}                 # symbol -> Unit
_trap_address = None
_link_lock = threading.RLock()


@jit
def _trap():
  raise RuntimeError("numjoco: a compiled engine unit was called before it was linked "
                     "(engine._jit.link_for(model) links a model's units)")


def _trap_addr():
  global _trap_address
  if _trap_address is None:
    sig = types.none()
    _trap.compile(sig)
    cres = _trap.overloads[sig.args]
    _trap_address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
  return _trap_address


class UnitType(types.Callable, types.Dummy):
  """numba type of one unit: calls typed by its declared signature (see module)."""

  def __init__(self, unit):
    self.unit = unit
    super().__init__(f"unit({unit.symbol})")

  def get_call_type(self, context, args, kws):
    sig = self.unit.sig
    if kws or len(args) != len(sig.args):
      return None
    for a, b in zip(args, sig.args):
      if a != b and context.can_convert(a, b) is None:
        return None
    return sig

  def get_call_signatures(self):
    return [self.unit.sig], False

  def get_impl_key(self, sig):
    return self


register_model(UnitType)(models.OpaqueModel)


class Unit:
  """A separately compiled engine stage (see module): call it like the function it wraps."""

  def __init__(self, disp, sig, needs):
    self.disp, self.sig, self.needs = disp, sig, needs
    fn = disp.py_func
    self.symbol = f"{fn.__module__}.{fn.__qualname__}"
    self.__doc__, self.__name__, self.__qualname__ = fn.__doc__, fn.__name__, fn.__qualname__
    self.__module__, self.__wrapped__ = fn.__module__, fn
    self.cell = ctypes.c_void_p(_trap_addr())
    self.linked = False
    self._entry = None     # the compiled entry point, once `entry` found it
    llb.add_symbol(self.symbol, ctypes.addressof(self.cell))
    self.nbtype = UnitType(self)
    lower_builtin(self.nbtype, *sig.args)(
        lambda context, builder, sig, args: _emit_call(context, builder, self, sig, args))
    _units[self.symbol] = self

  def link(self):
    """Compile (or load from the cache) and fill the table cell."""
    with _link_lock:
      if self.linked:
        return
      self.disp.compile(self.sig)
      cres = self.disp.overloads[self.sig.args]
      self.cell.value = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
      self.linked = True

  def is_cached(self):
    """True when the compiled unit is on disk (linking it then only loads it)."""
    return self.linked or os.path.exists(   # keyed as `link`'s compile(self.sig) keys it
        self.disp._cache._path(self.sig, self.disp.targetctx.codegen()))

  def __call__(self, *args):
    if not self.linked:
      link_for(None)
      self.link()
    return self.disp(*args)   # the dispatcher checks the argument types

  def entry(self):
    """The compiled function for calls from Python whose arguments are known to have the
    declared types: without the dispatcher's type checks and overload lookup (1.1 us of a
    Python-side step call). Wrong types are not caught: call the unit itself then."""
    if self._entry is None:
      if not self.linked:
        link_for(None)
        self.link()
      self._entry = self.disp.overloads[self.sig.args].entry_point
    return self._entry

  def __repr__(self):
    return f"<unit {self.symbol} {self.sig}>"


@typeof_impl.register(Unit)
def _typeof_unit(val, c):
  return val.nbtype


def _emit_call(context, builder, unit, sig, args):
  """A call through the unit's cell, with numba's calling convention (CPUCallConv)."""
  callconv = context.call_conv
  fnty = callconv.get_function_type(sig.return_type, sig.args)
  mod = builder.module
  gv = mod.globals.get(unit.symbol)
  if gv is None:
    gv = ir.GlobalVariable(mod, fnty.as_pointer(), name=unit.symbol)
    gv.linkage = "external"
  fptr = builder.load(gv)
  retty = callconv.get_return_type(sig.return_type).pointee
  retvaltmp = cgutils.alloca_once(builder, retty)
  builder.store(cgutils.get_null_value(retty), retvaltmp)
  excinfoptr = cgutils.alloca_once(builder, ir.PointerType(excinfo_t), name="excinfo")
  arginfo = callconv._get_arg_packer(sig.args)
  realargs = [retvaltmp, excinfoptr] + list(arginfo.as_arguments(builder, args))
  code = builder.call(fptr, realargs)
  status = callconv._get_return_status(builder, code, builder.load(excinfoptr))
  with cgutils.if_unlikely(builder, status.is_error):
    callconv.return_status_propagate(builder, status)
  return context.get_returned_value(builder, sig.return_type, builder.load(retvaltmp))


def unit(args, ret=types.none, needs=None):
  """Declare a separately compiled stage with signature `ret(*args)` (numba types). `needs`:
  a predicate on the Python-side Model; a unit whose predicate is false for a model is not
  compiled for it (see `link_for`)."""
  def deco(fn):
    disp = jit(fn)
    return Unit(disp, ret(*args), needs)
  return deco


def link_for(m):
  """Link the units model `m` needs (every unit whose `needs` holds; with m=None the ungated
  ones); returns the number linked by this call."""
  n = 0
  with _link_lock:
    for u in list(_units.values()):
      if u.linked:
        continue
      if u.needs is not None and (m is None or not u.needs(m)):
        continue
      u.link()
      n += 1
  return n


def units():
  """Every unit defined so far, by symbol."""
  return dict(_units)
