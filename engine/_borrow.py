"""How compiled code holds and reads the Model/Data structrefs: no reference counting, and
field reads LLVM may keep in registers.

- Fields are `BorrowedArray`s: the struct's arrays with a NULL meminfo, of a type whose data
  model hides the meminfo from Numba's reference counting, so reading a field emits no
  NRT_incref/NRT_decref call. The owning arrays stay in the struct beside them (`owners_*`
  tuples), so the memory lives exactly as long as the struct does. Views of a borrowed array
  are plain arrays with the NULL meminfo (the counting functions return at once on NULL);
  anything allocated from one (`.copy()`, arithmetic) is a plain, counted array.
- The structs themselves are not counted in compiled code either (`UncountedStructRefModel`):
  counted, each inlined helper that takes `m` or `d` costs an atomic add and subtract per call,
  inside per-body and per-contact loops. Their Python handles own them (`define_boxing`).
- A field is read with loads marked invariant (`invariant_getattr`): otherwise LLVM reloads a
  field's data pointer, shape and strides after every store into any array, and keeps none of
  them in registers across a loop.
"""
from llvmlite import ir
from numba.core import cgutils, imputils, types
from numba.core.datamodel import models
from numba.core.imputils import lower_cast
from numba.core.runtime.nrtdynmod import _meminfo_struct_type as _MEMINFO
from numba.extending import NativeValue, box, intrinsic, register_model, unbox
from numba.np.arrayobj import populate_array


class BorrowedArray(types.Array):
  """An array that owns nothing and is never reference counted (see module). Joined with
  another array type (Array.unify) it gives a plain array."""

  def __init__(self, dtype, ndim, layout, readonly=False, aligned=True):
    super().__init__(dtype, ndim, layout, readonly=readonly, aligned=aligned,
                     name=f"borrowed({dtype}, {ndim}d, {layout})")

  def __repr__(self):
    # distinct from Array's: the kernel cache keys a signature by its repr (engine/_jit.py)
    return f"Borrowed{super().__repr__()}"


class _Uncounted:
  """A data model whose values Numba's reference counting never touches: it shows no member
  and no meminfo to it (the layout, its base class's, is unchanged)."""

  def traverse(self, builder):
    return []

  def has_nrt_meminfo(self):
    return False

  def contains_nrt_meminfo(self):
    return False


@register_model(BorrowedArray)
class BorrowedArrayModel(_Uncounted, models.ArrayModel):
  """Numba's array layout; its meminfo is not shown to the reference counting."""


class UncountedStructRefModel(_Uncounted, models.StructRefModel):
  """Numba's structref layout (one meminfo pointer), hidden from the reference counting: the
  Model and Data structs live as long as their Python handles (numjoco.Model/Data), which
  every call into compiled code holds; compiled code holds no reference (see
  `define_boxing`)."""


@lower_cast(BorrowedArray, types.Array)
def _to_plain(context, builder, fromty, toty, val):
  """A borrowed array used where a plain one is expected (a unit's array argument, a branch
  joining it with a local array): the same value, whose NULL meminfo counting ignores."""
  return val


@intrinsic
def borrowed(typingctx, arr):
  """The same array (data, shape, strides) with no meminfo and no parent object, typed
  `BorrowedArray`."""
  if not isinstance(arr, types.Array):
    return None
  out_type = BorrowedArray(arr.dtype, arr.ndim, arr.layout, readonly=not arr.mutable,
                           aligned=arr.aligned)

  def codegen(context, builder, signature, args):
    src = context.make_array(arr)(context, builder, args[0])
    out = context.make_array(out_type)(context, builder)
    for field in ("nitems", "itemsize", "data", "shape", "strides"):
      setattr(out, field, getattr(src, field))
    out.meminfo = cgutils.get_null_value(out.meminfo.type)
    out.parent = cgutils.get_null_value(out.parent.type)
    return out._getvalue()

  return out_type(arr), codegen


@intrinsic
def rows(typingctx, buf, start, nrow, ncol):
  """buf.reshape(-1)[start:start + nrow * ncol].reshape((nrow, ncol)) for a C-contiguous
  buffer of any dimension: the same view (sharing buf's meminfo and parent), built directly;
  numba's reshape calls into its runtime for every view."""
  if not (isinstance(buf, types.Array) and buf.ndim >= 1 and buf.layout == "C"):
    return None
  out = types.Array(buf.dtype, 2, "C", readonly=not buf.mutable)

  def codegen(context, builder, sig, args):
    intp = context.get_value_type(types.intp)
    src = context.make_array(sig.args[0])(context, builder, args[0])
    st, nr, nc = (context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:]))
    res = context.make_array(out)(context, builder)
    itemsize = src.itemsize
    populate_array(res, data=builder.gep(src.data, [st]),
                   shape=cgutils.pack_array(builder, [nr, nc], ty=intp),
                   strides=cgutils.pack_array(builder, [builder.mul(nc, itemsize), itemsize],
                                              ty=intp),
                   itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
    return imputils.impl_ret_borrowed(context, builder, out, res._getvalue())

  return out(buf, start, nrow, ncol), codegen


def _invariant_load(builder, ptr, md):
  """The value at `ptr`, loaded scalar by scalar (an aggregate through insertvalue), each load
  marked !invariant.load (LLVM drops that mark when it splits an aggregate load)."""
  ty = ptr.type.pointee
  if isinstance(ty, (ir.LiteralStructType, ir.IdentifiedStructType, ir.ArrayType)):
    n = len(ty.elements) if not isinstance(ty, ir.ArrayType) else ty.count
    val = ir.Constant(ty, ir.Undefined)
    for i in range(n):
      elt = _invariant_load(builder, cgutils.gep_inbounds(builder, ptr, 0, i), md)
      val = builder.insert_value(val, elt, i)
    return val
  ld = builder.load(ptr)
  ld.set_metadata("invariant.load", md)
  return ld


def invariant_getattr(context, builder, typ, val, attr):
  """A field of the Model or Data struct, read with loads LLVM may treat as invariant.

  Numba's structref reads a field with ordinary loads: the payload pointer from the meminfo,
  then the field (an array's data pointer, shape and strides). LLVM cannot tell that a store
  into an array's data does not change them, so after every store each field would be read
  again and no loop would keep them in registers. Within compiled engine code the fields
  never change (only the setters of engine/_structs.py write them, from Python, between calls),
  so the
  loads are marked !invariant.load, and the payload pointer as non-null and dereferenceable
  over the whole payload, which lets LLVM hoist the loads out of loops and merge repeats."""
  payload_type = typ.get_data_type()
  model = context.data_model_manager[payload_type]
  alloc_type = model.get_value_type()
  mod = builder.module
  invariant = mod.add_metadata([])
  meminfo = cgutils.create_struct_proxy(typ)(context, builder, value=val).meminfo
  mi = builder.bitcast(meminfo, _MEMINFO.as_pointer())
  data = builder.load(cgutils.gep_inbounds(builder, mi, 0, 3))
  data.set_metadata("invariant.load", invariant)
  data.set_metadata("nonnull", mod.add_metadata([]))
  i64 = ir.IntType(64)
  data.set_metadata("dereferenceable", mod.add_metadata(
      [ir.Constant(i64, context.get_abi_sizeof(alloc_type))]))
  data.set_metadata("align", mod.add_metadata([ir.Constant(i64, 8)]))
  payload = builder.bitcast(data, alloc_type.as_pointer())
  field = cgutils.gep_inbounds(builder, payload, 0, model.get_field_position(attr))
  value = _invariant_load(builder, field, invariant)
  return imputils.impl_ret_borrowed(context, builder, typ.field_dict[attr], value)


_MEMINFO_PTR = types.MemInfoPointer(types.voidptr)


def define_boxing(struct_type, obj_class):
  """Boxing and unboxing of an uncounted struct type (`UncountedStructRefModel`) to and from
  `obj_class`, a `StructRefProxy`, by the reference rules of a type compiled code does not
  count: a struct passed in is borrowed for the call (Numba's unboxing takes a reference,
  released here at once, where its call wrapper would release it through the counting), and a
  struct passed out gets a reference of its own for its Python handle. A constructor's fresh
  struct therefore carries the allocation's reference besides the handle's: its caller drops
  that one (`release_allocation`)."""
  ctor = obj_class._numba_box_

  @box(struct_type)
  def _box(typ, val, c):
    meminfo = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val).meminfo
    c.context.nrt.incref(c.builder, _MEMINFO_PTR, meminfo)
    boxed = c.box(_MEMINFO_PTR, meminfo)   # the MemInfo object takes that reference
    fn = c.pyapi.unserialize(c.pyapi.serialize_object(ctor))
    ty = c.pyapi.unserialize(c.pyapi.serialize_object(typ))
    res = c.pyapi.call_function_objargs(fn, [ty, boxed])
    for obj in (fn, ty, boxed):
      c.pyapi.decref(obj)
    return res

  @unbox(struct_type)
  def _unbox(typ, obj, c):
    mi_obj = c.pyapi.object_getattr_string(obj, "_meminfo")
    meminfo = c.unbox(_MEMINFO_PTR, mi_obj).value
    c.context.nrt.decref(c.builder, _MEMINFO_PTR, meminfo)   # the handle keeps it alive
    c.pyapi.decref(mi_obj)
    st = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    st.meminfo = meminfo
    return NativeValue(st._getvalue())


def release_allocation(handle):
  """Drop a struct constructor's allocation reference (see `define_boxing`), leaving the
  handle's as the only one; returns the handle."""
  handle._meminfo.release()
  return handle
