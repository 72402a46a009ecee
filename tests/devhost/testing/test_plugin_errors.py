"""The plugin's errors for bad input are one line each: no app, an app that fails to load."""

import os
import subprocess
import sys

USER_TESTS = '''
def test_uses_the_ini_folder(durable_host):
    pass


def test_loads_a_broken_app(durable_host_factory):
    durable_host_factory("broken")
'''


def test_no_app_and_an_app_that_fails_to_load_fail_the_test_with_one_line(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\ndurable_app_dir = nowhere\n")
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "host.json").write_text('{"version": "2.0"}')
    (broken / "function_app.py").write_text("import azure.durable_functions as df\n"
                                            "app = df.DFApp(\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEVHOST_", "PYTEST_"))}
    env["COLUMNS"] = "400"  # the short summary whole
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-ra"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    summary = [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert summary == [
        f"ERROR test_user.py::test_uses_the_ini_folder - Failed: durable_host: no app in "
        f"{tmp_path / 'nowhere'} (no host.json); set durable_app_dir in the pytest ini file or "
        "pass --durable-app-dir",
        "FAILED test_user.py::test_loads_a_broken_app - Failed: durable_host: the app fails to "
        "load: function_app.py:2:15: SyntaxError: '(' was never closed"], run.stdout
    assert "Traceback" not in run.stdout
