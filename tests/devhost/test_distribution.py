"""The local host as its own distribution, ``durable-devhost`` (packaging/devhost/pyproject.toml).

The wheel is built offline, installed into a folder, and run on an app that is not this
project, by the base interpreter with ``PYTHONPATH`` = that folder + the virtual environment's
site-packages: a ``PYTHONPATH`` entry runs no ``.pth`` file, so the repository's editable
install is out of sight and the host can only use what the wheel holds.
"""

import os
import queue
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from tests.devhost.apps import MY_APP, write_app
from tests.test_structure import REPO, imported_modules, modules

HOST_PACKAGES = {"devhost", "sqlitebus", "sqlitekit", "clocks", "azurekit"}
"""What the local host imports of this repository, transitively, and so what the wheel holds."""

START_TIMEOUT_S = 20.0
RUN_TIMEOUT_S = 20.0
POLL_S = 0.05
"""Between two status requests, as a client polls ``statusQueryGetUri`` (bounded by the above)."""

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("devhost-wheel")]


def test_the_host_reaches_exactly_its_packages_and_never_the_app():
    project = {p.name for p in REPO.iterdir() if (p / "__init__.py").is_file()}
    reached, todo = set(), ["devhost"]
    while todo:
        package = todo.pop()
        reached.add(package)
        todo += sorted({name.split(".")[0] for path in modules(package)
                        for name in imported_modules(path)} & project - reached)
    assert reached == HOST_PACKAGES


def test_the_wheel_declares_every_distribution_its_packages_import():
    # The install test puts the venv's site-packages on the path, so an undeclared import
    # (httpx, pydantic) would pass there and fail a user's fresh install.
    import importlib.util
    import tomllib
    from importlib.metadata import distributions

    from packaging.requirements import Requirement

    declared = {Requirement(r).name.lower() for r in tomllib.loads(
        (REPO / "packaging" / "devhost" / "pyproject.toml").read_text())["project"]["dependencies"]}
    owner = {str(Path(d.locate_file(f)).resolve()): d.metadata["Name"].lower()
             for d in distributions() for f in d.files or ()}
    imported = {name for package in HOST_PACKAGES for path in modules(package)
                for name in imported_modules(path)
                if name.split(".")[0] not in HOST_PACKAGES | set(sys.stdlib_module_names)
                and name != "__future__"}
    needed: dict[str, str] = {}
    for name in sorted(imported):
        parts = name.split(".")
        for end in range(len(parts), 0, -1):  # "azure" alone is a namespace of many
            try:  # "from m import Name" reads as m.Name
                spec = importlib.util.find_spec(".".join(parts[:end]))
            except ModuleNotFoundError:
                continue
            if spec is not None and spec.origin not in (None, "namespace"):
                needed[name] = owner.get(str(Path(spec.origin).resolve()), "?")
                break
    missing = {name: dist for name, dist in needed.items() if dist not in declared}
    assert missing == {}, "imported by the host, not declared by its wheel"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "--quiet", "--wheel-dir", str(out),
                    str(REPO / "packaging" / "devhost")],
                   check=True, capture_output=True, timeout=120)
    (built,) = out.glob("durable_devhost-*.whl")
    return built


def test_the_wheel_holds_the_host_packages_whole_and_nothing_else(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    files = {n for n in names if ".dist-info/" not in n}
    expected = {str(p.relative_to(REPO)) for package in HOST_PACKAGES
                for p in (REPO / package).rglob("*.py") if "__pycache__" not in p.parts}
    assert files == expected
    entry_points = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "devhost = devhost.run.cli:main" in entry_points


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    target = tmp_path_factory.mktemp("target")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--quiet", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=120)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME") and not k.startswith("DEVHOST_")}
    env.update(PYTHONPATH=os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]]),
               PYTHONUNBUFFERED="1", PYTHONNOUSERSITE="1")
    return target, env


def base_python(args, env, cwd, **kwargs):
    return subprocess.run([sys._base_executable, *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60, **kwargs)


def test_the_installed_copy_is_the_one_imported_and_the_app_is_out_of_sight(installed,
                                                                             tmp_path):
    target, env = installed
    found = base_python(["-c", "import devhost, sqlitebus, sqlitekit, clocks, azurekit\n"
                         "for m in (devhost, sqlitebus, sqlitekit, clocks, azurekit):\n"
                         "    print(m.__file__)\n"
                         "try:\n    import orders\nexcept ImportError:\n    print('no-orders')"],
                        env, tmp_path, check=True)
    *files, last = found.stdout.split()
    assert last == "no-orders"  # the repository's app is not importable
    assert len(files) == 5 and all(Path(f).is_relative_to(target) for f in files), files


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def read_until(process, text, timeout_s):
    """Return the host's output up to the line holding ``text``; fail after ``timeout_s``."""
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout] + [
        lines.put("")], daemon=True).start()
    seen, deadline = [], time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if not line:
            break  # the host ended
        seen.append(line)
        if text in line:
            return "".join(seen)
    pytest.fail(f"the host did not say {text!r} within {timeout_s} s:\n{''.join(seen)}")


def test_the_installed_host_runs_a_hello_world_app_through_the_http_api(installed, tmp_path):
    target, env = installed
    app_dir = write_app(tmp_path / "hello_app", {"function_app.py": MY_APP})
    port = free_port()
    host = subprocess.Popen(
        [sys._base_executable, "-m", "devhost", "start", "--app-dir", str(app_dir),
         "--data-dir", str(tmp_path / "data"), "--port", str(port), "--workers", "1"],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        started = read_until(host, "Ctrl-C stops the host", START_TIMEOUT_S)
        assert "3 functions: hello, hello_orchestrator, http_start" in started
        reply = httpx.post(f"http://127.0.0.1:{port}/api/orchestrators/hello_orchestrator")
        assert reply.status_code == 202, reply.text
        status_url = reply.json()["statusQueryGetUri"]
        deadline = time.monotonic() + RUN_TIMEOUT_S
        status = httpx.get(status_url).json()
        while status["runtimeStatus"] in ("Pending", "Running") and time.monotonic() < deadline:
            time.sleep(POLL_S)
            status = httpx.get(status_url, timeout=5).json()
        assert status["runtimeStatus"] == "Completed", status
        assert status["output"] == ["Hello Seattle", "Hello Tokyo"]
    finally:
        host.terminate()
        try:
            host.wait(timeout=30)
        finally:
            host.kill()


WORKFLOW_TEST_MAX_S = 2.0
"""The three-day approval workflow's test, in a user's own run (issue acceptance)."""
TIMING_RUNS = 3

USER_TESTS = Path(__file__).parent / "testing" / "approval_app"
"""The approval app and its user's test file (docs/testing.md's example)."""

WRONG_EXPECTATION = '''
from datetime import timedelta


def test_expects_approval_without_an_answer(durable_host):
    instance_id = durable_host.start("approval", {"approver": "ana", "amount": 1200})
    durable_host.advance(timedelta(days=3))
    assert durable_host.status(instance_id)["output"] == "approved"
'''


def fresh_venv(wheel, folder):
    """A new virtual environment with the wheel and its dependencies, as a user installs it.

    uv installs offline, pinned to the versions this environment holds (its cache has them),
    compiling the bytecode as pip does.
    """
    uv = Path(sys.executable).parent / "uv"
    subprocess.run([uv, "venv", "-q", "--python", sys._base_executable, folder / "venv"],
                   check=True, capture_output=True, timeout=120)
    frozen = subprocess.run([uv, "pip", "freeze", "--python", sys.executable], check=True,
                            capture_output=True, text=True, timeout=120).stdout
    pins = folder / "constraints.txt"
    pins.write_text("".join(line + "\n" for line in frozen.splitlines()
                            if not line.startswith("-e") and "sas-orders" not in line))
    python = folder / "venv" / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--offline", "--compile-bytecode",
                    "--constraint", pins,
                    "--python", python, wheel], check=True, capture_output=True, timeout=300)
    return python


@pytest.mark.slow(expected_s=25)
def test_a_user_tests_a_three_day_workflow_with_the_installed_plugin_alone(wheel, tmp_path):
    python = fresh_venv(wheel, tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    for name in ("function_app.py", "host.json", "test_approval.py"):
        shutil.copy(USER_TESTS / name, project / name)
    (project / "test_wrong.py").write_text(WRONG_EXPECTATION)
    (project / "pytest.ini").write_text("[pytest]\ndurable_app_dir = .\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith(("DEVHOST_", "PYTEST_"))}
    # Wall time on a shared machine varies with its load: the workflow's test must take
    # under WORKFLOW_TEST_MAX_S (setup, call and teardown) in one of a few whole runs, and
    # every run must pass and fail the same tests.
    for _ in range(TIMING_RUNS):
        run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "--junitxml", "report.xml"], cwd=project, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 1, run.stdout + run.stderr  # the wrong expectation fails
        times = {case.get("name"): (float(case.get("time")), case.find("failure") is not None)
                 for case in ElementTree.parse(project / "report.xml").iter("testcase")}
        assert [name for name, (_, f) in times.items() if f] == [
            "test_expects_approval_without_an_answer"]
        assert "AssertionError: assert 'escalated' == 'approved'" in run.stdout, run.stdout
        if times["test_no_answer_within_three_days_escalates"][0] < WORKFLOW_TEST_MAX_S:
            break
    assert times["test_no_answer_within_three_days_escalates"][0] < WORKFLOW_TEST_MAX_S, times
    assert "durable-devhost" not in run.stderr
