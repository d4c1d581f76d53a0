"""Benchmark: cost of one camera rangefinder per step, ours vs MuJoCo 4.0 in the same run: µs
per step of a scene with every geom type, with and without a WxH camera rangefinder (the
difference is the sensor's cost).

    python -m tests.bench.rangefinder [--res 64x48] [--data "dist normal"] [--nstep 200]
"""
import argparse

from tests.bench.step import _per_step
from tests.test_sensor_rangefinder import _SCENE, _ELEV


def _xml(res, data, projection):
  cam = f'<rangefinder camera="persp" data="{data}"/>' if res else ""
  xml = _SCENE.format(elev=_ELEV, sites="", sensors=cam)
  if res:
    xml = xml.replace('<camera name="persp" resolution="16 12" fovy="75"/>',
                      f'<camera name="persp" resolution="{res[0]} {res[1]}" fovy="75" '
                      f'projection="{projection}"/>')
  return xml


def bench(res, data, nstep, projection="perspective"):
  """(ours µs/step, MuJoCo µs/step) with the rangefinder (res) or without (res None)."""
  import mujoco

  import numjoco
  xml = _xml(res, data, projection)
  m, mjm = numjoco.load_model(xml), mujoco.MjModel.from_xml_string(xml)
  d, mjd = numjoco.make_data(m), mujoco.MjData(mjm)
  for dd in (d, mjd):
    dd.qvel[-2:] = [1.3, 0.6]   # the rig turns
  numjoco.step(m, d, 5)
  mujoco.mj_step(mjm, mjd, 5)
  ours = _per_step(lambda n: numjoco.step(m, d, n), nstep)
  theirs = _per_step(lambda n: mujoco.mj_step(mjm, mjd, n), nstep)
  return ours, theirs


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--res", default="64x48")
  ap.add_argument("--data", default="dist")
  ap.add_argument("--nstep", type=int, default=200)
  a = ap.parse_args()
  res = tuple(int(x) for x in a.res.split("x"))
  base = bench(None, a.data, a.nstep)
  print(f"no rangefinder: ours {base[0]:.1f} µs/step, MuJoCo {base[1]:.1f} µs/step")
  for data in (a.data, "dist dir origin point normal depth"):
    for proj in ("perspective", "orthographic"):
      ours, theirs = bench(res, data, a.nstep, proj)
      so, st = ours - base[0], theirs - base[1]
      print(f"{a.res} {proj} data={data!r}: ours {ours:.1f} µs/step ({so:.1f} for the sensor), "
            f"MuJoCo {theirs:.1f} ({st:.1f}); sensor cost ratio {so / st:.2f}x")


if __name__ == "__main__":
  main()
