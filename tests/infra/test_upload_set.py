"""What `func azure functionapp publish` uploads is enough to run, and nothing more.

The upload set is the working tree less ``.funcignore`` (gitignore syntax, as Core Tools
reads it). The app is imported from a copy of exactly that set, by a Python whose only
packages are ``requirements.txt`` (what the remote build installs), with Azure's settings
(Cosmos DB and Service Bus backends), and must list every function. A static pass also
checks that every module the shipped code imports, at module level or inside a function,
is shipped or installed: the embedded adapters use the shipped engine (``sqlitebus``), and
nothing shipped reaches the local host.
"""

import ast
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pathspec
import pytest
from uv import find_uv_bin

# One worker builds the requirements-only venv for both tests that use it.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("deploy-venv"), pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
NOT_SHIPPED = ("devhost", "simulator", "client", "demo", "bench", "opscli", "tests", "docs",
               "node_modules", "pyproject.toml", "local.settings.json", "Makefile",
               "package.json", "infra/main.bicep")
AZURE_SETTINGS = {
    "STORE_BACKEND": "cosmos", "COSMOS_ENDPOINT": "https://example.documents.azure.com:443/",
    "COSMOS_DATABASE": "orders", "MESSAGING_BACKEND": "servicebus",
    "SERVICEBUS__fullyQualifiedNamespace": "example.servicebus.windows.net",
    "PAYMENT_API_URL": "https://payments.example", "SHIPPING_API_URL": "https://ship.example",
}


def upload_set(root: Path) -> list[str]:
    """Relative paths ``func`` would upload from ``root`` (``.funcignore`` applied)."""
    spec = pathspec.PathSpec.from_lines("gitignore",
                                        (root / ".funcignore").read_text().splitlines())
    files = []
    # An ignored folder is not entered (.venv, node_modules): nothing inside it can be
    # uploaded, as a file under an excluded folder cannot be re-included in gitignore syntax.
    for folder, dirs, names in os.walk(root):
        base = Path(folder).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        dirs[:] = [d for d in dirs if not spec.match_file(prefix + d + "/")]
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink() and not spec.match_file(prefix + name):
                files.append(prefix + name)
    return sorted(files)


@pytest.fixture(scope="session")
def deploy_python() -> Path:
    """A Python with only requirements.txt installed, cached by the file's hash."""
    requirements = (REPO / "requirements.txt").read_bytes()
    home = REPO / f".venv-deploy-{hashlib.sha256(requirements).hexdigest()[:12]}"
    python = home / "bin" / "python"
    # Parallel test workers share the folder: the first builds it, the others wait.
    (REPO / ".venv-deploy.lock").mkdir(exist_ok=True)
    with open(REPO / ".venv-deploy.lock" / home.name, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / ".installed").exists():
            shutil.rmtree(home, ignore_errors=True)
            # uv (the test extra) resolves and installs as pip would, in seconds, not minutes.
            uv = find_uv_bin()
            subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(home)],
                           check=True, timeout=120)
            subprocess.run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python",
                            str(python), "-r", str(REPO / "requirements.txt")],
                           check=True, timeout=600)
            (home / ".installed").touch()
    return python


@pytest.fixture(scope="session")
def shipped(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("upload")
    for rel in upload_set(REPO):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target / rel)
    return target


def test_the_upload_set_holds_the_app_and_none_of_the_tooling(shipped):
    files = upload_set(REPO)
    for needed in ("function_app.py", "host.json", "requirements.txt", "infra/queues.json",
                   "orders/settings.py", "scheduler/blueprint.py", "sqlitekit/__init__.py",
                   "sqlitebus/engine.py"):
        assert needed in files
    leaked = [f for f in files if f.startswith(NOT_SHIPPED) or "__pycache__" in f
              or ".egg-info" in f or f.startswith(".venv")]
    assert leaked == []


def test_the_shipped_app_imports_with_only_its_requirements_and_lists_its_functions(
        shipped, deploy_python):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(shipped), **AZURE_SETTINGS}
    done = subprocess.run([str(deploy_python), "-I", "-c", LIST_FUNCTIONS], cwd=shipped,
                          env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    deployed = json.loads(done.stdout.splitlines()[-1])
    assert deployed == local_function_names() and len(deployed) > 20


LIST_FUNCTIONS = ("import json, sys; sys.path.insert(0, '.'); import function_app; "
                  "print(json.dumps(sorted(f.get_function_name() "
                  "for f in function_app.app.get_functions())))")


def local_function_names() -> list[str]:
    """The functions the app registers, imported by the development environment."""
    done = subprocess.run([sys.executable, "-c", LIST_FUNCTIONS], cwd=REPO,
                          capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.splitlines()[-1])


def imported_names(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


def test_every_module_the_shipped_code_imports_is_shipped_or_installed(shipped,
                                                                       deploy_python):
    wanted: dict[str, list[str]] = {}
    for path in sorted(shipped.rglob("*.py")):
        rel = path.relative_to(shipped).as_posix()
        for name in set(imported_names(path)):
            wanted.setdefault(name, []).append(rel)
    probe = subprocess.run(
        [str(deploy_python), "-I", "-c",
         "import importlib.util, json, sys; sys.path.insert(0, '.'); "
         "print(json.dumps([n for n in json.loads(sys.argv[1]) "
         "if importlib.util.find_spec(n) is None]))", json.dumps(sorted(wanted))],
        cwd=shipped, capture_output=True, text=True, check=True, timeout=120)
    missing = {name: wanted[name] for name in json.loads(probe.stdout)}
    assert missing == {}, "the deployed app would import what it does not ship"


def test_the_check_notices_a_module_left_out(tmp_path):
    # The check itself can fail: leave sqlitekit out and it is named.
    shutil.copytree(REPO, tmp_path / "app", ignore=shutil.ignore_patterns(
        ".git", ".venv*", "node_modules", ".data", "__pycache__"))
    funcignore = tmp_path / "app" / ".funcignore"
    funcignore.write_text(funcignore.read_text() + "\nsqlitekit\n")
    assert "sqlitekit/__init__.py" not in upload_set(tmp_path / "app")


if sys.platform == "win32":  # pragma: no cover - the check runs where CI runs
    pytestmark = pytest.mark.skip(reason="POSIX venv layout")
