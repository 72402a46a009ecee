"""The layout keeps its promises: imports point down, rules have one home, no cycles.

Layers, from the ground up (each package's docstring says the same):
``clocks``/``sqlitekit``/``durable_http``/``azurekit`` -> ``sqlitebus`` -> ``orders`` ->
``agents``/``activities``/``orchestrators`` -> ``scheduler``/``supervisor`` -> ``ops``.
That is the deployed code. The workshop (the local host ``devhost``, the simulated
services, the client, the demo, the benchmarks, the operator CLI ``opscli``) stands on it
and is never imported by it, in any form: module-level or function-level ``import``,
``importlib.import_module`` or ``__import__`` with a literal name, or a dotted module name
in a string.
"""

import ast
import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYER = {"clocks": 0, "sqlitekit": 0, "durable_http": 0, "azurekit": 0, "sqlitebus": 1,
         "orders": 2, "agents": 3, "activities": 3, "orchestrators": 3, "scheduler": 4,
         "supervisor": 4, "ops": 5}
DEPLOYED_MODULES = ("function_app.py",)
WORKSHOP = ("devhost", "simulator", "client", "demo", "bench", "opscli")
SIZED = ("durable_http", "azurekit", "sqlitebus", "orders", "agents", "activities",
         "orchestrators", "scheduler", "supervisor", "ops", "opscli", "devhost")
MAX_MODULE_LINES = 400
"""Most code lines of a module: non-blank lines that are neither docstring nor comment, so a
module is as long as its idea and prose never counts against it."""
MAX_FUNCTION_LINES = 80
_DOTTED_WORKSHOP_NAME = re.compile(rf"^(?:{'|'.join(WORKSHOP)})(?:\.[a-z_][a-z0-9_]*)+$")


def walked(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the module at ``path`` (``ast.walk``), once per process and version."""
    return _walk(path, path.stat().st_mtime_ns)


@functools.cache
def _walk(path: Path, mtime_ns: int) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def modules(*packages: str) -> Iterator[Path]:
    for package in packages:
        target = REPO / package
        yield from [target] if target.is_file() else sorted(target.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, anywhere in it, as an absolute dotted name.

    ``import a.b``, ``from a import b`` (both ``a`` and ``a.b``: ``b`` may be a module),
    relative imports resolved, and ``importlib.import_module("a.b")`` / ``__import__("a")``
    with a literal argument.
    """
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in walked(path):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and _is_import_call(node.func):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value


def _is_import_call(func: ast.expr) -> bool:
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return called in ("import_module", "__import__")


def strings(path: Path) -> Iterator[str]:
    """The string constants of ``path`` that are not docstrings."""
    docstrings = set()
    for node in walked(path):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            docstrings.update(id(stmt.value) for stmt in body if isinstance(stmt, ast.Expr)
                              and isinstance(stmt.value, ast.Constant))
    for node in walked(path):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.value


def upward_imports(package: str) -> list[str]:
    found = []
    for path in modules(package):
        for name in set(imported_modules(path)):
            top = name.split(".")[0]
            if top in WORKSHOP or (top in LAYER and top != package
                                   and LAYER[top] >= LAYER.get(package, len(LAYER))):
                found.append(f"{path.relative_to(REPO)} imports {name}")
        for text in strings(path):
            if _DOTTED_WORKSHOP_NAME.match(text):
                found.append(f"{path.relative_to(REPO)} names module {text!r}")
    return sorted(set(found))


@pytest.mark.parametrize("package", [*sorted(LAYER), *DEPLOYED_MODULES])
def test_deployed_imports_point_down_a_layer_and_never_to_the_workshop(package):
    assert upward_imports(package) == []


def test_the_import_walk_sees_every_form(tmp_path, monkeypatch):
    # The check itself can fail: each form of reaching the local host is named.
    source = tmp_path / "orders"
    source.mkdir()
    (source / "sneaky.py").write_text(
        "import importlib\n"
        "def a():\n    from devhost.run.runtime import current\n"
        "def b():\n    return importlib.import_module('simulator.app')\n"
        "def c():\n    return __import__('client')\n"
        "def d():\n    import demo.audit\n"
        "TARGET = 'bench.peers'\n"
        "from ..devhost.run import host\n")
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert [line.split(" ", 1)[1] for line in upward_imports("orders")] == [
        "imports client", "imports demo.audit", "imports devhost.run",
        "imports devhost.run.host", "imports devhost.run.runtime",
        "imports devhost.run.runtime.current",
        "imports simulator.app", "names module 'bench.peers'",
        "names module 'simulator.app'"]


def code_lines(source: str) -> int:
    """Non-blank lines of ``source`` that are neither a docstring nor a comment."""
    prose = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        for stmt in body if isinstance(body, list) else []:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                prose.update(range(stmt.lineno, stmt.end_lineno + 1))
    return sum(1 for n, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and n not in prose)


def test_code_lines_leave_docstrings_and_comments_out():
    assert code_lines('"""Doc.\n\nMore."""\n\n# note\nX = 1\n"""X doc."""\n'
                      'def f():\n    """F."""\n    return X  # why\n') == 3


def test_modules_and_functions_stay_small():
    too_big = []
    for path in modules(*SIZED):
        source = path.read_text()
        lines = code_lines(source)
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{path.relative_to(REPO)}: {lines} code lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_big.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}: "
                                   f"{length} lines")
    assert too_big == []


# One home per rule the app and the local host share: azurekit, the bottom layer made for
# that. Each marker below finds where a rule is *defined*; it must be found in one module.
SOURCE = (*DEPLOYED_MODULES, *sorted(LAYER), *WORKSHOP)


def assigned_names(path: Path) -> Iterator[str]:
    for node in walked(path):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        yield from (t.id for t in targets if isinstance(t, ast.Name))


def _builds_queues_json_path(path: Path) -> bool:
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
               and isinstance(node.right, ast.Constant) and node.right.value == "queues.json"
               for node in walked(path))


def _checks_instance_ids(path: Path) -> bool:
    """A function named for instance ids that tests characters or bounds the length."""
    for node in walked(path):
        if isinstance(node, ast.FunctionDef) and "instance_id" in node.name:
            inner = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)}
            if "Cc" in inner or {32, 127} <= inner:
                return True
    return any("INSTANCE_ID" in n and ("LENGTH" in n or "FORBIDDEN" in n)
               for n in assigned_names(path))


SHARED_RULES: dict[str, tuple[str, Callable[[Path], bool]]] = {
    "instance-id rules": ("azurekit/instance_ids.py", _checks_instance_ids),
    "client-id pattern": ("azurekit/client_ids.py", lambda p: any(
        "CLIENT_ID" in n and n.endswith(("PATTERN", "RULE", "_RE", "MAX_LENGTH"))
        for n in assigned_names(p)) or any("[a-z0-9-]{0," in s for s in strings(p))),
    "infra/queues.json path": ("azurekit/queues.py", _builds_queues_json_path),
    "queue-name rule": ("azurekit/queues.py", lambda p: any(
        "{0,258}" in s for s in strings(p))),
    "infra/queues.json parsing": ("azurekit/queues.py", lambda p: any(
        s in ("clientReplyQueues", "duplicateDetectionHistoryTimeWindow") for s in strings(p))),
    "app-settings.json name": ("azurekit/app_settings.py", lambda p: any(
        s == "app-settings.json" for s in strings(p))),
}


@pytest.mark.parametrize("rule", sorted(SHARED_RULES))
def test_each_shared_rule_is_defined_in_one_module(rule):
    home, defines = SHARED_RULES[rule]
    found = sorted(str(p.relative_to(REPO)) for p in modules(*SOURCE) if defines(p))
    assert found == [home]


def test_the_workflow_versions_have_one_owner_the_scheduler_and_orchestrators_read():
    # orders.names owns the list; the orchestrators' registry is checked against it at
    # import, and the scheduler learns the versions from it, never from the orchestrators.
    from orchestrators.order_workflow import WORKFLOWS
    from orders.names import WORKFLOW_REMOTE_STEPS, WORKFLOW_VERSIONS

    assert list(WORKFLOWS) and sorted(WORKFLOWS) == list(WORKFLOW_VERSIONS) == sorted(
        WORKFLOW_REMOTE_STEPS)
    reads = {str(p.relative_to(REPO)) for p in modules("scheduler")
             if any(name.startswith("orchestrators") for name in imported_modules(p))}
    assert reads == set()
    assert any("orders.names.WORKFLOW_VERSIONS" in set(imported_modules(p))
               for p in modules("scheduler"))


# No import cycles between subpackages: a subpackage may use its siblings only one way.
# A package and its own subpackages are not siblings (a package's root modules may build
# on its subpackages, which may use a root module's small pieces).
def subpackage_imports(root: Path) -> dict[str, set[str]]:
    """Edges ``a -> b`` when a module of subpackage ``a`` imports one of ``b``."""
    files = [p for p in root.rglob("*.py") if not {"tests", ".venv", "node_modules"}
             & set(p.relative_to(root).parts) and not p.relative_to(root).parts[0]
             .startswith(".")]
    packages = {".".join(p.parent.relative_to(root).parts) for p in files
                if p.name == "__init__.py"}

    def package_of(name: str) -> str | None:
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in packages:
                return ".".join(parts[:end])
        return None

    edges: dict[str, set[str]] = {}
    for path in files:
        source = package_of(".".join(path.relative_to(root).with_suffix("").parts))
        for name in imported_modules(path) if source else ():
            target = package_of(name)
            if target and target != source and not target.startswith(f"{source}.") \
                    and not source.startswith(f"{target}."):
                edges.setdefault(source, set()).add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one package (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycle_between_subpackages():
    assert cycles(subpackage_imports(REPO)) == []


def test_the_cycle_check_names_a_cycle(tmp_path, monkeypatch):
    # The check itself can fail: two sibling subpackages importing each other are named.
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    for package, imports in (("host", ""), ("host/a", "from host.b import x\n"),
                             ("host/b", "def f():\n    import host.a.m\n")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "m.py").write_text(imports)
    assert cycles(subpackage_imports(tmp_path)) == [["host.a", "host.b"]]


def test_an_episode_owns_its_attributes_and_its_ending_writes_them_by_name():
    # A mixin redeclaring the episode's attributes hid who writes ``commit``; the ending
    # now holds the episode and writes ``self.episode.commit``.
    from devhost.orchestration.endings import EpisodeEnding
    from devhost.orchestration.episode import Episode

    assert Episode.__mro__ == (Episode, object)
    assert EpisodeEnding.__dict__.get("__annotations__", {}) == {}
    assert "self.episode.commit" in (REPO / "devhost/orchestration/endings.py").read_text()
