"""How much memory a model may ask for: an absurd size in a model (a billion contacts,
nuser_body="1e8", a texture of 1e5 x 1e5 pixels) is refused with its element before the
compiler or make_data allocates it, instead of running the machine out of memory."""
from numjoco.engine import types as t

# the most the arrays of a Model, or of its Data, may take together
MAX_BYTES = 2 * 2**30
# the most pixels of one procedural texture, samples of one height field, or points of one
# generated mesh or flex grid (8192 x 8192)
MAX_SAMPLES = 2**26
# the most GJK/EPA iterations the collision buffers make room for: a larger <option
# ccd_iterations> is capped at run time (engine/collision/driver.py), where MuJoCo's
# iterations converge long before
MAX_CCD_ROOM = 10_000
# the most elements <replicate> may make (copies of copies included): beyond this a model
# compiles for minutes (about 5,000 bodies a second) and could not be simulated interactively
MAX_REPLICATED = 200_000
# the largest file (model, include or asset) the compiler reads: parsed, its data take a few
# times its size
MAX_FILE_BYTES = 2**30


def unreadable(path, what):
  """Why the file at `path` (`what`: what it is, for the message) is not read, else None: it
  is missing; it is not a regular file (a folder, a device such as /dev/zero, a FIFO: MuJoCo's
  readers find no content in them either, and reading one could block or never end); or it is
  larger than MAX_FILE_BYTES."""
  import os
  if not os.path.exists(path):
    return f"{what} not found (looked for {path})"
  if not os.path.isfile(path):
    return f"{what} is not a regular file ({path})"
  size = os.path.getsize(path)
  if size > MAX_FILE_BYTES:
    return (f"{what} is {_gib(size)}, more than the {_gib(MAX_FILE_BYTES)} numjoco reads "
            f"({path})")
  return None


def _gib(nbytes):
  return f"{nbytes / 2**30:.3g} GiB"


def check_bytes(node, what, nbytes, fix=""):
  """Refuse `what` (text for the message) at `node` when it would take more than MAX_BYTES."""
  if nbytes > MAX_BYTES:
    raise node.error(f"{what} would take {_gib(nbytes)}, more than the {_gib(MAX_BYTES)} "
                     f"numjoco allocates for a model{fix}")


def check_samples(node, what, count):
  """Refuse `what` at `node` when its `count` pixels, samples or points exceed MAX_SAMPLES."""
  if count > MAX_SAMPLES:
    raise node.error(f"{what}: {count} points, more than the {MAX_SAMPLES} numjoco allows")


def table_bytes(table, sizes):
  """(total bytes, [(bytes, name, shape spec)] largest first) of the arrays of a field table
  (types.MODEL_TABLE, DATA_TABLE) at `sizes`."""
  import numpy as np
  rows = []
  for name, dtype, shape in table:
    n = 1
    for s in t.resolve_shape(shape, sizes):
      n *= s
    rows.append((n * np.dtype(dtype).itemsize, name, shape))
  rows.sort(reverse=True)
  return sum(r[0] for r in rows), rows


def check_tables(node, sizes):
  """Refuse a model whose Model or Data arrays would take more than MAX_BYTES (at `node`: the
  <size> element when the model has one), naming the largest arrays and their sizes."""
  for table, what in ((t.MODEL_TABLE, "Model"), (t.DATA_TABLE, "Data")):
    total, rows = table_bytes(table, sizes)
    if total > MAX_BYTES:
      big = ", ".join(f"{name} {' x '.join(str(s) for s in shape)} ({_gib(b)})"
                      for b, name, shape in rows[:3])
      symbols = sorted({p for _, _, shape in rows[:3] for s in shape if isinstance(s, str)
                        for p in s.split("*") if not p.isdigit()})
      values = ", ".join(f"{s}={sizes[s]}" for s in symbols)
      fix = ("; lower <size nconmax/njmax>" if {"nconmax", "njmax", "nJmax"} & set(symbols)
             else "")
      check_bytes(node, f"its {what} arrays (the largest: {big}; {values})", total, fix)
