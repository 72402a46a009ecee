"""A small evaluator of parsed Bicep, enough to see what a deployment would create.

Why: `bicep build` is not available here, so the infrastructure checks read the Bicep
through PyPI ``pycep-parser`` (a syntax parser) and evaluate the few expressions that decide
names and settings: literals, variables, parameters (from the caller or the parameters
file, else the default), module calls, ``loadJsonContent``, ``union``, ``concat`` (arrays),
``items``, ``objectKeys``, ``replace``, ``toLower``, ``empty``, ``join``,
``subscriptionResourceId``, ``concat`` (strings),
for-expressions without a filter (``[for x in xs: ...]``), ``!``, ``<``, ``<=``, ``>``,
``>=``, ``==``, ``!=`` and ``cond ? a : b`` (when their operands are known), property /
index access, and modules deployed ``if (condition)`` (left out when it is false). A reference
to a resource of the file evaluates to a :class:`ResourceRef` (type and evaluated name), so
the checks can see which queue a role assignment is scoped to; its properties and module
outputs, only known at deployment, evaluate to :data:`RUNTIME`. Anything else raises
:class:`Unsupported`, so a Bicep change the checks do not understand fails loudly instead of
passing silently.

pycep does not tell a string literal from an identifier: a string is read as a reference
when it names a symbol of the file (or a loop variable), so Bicep in this repository must
not use a literal equal to a symbol name where the checks look (tests/infra guards the
cases it relies on).
"""

from __future__ import annotations

import json
import operator
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

_PURE_FUNCTIONS = {"union", "items", "objectKeys", "replace", "to_lower", "empty",
                   "subscription_resource_id", "join", "concat"}
"""Functions evaluated here (load_json_content is handled apart)."""

_ORDERINGS = {"greater_than": operator.gt, "greater_than_or_equals": operator.ge,
              "less_than": operator.lt, "less_than_or_equals": operator.le,
              "equals": operator.eq, "not_equals": operator.ne}
"""Comparisons evaluated when both operands are known (write them in parentheses: pycep
reads ``a > 0 ? x : y`` as ``a > (0 ? x : y)``)."""

_RUNTIME_FUNCTIONS = {"guid", "resource_group", "subscription", "unique_string", "take",
                      "environment", "tenant",
                      "string"}
"""Functions whose value the checks never need: treated as deployment-time values."""


@dataclass(frozen=True)
class ResourceRef:
    """A resource declared in a Bicep file, as an expression refers to it.

    Attributes
    ----------
    symbol : str
        Its symbolic name in the file.
    type : str
        ARM resource type without API version, e.g. ``Microsoft.ServiceBus/namespaces/queues``.
    name : Any
        Its evaluated ``name`` (RUNTIME when only known at deployment).
    """

    symbol: str
    type: str
    name: Any


@dataclass(frozen=True)
class SubscriptionResourceId:
    """The value of ``subscriptionResourceId(type, name...)`` (the subscription is implicit)."""

    type: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Instance:
    """One resource a Bicep file declares (a loop contributes one per item).

    Attributes
    ----------
    symbol : str
        Symbolic name of the declaration.
    type, api_version : str
        ARM type and API version.
    body : dict
        The evaluated body (``name``, ``properties``, ...).
    condition : Any
        The evaluated ``if`` condition (True when there is none; RUNTIME when unknown).
    """

    symbol: str
    type: str
    api_version: str
    body: dict[str, Any]
    condition: Any = True


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
        if name in doc.get("resources", {}):
            return self._resource_ref(name)
        if name in doc.get("modules", {}):
            return RUNTIME
        return name

    def _resource_ref(self, symbol: str) -> ResourceRef | list[ResourceRef]:
        """A reference to a declared resource; a list of them for a resource loop."""
        resource = self.doc["resources"][symbol]
        config = resource["config"]
        if "loop_type" not in config:
            body = config.get("config", config) if "condition" in config else config
            return ResourceRef(symbol, resource["type"], self.eval(body["name"], {}))
        return [ResourceRef(symbol, resource["type"], self.eval(body["name"], env))
                for env, body in self._loop_bodies(symbol)]

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
            return self._for_expression(expr, env)
        return {_key(k): self.eval(v, env) for k, v in expr.items()}

    def _for_expression(self, expr: dict[str, Any], env: dict[str, Any]) -> Any:
        """``[for item in array: value]`` (also with an index); no ``if`` filter."""
        if expr.get("condition") is not None:
            raise Unsupported(f"{self.path.name}: a for-expression with a filter")
        envs = self._loop_envs(expr["loop_type"], env)
        return RUNTIME if envs is RUNTIME else [self.eval(expr["config"], e) for e in envs]

    def _loop_envs(self, loop: dict[str, Any], env: dict[str, Any]) -> Any:
        """The environment of each item of a loop; RUNTIME over a deployment-time value."""
        detail = loop["detail"]
        if loop["type"] not in ("array", "array_index"):
            raise Unsupported(f"{self.path.name}: loop type {loop['type']}")
        if (source := self.eval(detail["array_name"], env)) is RUNTIME:
            return RUNTIME
        return [{**env, detail["item_name"]: item,
                 **({detail["index_name"]: i} if loop["type"] == "array_index" else {})}
                for i, item in enumerate(source)]

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
        if kind == "concat":
            if all(isinstance(arg, str) for arg in args):
                return "".join(args)
            if not all(isinstance(arg, list) for arg in args):
                raise Unsupported(f"{self.path.name}: concat() of mixed arrays and strings")
            return [item for arg in args for item in arg]
        if kind == "replace":
            return args[0].replace(args[1], args[2])
        if kind == "empty":
            return len(args[0]) == 0
        if kind == "join":
            return args[1].join(args[0])
        if kind == "subscription_resource_id":
            if raw.get("subscription_id") is not None:
                raise Unsupported(f"{self.path.name}: subscriptionResourceId with a subscription")
            return SubscriptionResourceId(args[0], tuple(args[1:]))
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
        if kind in {"not", "not_op"}:
            value = self.eval(next(iter(operands.values())), env)
            return RUNTIME if value is RUNTIME else not value
        if kind == "conditional":
            condition = self.eval(operands["condition"], env)
            if condition is RUNTIME:
                return RUNTIME
            return self.eval(operands["true_value" if condition else "false_value"], env)
        if kind in _ORDERINGS:
            left, right = (self.eval(operands[k], env) for k in ("operand_1", "operand_2"))
            if RUNTIME in (left, right):
                return RUNTIME
            return _ORDERINGS[kind](left, right)
        if kind in {"coalesce", "and_op", "or_op"}:
            return RUNTIME
        raise Unsupported(f"{self.path.name}: operator {kind}")

    def _access(self, base: Any, accessor: Any, env: dict[str, Any]) -> Any:
        """Apply ``.name``, ``.a.b`` or ``.a[i]`` (pycep nests accessors to the right)."""
        if base is RUNTIME or isinstance(base, ResourceRef):
            return RUNTIME  # a resource's properties are only known at deployment
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
        """Each local module call with the scope of its file and evaluated parameters.

        A module deployed ``if (condition)`` is left out when the condition is false.

        Raises
        ------
        Unsupported
            For a module loop, or a condition only known at deployment.
        """
        calls = []
        for name, module in self.doc.get("modules", {}).items():
            if module["type"] != "local":
                continue
            config = module["config"]
            if "loop_type" in config:
                raise Unsupported(f"{self.path.name}: module {name} with a loop")
            if "condition" in config:
                condition = self.eval(config["condition"], {})
                if condition is RUNTIME:
                    raise Unsupported(f"{self.path.name}: module {name}: condition unknown")
                if not condition:
                    continue
                config = config["config"]
            params = {k: self.eval(v, {}) for k, v in (config.get("params") or {}).items()}
            target = (self.path.parent / module["detail"]["path"]).resolve()
            calls.append((name, Scope(target, params)))
        return calls

    def _loop_bodies(self, symbol: str) -> list[tuple[dict[str, Any], Any]]:
        """(environment, raw body) of each item of a resource loop."""
        config = self.doc["resources"][symbol]["config"]
        if (envs := self._loop_envs(config["loop_type"], {})) is RUNTIME:
            raise Unsupported(f"{self.path.name}: {symbol} loops over a deployment-time value")
        return [(env, config["config"]) for env in envs]

    def instances(self, arm_type: str | None = None) -> list[Instance]:
        """Evaluate every non-existing resource declared in this file (of ``arm_type``).

        Loops are expanded over their evaluated source, one :class:`Instance` per item;
        ``if`` conditions are evaluated (RUNTIME when they depend on deployment values).
        """
        found = []
        for symbol, resource in self.doc.get("resources", {}).items():
            if resource.get("existing") or arm_type not in (None, resource["type"]):
                continue
            config = resource["config"]
            head = (symbol, resource["type"], resource["api_version"])
            if "loop_type" in config:
                if config.get("condition") is not None:
                    raise Unsupported(f"{self.path.name}: resource {symbol}: a loop with if")
                found += [Instance(*head, self.eval(body, env))
                          for env, body in self._loop_bodies(symbol)]
            elif "condition" in config:
                found.append(Instance(*head, self.eval(config["config"], {}),
                                      self.eval(config["condition"], {})))
            else:
                found.append(Instance(*head, self.eval(config, {})))
        return found

    def resource_instances(self, arm_type: str) -> list[dict[str, Any]]:
        """Evaluate every non-existing resource of ``arm_type`` declared in this file.

        Loops are expanded over their evaluated source; a conditional resource counts as
        deployed (its condition is not looked at).

        Returns
        -------
        list of dict
            Each the resource body (``name``, ``properties``, ...) with values evaluated.
        """
        return [instance.body for instance in self.instances(arm_type)]


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
