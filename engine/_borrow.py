"""Arrays without reference counting for the fields of the Model/Data structrefs.

Numba counts references to every array it touches: each field read from a structref, each
view and each array argument costs an atomic increment and decrement of the array's
meminfo, ~1/3 of a small model's step (measured with tests/bench/profile.py and a debugger
on NRT_incref's callers: kinematics, pair filters, solver helpers). An array whose meminfo
is NULL skips both (Numba's NRT_incref/NRT_decref return at once on NULL), and so do all
views of it. The structref setters store such a borrowed copy of each field and keep the
owning arrays in the struct beside it (`owners_*` tuples), so the memory lives exactly as
long as the struct does, as before.
"""
from numba.core import cgutils
from numba.core import types
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, arr):
  """The same array (data, shape, strides) with no meminfo and no parent object."""
  if not isinstance(arr, types.Array):
    return None

  def codegen(context, builder, signature, args):
    src = context.make_array(arr)(context, builder, args[0])
    out = context.make_array(arr)(context, builder)
    for field in ("nitems", "itemsize", "data", "shape", "strides"):
      setattr(out, field, getattr(src, field))
    out.meminfo = cgutils.get_null_value(out.meminfo.type)
    out.parent = cgutils.get_null_value(out.parent.type)
    return out._getvalue()

  return arr(arr), codegen
