"""``python -m devhost start`` as a person runs it: one-line refusals, its URLs, Ctrl-C.

Each test runs the real command in a subprocess and reads what it prints and its exit code.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.devhost.apps import MY_APP, write_app

REPO = Path(__file__).resolve().parents[3]


def run_start(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "devhost", "start", "--workers", "1", *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, **(env or {})})


def test_a_taken_port_is_refused_in_one_line_naming_the_port_and_the_flag(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_start("--app-dir", str(REPO), "--data-dir", str(tmp_path / "data"),
                         "--port", str(port))
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"devhost: port {port} on 127.0.0.1 is in use")
    assert "--port" in line


def test_a_port_out_of_range_is_refused_in_one_line(tmp_path):
    done = run_start("--app-dir", str(REPO), "--data-dir", str(tmp_path / "data"),
                     "--port", "99999")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "devhost: --port 99999: a TCP port is 0 to 65535 (0: any free one)\n"


def test_a_setting_over_the_retry_budget_is_refused_at_start_in_one_line(tmp_path):
    done = run_start("--app-dir", str(REPO), "--data-dir", str(tmp_path / "data"),
                     "--port", "0", env={"MAX_FAILURES": "50"})
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "SettingsError: invalid app settings: RETRY_BUDGET_CALLS_PER_SERVICE: 200 calls" \
        in line
    assert "MAX_FAILURES (50)" in line
    assert not (tmp_path / "data" / "state.sqlite").exists()  # no function ever ran


def test_an_invalid_setting_is_refused_at_start_naming_it_and_its_rule(tmp_path):
    done = run_start("--app-dir", str(REPO), "--data-dir", str(tmp_path / "data"),
                     "--port", "0", env={"MAX_FAILURES": "101"})
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.endswith("MAX_FAILURES: Input should be less than or equal to 100")


def test_start_lists_its_http_urls_and_ctrl_c_says_it_stopped(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    proc = subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(app_dir), "--data-dir",
         str(tmp_path / "data"), "--port", "0", "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert proc.stdout is not None
        printed = []
        for line in proc.stdout:  # ends at the host's last line, or EOF if it died
            printed.append(line.rstrip("\n"))
            if "Ctrl-C stops the host" in line:
                break
        proc.send_signal(signal.SIGINT)
        rest, errors = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, errors
    (url,) = [line for line in printed if "/api/" in line]
    assert url.startswith("devhost: http_start: [GET,")
    assert "http://127.0.0.1:" in url and url.endswith("/api/orchestrators/{functionName}")
    assert rest.splitlines()[-2:] == ["devhost: stopping: waiting up to 30 s for no running "
                                      "activity", "devhost: stopped"]


SLOW_APP = '''
import os
import pathlib
import time

import azure.durable_functions as df
import azure.functions as func

app = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.route(route="start")
@app.durable_client_input(client_name="client")
async def starter(req: func.HttpRequest, client):
    return func.HttpResponse(await client.start_new("slow_flow", "slow-1"))


@app.orchestration_trigger(context_name="context")
def slow_flow(context):
    return (yield context.call_activity("slow", None))


@app.activity_trigger(input_name="payload")
def slow(payload):
    pathlib.Path(os.environ["RUNNING_MARK"]).write_text("running")
    time.sleep(60)
    return "done"
'''


def start_until_ready(app_dir, data_dir, mark, *extra):
    proc = subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(app_dir), "--data-dir",
         str(data_dir), "--port", "0", "--workers", "1", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "RUNNING_MARK": str(mark)})
    assert proc.stdout is not None
    printed = []
    for line in proc.stdout:
        printed.append(line.rstrip("\n"))
        if "Ctrl-C stops the host" in line:
            break
    return proc, printed


def test_ctrl_c_waits_for_running_activities_up_to_its_limit_and_names_what_it_left(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": SLOW_APP})
    mark, data = tmp_path / "running", tmp_path / "data"
    proc, printed = start_until_ready(app_dir, data, mark, "--stop-wait-s", "1")
    try:
        base = next(line for line in printed if "listening on" in line).split()[3]
        assert httpx.get(f"{base}/api/start", timeout=30).text == "slow-1"
        deadline = time.monotonic() + 60
        while not mark.exists():  # the activity has started: an event of the app's, not time
            assert time.monotonic() < deadline, "the activity never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        rest, errors = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, errors
    assert rest.splitlines()[-2] == ("devhost: stopping: waiting up to 1 s for 1 running "
                                     "activity (slow of instance slow-1)")
    assert rest.splitlines()[-1] == (
        "devhost: stopped; left running: 1 running activity (slow of instance slow-1); each "
        "runs again from its start when a host next runs, once its lease ends (at most "
        "--activity-lease-s 60 s)")
    again, printed = start_until_ready(app_dir, data, mark, "--stop-wait-s", "0")
    again.send_signal(signal.SIGINT)
    again.communicate(timeout=60)
    (earlier,) = [line for line in printed if "earlier run" in line]
    assert earlier.startswith("devhost: 1 running activity (slow of instance slow-1) of an "
                              "earlier run hold their lease until ")
