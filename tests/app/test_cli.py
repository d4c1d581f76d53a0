"""The `numjoco` command line: headless summary, the record subcommand, clear errors."""
from numjoco.app.__main__ import main


def test_headless_summary(capsys):
  """--headless runs the demo without a window and prints what happened."""
  assert main(["--headless", "--seconds", "0.05"]) == 0
  out = capsys.readouterr().out
  assert "sizes" in out and "simulated" in out


def test_missing_model_is_a_clear_error(capsys, tmp_path):
  """A model path that does not exist: exit status 2 and a message naming it, no window."""
  assert main([str(tmp_path / "nope.xml")]) == 2
  assert "nope.xml" in capsys.readouterr().err


def test_bad_size_is_a_clear_error(capsys):
  """--size that is not WIDTHxHEIGHT: exit status 2 and a message naming the option."""
  assert main(["--size", "big"]) == 2
  assert "--size" in capsys.readouterr().err


def test_record_subcommand_is_dispatched(capsys, tmp_path):
  """`numjoco record` reaches app.record (its own errors, its own exit status)."""
  assert main(["record", str(tmp_path / "nope.xml"), "-o", str(tmp_path / "out.mp4")]) == 2
  assert "numjoco record" in capsys.readouterr().err
