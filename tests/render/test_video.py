"""render.video.VideoWriter: files decode (PyAV) with the frames, timing, size and pixel format
written; pixels survive encoding; odd sizes are padded; encoder errors reach the caller."""
import fractions
import time

import av
import numpy as np
import pytest

from numjoco.render.video import VideoWriter


def _decode(path):
  """(frames as (h, w, 3) uint8 arrays, stream facts) of a video file."""
  with av.open(str(path)) as c:
    s = c.streams.video[0]
    facts = {"width": s.codec_context.width, "height": s.codec_context.height,
             "pix_fmt": s.codec_context.pix_fmt, "codec": s.codec_context.name,
             "rate": s.average_rate, "nb_frames": s.frames,
             "duration": float(s.duration * s.time_base) if s.duration else None,
             "container_duration": c.duration / 1e6 if c.duration else None}
    frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
  return frames, facts


def _bars(k, w, h):
  """Frame k of a test pattern: a white vertical bar at column 4k on a dark blue background."""
  img = np.zeros((h, w, 3), np.uint8)
  img[:] = (20, 30, 90)
  x = (4 * k) % (w - 4)
  img[:, x:x + 4] = 255
  return img


@pytest.mark.parametrize("fps", [30, 25, 29.97])
def test_frame_count_duration_size_format(tmp_path, fps):
  """n frames at fps decode as n frames of the written size, H.264 yuv420p, n / fps long."""
  path = tmp_path / "bars.mp4"
  n, w, h = 24, 96, 64
  with VideoWriter(path, w, h, fps) as vw:
    for k in range(n):
      vw.write(_bars(k, w, h))
  assert vw.frames == n
  frames, f = _decode(path)
  assert len(frames) == n
  assert (f["width"], f["height"], f["pix_fmt"], f["codec"]) == (w, h, "yuv420p", "h264")
  assert f["nb_frames"] == n
  assert f["rate"] == fractions.Fraction(fps).limit_denominator(1001)
  assert f["duration"] == pytest.approx(n / fps, abs=1e-3)
  assert frames[0].shape == (h, w, 3)


def test_pixels_survive_encoding(tmp_path):
  """Each decoded frame shows its own bar where it was drawn (order kept, lossy but close)."""
  path = tmp_path / "bars.mp4"
  n, w, h = 12, 128, 64
  with VideoWriter(path, w, h, 30, crf=10) as vw:
    for k in range(n):
      vw.write(_bars(k, w, h))
  frames, _ = _decode(path)
  for k, img in enumerate(frames):
    ref = _bars(k, w, h).astype(int)
    err = np.abs(img.astype(int) - ref)
    assert err.mean() < 3, f"frame {k}: mean error {err.mean():.2f}"
    col = img[:, :, 0].mean(0)
    assert abs(int(np.argmax(col)) - ((4 * k) % (w - 4) + 1.5)) <= 2, f"frame {k}: bar moved"


def test_write_copies_the_frame(tmp_path):
  """Reusing the caller's buffer after write does not change what was written."""
  path = tmp_path / "reuse.mp4"
  w, h = 64, 48
  buf = np.zeros((h, w, 3), np.uint8)
  with VideoWriter(path, w, h, 30, crf=10) as vw:
    for k in range(6):
      buf[:] = 40 * k
      vw.write(buf)
  frames, _ = _decode(path)
  means = [f.mean() for f in frames]
  np.testing.assert_allclose(means, [40 * k for k in range(6)], atol=3)


def test_odd_size_is_padded(tmp_path):
  """yuv420p needs even sizes: 65x47 is encoded as 66x48 with the edge repeated."""
  path = tmp_path / "odd.mp4"
  w, h = 65, 47
  img = np.zeros((h, w, 3), np.uint8)
  img[:, -1] = (255, 255, 255)   # the last column and row are white: the padding repeats them
  img[-1, :] = (255, 255, 255)
  with VideoWriter(path, w, h, 30, crf=5) as vw:
    assert vw.encoded_size == (66, 48)
    for _ in range(3):
      vw.write(img)
  frames, f = _decode(path)
  assert (f["width"], f["height"]) == (66, 48)
  assert frames[0][:, -1].mean() > 200 and frames[0][-1, :].mean() > 200
  assert frames[0][:40, :60].mean() < 20


def test_bad_frames_and_arguments(tmp_path):
  """Wrong frame shape/dtype, bad fps/size, unknown codec, unwritable path: clear errors."""
  with VideoWriter(tmp_path / "a.mp4", 64, 48, 30) as vw:
    with pytest.raises(ValueError, match=r"\(48, 64, 3\) uint8"):
      vw.write(np.zeros((48, 63, 3), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
      vw.write(np.zeros((48, 64, 3), np.float32))
    vw.write(np.zeros((48, 64, 3), np.uint8))
  with pytest.raises(ValueError, match="closed"):
    vw.write(np.zeros((48, 64, 3), np.uint8))
  with pytest.raises(ValueError, match="fps"):
    VideoWriter(tmp_path / "b.mp4", 64, 48, 0)
  with pytest.raises(ValueError, match="size"):
    VideoWriter(tmp_path / "b.mp4", 0, 48, 30)
  with pytest.raises(ValueError, match="nosuchcodec"):
    VideoWriter(tmp_path / "b.mp4", 64, 48, 30, codec="nosuchcodec")
  with pytest.raises(OSError, match="cannot open"):
    VideoWriter(tmp_path / "no" / "dir" / "c.mp4", 64, 48, 30)


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
def test_a_writer_closed_before_its_first_frame_leaves_no_file(tmp_path, ext):
  """No frame, no file (an MP4 fragmented at keyframes has no header to rewrite yet), and no
  error: the viewer stops a recording whose only frame belonged to a model it left."""
  vw = VideoWriter(tmp_path / f"empty.{ext}", 64, 48, 30)
  vw.close()
  assert vw.frames == 0 and not (tmp_path / f"empty.{ext}").exists()


def test_encoder_error_is_raised_not_swallowed(tmp_path):
  """An exception on the encoder thread comes back from the next write (or close)."""
  vw = VideoWriter(tmp_path / "e.mp4", 64, 48, 30)

  class Broken:
    def encode(self, frame):
      raise RuntimeError("disk on fire")

  vw._stream = Broken()
  vw.write(np.zeros((48, 64, 3), np.uint8))
  with pytest.raises(RuntimeError, match="disk on fire"):
    for _ in range(100):          # the error surfaces once the thread has met it
      vw.write(np.zeros((48, 64, 3), np.uint8))
      time.sleep(0.01)
  vw.close()                     # already reported: close finalises quietly

  vw = VideoWriter(tmp_path / "f.mp4", 64, 48, 30)
  vw._stream = Broken()
  vw.write(np.zeros((48, 64, 3), np.uint8))
  with pytest.raises(RuntimeError, match="disk on fire"):
    vw.close()


_KILLED = """
import sys, time
import numpy as np
from numjoco.render.video import VideoWriter
from tests.render.test_video import _bars
vw = VideoWriter(sys.argv[1], 96, 64, 30)
for k in range(150):
  vw.write(_bars(k, 96, 64))
while vw.pending:
  time.sleep(0.01)
time.sleep(0.5)
print("written", flush=True)
time.sleep(600)
"""


def test_a_killed_writer_leaves_a_file_that_plays(tmp_path):
  """A process killed with SIGKILL while writing an MP4 (150 frames handed over, the file never
  closed) leaves a file that decodes: the frames up to the last keyframe fragment, at most
  about two seconds short, each the frame written."""
  import os
  import signal
  import subprocess
  import sys
  path = tmp_path / "killed.mp4"
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  p = subprocess.Popen([sys.executable, "-c", _KILLED, str(path)], stdout=subprocess.PIPE,
                       text=True, cwd=root)
  try:
    assert p.stdout.readline().strip() == "written"
  finally:
    p.send_signal(signal.SIGKILL)
    p.wait(30)
  frames, _ = _decode(path)
  assert 150 - 2 * 30 <= len(frames) < 150
  for k in (0, len(frames) // 2, len(frames) - 1):
    assert np.abs(frames[k].astype(int) - _bars(k, 96, 64)).mean() < 4
