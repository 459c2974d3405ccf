"""A sweep's points run in parallel (app/parallel.py) give the serial sweep's answer, byte for
byte, and its error: in local processes (`sweep --workers N`) and on a Ray cluster (`--ray`).

Every wait here is for an event (a process's exit, a line Ray prints); the timeouts only bound
a hang so that it fails instead of stalling the suite.
"""

import json
import os
import pickle
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from py_engine import api
from py_engine.app import parallel
from py_engine.errors import PolicyError, ScenarioError
from support.cli import one_line, run_cli

ROOT = Path(__file__).resolve().parents[2]

# Three schedulers, vllm among them, and a point with null (an unlimited KV pool, ranked last).
SCENARIO = {"workload": {"requests": 48, "skew": 0.6, "prompt_mean": 300, "output_mean": 64,
                         "arrival": {"kind": "poisson", "rate": 12.0}}}
SWEEP = (SCENARIO, "kv_tokens", [4096, None, 16384], ["static", "continuous", "vllm"])
# The second point's KV pool holds no long request (vllm refuses it), nor does the third's;
# the first failure in order is the one reported.
FAILING = (SCENARIO, "kv_tokens", [16384, 1024, 512, None], ["continuous", "vllm"])
CLI_SWEEP = ["sweep", "--json", "--scheduler", "vllm", "--param", "kv_tokens",
             "--values", "4096,null,16384", "--requests", "48", "--arrival", "poisson",
             "--rate", "12"]


def _json(doc):
    return json.dumps(doc, indent=1, allow_nan=False)   # as the command line prints it


def _error(call):
    with pytest.raises(ScenarioError) as e:
        call()
    return type(e.value), e.value.__dict__




def test_two_processes_give_the_serial_answer_byte_for_byte():
    serial = _json(api.sweep(*SWEEP))
    assert '"value": null' in serial and '"vllm"' in serial
    assert _json(api.sweep(*SWEEP, executor=parallel.processes(2))) == serial
    assert _json(api.sweep(*SWEEP, executor=parallel.serial)) == serial
    assert _json(api.drain(api.sweep_steps(*SWEEP, slice_s=0.001))) == serial   # the page's path


def test_a_failing_point_gives_the_serial_error():
    serial = _error(lambda: api.sweep(*FAILING))
    assert serial[1]["value"] == 1024, serial
    assert _error(lambda: api.sweep(*FAILING, executor=parallel.processes(2))) == serial
    assert _error(lambda: api.sweep(*FAILING, executor=parallel.processes(3))) == serial


def test_the_work_cap_fails_the_same_point():
    # 3,000 and 6,000 requests both exceed a cap of 20,000 units (50 do not): the first is reported
    args = ({"workload": {"requests": 50}}, "requests", [50, 3000, 6000], ["continuous"], 20_000)
    serial = _error(lambda: api.sweep(*args))
    assert "work cap" in serial[1]["message"] and serial[1]["value"] == 3000, serial
    assert _error(lambda: api.sweep(*args, executor=parallel.processes(2))) == serial


def test_scenario_errors_survive_pickling():
    for e in (ScenarioError("server.slots", 0, "an integer >= 1"),
              ScenarioError("workload", [1, 2], "x", "a message of its own"),
              PolicyError("admit", "no free slot")):
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and back.__dict__ == e.__dict__ and back.args == e.args


def test_cli_workers_give_the_serial_answer():
    one = run_cli(*CLI_SWEEP, "--workers", "1")
    assert one.returncode == 0, one.stderr
    two = run_cli(*CLI_SWEEP, "--workers", "2")
    assert two.returncode == 0, two.stderr
    assert two.stdout == one.stdout
    default = run_cli(*CLI_SWEEP)                  # one process per core
    assert default.stdout == one.stdout, default.stderr




def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("args,words", [
    (["--workers", "0"], ["--workers", "from 1"]),
    (["--workers", "abc"], ["--workers", "abc"]),
    (["--workers", "-3"], ["--workers"]),
    (["--workers", "2.5"], ["--workers"]),
    (["--workers", "2", "--ray", "auto"], ["--ray", "--workers"]),
    (["--ray", "nowhere"], ["--ray", "host:port"]),
])
def test_cli_bad_parallel_settings_one_line_exit_2(args, words):
    one_line(run_cli("sweep", "--requests", "10", *args), *words)


def test_cli_ray_at_an_unreachable_address_one_line_exit_2():
    address = "127.0.0.1:%d" % _closed_port()
    p = run_cli("sweep", "--requests", "10", "--ray", address)
    one_line(p, "--ray", address)


def test_cli_ray_not_installed_one_line_exit_2():
    code = ("import sys; sys.modules['ray'] = None\n"     # import ray raises ImportError
            "from py_engine.app.cli import main; sys.exit(main(sys.argv[1:]))")
    p = subprocess.run([sys.executable, "-c", code, "sweep", "--ray", "auto"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    one_line(p, "--ray needs Ray", "py_engine[ray]")


# ------------------------------------------------------------------ a Ray cluster

class _Head:
    """`ray start --head --block` in its own session, with its own ports, temp dir and token
    (nothing in ~/.ray, no other cluster on this machine touched); ready when it says so."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cbx-ray-", dir="/tmp")  # short: Ray's socket paths
        self.port = _closed_port()
        self.env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
                        RAY_USAGE_STATS_ENABLED="0")
        cmd = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
               "--port", str(self.port), "--node-ip-address", "127.0.0.1",
               "--dashboard-agent-listen-port", str(_closed_port()), "--include-dashboard",
               "false", "--num-cpus", "2", "--object-store-memory", str(100 * 2 ** 20),
               "--temp-dir", self.dir, "--disable-usage-stats"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=self.env, start_new_session=True)
        self.lines, self.ready = [], threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):      # drains the pipe for the head's whole life; ready, or its end
        for line in self.proc.stdout:
            self.lines.append(line)
            if "Ray runtime started" in line:
                self.ready.set()
        self.ready.set()

    def wait(self):
        assert self.ready.wait(timeout=600), "ray start did not finish"
        assert self.proc.poll() is None, "ray start failed:\n" + "".join(self.lines[-30:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)    # --block: drains, stops what it started
            try:
                self.proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: anything left of it
        except ProcessLookupError:
            pass
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def test_a_ray_cluster_gives_the_serial_answer_and_error():
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'py_engine[ray]'; "
                                      "python3 build.py test installs it)")
    head = _Head()
    try:
        serial = run_cli(*CLI_SWEEP, "--workers", "1")        # while the cluster starts
        assert serial.returncode == 0, serial.stderr
        bad = ["sweep", "--scheduler", "vllm", "--param", "kv_tokens", "--values",
               "16384,1024,512", "--requests", "48", "--arrival", "poisson", "--rate", "12"]
        serial_bad = run_cli(*bad, "--workers", "1")
        assert serial_bad.returncode == 2 and "1024" in serial_bad.stderr, serial_bad.stderr
        head.wait()
        address = "127.0.0.1:%d" % head.port
        # without the cluster's token: refused after Ray's retries (it mostly waits: alongside)
        no_token = {k: v for k, v in head.env.items() if not k.startswith("RAY_AUTH_")}
        no_token["PYTHONPATH"] = str(ROOT)
        refused = subprocess.Popen([sys.executable, "-m", "py_engine", "sweep", "--requests",
                                    "10", "--ray", address], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT, env=no_token)
        try:
            on_ray = run_cli(*CLI_SWEEP, "--ray", address, env=head.env)
            assert on_ray.returncode == 0, on_ray.stderr
            assert on_ray.stdout == serial.stdout
            bad_on_ray = run_cli(*bad, "--ray", address, env=head.env)
            assert (bad_on_ray.returncode, bad_on_ray.stderr) == (2, serial_bad.stderr)
            out, err = refused.communicate(timeout=600)
        finally:
            if refused.poll() is None:
                refused.kill()
                refused.wait()
        one_line(subprocess.CompletedProcess(refused.args, refused.returncode, out, err),
                  "--ray", "cannot connect", "RAY_AUTH_MODE=token")
    finally:
        head.stop()
