"""The layout keeps its promises: imports point down, modules and functions stay small.

Layers, from the ground up (each package's docstring says the same):
``clocks``/``sqlitekit``/``durable_http``/``azurekit`` -> ``orders`` ->
``agents``/``activities``/``orchestrators`` -> ``scheduler``/``supervisor`` -> ``ops``.
The local host (``devhost``) is imported by none of them at module level (it is not
deployed).
"""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYER = {"clocks": 0, "sqlitekit": 0, "durable_http": 0, "azurekit": 0, "orders": 1,
         "agents": 2, "activities": 2, "orchestrators": 2, "scheduler": 3, "supervisor": 3,
         "ops": 4}
SIZED = ("durable_http", "azurekit", "orders", "agents", "activities", "orchestrators",
         "scheduler", "supervisor", "ops", "devhost")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def modules(*packages):
    for package in packages:
        yield from sorted((REPO / package).rglob("*.py"))


def top_level_imports(path: Path):
    """Imported top-level package names at module level (not inside functions)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


@pytest.mark.parametrize("package", sorted(LAYER))
def test_imports_only_point_down_a_layer(package):
    upward = []
    for path in modules(package):
        for name in top_level_imports(path):
            if name == "devhost" or (name in LAYER and name != package
                                     and LAYER[name] >= LAYER[package]):
                upward.append(f"{path.relative_to(REPO)} imports {name}")
    assert upward == []


def test_modules_and_functions_stay_small():
    too_big = []
    for path in modules(*SIZED):
        source = path.read_text()
        lines = source.count("\n")
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{path.relative_to(REPO)}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_big.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}: "
                                   f"{length} lines")
    assert too_big == []
