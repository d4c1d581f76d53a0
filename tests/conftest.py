"""The suite starts by building every engine unit into the kernel cache with the parallel build
(engine/build.py, as `numjoco compile --all`), once, before any test (and before pytest-xdist
starts its workers), so no test pays for a compile and the workers load finished kernels."""
import os

import pytest


def pytest_sessionstart(session):
  if os.environ.get("PYTEST_XDIST_WORKER"):
    return                       # a worker: the controller built the cache already
  from numjoco.engine import _cache
  if _cache.is_warm("units"):
    return
  import sys
  from numjoco.engine import build
  jobs = int(os.environ.get("NUMJOCO_COMPILE_JOBS", os.cpu_count() or 1))
  build.build(None, jobs=jobs, out=sys.stderr)
  _cache.mark_warm("units")


@pytest.fixture(scope="module")
def ctx():
  """A headless (EGL) GL context, one per test module, for the tests that draw pictures."""
  from numjoco.render.headless import create_context
  return create_context()
