"""Executors for a sweep's points (api.sweep(executor=...)): local processes, or a Ray cluster.

An executor is a callable executor(fn, job, items) -> [fn(job, item) for item in items]: the
results in the items' order, or the error the first failing item in that order raises, so a
parallel sweep answers exactly what the serial one does (the same JSON, byte for byte: every
point is an independent, deterministic computation, and its result crosses the process boundary
by pickle, which keeps floats, ints and key order as they are). `job` is sent to each worker once,
not once per item.

    processes(n)   n local processes (concurrent.futures, 'forkserver' where the platform has it,
                   else 'spawn': no fork of a parent that may hold threads); n = 1 runs in series
    ray(address)   tasks on a running Ray cluster ("auto" or host:port); Ray is an optional extra
                   (pip install 'py_engine[ray]') imported only here, on demand

Bad settings are ScenarioErrors naming the option, so the command line prints one line, exit 2.
"""

import contextlib
import logging
import os
import socket
import sys
import tempfile
from functools import partial

from ..errors import ScenarioError

MAX_WORKERS = 1024
RAY_VERSION = "2.60.0"          # pyproject.toml's optional extra `ray`


def default_workers() -> int:
    """One process per core (os.cpu_count(); 1 when it cannot tell)."""
    return os.cpu_count() or 1


def serial(fn, job, items):
    """The points one after another, in this process."""
    return [fn(job, item) for item in items]


# -------------------------------------------------------------------------- local processes

_job = None          # in a worker process: the job its pool was started with


def _start(job):
    global _job
    _job = job


def _call(fn, item):
    return fn(_job, item)


def _context(fn):
    """'forkserver' (its server imports fn's module once and forks each worker from there), or
    'spawn' where the platform has no forkserver."""
    import multiprocessing   # optional: local processes; Pyodide (which imports every module) has none
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__, fn.__module__])
    return ctx


def processes(workers: int):
    """An executor running the items in `workers` local processes (at most one per item)."""
    if type(workers) is not int or not 1 <= workers <= MAX_WORKERS:
        raise ScenarioError("workers", workers, "an integer from 1 to %d" % MAX_WORKERS,
                            "--workers = %s: must be an integer from 1 to %d (1 = in series)"
                            % (str(workers)[:30], MAX_WORKERS))

    def run(fn, job, items):
        items = list(items)
        if workers == 1 or len(items) <= 1:
            return serial(fn, job, items)
        from concurrent.futures import ProcessPoolExecutor   # optional: as in _context
        with ProcessPoolExecutor(min(workers, len(items)), mp_context=_context(fn),
                                 initializer=_start, initargs=(job,)) as pool:
            # map yields in the items' order and raises the first failure in that order; the
            # items not started yet are cancelled then, the running ones finish
            return list(pool.map(partial(_call, fn), items))

    run.workers = workers
    return run


# -------------------------------------------------------------------------- Ray

def _ray_module():
    try:
        import ray  # optional: an extra, imported only when --ray is given
    except ImportError:
        raise ScenarioError("ray", None, "Ray installed",
                            "--ray needs Ray, which is not installed: pip install "
                            "'py_engine[ray]' (ray==%s)" % RAY_VERSION) from None
    return ray


def _reachable(address: str):
    """host:port must answer a TCP connection (ray.init would retry an unreachable address for
    a minute before it fails); "auto" is found by ray.init itself."""
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ScenarioError("ray", address, "auto or host:port",
                            "--ray = %s: must be auto or the address of a running Ray cluster, "
                            "host:port (e.g. 10.0.0.5:6379)" % address[:60])
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        raise ScenarioError("ray", address, "the address of a running Ray cluster",
                            "--ray = %s: no Ray cluster answers there (%s)"
                            % (address[:60], e.strerror or e)) from None


@contextlib.contextmanager
def _stderr_to(file):
    """File descriptor 2 into `file` for a while: Ray's C++ core writes there directly, a line a
    second while it retries an address (the command line says one line, from what it caught)."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def runtime_env() -> dict:
    """The Ray job's runtime_env that ships this package (py_engine/) to the cluster's workers."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {"py_modules": [here], "excludes": ["__pycache__"]}


def _ray_call(fn, job, item):
    """A Ray task: a ScenarioError comes back as a value (Ray would wrap it in its own error)."""
    try:
        return True, fn(job, item)
    except ScenarioError as e:
        return False, e


def ray(address: str):
    """An executor running each item as a Ray task on the cluster at `address` ("auto": the one
    this machine knows of). Connects now (a bad address fails before any work); a process
    already connected (ray.is_initialized()) uses its connection as it is. The job carries the
    package (runtime_env(): uploaded once, by its hash), so the workers run this very code
    whatever the cluster has installed; a caller that connected itself passes runtime_env() to
    its ray.init (Ray takes local code only per job, not per task)."""
    ray_ = _ray_module()
    if not ray_.is_initialized():
        if address != "auto":
            _reachable(address)
        with tempfile.TemporaryFile() as said, _stderr_to(said):
            try:
                ray_.init(address=address, log_to_driver=False, logging_level=logging.WARNING,
                          runtime_env=runtime_env())
                failed = None
            except (ConnectionError, RuntimeError, ValueError) as e:
                failed = e
            said.seek(0)
            lines = said.read().decode("utf-8", "replace").strip().splitlines()
        if failed is None:
            sys.stderr.write("".join(line + "\n" for line in lines))   # Ray's own warnings
        else:
            first = (str(failed).strip().splitlines() or [type(failed).__name__])[0]
            last = lines[-1].split("] ", 1)[-1] if lines else ""    # the C++ core's last word
            hint = ("; the cluster wants token authentication: set RAY_AUTH_MODE=token and its "
                    "token in RAY_AUTH_TOKEN (or ~/.ray/auth_token)"
                    if any("Unauthenticated" in line for line in lines) else "")
            raise ScenarioError("ray", address, "the address of a running Ray cluster",
                                "--ray = %s: cannot connect (%s%s)%s"
                                % (address[:60], first[:200], "; " + last[:200] if last else "",
                                   hint)) from None
    task = ray_.remote(_ray_call)

    def run(fn, job, items):
        shared = ray_.put(job)
        refs = [task.remote(fn, shared, item) for item in items]
        out = []
        for i, ref in enumerate(refs):
            ok, value = ray_.get(ref)
            if not ok:
                for rest in refs[i + 1:]:
                    ray_.cancel(rest)
                raise value
            out.append(value)
        return out

    return run
