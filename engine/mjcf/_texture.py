"""Texture assets at load time: PNG files (Pillow) and MuJoCo's procedural textures -> the
pixels of mjModel.tex_data.

Follows mjCTexture (src/user/user_objects.cc): a 2d texture is one image, rows top first; a cube
or skybox texture is six square faces stacked vertically (right, left, up, down, front, back),
or one face repeated when loaded from a single square file (then height == width). Builtin
colours are truncated to bytes as MuJoCo does, and the random marks come from MuJoCo's
generator (std::mt19937_64 seeded with 42, one uniform draw per pixel). Plain numpy; the
renderer reads the result, physics never does.
"""
import io
import math

import numpy as np

TYPES = {"2d": 0, "cube": 1, "skybox": 2}
BUILTINS = ("none", "gradient", "checker", "flat")
MARKS = ("none", "edge", "cross", "random")
COLORSPACES = {"auto": 0, "linear": 1, "srgb": 2}
FACES = "RLUDFB"        # cube face order in tex_data: right left up down front back


class TextureError(ValueError):
  """A texture that cannot be built; the compiler adds the element's file and line."""


def _byte(rgb):
  """MuJoCo's (std::byte)(255 * c): truncation (through a C int, as x86 converts: NaN, inf
  and values beyond the int's range give 0)."""
  def one(c):
    v = 255 * float(c)
    return int(v) & 0xFF if math.isfinite(v) and abs(v) < 2**31 else 0
  return np.array([one(c) for c in rgb[:3]], np.uint8)


def _interp(rgb1, rgb2, pos):
  """MuJoCo's sigmoid colour interpolation for pos in about (-1, 1): rgb1 at +1, rgb2 at -1.
  In place, one channel at a time (3x faster than on (h, w, 3) temporaries, the same
  operations in the same order: identical bytes)."""
  alpha = pos / np.sqrt(1 + pos * pos)
  alpha /= 1 / math.sqrt(2)
  alpha += 1
  alpha *= 0.5
  np.clip(alpha, 0.0, 1.0, out=alpha)
  beta = 1 - alpha
  out = np.empty(np.shape(pos) + (3,), np.uint8)
  v = np.empty_like(alpha)
  for c in range(3):
    np.multiply(alpha, float(rgb1[c]), out=v)
    v += beta * float(rgb2[c])
    v *= 255
    out[..., c] = v.astype(np.int64)   # MuJoCo's (std::byte)(int): wraps as the cast does
  return out


def _checker(w, h, c1, c2):
  img = np.empty((h, w, 3), np.uint8)
  img[:, :] = c2
  img[:h // 2, :w // 2] = c1
  img[h // 2:, w // 2:] = c1
  return img


_MT_N, _MT_M = 312, 156
_MT_A = np.uint64(0xB5026F5AA96619E9)
_MT_UPPER, _MT_LOWER = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)
_TEMPER_CHUNK = 1 << 15   # words tempered at a time (stays in cache)


def _mt_seed(seed):
  """std::mt19937_64's initial state of 312 words."""
  mt = [int(seed) & 0xFFFFFFFFFFFFFFFF]
  for i in range(1, _MT_N):
    prev = mt[-1]
    mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & 0xFFFFFFFFFFFFFFFF)
  return np.array(mt, np.uint64)


def _mt_words(count, seed):
  """The first `count` untempered words of std::mt19937_64(seed), after its first twist.

  The twist written as a stream, x[k + 312] = x[k + 156] ^ f(x[k], x[k + 1]): each new word
  depends on words at least 156 back, so 156 of them are computed per step, with a few numpy
  calls writing into one buffer (a step per 312-word block costs twice the calls)."""
  n, m, one = _MT_N, _MT_M, np.uint64(1)
  steps = -(-count // m)
  x = np.empty(n + steps * m + 1, np.uint64)
  x[:n] = _mt_seed(seed)
  t, u = np.empty(m, np.uint64), np.empty(m, np.uint64)
  band, bor, bxor, rsh, mul = (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.right_shift,
                               np.multiply)
  upper, lower, a = _MT_UPPER, _MT_LOWER, _MT_A
  for k in range(0, steps * m, m):
    band(x[k:k + m], upper, out=t)
    band(x[k + 1:k + m + 1], lower, out=u)
    bor(t, u, out=t)
    band(u, one, out=u)
    mul(u, a, out=u)          # the twist matrix's A where the low bit is set
    rsh(t, one, out=t)
    out = x[k + n:k + n + m]
    bxor(x[k + m:k + n], t, out=out)
    bxor(out, u, out=out)
  return x[n:n + count]


def mt19937_64_uniform(count, seed=42):
  """`count` draws of std::uniform_real_distribution<double>(0, 1) on std::mt19937_64(seed)
  (libstdc++: one 64-bit word / 2**64 per draw, kept below 1)."""
  words = _mt_words(count, seed)
  out = np.empty(count)
  t = np.empty(min(count, _TEMPER_CHUNK), np.uint64)
  for s in range(0, count, _TEMPER_CHUNK):
    y = words[s:s + _TEMPER_CHUNK]   # tempered in place, a cache-sized chunk at a time
    tc = t[:len(y)]
    for shift, mask, left in ((29, 0x5555555555555555, False), (17, 0x71D67FFFEDA60000, True),
                              (37, 0xFFF7EEE000000000, True), (43, None, False)):
      (np.left_shift if left else np.right_shift)(y, np.uint64(shift), out=tc)
      if mask is not None:
        np.bitwise_and(tc, np.uint64(mask), out=tc)
      np.bitwise_xor(y, tc, out=y)
    np.multiply(y, 2.0 ** -64, out=out[s:s + _TEMPER_CHUNK], casting="unsafe")
  return np.minimum(out, np.nextafter(1.0, 0.0), out=out)


MARKS_CACHE_VERSION = 1   # bump when the generator's output could change


def marks_cache_dir():
  """Where random_marks keeps its masks: beside the Numba cache (engine/_cache.py's root)."""
  import os
  root = os.environ.get("NUMJOCO_CACHE_DIR") or os.path.join(
      os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "numjoco")
  return os.path.join(root, "texture-marks")


def random_marks(count, random):
  """Which of `count` pixels get a random mark: MuJoCo's draw < `random` for each (bool array).

  MuJoCo seeds its generator with 42 for every texture, so the mask depends on (count, random)
  only; computing it costs ~0.15 s for dm_control's 800x800 skybox, on the way to the viewer's
  first frame. The packed mask (count / 8 bytes) is kept in the numjoco cache folder and
  recomputed when missing or unreadable."""
  import os
  path = os.path.join(marks_cache_dir(), f"mt64-42-v{MARKS_CACHE_VERSION}-{count}-"
                                         f"{float(random).hex()}.npy")
  try:
    packed = np.load(path, allow_pickle=False)
    if packed.dtype == np.uint8 and packed.shape == ((count + 7) // 8,):
      return np.unpackbits(packed, count=count).view(bool)
  except (OSError, ValueError, EOFError):
    pass
  hit = mt19937_64_uniform(count) < random
  try:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
      np.save(f, np.packbits(hit))
    os.replace(tmp, path)   # readers never see a partial file
  except OSError:
    pass    # a read-only cache folder: compute each time
  return hit


def _marks(img, faces, mark, markrgb, random):
  """Edge / cross / random marks on each square face (or on the single 2d image)."""
  col = _byte(markrgb)
  h = img.shape[0] // faces
  for j in range(faces):
    f = img[j * h:(j + 1) * h]
    if mark == "edge":
      f[:, 0] = f[:, -1] = col
      f[0, :] = f[-1, :] = col
    elif mark == "cross":
      f[:, f.shape[1] // 2] = col
      f[h // 2, :] = col
  if mark == "random" and random > 0:
    img.reshape(-1, 3)[random_marks(img.shape[0] * img.shape[1], random)] = col


def builtin(kind, builtin_, width, height, rgb1, rgb2, mark, markrgb, random):
  """Pixels (rows, width, 3) uint8 of MuJoCo's procedural texture (Builtin2D / BuiltinCube)."""
  if width < 1:
    raise TextureError("Invalid width of builtin texture")
  c1, c2 = _byte(rgb1), _byte(rgb2)
  if kind == TYPES["2d"]:
    if height < 1:
      raise TextureError("Invalid height of builtin texture")
    w, h = width, height
    if builtin_ == "gradient":
      x = 2 * np.arange(w) / max(w - 1, 1) - 1.0
      y = 1 - 2 * np.arange(h) / max(h - 1, 1)
      pos = 2 * np.sqrt(x[None, :] ** 2 + y[:, None] ** 2) - 1
      img = _interp(rgb2, rgb1, pos)
    elif builtin_ == "checker":
      img = _checker(w, h, c1, c2)
    else:
      img = np.empty((h, w, 3), np.uint8)
      img[:] = c1
    _marks(img, 1, mark, markrgb, random)
    return img
  w = width
  img = np.empty((6 * w, w, 3), np.uint8)
  faces = [img[i * w:(i + 1) * w] for i in range(6)]
  if builtin_ == "gradient":
    x = 2 * np.arange(w) / max(w - 1, 1) - 1.0
    y = 1 - 2 * np.arange(w) / max(w - 1, 1)
    X, Y = np.meshgrid(x, y)
    r = np.sqrt(1 + X * X + Y * Y)
    side = _interp(rgb1, rgb2, np.arcsin(Y / r) / (0.5 * math.pi))
    up = 1 - np.arccos(1.0 / r) / (0.5 * math.pi)
    for i in (0, 1, 4, 5):
      faces[i][:] = side
    faces[2][:] = _interp(rgb1, rgb2, up)
    faces[3][:] = _interp(rgb1, rgb2, -up)
  elif builtin_ == "checker":
    for i in range(6):
      faces[i][:] = _checker(w, w, c1, c2) if i < 4 else _checker(w, w, c2, c1)
  else:
    for i in range(6):
      faces[i][:] = c2 if i == 3 else c1
  _marks(img, 6, mark, markrgb, random)
  return img


def decode_png(data, nchannel):
  """(pixels (h, w, nchannel) uint8, is_srgb) of PNG bytes, converted as lodepng does (16-bit
  samples keep their high byte, alpha dropped for 3 channels)."""
  from PIL import Image    # a runtime dependency, imported only when a model has a PNG
  try:
    img = Image.open(io.BytesIO(data))
    img.load()
  except Exception as e:  # noqa: BLE001 - any decoder error names the file
    raise TextureError(f"cannot decode PNG: {e}") from None
  if img.format != "PNG":
    raise TextureError(f"not a PNG file (Pillow reads it as {img.format})")
  srgb = "srgb" in img.info      # the sRGB chunk only, as MuJoCo (a gAMA chunk stays linear)
  if img.mode in ("I;16", "I;16B", "I;16L", "I"):
    img = Image.fromarray((np.asarray(img, np.uint32) >> 8).astype(np.uint8), "L")
  mode = {1: "L", 3: "RGB", 4: "RGBA"}.get(nchannel)
  if mode is None:
    raise TextureError(f"Unsupported number of channels: {nchannel}")
  a = np.asarray(img.convert(mode), np.uint8)
  return a.reshape(a.shape[0], a.shape[1], nchannel), srgb


def flip(img, hflip, vflip):
  """MuJoCo's FlipIfNeeded: mirror columns, then rows."""
  if hflip:
    img = img[:, ::-1]
  if vflip:
    img = img[::-1]
  return np.ascontiguousarray(img)


def cube_from_grid(img, gridsize, gridlayout, rgb1):
  """Six faces (6w, w, c) cut from a composite image (LoadCubeSingle); one square face (w, w, c)
  when gridsize is 1 1."""
  rows, cols = gridsize
  if rows < 1 or cols < 1 or rows * cols > 12:
    raise TextureError("gridsize must be non-zero and no more than 12 squares in texture")
  h, w = img.shape[:2]
  if w // cols != h // rows or w % cols or h % rows:
    raise TextureError("PNG size must be integer multiple of gridsize in texture")
  if rows == 1 and cols == 1:
    return img
  s = w // cols
  out = np.empty((6 * s, s, img.shape[2]), np.uint8)
  loaded = [False] * 6
  for k in range(rows * cols):
    sym = gridlayout[k] if k < len(gridlayout) else "."
    if sym == ".":
      continue
    if sym not in FACES:
      raise TextureError("gridlayout symbol is not among '.RLUDFB' in texture")
    i = FACES.index(sym)
    r0, c0 = s * (k // cols), s * (k % cols)
    out[i * s:(i + 1) * s] = img[r0:r0 + s, c0:c0 + s]
    loaded[i] = True
  _fill_missing(out, loaded, rgb1)
  return out


def cube_from_faces(images, rgb1):
  """Six faces (6w, w, c) from up to six square images in FACES order (None: missing)."""
  first = next((im for im in images if im is not None), None)
  if first is None:
    raise TextureError("No cubefiles_ defined in cube or skybox texture")
  w = first.shape[1]
  out = np.empty((6 * w, w, first.shape[2]), np.uint8)
  for i, im in enumerate(images):
    if im is None:
      continue
    if im.shape[0] != im.shape[1]:
      raise TextureError(f"Non-square PNG file for cube face '{FACES[i]}'")
    if im.shape[1] != w:
      raise TextureError(f"PNG file for cube face '{FACES[i]}' has incompatible size")
    out[i * w:(i + 1) * w] = im
  _fill_missing(out, [im is not None for im in images], rgb1)
  return out


def _fill_missing(out, loaded, rgb1):
  w = out.shape[1]
  col = _byte(rgb1)
  for i in range(6):
    if not loaded[i]:
      out[i * w:(i + 1) * w, :, :3] = col
      if out.shape[2] == 4:
        out[i * w:(i + 1) * w, :, 3] = 255
