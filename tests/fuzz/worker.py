"""The fuzzer's child process (`python -m tests.fuzz.worker`): reads one JSON request a line on
stdin and answers each with one JSON line on the file descriptor it was given (its stdout at
start; fd 1 then goes to stderr, so whatever MuJoCo or Numba print cannot break the protocol).

Requests: {"cmd": "ours", "path": ..., "steps": 100} loads the model with numjoco, runs
`forward` and `steps` steps and answers {"cls": ..., "msg": ..., ...}; {"cmd": "mujoco",
"path": ...} answers whether MuJoCo's compiler accepts the model; "segv" and "sleep" crash and
hang on purpose (tests/test_fuzz.py). The address space is limited (`--mem-gb`), so an absurd
allocation fails instead of taking the machine's memory."""
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
import warnings

# a load error as the compiler reports them: file:line: <element ...>: message; an XML syntax
# error names the line of the document only
LOCATED = re.compile(r"^[^\n]*?:\d+: <[^>\n]+>: ")
XML_ERROR = re.compile(r"^[^\n]*?:\d+: malformed XML")
WARMUP = """<mujoco><worldbody><body><joint name="j" type="hinge"/><geom size=".1" pos="0 0 1"/>
</body><geom type="plane" size="1 1 1"/></worldbody><actuator><motor joint="j"/></actuator>
</mujoco>"""


def classify_load_error(msg):
  """The class of an MjcfError message: "refused" when it names file, line and element (or the
  line for malformed XML), "internal" for the compiler's own exceptions wrapped at the root,
  "unlocated" otherwise."""
  if "internal compiler error" in msg:
    return "internal"
  if LOCATED.match(msg) or XML_ERROR.match(msg):
    return "refused"
  return "unlocated"


def _traceback(e):
  """The traceback of `e`, each line cut to 300 characters (a message may quote a whole
  attribute), its middle left out past 8,000 characters (a deep recursion)."""
  lines = "".join(traceback.format_exception(e)).splitlines()
  text = "\n".join(line[:300] for line in lines)
  return text if len(text) <= 8000 else text[:2000] + "\n...\n" + text[-6000:]


def _exception(stage, e):
  return {"cls": "exception", "stage": stage, "msg": f"{type(e).__name__}: {e}"[:2000],
          "tb": _traceback(e)}


def run_ours(path, steps):
  """Load `path` with numjoco, forward and step it: the result's class and details."""
  import numjoco
  from numjoco.engine.mjcf import MjcfError
  t0 = time.perf_counter()
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
      m = numjoco.load_model(path)
    except MjcfError as e:
      msg = str(e)
      out = {"cls": classify_load_error(msg), "msg": msg[:2000]}
      if out["cls"] != "refused":   # the compiler's own exception, wrapped: its traceback
        out["tb"] = _traceback(e.__cause__ or e)
      return out
    except Exception as e:      # noqa: BLE001 - every other exception is what the fuzzer seeks
      return _exception("load", e)
    t1 = time.perf_counter()
    try:
      d = numjoco.make_data(m)
      numjoco.forward(m, d)
      numjoco.step(m, d, steps)
    except Exception as e:      # noqa: BLE001
      return _exception("step", e)
  diverged = any("diverged" in str(w.message) for w in caught)
  return {"cls": "ok", "load_s": round(t1 - t0, 3), "step_s": round(time.perf_counter() - t1, 3),
          "warnings": len(caught), "diverged": diverged}


def run_mujoco(path):
  """Whether MuJoCo's compiler accepts `path`: {"accepts": bool, "msg": its error}."""
  import mujoco
  try:
    mujoco.MjModel.from_xml_path(path)
  except Exception as e:        # noqa: BLE001 - MuJoCo raises ValueError, maybe others
    return {"accepts": False, "msg": f"{type(e).__name__}: {e}"[:2000]}
  return {"accepts": True}


def main():
  mem_gb = float(sys.argv[sys.argv.index("--mem-gb") + 1]) if "--mem-gb" in sys.argv else 10.0
  out = os.fdopen(os.dup(1), "w", buffering=1)
  os.dup2(2, 1)
  sys.stdout = sys.stderr
  import faulthandler
  faulthandler.enable(sys.stderr)
  limit = int(mem_gb * 2**30)
  resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
  import numjoco
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = numjoco.load_model(WARMUP)
    d = numjoco.make_data(m)
    numjoco.forward(m, d)
    numjoco.step(m, d, 10)
  out.write(json.dumps({"ready": os.getpid()}) + "\n")
  for line in sys.stdin:
    req = json.loads(line)
    print(f"--- {req.get('id')} {req['cmd']}", file=sys.stderr, flush=True)
    if req["cmd"] == "ours":
      res = run_ours(req["path"], req.get("steps", 100))
    elif req["cmd"] == "mujoco":
      res = run_mujoco(req["path"])
    elif req["cmd"] == "segv":      # the runner's own tests: a crash and a hang
      os.kill(os.getpid(), signal.SIGSEGV)
    else:
      time.sleep(req.get("seconds", 3600))
      res = {"cls": "ok"}
    out.write(json.dumps(res) + "\n")


if __name__ == "__main__":
  main()
