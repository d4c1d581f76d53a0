"""VideoWriter: encode rendered frames to a video file with PyAV (FFmpeg) on a background thread.

The caller (the viewer's draw loop, or `numjoco record`) only copies each frame into a bounded
queue; colour conversion, encoding and muxing happen on the encoder thread, where PyAV releases
the GIL. Frame k is stamped k / fps: the caller decides which simulation state each frame shows.
"""
import fractions
import os
import queue
import threading
import time

import numpy as np

# pixel formats with chroma subsampled 2x2: width and height must be even
_SUBSAMPLED = ("yuv420p", "yuvj420p", "nv12", "nv21")
_STOP = object()


def _rate(fps):
  """fps as an exact Fraction (30, 29.97 -> 2997/100, Fraction(30000, 1001))."""
  try:
    r = fractions.Fraction(fps).limit_denominator(1001)
  except (TypeError, ValueError):
    raise ValueError(f"fps must be a positive number, got {fps!r}") from None
  if r <= 0:
    raise ValueError(f"fps must be positive, got {fps!r}")
  return r


class VideoWriter:
  """A video file written frame by frame; `write` returns as soon as the frame is queued.

  Frames are (height, width, 3) uint8 RGB arrays, rows top-down (HeadlessRenderer.render's
  images). MP4 files are fragmented at keyframes (one a second): a file whose writer was
  killed still plays up to about a second before the kill. For yuv420p an odd width or height is padded by one column/row repeating the edge
  (`encoded_size` says what was encoded). An error on the encoder thread is raised by the next
  `write` or by `close`. Use as a context manager, or call `close()`: it drains the queue,
  flushes the encoder and finalises the file; a writer closed before its first frame leaves no
  file.
  """

  def __init__(self, path, width, height, fps=30, codec="libx264", pix_fmt="yuv420p",
               preset="veryfast", crf=20, queue_size=16, options=None):
    """Open `path` (its extension picks the container: .mp4, .mkv, ...) for `width` x `height`
    frames at `fps` frames per second. `preset` and `crf` are libx264's (ignored by codecs
    without them); `options` adds other FFmpeg codec options; `queue_size` bounds the frames
    waiting for the encoder (write blocks while it is full)."""
    import av
    self.path = os.fspath(path)
    self.width, self.height = int(width), int(height)
    if self.width < 1 or self.height < 1:
      raise ValueError(f"video size must be positive, got {width}x{height}")
    self.fps = _rate(fps)
    self.pix_fmt = pix_fmt
    pad = pix_fmt in _SUBSAMPLED
    self.encoded_size = (self.width + (self.width % 2 if pad else 0),
                         self.height + (self.height % 2 if pad else 0))
    opts = {}
    if codec.startswith("libx264"):
      opts = {"preset": str(preset), "crf": str(crf)}
    # a keyframe every second: an MP4 is written in fragments that start at keyframes
    opts["g"] = str(max(1, round(float(self.fps))))
    opts.update({k: str(v) for k, v in (options or {}).items()})
    parent = os.path.dirname(os.path.abspath(self.path))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
      raise OSError(f"cannot open {self.path!r} for writing: {parent!r} is not a writable folder")
    # MP4 and MOV: fragmented (a moof per keyframe after an empty moov) and flushed packet by
    # packet, so that a process killed mid-recording leaves a file that plays up to its last
    # complete fragment (about a second before the kill); Matroska is written in clusters anyway
    # (close() then rewrites it as a plain MP4, whose index gives players the frame count and
    # duration: packets are copied, not encoded again)
    fmt = {}
    self._fragmented = os.path.splitext(self.path)[1].lower() in (".mp4", ".mov", ".m4v")
    if self._fragmented:
      fmt = {"movflags": "frag_keyframe+empty_moov+default_base_moof", "flush_packets": "1"}
    try:
      self._container = av.open(self.path, mode="w", options=fmt)
    except (OSError, ValueError) as e:  # av's errors derive from OSError/ValueError
      raise OSError(f"cannot open {self.path!r} for writing: {e}") from None
    try:
      self._stream = self._container.add_stream(codec, rate=self.fps, options=opts)
      self._stream.width, self._stream.height = self.encoded_size
      self._stream.pix_fmt = pix_fmt
      self._stream.time_base = 1 / self.fps
    except Exception as e:  # noqa: BLE001 - unknown codec or pixel format: say which
      self._container.close()
      raise ValueError(f"cannot write {codec!r} video ({pix_fmt}) to {self.path!r}: {e} "
                       "(H.264 goes into .mp4, .mkv, .mov or .avi)") from None
    self.frames = 0                # frames accepted by write
    self.encode_seconds = 0.0      # time the encoder thread spent converting and encoding
    self._queue = queue.Queue(maxsize=max(1, int(queue_size)))
    self._error = None             # first exception raised on the encoder thread
    self._raised = False           # whether that exception reached the caller
    self._closed = False
    self._thread = threading.Thread(target=self._run, name="video-encoder", daemon=True)
    self._thread.start()

  # ------------------------------------------------------------------------- caller side

  def write(self, frame):
    """Queue one frame (copied; blocks only while `queue_size` frames wait for the encoder)."""
    if self._closed:
      raise ValueError(f"write to a closed VideoWriter ({self.path})")
    self._raise_error()
    a = np.asarray(frame)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] not in (3, 4) or \
        a.shape[:2] != (self.height, self.width):
      raise ValueError(f"frame must be a ({self.height}, {self.width}, 3) uint8 RGB array, got "
                       f"shape {a.shape} dtype {a.dtype}")
    w, h = self.encoded_size
    if (w, h) != (self.width, self.height):
      copy = np.empty((h, w, 3), np.uint8)
      copy[:self.height, :self.width] = a[..., :3]
      copy[self.height:, :self.width] = a[-1:, :, :3]
      copy[:, self.width:] = copy[:, self.width - 1:self.width]
    else:
      copy = np.array(a[..., :3], order="C")
    self._put(copy)
    self.frames += 1

  def close(self):
    """Encode what is queued, flush the encoder and finalise the file (idempotent)."""
    interrupted = None
    if not self._closed:
      self._closed = True
      self._put(_STOP)
      while self._thread.is_alive():
        try:
          self._thread.join()
        except KeyboardInterrupt as e:   # a second Ctrl+C: finish the file first, then stop
          interrupted = e
    if interrupted is not None:
      raise interrupted
    self._raise_error()

  @property
  def pending(self):
    """Frames queued but not yet encoded."""
    return self._queue.qsize()

  def __enter__(self):
    return self

  def __exit__(self, exc_type, exc, tb):
    if exc_type is None:
      self.close()
    else:   # finalise what was written, but let the exception in flight win
      try:
        self.close()
      except Exception:  # noqa: BLE001 - already failing: the first error is the one to see
        pass
    return False

  def _put(self, item):
    # the encoder thread keeps draining after an error, so this cannot block forever
    while True:
      try:
        self._queue.put(item, timeout=0.1)
        return
      except queue.Full:
        if not self._thread.is_alive():
          raise RuntimeError("the video encoder thread stopped unexpectedly") from self._error

  def _raise_error(self):
    if self._error is not None and not self._raised:
      self._raised = True
      raise RuntimeError(f"video encoding of {self.path!r} failed: {self._error}") from self._error

  # ------------------------------------------------------------------------ encoder side

  def _run(self):
    """Encoder thread: encode queued frames until the stop item, then flush and close."""
    import av
    pts = 0
    try:
      while True:
        item = self._queue.get()
        if item is _STOP:
          break
        if self._error is not None:
          continue             # drain, so a blocked writer wakes up and sees the error
        t = time.perf_counter()
        try:
          vf = av.VideoFrame.from_ndarray(item, format="rgb24")
          vf.pts = pts
          pts += 1
          self._container.mux(self._stream.encode(vf))
          self.encode_seconds += time.perf_counter() - t
        except Exception as e:  # noqa: BLE001 - handed to the caller by write/close
          self._error = e
      if self._error is None:
        t = time.perf_counter()
        self._container.mux(self._stream.encode(None))
        self.encode_seconds += time.perf_counter() - t
    except Exception as e:  # noqa: BLE001 - flush failed: handed to the caller by close
      self._error = self._error or e
    finally:
      try:
        self._container.close()
        if pts == 0:       # no frame: nothing that plays (a fragmented MP4 has no header yet)
          if os.path.exists(self.path):
            os.remove(self.path)
        elif self._fragmented and self._error is None:
          _defragment(self.path)
      except Exception as e:  # noqa: BLE001 - e.g. the disk filled up while writing the index
        self._error = self._error or e


def _defragment(path):
  """Rewrite a fragmented MP4 as a plain one (the same packets, one index at the end), in place:
  written next to it, then renamed over it, so that the fragmented file stays whole until the
  plain one is."""
  import av
  tmp = os.path.join(os.path.dirname(os.path.abspath(path)), "." + os.path.basename(path) + ".tmp")
  fmt = "mov" if path.lower().endswith(".mov") else "mp4"
  with av.open(path) as src, av.open(tmp, mode="w", format=fmt) as dst:
    ins = src.streams.video[0]
    out = dst.add_stream_from_template(ins)
    for packet in src.demux(ins):
      if packet.dts is None:      # the demuxer's end-of-stream marker
        continue
      packet.stream = out
      dst.mux(packet)
  os.replace(tmp, path)
