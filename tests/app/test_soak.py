"""The soak of the viewer in CI (tests/bench/soak.py; the hour-long run is `python -m
tests.bench.soak`): the warm-up, then ten minutes of a seeded random user dragging, editing,
switching between five models, reloading, recording and taking screenshots. No exception, no
crash, memory flat (at most 5% growth between checkpoints taken at the same state), no thread
or file descriptor left over. Frames per second are printed, not asserted: CI runs the rest of
the suite next to it."""
import pytest


@pytest.mark.slow
def test_ten_minute_soak(capsys):
  from tests.bench.soak import soak
  figures, failures = soak(540, seed=7, warm_seconds=60)
  with capsys.disabled():
    print(f"\nsoak: {figures['actions']}, rss {figures['rss']}, fps {figures['fps']}, "
          f"notes {figures['notes']}")
  assert not failures, "\n".join(failures)
  assert sum(figures["actions"].values()) > 500 and len(figures["checkpoints"]) >= 10
