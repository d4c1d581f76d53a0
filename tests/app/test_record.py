"""`numjoco record` (app.record): the video decodes with the expected frames, duration, size and
format; frames are sampled in simulation time (checked against independent runs and against the
analytic free fall, in the pixels); Ctrl+C and a diverging simulation (exit status 3) still
finalise the file; bad input gives clear errors with exit status 2. Rendering is headless (EGL): no X server is used."""
import fractions
import os
import signal
import subprocess
import sys

import av
import numpy as np
import pytest

import numjoco
from numjoco.app import record as rec
from tests.models import model_xml, write_xml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DT, G, Z0, RADIUS = 0.004, 9.81, 0.5, 0.5
# a ball in free fall (no floor) seen from the side by a fixed camera looking along +y; emissive,
# so that it is an evenly red disk whatever the lighting
FALL = f"""
<mujoco>
  <option timestep="{DT}" gravity="0 0 -{G}"/>
  <asset><material name="glow" emission="1" specular="0" rgba="1 0 0 1"/></asset>
  <worldbody>
    <light pos="0 -6 4" dir="0 1 -0.5" directional="true"/>
    <camera name="side" pos="0 -14 -2.2" xyaxes="1 0 0 0 0 1"/>
    <body name="ball" pos="0 0 {Z0}">
      <freejoint/>
      <geom type="sphere" size="{RADIUS}" material="glow"/>
    </body>
  </worldbody>
</mujoco>
"""
STATIC = model_xml("app/record/static")
ARM = model_xml("app/record/arm")


def _decode(path):
  """(frames (h, w, 3) uint8, facts) of a video file."""
  with av.open(str(path)) as c:
    s = c.streams.video[0]
    facts = {"size": (s.codec_context.width, s.codec_context.height),
             "pix_fmt": s.codec_context.pix_fmt, "nb_frames": s.frames,
             "duration": float(s.duration * s.time_base), "rate": s.average_rate}
    frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
  return frames, facts


@pytest.fixture(scope="module")
def fall(tmp_path_factory):
  """Record 1 s of the falling ball at 30 fps, 320x240 from camera 'side'; keep each frame's
  state as recorded."""
  tmp = tmp_path_factory.mktemp("fall")
  path = write_xml(tmp, "fall.xml", FALL)
  m = numjoco.load_model(path)
  states = []
  out = tmp / "fall.mp4"
  stats = rec.record(m, str(out), seconds=1.0, fps=30, size=(320, 240), camera="side",
                     on_frame=lambda k, d, img: states.append((k, d.time, d.qpos.copy())))
  frames, facts = _decode(out)
  return m, stats, states, frames, facts


def _steps(k):
  """Steps to frame k at 30 fps and timestep 0.004, exactly: k / 30 / 0.004 = 25 k / 3 rounded."""
  return round(fractions.Fraction(25 * k, 3))


def test_video_frames_duration_size_format(fall):
  """30 frames of 320x240 H.264 yuv420p lasting 1 s at 30 fps."""
  _, stats, _, frames, facts = fall
  assert stats.frames == 30 and len(frames) == 30 and facts["nb_frames"] == 30
  assert facts["size"] == (320, 240) and frames[0].shape == (240, 320, 3)
  assert facts["pix_fmt"] == "yuv420p"
  assert facts["rate"] == 30
  assert facts["duration"] == pytest.approx(1.0, abs=1e-3)
  assert stats.sim_seconds == pytest.approx(1.0)


def test_frames_sampled_in_simulation_time(fall):
  """Frame k is the state after round(k / (fps * timestep)) steps (timestep 0.004 does not divide
  1/30: a fixed 8 steps per frame would drift by 10 steps by frame 29): equal to an independent
  run stepped there in one call, and to the exact free fall of MuJoCo's semi-implicit Euler,
  z_n = z0 - g dt^2 n (n + 1) / 2."""
  m, _, states, _, _ = fall
  assert [k for k, _, _ in states] == list(range(30))
  for k, t, qpos in states:
    n = _steps(k)
    assert t == pytest.approx(n * DT, abs=1e-12), f"frame {k}"
    d = numjoco.make_data(m)
    if n:
      numjoco.step(m, d, n)
    np.testing.assert_allclose(qpos, d.qpos, rtol=0, atol=1e-12, err_msg=f"frame {k}")
    assert qpos[2] == pytest.approx(Z0 - G * DT * DT * n * (n + 1) / 2, abs=1e-9)


def test_rendered_ball_is_where_the_fall_puts_it(fall):
  """In the decoded video, the red ball's centroid row is the projected row of the analytic
  position at the frame's time (to half a pixel: one step late at frame 29 is 0.8 px), and the
  ball moves down in every frame."""
  from numjoco.render.headless import HeadlessRenderer
  from numjoco.render.snapshot import Snapshot
  m, _, _, frames, _ = fall
  cam = rec.make_camera(m, "side")
  snap = Snapshot(m)
  hr = HeadlessRenderer(m, 320, 240)
  try:
    rows = []
    for k, img in enumerate(frames):
      n = _steps(k)
      z = Z0 - G * DT * DT * n * (n + 1) / 2
      x_px, y_px = hr.project([[0.0, 0.0, z]], cam, snap)[0]
      r, g, b = (img[..., i].astype(int) for i in range(3))
      ys, xs = np.nonzero((r > 120) & (r > g + 60) & (r > b + 60))
      assert len(ys) > 100, f"frame {k}: no ball in the image"
      rows.append(ys.mean() + 0.5)
      assert abs(ys.mean() + 0.5 - y_px) < 0.5, f"frame {k}: row {ys.mean() + 0.5} vs {y_px}"
      assert abs(xs.mean() + 0.5 - x_px) < 0.5, f"frame {k}: column"
  finally:
    hr.release()
  assert np.all(np.diff(rows) > 0)


def test_moving_scene_frames_differ_static_scene_frames_do_not(fall, tmp_path):
  """Consecutive frames of the fall differ where the ball is (from frame 10 on, where it moves over
  2 px a frame); a scene with nothing moving gives frames equal up to compression noise."""
  frames = fall[3]
  for k in range(10, len(frames)):
    diff = np.abs(frames[k].astype(int) - frames[k - 1].astype(int)).max(2)
    assert (diff > 60).sum() > 20, f"frames {k - 1} and {k} are the same"
  m = numjoco.load_model(write_xml(tmp_path, "static.xml", STATIC))
  out = tmp_path / "static.mp4"
  rec.record(m, str(out), seconds=0.5, fps=20, size=(96, 64))
  frames, facts = _decode(out)
  assert len(frames) == 10
  assert frames[0].std() > 10             # something is drawn
  for k in range(1, 10):
    assert np.abs(frames[k].astype(int) - frames[0].astype(int)).mean() < 1.0


def test_key_ctrl_camera_and_pngs(tmp_path):
  """--key starts from the keyframe (its time is t0), --ctrl overrides the key's controls and
  holds them, --camera selects a model camera, --png writes every frame."""
  path = write_xml(tmp_path, "arm.xml", ARM)
  out, pngs = tmp_path / "arm.mp4", tmp_path / "pngs"
  rc = rec.main([path, "-o", str(out), "--seconds", "0.2", "--fps", "25", "--size", "64x48",
                 "--key", "tilted", "--ctrl", "0.25", "--camera", "top", "--png", str(pngs),
                 "--quiet"])
  assert rc == 0
  frames, facts = _decode(out)
  assert len(frames) == 5 and facts["size"] == (64, 48)
  assert sorted(os.listdir(pngs)) == [f"frame_{k:05d}.png" for k in range(5)]
  from PIL import Image
  png0 = np.asarray(Image.open(pngs / "frame_00000.png"))
  assert png0.shape == (48, 64, 3)
  assert np.abs(png0.astype(int) - frames[0].astype(int)).mean() < 4

  m = numjoco.load_model(path)
  seen = []
  rec.record(m, None, seconds=0.2, fps=25, size=(64, 48), camera="top", key="tilted",
             ctrl="0.25", png_dir=str(tmp_path / "p2"),
             on_frame=lambda k, d, img: seen.append((d.time, d.qpos[0], d.ctrl[0])))
  assert seen[0] == (1.5, 0.7, 0.25)
  assert [c for _, _, c in seen] == [0.25] * 5
  assert [t for t, _, _ in seen] == pytest.approx([1.5 + k * 0.04 for k in range(5)])


@pytest.mark.parametrize("args, message", [
    (["--size", "64by48"], "expected WIDTHxHEIGHT"),
    (["--size", "0x48"], "between 1 and 8192"),
    (["--camera", "nope"], "camera 'nope' is not in the model (cameras: side"),
    (["--camera", "3"], "camera '3' is not in the model"),
    (["--ctrl", "1"], "ctrl has 1 value(s) but the model has 0 control(s)"),
    (["--key", "nokey"], "keyframe 'nokey' does not exist"),
    (["--fps", "0"], "--fps must be positive"),
    (["--seconds", "-1"], "--seconds must be positive"),
])
def test_bad_arguments_give_clear_errors(tmp_path, capsys, args, message):
  """Each bad argument exits with status 2 and a one-line message naming it (no traceback)."""
  path = write_xml(tmp_path, "fall.xml", FALL)
  rc = rec.main([path, "-o", str(tmp_path / "x.mp4"), "--seconds", "0.1", "--size", "64x48",
                 "--quiet"] + args)
  err = capsys.readouterr().err
  assert rc == 2
  assert message in err and "Traceback" not in err
  assert not (tmp_path / "x.mp4").exists()


def test_bad_model_and_output(tmp_path, capsys):
  """A broken MJCF names its file, line and element; missing files and folders are named."""
  bad = write_xml(tmp_path, "bad.xml", "<mujoco>\n  <worldbody>\n    <geom type=\"sphere\" "
               "size=\"abc\"/>\n  </worldbody>\n</mujoco>\n")
  assert rec.main([bad, "-o", str(tmp_path / "x.mp4")]) == 2
  err = capsys.readouterr().err
  assert "bad.xml:3:" in err and "<geom>" in err and "Traceback" not in err
  assert rec.main([str(tmp_path / "none.xml"), "-o", str(tmp_path / "x.mp4")]) == 2
  assert "no file" in capsys.readouterr().err
  good = write_xml(tmp_path, "fall.xml", FALL)
  assert rec.main([good, "-o", str(tmp_path / "no" / "x.mp4")]) == 2
  assert "no folder" in capsys.readouterr().err
  assert rec.main([good]) == 2
  assert "-o" in capsys.readouterr().err
  assert rec.main([good, "-o", str(tmp_path / "x.webm"), "--size", "64x48", "--quiet"]) == 2
  err = capsys.readouterr().err
  assert "'webm' format does not support 'libx264'" in err and "Traceback" not in err
  assert rec.main([good, "-o", str(tmp_path / "x.xyz"), "--size", "64x48", "--quiet"]) == 2
  assert "Could not determine output format" in capsys.readouterr().err


def test_ctrl_c_finalises_a_decodable_file(tmp_path):
  """SIGINT to `python -m numjoco.app.record` (no DISPLAY: EGL only) mid-recording: exit status 130, and
  the file decodes with exactly the frames it reports."""
  path = write_xml(tmp_path, "fall.xml", FALL)
  out = tmp_path / "cut.mp4"
  env = dict(os.environ)
  env.pop("DISPLAY", None)
  # the child gets SIGINT's default disposition: a shell that starts the tests in the
  # background (`cmd &`) leaves SIGINT ignored, and Python then installs no handler for it
  p = subprocess.Popen([sys.executable, "-m", "numjoco.app.record", path, "-o", str(out), "--seconds",
                        "600", "--size", "64x48", "--samples", "0"], cwd=ROOT, env=env,
                       stderr=subprocess.PIPE, text=True,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  try:
    lines = []
    for line in p.stderr:                   # progress lines: one per second when not a tty
      lines.append(line)
      if "frames" in line and len(lines) >= 2:
        break
    else:
      raise AssertionError("no progress was shown: " + "".join(lines))
    p.send_signal(signal.SIGINT)
    rest = p.stderr.read()
    rc = p.wait(60)
  finally:
    if p.poll() is None:
      p.kill()
  assert rc == 130, rest
  assert "Traceback" not in rest
  n = int(rest.split("interrupted; wrote ")[1].split()[0])
  assert 1 <= n < 18000
  frames, facts = _decode(out)
  assert len(frames) == n and facts["nb_frames"] == n
  assert facts["duration"] == pytest.approx(n / 30, abs=1e-3)


def _playable_frames(path):
  """How many frames of a video file being written decode now (0 while none)."""
  try:
    with av.open(str(path)) as c:
      return sum(1 for _ in c.decode(video=0))
  except (OSError, ValueError, av.error.FFmpegError):
    return 0


def test_sigkill_leaves_a_file_that_plays(tmp_path):
  """`python -m numjoco.app.record` killed with SIGKILL (no chance to finalise): the MP4 plays
  while it is written (fragments at keyframes, one a second) and, after the kill, at least as
  far as it played before it; the frames are the recording's (the ball falls)."""
  import time
  path = write_xml(tmp_path, "fall.xml", FALL)
  out = tmp_path / "killed.mp4"
  env = dict(os.environ)
  env.pop("DISPLAY", None)
  p = subprocess.Popen([sys.executable, "-m", "numjoco.app.record", path, "-o", str(out),
                        "--seconds", "600", "--size", "64x48", "--samples", "0", "--quiet"],
                       cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
  try:
    t_end = time.perf_counter() + 240
    seen = 0
    while seen < 90 and time.perf_counter() < t_end:   # three seconds of video
      time.sleep(0.5)
      seen = _playable_frames(out)
    assert seen >= 90, f"only {seen} frames playable while recording"
  finally:
    p.send_signal(signal.SIGKILL)
    p.wait(60)
  frames, _ = _decode(out)
  assert len(frames) >= seen
  assert (np.abs(frames[0].astype(int) - frames[-1]).max(axis=2) > 30).sum() > 20


def test_screenshot(tmp_path):
  """screenshot() writes the PNG of the current state: the ball at a set height is drawn where
  the camera projects it; nothing is stepped."""
  from PIL import Image
  from numjoco.render.headless import HeadlessRenderer
  from numjoco.render.snapshot import Snapshot
  m = numjoco.load_model(write_xml(tmp_path, "fall.xml", FALL))
  d = numjoco.make_data(m)
  d.qpos[2] = -3.0
  out = tmp_path / "shot.png"
  img = rec.screenshot(m, str(out), (160, 120), "side", d=d)
  assert d.time == 0.0 and d.qpos[2] == -3.0
  np.testing.assert_array_equal(np.asarray(Image.open(out)), img)
  hr = HeadlessRenderer(m, 160, 120)
  x_px, y_px = hr.project([[0.0, 0.0, -3.0]], rec.make_camera(m, "side"), Snapshot(m, d))[0]
  hr.release()
  ys, xs = np.nonzero((img[..., 0] > 120) & (img[..., 1] < 60))
  assert abs(ys.mean() + 0.5 - y_px) < 0.5 and abs(xs.mean() + 0.5 - x_px) < 0.5


@pytest.mark.parametrize("fps, dt", [(30, 0.004), (29.97, 0.002), (60, 0.005), (24, 0.0025)])
def test_frame_clock_in_chunks_hits_the_frame_steps(fps, dt):
  """A loop stepping in random chunks (as the viewer's worker) and stopping where FrameClock says
  takes frame k after round(k / (fps dt)) steps, exactly as `record` does, for any chunking."""
  rng = np.random.default_rng(0)
  nframes = 400
  expect = [round(fractions.Fraction(k) / (fractions.Fraction(fps).limit_denominator(1000)
                                           * fractions.Fraction(dt).limit_denominator(100000)))
            for k in range(nframes)]
  assert list(rec.frame_steps(nframes, fps, dt)) == expect
  clock, t, steps, taken = rec.FrameClock(fps, 1.25), 1.25, 0, []
  while len(taken) < nframes:
    n = min(int(rng.integers(1, 40)), clock.steps_to_next(t, dt))
    steps += n
    t += n * dt                              # float accumulation, as d.time
    if clock.steps_to_next(t, dt) == 0:
      taken.append(steps)
      clock.advance()
  assert taken == expect


BLOWUP = model_xml("app/viewer/blowup")   # diverges at its 4th step (t = 0.15): BADQACC at dof 0


def test_divergence_stops_the_cli_with_the_warning_and_the_file_plays(tmp_path, capsys):
  """`numjoco record` of a model that blows up: exit status 3, a message naming MuJoCo's warning,
  the dof and the time, and a finalised file holding the frames before it (frame k at step k)."""
  from numjoco.app.__main__ import main
  path = write_xml(tmp_path, "blowup.xml", BLOWUP)
  out = tmp_path / "blowup.mp4"
  rc = main(["record", path, "-o", str(out), "--key", "0", "--seconds", "2", "--fps", "20",
             "--size", "64x48", "--quiet"])
  err = capsys.readouterr().err
  assert rc == rec.EXIT_DIVERGED == 3
  assert ("numjoco record: the simulation diverged: mjWARN_BADQACC at dof 0, time 0.15: NaN, "
          "inf or huge qacc; state reset. Stopped after 4 frames (0.200 s)") in err, err
  assert "Traceback" not in err
  frames, facts = _decode(out)
  assert len(frames) == 4 and facts["nb_frames"] == 4
  assert facts["duration"] == pytest.approx(4 / 20, abs=1e-3)


def test_divergence_raises_from_record_after_the_last_good_frame(tmp_path):
  """record() raises SimulationDiverged (the Divergence and the partial stats on it); the frames
  drawn are the states before the divergence, the file plays."""
  m = numjoco.load_model(BLOWUP)
  out = tmp_path / "blowup.mp4"
  seen = []
  with pytest.raises(rec.SimulationDiverged, match="mjWARN_BADQACC at dof 0, time 0.15") as e:
    rec.record(m, str(out), seconds=2, fps=20, size=(64, 48), key=0,
               on_frame=lambda k, d, img: seen.append((d.time, np.abs(d.qpos).max())))
  div, stats = e.value.divergence, e.value.stats
  assert (div.warning, div.index, div.reset) == ("mjWARN_BADQACC", 0, True)
  assert div.time == pytest.approx(0.15)
  assert stats.diverged and not stats.interrupted and stats.frames == 4 and stats.steps == 4
  assert [t for t, _ in seen] == pytest.approx([0.0, 0.05, 0.1, 0.15])
  assert all(q < 1e10 for _, q in seen)
  assert len(_decode(out)[0]) == 4


def test_bad_state_left_by_a_step_is_never_drawn(tmp_path):
  """A step whose integration leaves a bad qvel (MuJoCo finds it at the next step's velocity
  check): the recording takes that check at once and stops with BADQVEL instead of drawing the
  bad state."""
  xml = """<mujoco><option timestep="0.05" gravity="0 0 0"/><worldbody><body>
    <joint type="slide" axis="1 0 0"/><geom type="sphere" size=".1" mass="1"/></body>
    </worldbody></mujoco>"""
  m = numjoco.load_model(xml)
  d = numjoco.make_data(m)
  d.qvel[0] = 9.9e9           # fine (below mjMAXVAL = 1e10) ...
  d.qfrc_applied[0] = 9e9     # ... and so is qacc; qvel after the step is not: 1.035e10
  with pytest.raises(rec.SimulationDiverged) as e:
    rec.record(m, str(tmp_path / "v.mp4"), seconds=1, fps=20, size=(64, 48), d=d)
  div, stats = e.value.divergence, e.value.stats
  assert (div.warning, div.index) == ("mjWARN_BADQVEL", 0) and div.time == pytest.approx(0.05)
  assert stats.frames == 1 and stats.steps == 2
  assert len(_decode(tmp_path / "v.mp4")[0]) == 1


def test_batch_of_models_keys_and_controls(tmp_path, capsys):
  """Several models, keyframes and control vectors: one video per combination, in worker
  processes, each equal frame for frame to the same run recorded alone; a diverging run is
  reported (exit status 3) while the others are written."""
  arm = write_xml(tmp_path, "arm.xml", ARM)
  fall = write_xml(tmp_path, "fall.xml", FALL)
  out = tmp_path / "videos"
  common = ["--seconds", "0.2", "--fps", "25", "--size", "64x48", "--quiet"]
  rc = rec.main([arm, "--key", "0", "--key", "tilted", "--ctrl", "0.25", "--ctrl=-0.5",
                 "-o", str(out), "--jobs", "2"] + common)
  lines = capsys.readouterr().out.splitlines()
  assert rc == 0
  names = sorted(os.listdir(out))
  assert names == ["arm_key0_ctrl0.mp4", "arm_key0_ctrl1.mp4", "arm_keytilted_ctrl0.mp4",
                   "arm_keytilted_ctrl1.mp4"]
  assert len(lines) == 4 and all(x.split()[0] == "ok" for x in lines)
  alone = tmp_path / "alone.mp4"
  assert rec.main([arm, "--key", "tilted", "--ctrl=-0.5", "-o", str(alone)] + common) == 0
  a, _ = _decode(alone)
  b, _ = _decode(out / "arm_keytilted_ctrl1.mp4")
  assert len(a) == len(b) == 5 and all(np.array_equal(x, y) for x, y in zip(a, b))
  c, _ = _decode(out / "arm_keytilted_ctrl0.mp4")
  assert not all(np.array_equal(x, y) for x, y in zip(a, c))     # the controls differ

  blowup = write_xml(tmp_path, "blowup.xml", BLOWUP)
  runs = tmp_path / "runs.csv"
  runs.write_text("model,key,seconds,output\n"
                  f"{os.path.basename(fall)},,0.2,fall\n"
                  f"{os.path.basename(blowup)},0,1,blowup.mp4\n")
  rc = rec.main(["--batch", str(runs), "-o", str(out / "b"), "--jobs", "1"] + common[2:])
  text = capsys.readouterr().out
  assert rc == rec.EXIT_DIVERGED
  assert "ok" in text and "diverged: mjWARN_BADQACC at dof 0" in text
  assert len(_decode(out / "b" / "fall.mp4")[0]) == 5
  # frames at t = 0.04 k to the nearest 0.05 step: steps 0, 1, 2, 2, 3, then the 4th diverges
  assert len(_decode(out / "b" / "blowup.mp4")[0]) == 5


def test_batch_bad_input(tmp_path, capsys):
  arm = write_xml(tmp_path, "arm.xml", ARM)
  assert rec.main([arm, arm, "--seconds", "0.1"]) == 2
  assert "a batch needs -o OUT_DIR" in capsys.readouterr().err
  assert rec.main([arm, arm, "-o", str(tmp_path / "v")]) == 2
  assert "two runs write 'arm.mp4'" in capsys.readouterr().err
  runs = tmp_path / "runs.csv"
  runs.write_text("model,key\narm.xml,0\nnone.xml,0\n")
  assert rec.main(["--batch", str(runs), "-o", str(tmp_path / "v")]) == 2
  assert "runs.csv:3: no model file" in capsys.readouterr().err


def test_batch_on_a_local_ray_instance_equals_worker_processes(tmp_path, capsys):
  """The same batch as Ray tasks writes the same videos, frame for frame."""
  arm = write_xml(tmp_path, "arm.xml", ARM)
  common = [arm, "--key", "0", "--key", "tilted", "--seconds", "0.2", "--fps", "25", "--size",
            "64x48", "--quiet"]
  assert rec.main(common + ["-o", str(tmp_path / "p"), "--jobs", "2"]) == 0
  assert rec.main(common + ["-o", str(tmp_path / "r"), "--ray", "local"]) == 0
  names = sorted(os.listdir(tmp_path / "r"))
  assert names == ["arm_key0.mp4", "arm_keytilted.mp4"]
  for n in names:
    a, b = _decode(tmp_path / "p" / n)[0], _decode(tmp_path / "r" / n)[0]
    assert len(a) == len(b) == 5 and all(np.array_equal(x, y) for x, y in zip(a, b))
