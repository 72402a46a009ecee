"""A small evaluator of parsed Bicep, enough to see what a deployment would create.

Why: `bicep build` is not available here, so the infrastructure checks read the Bicep
through PyPI ``pycep-parser`` (a syntax parser) and evaluate the few expressions that decide
names and settings: literals, variables, parameters (from the caller or the parameters
file, else the default), module calls, ``loadJsonContent``, ``union``, ``items``,
``objectKeys``, ``replace``, ``toLower`` and property / index access. Values only known at
deployment (resource properties, module outputs) evaluate to :data:`RUNTIME`. Anything else
raises :class:`Unsupported`, so a Bicep change the checks do not understand fails loudly
instead of passing silently.

pycep does not tell a string literal from an identifier: a string is read as a reference
when it names a symbol of the file (or a loop variable), so Bicep in this repository must
not use a literal equal to a symbol name where the checks look (tests/infra guards the
cases it relies on).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pycep import BicepParser


class Unsupported(Exception):
    """An expression the evaluator does not implement (so no check can rely on it)."""


class _Runtime:
    def __repr__(self) -> str:
        return "RUNTIME"


RUNTIME = _Runtime()
"""A value known only at deployment (a resource property or a module output)."""

_IDENT = re.compile(r"^[A-Za-z_]\w*$")

_PURE_FUNCTIONS = {"union", "items", "objectKeys", "replace", "to_lower"}
"""Functions evaluated here (load_json_content is handled apart)."""

_RUNTIME_FUNCTIONS = {"guid", "subscription_resource_id", "resource_group", "subscription",
                      "unique_string", "take", "empty", "string"}
"""Functions whose value the checks never need: treated as deployment-time values."""


@cache
def _parser() -> BicepParser:
    return BicepParser()


@cache
def _parse_cached(path: Path, mtime_ns: int) -> dict[str, Any]:
    return _parser().parse(file_path=path)


def parse_bicep(path: Path) -> dict[str, Any]:
    """Parse one Bicep file with pycep (cached per file version); raises pycep's errors."""
    path = Path(path).resolve()
    return _parse_cached(path, path.stat().st_mtime_ns)


def _key(raw: str) -> str:
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == "'" else raw


@dataclass
class Scope:
    """One Bicep file with the values of its parameters.

    Parameters
    ----------
    path : Path
        The ``.bicep`` file.
    params : dict
        Parameter values given by the caller; missing ones take their default, else RUNTIME.
    """

    path: Path
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.doc = parse_bicep(self.path)
        self._vars: dict[str, Any] = {}

    # ------------------------------------------------------------------ symbols
    def symbols(self) -> set[str]:
        """Names of the file's parameters, variables, resources and modules."""
        doc = self.doc
        return set(doc.get("parameters", {})) | set(doc.get("variables", {})) \
            | set(doc.get("resources", {})) | set(doc.get("modules", {}))

    def param(self, name: str) -> Any:
        """Value of a parameter: the caller's, else the default, else RUNTIME."""
        if name in self.params:
            return self.params[name]
        default = self.doc["parameters"][name].get("default")  # pycep: None when absent
        return RUNTIME if default is None else self.eval(default, {})

    def var(self, name: str) -> Any:
        """Value of a variable (evaluated once)."""
        if name not in self._vars:
            self._vars[name] = self.eval(self.doc["variables"][name]["value"], {})
        return self._vars[name]

    def _ref(self, name: str, env: dict[str, Any]) -> Any:
        if name in env:
            return env[name]
        doc = self.doc
        if name in doc.get("parameters", {}):
            return self.param(name)
        if name in doc.get("variables", {}):
            return self.var(name)
        if name in doc.get("resources", {}) or name in doc.get("modules", {}):
            return RUNTIME
        return name

    # ------------------------------------------------------------------ expressions
    def eval(self, expr: Any, env: dict[str, Any]) -> Any:
        """Evaluate a pycep expression; RUNTIME for deployment-time values.

        Raises
        ------
        Unsupported
            For an expression this evaluator does not implement.
        """
        if isinstance(expr, str):
            if "${" in expr:
                return RUNTIME
            if _IDENT.match(expr) and (expr in env or expr in self.symbols()):
                return self._ref(expr, env)
            return expr
        if expr is None or isinstance(expr, bool | int | float):
            return expr
        if isinstance(expr, list):
            return [self.eval(item, env) for item in expr]
        if not isinstance(expr, dict):
            raise Unsupported(f"{self.path.name}: value {expr!r}")
        if "function" in expr and len(expr) == 1:
            return self._function(expr["function"], env)
        if "operator" in expr and len(expr) == 1:
            return self._operator(expr["operator"], env)
        if "loop_type" in expr:
            raise Unsupported(f"{self.path.name}: a for-expression outside a resource")
        return {_key(k): self.eval(v, env) for k, v in expr.items()}

    def _function(self, fn: dict[str, Any], env: dict[str, Any]) -> Any:
        kind = fn["type"]
        raw = fn.get("parameters") or {}
        if kind == "load_json_content":
            if raw.get("json_path"):
                raise Unsupported(f"{self.path.name}: loadJsonContent with a JSON path")
            target = self.path.parent / self.eval(raw["file_path"], env)
            return json.loads(target.read_text(encoding="utf-8"))
        if kind in _RUNTIME_FUNCTIONS:
            return RUNTIME
        if kind not in _PURE_FUNCTIONS:
            raise Unsupported(f"{self.path.name}: function {kind}()")
        args = [self.eval(value, env) for value in raw.values()
                if value is not None or kind == "union"]
        if kind == "union":
            if any(arg is RUNTIME for arg in args):
                return RUNTIME
            if not all(isinstance(arg, dict) for arg in args):
                raise Unsupported(f"{self.path.name}: union() of non-objects")
            merged: dict[str, Any] = {}
            for arg in args:
                merged.update(arg)
            return merged
        if any(arg is RUNTIME for arg in args):
            return RUNTIME
        if kind == "items":
            return [{"key": k, "value": v} for k, v in sorted(args[0].items())]
        if kind == "objectKeys":
            return list(args[0])
        if kind == "replace":
            return args[0].replace(args[1], args[2])
        return args[0].lower()  # to_lower

    def _operator(self, op: dict[str, Any], env: dict[str, Any]) -> Any:
        kind, operands = op["type"], op.get("operands") or {}
        if kind == "property_accessor":
            base = self.eval(operands["operand_1"], env)
            return self._access(base, operands["operand_2"], env)
        if kind == "index_accessor":
            base = self.eval(operands["operand_1"], env)
            index = self.eval(operands["operand_2"], env)
            return RUNTIME if RUNTIME in (base, index) else base[index]
        if kind == "minus":
            value = self.eval(next(iter(operands.values())), env)
            return RUNTIME if value is RUNTIME else -value
        if kind in {"not_op", "conditional", "coalesce", "and_op", "or_op", "equals",
                    "not_equals"}:
            return RUNTIME
        raise Unsupported(f"{self.path.name}: operator {kind}")

    def _access(self, base: Any, accessor: Any, env: dict[str, Any]) -> Any:
        """Apply ``.name``, ``.a.b`` or ``.a[i]`` (pycep nests accessors to the right)."""
        if base is RUNTIME:
            return RUNTIME
        if isinstance(accessor, str):
            if not isinstance(base, dict):
                raise Unsupported(f"{self.path.name}: property {accessor} of a non-object")
            return base[accessor]
        op = accessor.get("operator", {})
        operands = op.get("operands", {})
        if op.get("type") == "property_accessor":
            return self._access(self._access(base, operands["operand_1"], env),
                                operands["operand_2"], env)
        if op.get("type") == "index_accessor":
            inner = self._access(base, operands["operand_1"], env)
            index = self.eval(operands["operand_2"], env)
            return RUNTIME if RUNTIME in (inner, index) else inner[index]
        raise Unsupported(f"{self.path.name}: accessor {accessor!r}")

    # ------------------------------------------------------------------ modules and resources
    def modules(self) -> list[tuple[str, Scope]]:
        """Each local module call with the scope of its file and evaluated parameters."""
        calls = []
        for name, module in self.doc.get("modules", {}).items():
            if module["type"] != "local":
                continue
            config = module["config"]
            if "loop_type" in config or "condition" in config:
                raise Unsupported(f"{self.path.name}: module {name} with a loop or condition")
            params = {k: self.eval(v, {}) for k, v in (config.get("params") or {}).items()}
            target = (self.path.parent / module["detail"]["path"]).resolve()
            calls.append((name, Scope(target, params)))
        return calls

    def resource_instances(self, arm_type: str) -> list[dict[str, Any]]:
        """Evaluate every non-existing resource of ``arm_type`` declared in this file.

        Loops are expanded over their evaluated source; a conditional resource counts as
        deployed (its condition is not evaluated).

        Returns
        -------
        list of dict
            Each the resource body (``name``, ``properties``, ...) with values evaluated.
        """
        instances = []
        for symbol, resource in self.doc.get("resources", {}).items():
            if resource["type"] != arm_type or resource.get("existing"):
                continue
            config = resource["config"]
            if "loop_type" not in config:
                body = config.get("config", config) if "condition" in config else config
                instances.append(self.eval(body, {}))
                continue
            loop = config["loop_type"]
            detail = loop["detail"]
            source = self.eval(detail["array_name"], {})
            if source is RUNTIME:
                raise Unsupported(f"{self.path.name}: resource {symbol} loops over a "
                                  "deployment-time value")
            for index, item in enumerate(source):
                env = {detail["item_name"]: item}
                if loop["type"] == "array_index":
                    env[detail["index_name"]] = index
                elif loop["type"] != "array":
                    raise Unsupported(f"{self.path.name}: loop type {loop['type']}")
                instances.append(self.eval(config["config"], env))
        return instances


def deployment_scopes(main: Path, params: dict[str, Any]) -> list[Scope]:
    """Return the scope of ``main`` and of every local module it calls (one level).

    Parameters
    ----------
    main : Path
        ``infra/main.bicep``.
    params : dict
        Values of main's parameters (from the parameters file and overrides).
    """
    root = Scope(main, params)
    return [root, *(scope for _, scope in root.modules())]


def load_parameter_file(path: Path) -> dict[str, Any]:
    """Values of an ARM deployment parameters file (``{"parameters": {name: {"value"}}}``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {name: spec["value"] for name, spec in data.get("parameters", {}).items()}
