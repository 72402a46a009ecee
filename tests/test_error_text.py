"""No code decides what an error means by reading its message text or type name.

Errors are mapped by type or status code where they enter (``orders.stores._cosmos``,
``orders.stores._sqlite``, ``orders.messaging.azure``, ``scheduler.durable_client``), and
callers read ``retryable``. This test parses every non-test module and fails on an
``except ... as exc`` block that matches text taken from ``exc``: ``... in str(exc)``,
``text = str(exc)`` then ``"x" in text``, ``str(exc).startswith(...)``,
``re.search(..., str(exc))``, ``exc.args[0] == ...``, ``type(exc).__name__ == ...``.
Formatting an error into a log line or a new error's message is fine; matching it is not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SKIP_DIRS = {"tests", "node_modules", ".venv", "__pycache__"}

ALLOWED: dict[tuple[str, str], str] = {}
"""(module, function) -> why its handler may read exception text. Empty: the one reader of
exception text, ``devhost.orchestration.sdk_errors``, reads the out-of-process wire
protocol (the Python SDK returns a failed episode's state only as
``<message>\\n\\n$OutOfProcData$:<json>`` in the exception text, and the Functions host
splits it the same way), not an error's meaning, and does so outside any handler."""

TEXT_ATTRIBUTES = {"args", "message", "msg", "strerror", "http_error_message"}
TEXT_CALLS = {"str", "repr", "format"}
MATCH_METHODS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count",
                 "partition", "rpartition", "split", "rsplit"}
REGEX_FUNCTIONS = {"search", "match", "fullmatch", "findall", "finditer", "sub", "subn"}


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_text(node: ast.AST, exc: str, derived: set[str]) -> bool:
    """True if ``node`` is text (or a type name) taken from the exception ``exc``."""
    if isinstance(node, ast.Name):
        return node.id in derived
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in TEXT_CALLS:
            return any(_is_name(arg, exc) for arg in node.args)
        if isinstance(func, ast.Attribute):  # str(exc).lower(), text.strip(), ...
            return _is_text(func.value, exc, derived)
        return False
    if isinstance(node, ast.Attribute):
        if _is_name(node.value, exc) and node.attr in TEXT_ATTRIBUTES:
            return True
        if node.attr in ("__name__", "__qualname__"):  # type(exc).__name__, exc.__class__
            inner = node.value
            return ((isinstance(inner, ast.Call) and _is_name(inner.func, "type")
                     and any(_is_name(arg, exc) for arg in inner.args))
                    or (isinstance(inner, ast.Attribute) and inner.attr == "__class__"
                        and _is_name(inner.value, exc)))
        return _is_text(node.value, exc, derived) if isinstance(node.value, ast.Call) else False
    if isinstance(node, ast.Subscript):
        return _is_text(node.value, exc, derived)
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) and _is_name(part.value, exc)
                   for part in node.values)
    return False


def _matches_in(handler: ast.ExceptHandler) -> list[ast.AST]:
    """The nodes in ``handler`` that match text taken from its exception."""
    exc = handler.name
    if exc is None:
        return []
    derived: set[str] = set()
    body = ast.Module(body=handler.body, type_ignores=[])
    for node in ast.walk(body):  # text = str(exc); text = text.lower(); ...
        if isinstance(node, ast.Assign) and _is_text(node.value, exc, derived):
            derived.update(t.id for t in node.targets if isinstance(t, ast.Name))
    found: list[ast.AST] = []
    for node in ast.walk(body):
        if isinstance(node, ast.Compare):
            if any(isinstance(op, ast.In | ast.NotIn | ast.Eq | ast.NotEq) for op in node.ops) \
                    and any(_is_text(side, exc, derived)
                            for side in (node.left, *node.comparators)):
                found.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in MATCH_METHODS and _is_text(node.func.value, exc, derived):
                found.append(node)
            elif node.func.attr in REGEX_FUNCTIONS and any(
                    _is_text(arg, exc, derived) for arg in node.args):
                found.append(node)
    return found


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.function = "<module>"
        self.found: list[tuple[str, int]] = []

    def _in_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_FunctionDef = _in_function
    visit_AsyncFunctionDef = _in_function

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.found += [(self.function, match.lineno) for match in _matches_in(node)]
        self.generic_visit(node)


def text_matches(source: str) -> list[tuple[str, int]]:
    """(function, line) of every match of exception text in ``source``."""
    finder = _Finder()
    finder.visit(ast.parse(source))
    return finder.found


def project_modules() -> list[Path]:
    return sorted(path for path in ROOT.rglob("*.py")
                  if not SKIP_DIRS.intersection(path.relative_to(ROOT).parts[:-1])
                  and not any(part.startswith(".") for part in path.relative_to(ROOT).parts))


def test_no_code_matches_an_errors_message_text():
    modules = project_modules()
    assert len(modules) > 100  # the scan really covers the project
    offenders = []
    used = set()
    for path in modules:
        module = path.relative_to(ROOT).as_posix()
        for function, line in text_matches(path.read_text(encoding="utf-8")):
            if (module, function) in ALLOWED:
                used.add((module, function))
            else:
                offenders.append(f"{module}:{line} in {function}()")
    assert offenders == [], ("decide by exception type, status code or a flag such as "
                             "retryable, not by message text: " + ", ".join(offenders))
    assert used == set(ALLOWED), f"allow-list entries that no longer match: {set(ALLOWED) - used}"


@pytest.mark.parametrize("source", [
    # The forms this project used before its errors were typed.
    """
async def route(client):
    try:
        await client.raise_event("i", "e", None)
    except Exception as exc:
        text = str(exc)
        if "is gone" in text or "No instance with ID" in text:
            return False
        raise
""",
    """
def use(conn):
    try:
        yield conn
    except sqlite3.OperationalError as exc:
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            raise TransientStoreError() from exc
""",
    """
def settings(data_dir):
    try:
        return Settings()
    except ValidationError as exc:
        if data_dir is None and "DEVHOST_DATA_DIR" in str(exc):
            return settings(".data")
""",
    """
def f():
    try:
        g()
    except ValueError as e:
        if e.args[0].startswith("bad"):
            return 1
""",
    """
def f():
    try:
        g()
    except Exception as err:
        if re.search("timed out", f"{err}"):
            return 1
""",
    """
def f():
    try:
        g()
    except Exception as err:
        if type(err).__name__ == "ServiceBusServerBusyError":
            return 1
""",
    """
def f():
    try:
        g()
    except Exception as err:
        if err.message == "throttled":
            return 1
""",
])
def test_the_check_finds_text_matching(source):
    assert text_matches(source) != []


@pytest.mark.parametrize("source", [
    # Formatting an error and deciding by type, status or flag are fine.
    """
def f():
    try:
        g()
    except CosmosHttpResponseError as exc:
        if exc.status_code == 404 and exc.sub_status == 1003:
            raise StoreError(f"read: {exc}") from exc
        log.warning("failed: %s", str(exc))
        raise StoreError(str(exc)) from exc
""",
    """
def f():
    try:
        g()
    except sqlite3.Error as exc:
        if is_busy(exc) or exc.sqlite_errorname in ("SQLITE_FULL",):
            raise TransientStoreError(str(exc)) from exc
""",
    """
def f():
    try:
        g()
    except OrderServiceError as exc:
        if exc.retryable:
            raise
        text = str(exc)
        notify(text)
""",
])
def test_the_check_lets_typed_decisions_pass(source):
    assert text_matches(source) == []
