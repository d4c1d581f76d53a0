"""What Numba itself costs on one of the engine's kernels (issue #35): mj_rne's bias pass
(cacc forward, cfrc backward, qfrc_bias = cdof' cfrc) written in C as MuJoCo writes it, built
with gcc at -O2 and at -O3 -march=native, against the engine's own `smooth.rne` on Model/Data,
both looping inside compiled code on the same state, and the same loop in Numba on plain
owned arrays (row views of them: reference counted). Not a test; needs gcc.

    python -m tests.bench.floor [model ...]     # default: hopper humanoid
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

_C = r"""
static void mul_inert_vec(double* res, const double* i, const double* v) {
  res[0] = i[0]*v[0] + i[3]*v[1] + i[4]*v[2] - i[8]*v[4] + i[7]*v[5];
  res[1] = i[3]*v[0] + i[1]*v[1] + i[5]*v[2] + i[8]*v[3] - i[6]*v[5];
  res[2] = i[4]*v[0] + i[5]*v[1] + i[2]*v[2] - i[7]*v[3] + i[6]*v[4];
  res[3] = i[8]*v[1] - i[7]*v[2] + i[9]*v[3];
  res[4] = i[6]*v[2] - i[8]*v[0] + i[9]*v[4];
  res[5] = i[7]*v[0] - i[6]*v[1] + i[9]*v[5];
}
static void cross_force(double* res, const double* v, const double* f) {
  res[0] = -v[2]*f[1] + v[1]*f[2] - v[5]*f[4] + v[4]*f[5];
  res[1] =  v[2]*f[0] - v[0]*f[2] + v[5]*f[3] - v[3]*f[5];
  res[2] = -v[1]*f[0] + v[0]*f[1] - v[4]*f[3] + v[3]*f[4];
  res[3] = -v[2]*f[4] + v[1]*f[5];
  res[4] =  v[2]*f[3] - v[0]*f[5];
  res[5] = -v[1]*f[3] + v[0]*f[4];
}
void rne_bias(long n, int nbody, int nv, const int* parent, const int* dofadr,
              const int* dofnum, const int* dofbody, const double* cdof_dot, const double* cdof,
              const double* qvel, const double* cinert, const double* cvel, const double* grav,
              double* cacc, double* cfrc, double* res) {
  double t[6], u[6];
  for (long it = 0; it < n; it++) {
    for (int k = 0; k < 6; k++) cacc[k] = 0;
    for (int k = 0; k < 3; k++) cacc[3+k] = -grav[k];
    for (int i = 1; i < nbody; i++) {
      for (int k = 0; k < 6; k++) {
        double s = cacc[6*parent[i]+k];
        for (int v = dofadr[i]; v < dofadr[i] + dofnum[i]; v++) s += cdof_dot[6*v+k]*qvel[v];
        cacc[6*i+k] = s;
      }
      mul_inert_vec(cfrc+6*i, cinert+10*i, cacc+6*i);
      mul_inert_vec(t, cinert+10*i, cvel+6*i);
      cross_force(u, cvel+6*i, t);
      for (int k = 0; k < 6; k++) cfrc[6*i+k] += u[k];
    }
    for (int k = 0; k < 6; k++) cfrc[k] = 0;
    for (int i = nbody-1; i > 0; i--)
      if (parent[i]) for (int k = 0; k < 6; k++) cfrc[6*parent[i]+k] += cfrc[6*i+k];
    for (int v = 0; v < nv; v++) {
      const double* a = cdof+6*v;
      const double* b = cfrc+6*dofbody[v];
      res[v] = a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3] + a[4]*b[4] + a[5]*b[5];
    }
  }
}
"""
_FLAGS = {"gcc -O2": ["-O2"], "gcc -O3 -march=native": ["-O3", "-march=native"]}


def _build(tmp):
  """{label: ctypes function} of the C kernel at each flag set."""
  src = os.path.join(tmp, "rne.c")
  with open(src, "w") as f:
    f.write(_C)
  out = {}
  for label, flags in _FLAGS.items():
    lib = os.path.join(tmp, f"rne{len(out)}.so")
    subprocess.run(["gcc", *flags, "-fPIC", "-shared", "-o", lib, src], check=True)
    out[label] = ctypes.CDLL(lib).rne_bias
  return out


def _kernels():
  import numba

  from numjoco.engine import math as mm
  from numjoco.engine import smooth

  @numba.njit(nogil=True)
  def engine(n, m, d, res):
    for _ in range(n):
      smooth.rne(m, d, False, res)

  @numba.njit(nogil=True)
  def plain(n, parent, dofadr, dofnum, dofbody, cdof_dot, cdof, qvel, cinert, cvel, grav, res):
    nbody, nv = parent.shape[0], res.shape[0]
    cacc, cfrc, tmp = np.zeros((nbody, 6)), np.zeros((nbody, 6)), np.zeros(6)
    for _ in range(n):
      for k in range(6):
        cacc[0, k] = 0.0
      for k in range(3):
        cacc[0, 3 + k] = -grav[k]
      for i in range(1, nbody):
        for k in range(6):
          s = cacc[parent[i], k]
          for v in range(dofadr[i], dofadr[i] + dofnum[i]):
            s += cdof_dot[v, k] * qvel[v]
          cacc[i, k] = s
        mm.mul_inert_vec(cfrc[i], cinert[i], cacc[i])
        mm.mul_inert_vec(tmp, cinert[i], cvel[i])
        mm.cross_force_add(cfrc[i], cvel[i], tmp)
      for k in range(6):
        cfrc[0, k] = 0.0
      for i in range(nbody - 1, 0, -1):
        if parent[i]:
          for k in range(6):
            cfrc[parent[i], k] += cfrc[i, k]
      for v in range(nv):
        s = 0.0
        for k in range(6):
          s += cdof[v, k] * cfrc[dofbody[v], k]
        res[v] = s

  return engine, plain


def measure(name, c_kernels, n=200000, rounds=5):
  """{label: ns per call} on `name`'s state after 100 steps; checks that all agree."""
  import numjoco
  from tests.bench.speed import load
  engine, plain = _kernels()
  m, _ = load(name)
  d = numjoco.make_data(m)
  numjoco.step(m, d, 100)
  i32 = lambda a: np.ascontiguousarray(a, np.int32)   # noqa: E731
  ints = [i32(m.body_parentid), i32(m.body_dofadr), i32(m.body_dofnum), i32(m.dof_bodyid)]
  reals = [d.cdof_dot.copy(), d.cdof.copy(), d.qvel.copy(), d.cinert.copy(), d.cvel.copy(),
           np.array(m.opt.gravity, float)]
  res = {k: np.zeros(m.nv) for k in ("engine", "plain", *c_kernels)}
  cacc, cfrc = np.zeros((m.nbody, 6)), np.zeros((m.nbody, 6))
  ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)   # noqa: E731

  def run(label, count):
    if label == "engine":
      engine(count, m.struct, d.struct, res[label])
    elif label == "plain":
      plain(count, *ints, *reals, res[label])
    else:
      c_kernels[label](ctypes.c_long(count), m.nbody, m.nv, *map(ptr, ints), *map(ptr, reals),
                       ptr(cacc), ptr(cfrc), ptr(res[label]))

  for label in res:
    run(label, 10)
  ref = res["gcc -O2"]
  for label, r in res.items():
    np.testing.assert_allclose(r, ref, rtol=1e-12, atol=1e-12, err_msg=label)
  best = {label: np.inf for label in res}
  for _ in range(rounds):
    for label in res:
      t = time.perf_counter()
      run(label, n)
      best[label] = min(best[label], (time.perf_counter() - t) / n * 1e9)
  return best


def main(argv=None):
  names = (argv if argv is not None else sys.argv[1:]) or ["hopper", "humanoid"]
  if shutil.which("gcc") is None:
    raise SystemExit("needs gcc")
  with tempfile.TemporaryDirectory() as tmp:
    c_kernels = _build(tmp)
    for name in names:
      best = measure(name, c_kernels)
      base = best["gcc -O2"]
      print(f"{name}: mj_rne bias pass, ns per call (ratio to gcc -O2)")
      for label, title in (("gcc -O2", "C, gcc -O2"),
                           ("gcc -O3 -march=native", "C, gcc -O3 -march=native"),
                           ("engine", "engine smooth.rne (Numba, Model/Data)"),
                           ("plain", "Numba on owned arrays (row views)")):
        print(f"  {title:40s} {best[label]:8.1f}  {best[label] / base:5.2f}x")


if __name__ == "__main__":
  main()
