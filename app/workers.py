"""Independent jobs (sweep variants, batch videos) on this machine's cores or a Ray cluster.

`run_jobs(fn, jobs)` returns `[fn(job) for job in jobs]`, computed in this process, in worker
processes (spawned: a forked copy of a process running Numba's threads is not safe), or as Ray
tasks. `fn` must be a module-level function and the jobs picklable. A worker that dies (killed,
out of memory) loses no job: the jobs it had not returned run again in a new pool, at most
`retries` times each; Ray does the same for its tasks (max_retries).
"""
import os


def run_jobs(fn, jobs, workers=None, ray_address=None, retries=3, progress=None):
  """`[fn(job) for job in jobs]` in job order: in this process (`workers` 1), in `workers`
  processes (default: the cores), or as Ray tasks (`ray_address`: 'local' starts a Ray instance
  on this machine, else a cluster's address). `progress(done, total)` after each job."""
  if ray_address:
    return _run_ray(fn, jobs, ray_address, retries, progress)
  workers = workers or os.cpu_count() or 1
  if workers == 1:
    out = []
    for k, job in enumerate(jobs):
      out.append(fn(job))
      if progress:
        progress(k + 1, len(jobs))
    return out
  return _run_processes(fn, jobs, workers, retries, progress)


def _run_processes(fn, jobs, workers, retries, progress):
  """Jobs on a pool of `workers` processes; a broken pool (a worker died) is replaced and the
  jobs it had not returned are submitted again."""
  import concurrent.futures as cf
  import multiprocessing
  ctx = multiprocessing.get_context("spawn")
  out = [None] * len(jobs)
  attempts = [0] * len(jobs)
  todo = list(range(len(jobs)))
  done = 0
  while todo:
    with cf.ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as pool:
      futs = {pool.submit(fn, jobs[i]): i for i in todo}
      todo = []
      for f in cf.as_completed(futs):
        i = futs[f]
        try:
          out[i] = f.result()
        except cf.process.BrokenProcessPool:
          attempts[i] += 1
          if attempts[i] > retries:
            raise RuntimeError(f"job {i}: its worker process died, {attempts[i]} time(s) with "
                               f"{retries} rerun(s) allowed") from None
          todo.append(i)
          continue
        done += 1
        if progress:
          progress(done, len(jobs))
  return out


def _run_ray(fn, jobs, address, retries, progress):
  """Jobs as Ray tasks of one CPU each; Ray runs a task again when its worker dies. A Ray
  instance this call starts (none was running) is shut down at the end."""
  try:
    import ray
  except ImportError:
    raise RuntimeError("running on Ray needs Ray: pip install numjoco[ray]") from None
  started = False
  if not ray.is_initialized():
    if address == "local":
      ray.init(include_dashboard=False, log_to_driver=False)
    else:
      ray.init(address=address, log_to_driver=False)
    started = True
  try:
    task = ray.remote(num_cpus=1, max_retries=retries)(fn)
    refs = [task.remote(job) for job in jobs]
    index = {r: k for k, r in enumerate(refs)}
    out = [None] * len(jobs)
    pending, done = list(refs), 0
    while pending:
      ready, pending = ray.wait(pending, num_returns=1)
      out[index[ready[0]]] = ray.get(ready[0])
      done += 1
      if progress:
        progress(done, len(jobs))
    return out
  finally:
    if started:
      ray.shutdown()
