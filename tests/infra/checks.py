"""Consistency checks between the code, the local settings and the infrastructure.

Why: the same app setting and queue names live in four places (orders/settings.py and the
function metadata, local.settings.json, infra/queues.json, the Bicep). Each check is a
function of file paths that returns the names it finds missing, so the real tests run it on
the repository and the mutation tests run it on a copy with one name removed and assert
that exactly that name is reported.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.infra.bicep_eval import RUNTIME, Scope, deployment_scopes, load_parameter_file

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"
QUEUES_JSON = INFRA / "queues.json"
LOCAL_SETTINGS = REPO / "local.settings.json"

SITE_CONFIG = "Microsoft.Web/sites/config"
SB_QUEUE = "Microsoft.ServiceBus/namespaces/queues"
COSMOS_CONTAINER = "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers"

_SETTING_EXPR = re.compile(r"%([^%]+)%")


# ---------------------------------------------------------------- function metadata
def function_metadata(app: Any) -> dict[str, dict[str, Any]]:
    """Trigger binding of each function, as the worker reports it to the host.

    Parameters
    ----------
    app : azure.functions.FunctionApp
        The imported ``function_app.app``.

    Returns
    -------
    dict
        Function name -> trigger binding (``type``, ``queueName``, ``connection``, ...)
        without ``name`` and ``direction``.
    """
    triggers: dict[str, dict[str, Any]] = {}
    for fn in app.get_functions():
        for binding in fn.get_dict_repr()["bindings"]:
            if binding["type"].endswith("Trigger"):
                triggers[fn.get_function_name()] = {
                    k: _plain(v) for k, v in binding.items() if k not in {"name", "direction"}}
    return triggers


def _plain(value: Any) -> Any:
    """Enum members (binding directions, HTTP methods) as their values."""
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return getattr(value, "value", value)


def metadata_differences(actual: Mapping[str, dict[str, Any]],
                         expected: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """Functions whose trigger differs from the expected table, with what differs."""
    problems: dict[str, str] = {}
    for name in sorted(set(actual) | set(expected)):
        if name not in actual:
            problems[name] = "missing from the app"
        elif name not in expected:
            problems[name] = f"not in the expected table: {actual[name]}"
        elif actual[name] != expected[name]:
            problems[name] = f"expected {expected[name]}, got {actual[name]}"
    return problems


# ---------------------------------------------------------------- app settings
def binding_settings(triggers: Mapping[str, dict[str, Any]]) -> set[str]:
    """App settings the bindings read: ``%NAME%`` expressions and connection prefixes.

    An identity-based Service Bus connection ``X`` is read from ``X__fullyQualifiedNamespace``.
    """
    names: set[str] = set()
    for trigger in triggers.values():
        for key, value in trigger.items():
            if isinstance(value, str):
                names.update(_SETTING_EXPR.findall(value))
            if key == "connection" and trigger["type"].startswith("serviceBus"):
                names.add(f"{value}__fullyQualifiedNamespace")
    return names


def code_settings(settings_class: type, triggers: Mapping[str, dict[str, Any]]) -> set[str]:
    """Every app setting the code reads: the typed settings' fields, each service's URL
    setting (``infra/services.json``) and the bindings'."""
    from orders.settings import SERVICE_URL_SETTINGS

    fields = set(settings_class.model_fields) - {"service_urls"}
    return fields | set(SERVICE_URL_SETTINGS) | binding_settings(triggers)


def bicep_app_settings(infra: Path = INFRA, params: Mapping[str, Any] | None = None
                       ) -> dict[str, Any]:
    """App settings the deployment gives the Function App (values or RUNTIME).

    Evaluates ``main.bicep`` with ``main.parameters.json`` (plus ``params``) and every
    ``Microsoft.Web/sites/config`` resource named ``appsettings`` in it or its modules.

    Raises
    ------
    AssertionError
        If no such resource exists.
    """
    found: dict[str, Any] = {}
    seen = False
    for scope in scopes(infra, params):
        for config in scope.resource_instances(SITE_CONFIG):
            if config.get("name") == "appsettings":
                seen = True
                found.update(config["properties"])
    assert seen, f"{infra}: no {SITE_CONFIG} 'appsettings' resource"
    return found


def local_settings(path: Path = LOCAL_SETTINGS) -> dict[str, str]:
    """``Values`` of a ``local.settings.json``."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["Values"]


def missing_settings(required: Iterable[str], present: Iterable[str],
                     exempt: Iterable[str] = ()) -> set[str]:
    """Required names absent from ``present``, except the ``exempt`` ones."""
    return set(required) - set(present) - set(exempt)


# ---------------------------------------------------------------- queues
def code_queues(names_module: Any, triggers: Mapping[str, dict[str, Any]]) -> set[str]:
    """Queues the code sends to or triggers on: ``*_QUEUE`` constants, agents' and triggers'."""
    queues = {value for key, value in vars(names_module).items()
              if key.endswith("_QUEUE") and isinstance(value, str)}
    queues |= set(getattr(names_module, "REQUEST_QUEUES", {}).values())
    queues |= {t["queueName"] for t in triggers.values() if "queueName" in t}
    return queues


def catalog(queues_json: Path = QUEUES_JSON) -> dict[str, Any]:
    """The decoded queue properties file."""
    return json.loads(Path(queues_json).read_text(encoding="utf-8"))


PER_CLIENT_SECTIONS = ("clientReplyQueues", "clientSubmitQueues")
"""Sections of ``queues.json`` declaring one queue per client by a name pattern."""


def per_client_section(data: Mapping[str, Any], name: str) -> str | None:
    """The per-client section whose ``namePattern`` (with an id filled in) matches ``name``."""
    for section in PER_CLIENT_SECTIONS:
        if section not in data:
            continue
        prefix, suffix = data[section]["namePattern"].split("{clientId}")
        if len(name) > len(prefix) + len(suffix) and name.startswith(prefix) \
                and name.endswith(suffix):
            return section
    return None


def queues_missing_from_catalog(queues: Iterable[str], queues_json: Path = QUEUES_JSON
                                ) -> set[str]:
    """Queues of the code neither declared in ``queues.json`` nor per-client queues."""
    data = catalog(queues_json)
    return {q for q in set(queues) - set(data["queues"]) if per_client_section(data, q) is None}


def bicep_queues(infra: Path = INFRA, params: Mapping[str, Any] | None = None
                 ) -> dict[str, dict[str, Any]]:
    """Queues the deployment creates: name -> ARM properties."""
    return {queue["name"]: queue.get("properties", {})
            for scope in scopes(infra, params)
            for queue in scope.resource_instances(SB_QUEUE)}


def catalog_queues_missing_from_bicep(queues_json: Path = QUEUES_JSON, infra: Path = INFRA
                                      ) -> set[str]:
    """Queues declared in ``queues.json`` that the Bicep does not create."""
    return set(catalog(queues_json)["queues"]) - set(bicep_queues(infra))


def merged_properties(queues_json: Path, name: str | None,
                      section: str = "clientReplyQueues") -> dict[str, Any]:
    """``defaults`` merged with a queue's overrides (None: the per-client ``section``'s)."""
    data = catalog(queues_json)
    overrides = data[section]["properties"] if name is None else data["queues"][name]
    return {**data["defaults"], **overrides}


def queue_property_mismatches(queues_json: Path = QUEUES_JSON, infra: Path = INFRA,
                              params: Mapping[str, Any] | None = None) -> set[str]:
    """Queues whose Bicep properties differ from ``queues.json``'s merged properties.

    Per-client queues (matching ``clientReplyQueues.namePattern`` or
    ``clientSubmitQueues.namePattern``) are compared with the defaults merged with that
    section's ``properties``.
    """
    data = catalog(queues_json)
    wrong = set()
    for name, properties in bicep_queues(infra, params).items():
        declared = name in data["queues"]
        section = None if declared else per_client_section(data, name)
        if not declared and section is None:
            wrong.add(name)
            continue
        expected = merged_properties(queues_json, name) if declared else \
            merged_properties(queues_json, None, section or "clientReplyQueues")
        if properties != expected:
            wrong.add(name)
    return wrong


# ---------------------------------------------------------------- Cosmos DB indexing
def query_fields(source: Path) -> set[str]:
    """Document fields (``c.<field>``) the Cosmos DB queries of a module filter or order on.

    Reads the module's string literals (f-string parts included), not its docstrings.
    """
    tree = ast.parse(Path(source).read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    fields: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            # What a SELECT projects needs no index; what it filters or orders on does.
            unprojected = re.sub(r"\bSELECT\b.*?\bFROM\s+c\b", "", node.value, flags=re.S)
            fields.update(re.findall(r"\bc\.([A-Za-z_]\w*)", unprojected))
    return fields


def container_indexing(infra: Path, container: str) -> dict[str, Any]:
    """Indexing policy of a Cosmos DB container created by the Bicep."""
    for scope in scopes(infra, None):
        for resource in scope.resource_instances(COSMOS_CONTAINER):
            if resource["properties"]["resource"]["id"] == container:
                return resource["properties"]["resource"]["indexingPolicy"]
    raise AssertionError(f"{infra}: no Cosmos DB container {container!r}")


def unindexed_query_fields(source: Path, infra: Path = INFRA, container: str = "states"
                           ) -> set[str]:
    """Fields a module's queries filter on that the container's policy does not index."""
    policy = container_indexing(infra, container)
    included = {entry.get("path") for entry in policy.get("includedPaths", [])}
    if "/*" in included:
        return set()
    return {f for f in query_fields(source) if f"/{f}/?" not in included and f"/{f}/*" not in
            included}


# ---------------------------------------------------------------- parameters file
def parameter_file_problems(main: Path, parameters_json: Path) -> set[str]:
    """Parameters required by ``main`` (no default) missing from the file, or unknown to it."""
    declared = Scope(main).doc["parameters"]
    given = set(load_parameter_file(parameters_json))
    required = {name for name, spec in declared.items() if spec.get("default") is None}
    return (required - given) | (given - set(declared))


# ---------------------------------------------------------------- secrets
@dataclass(frozen=True)
class Finding:
    """A secret-looking string in a file that would be committed."""

    path: str
    line: int
    kind: str


_SECRET_PATTERNS = {
    "storage account key": re.compile(r"AccountKey\s*=\s*[A-Za-z0-9+/=]{16,}"),
    "Service Bus / Event Hubs SAS key": re.compile(r"SharedAccessKey\s*=\s*[A-Za-z0-9+/=]{16,}"),
    "SAS token signature": re.compile(r"[?&]sig=[A-Za-z0-9%+/=]{16,}"),
    "private key": re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
    "App Insights instrumentation key":
        re.compile(r"InstrumentationKey\s*=\s*[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}"),
    "client secret": re.compile(r"(?i)client_?secret\s*[=:]\s*['\"]?[A-Za-z0-9~._-]{20,}"),
    # 64-byte keys in base64 (Cosmos DB and storage account keys); npm integrity hashes
    # (sha512-...) have the same shape and are excluded by the look-behind.
    "base64 account key": re.compile(r"(?<![\w+/=-])(?<!sha512-)[A-Za-z0-9+/]{86}==(?![\w+/=])"),
}


def committed_files(repo: Path = REPO) -> list[str]:
    """Files git would commit: tracked plus untracked-but-not-ignored (repo-relative).

    Raises
    ------
    FileNotFoundError, subprocess.CalledProcessError
        If git is missing or ``repo`` is not a work tree.
    """
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                         cwd=repo, check=True, capture_output=True).stdout
    return sorted({name for name in out.decode().split("\0") if name})


def find_secrets(repo: Path, files: Iterable[str],
                 allowed: Mapping[str, set[str]] | None = None) -> list[Finding]:
    """Scan text files for key-, SAS- and private-key-shaped strings.

    Parameters
    ----------
    repo : Path
        Root the ``files`` are relative to.
    files : iterable of str
        Relative paths; binary and missing files are skipped.
    allowed : mapping, optional
        Exact secret strings allowed in given files: ``{string: {relative paths}}``.

    Returns
    -------
    list of Finding
        One per match not allowed, in file order.
    """
    allowed = allowed or {}
    findings = []
    for rel in files:
        path = repo / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for kind, pattern in _SECRET_PATTERNS.items():
                for match in pattern.finditer(line):
                    if rel in allowed.get(match.group(0), set()):
                        continue
                    findings.append(Finding(rel, number, kind))
    return findings


# ---------------------------------------------------------------- helpers
def scopes(infra: Path, params: Mapping[str, Any] | None) -> list[Scope]:
    """Scopes of main.bicep (with main.parameters.json and ``params``) and its modules."""
    infra = Path(infra)
    values: dict[str, Any] = {}
    parameters_file = infra / "main.parameters.json"
    if parameters_file.exists():
        values.update(load_parameter_file(parameters_file))
    values.update(params or {})
    return deployment_scopes(infra / "main.bicep", values)


def literal_settings(infra: Path = INFRA) -> set[str]:
    """App settings whose value is written in the Bicep itself, not taken from a parameter,
    a variable or a resource.

    Reads the unevaluated ``appSettings`` argument of each module call and the properties
    of each ``Microsoft.Web/sites/config`` ``appsettings`` resource, through ``union`` and
    ``cond ? a : b``: a key whose value is a string without ``${...}`` that names no symbol of
    its file, a number or a boolean is a literal. (pycep reads a quoted string naming a
    symbol as a reference; ``test_bicep_files`` forbids such literals.)
    """
    found: set[str] = set()
    for scope in scopes(infra, None):
        symbols = scope.symbols()
        for module in scope.doc.get("modules", {}).values():
            config = module["config"]
            params = config.get("config", config).get("params") or {}
            if "appSettings" in params:
                found |= _literal_keys(params["appSettings"], symbols)
        for resource in scope.doc.get("resources", {}).values():
            config = resource["config"]
            body = config.get("config", config) if "condition" in config else config
            if resource["type"] == SITE_CONFIG and body.get("name") == "appsettings":
                found |= _literal_keys(body["properties"], symbols)
    return found


def _literal_keys(expr: Any, symbols: set[str]) -> set[str]:
    if not isinstance(expr, dict):
        return set()
    function = expr.get("function") if len(expr) == 1 else None
    operator_ = expr.get("operator") if len(expr) == 1 else None
    if function is not None:
        return set().union(*(_literal_keys(arg, symbols)
                             for arg in (function.get("parameters") or {}).values()))
    if operator_ is not None:
        operands = operator_.get("operands") or {}
        return set().union(*(_literal_keys(operands.get(k), symbols)
                             for k in ("true_value", "false_value")))
    return {key for key, value in expr.items() if _is_literal(value, symbols)}


def _is_literal(value: Any, symbols: set[str]) -> bool:
    if isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and "${" not in value and value not in symbols


def is_runtime(value: Any) -> bool:
    """Whether a Bicep value is only known at deployment."""
    return value is RUNTIME


# ---------------------------------------------------------------- ARM schema
def schema_problems(infra: Path = INFRA, params: Mapping[str, Any] | None = None
                    ) -> dict[str, list[str]]:
    """Properties the templates set that their resource type's API version does not have.

    Every non-existing resource of ``main.bicep`` and its local modules is evaluated (with
    the parameters file plus ``params``) and compared with :data:`tests.infra.arm_schema.
    SCHEMAS`.

    Returns
    -------
    dict
        ``"<file>:<symbol> <type>@<api>"`` -> unknown property paths (or ``["no schema"]``
        when the table has no entry for that type and API version); empty when all match.
    """
    from tests.infra.arm_schema import BICEP_KEYWORDS, SCHEMAS, unknown_paths

    problems: dict[str, list[str]] = {}
    for scope in scopes(infra, params):
        for instance in scope.instances():
            label = (f"{scope.path.name}:{instance.symbol} "
                     f"{instance.type}@{instance.api_version}")
            # A type whose shape depends on the resource's name (sites/config) has an
            # entry per name; otherwise one entry per type and API version.
            spec = SCHEMAS.get((instance.type, instance.api_version, instance.body.get("name")),
                               SCHEMAS.get((instance.type, instance.api_version)))
            if spec is None:
                problems[label] = ["no schema"]
                continue
            body = {k: v for k, v in instance.body.items() if k not in BICEP_KEYWORDS}
            found = unknown_paths(body, spec)
            if found:
                problems.setdefault(label, []).extend(found)
    return problems


# ---------------------------------------------------------------- Cosmos DB role assignments
COSMOS_SQL_ROLE_ASSIGNMENT = "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments"

_INTERPOLATED = re.compile(r"\$\{\s*([A-Za-z_]\w*)")


def _referenced_symbols(expr: Any, symbols: set[str]) -> set[str]:
    """Resource symbols an unevaluated pycep expression refers to (implicit dependencies)."""
    found: set[str] = set()
    if isinstance(expr, str):
        if expr in symbols:
            found.add(expr)
        found.update(s for s in _INTERPOLATED.findall(expr) if s in symbols)
    elif isinstance(expr, dict):
        for value in expr.values():
            found |= _referenced_symbols(value, symbols)
    elif isinstance(expr, list):
        for value in expr:
            found |= _referenced_symbols(value, symbols)
    return found


def parallel_cosmos_role_writes(path: Path) -> set[str]:
    """Cosmos DB SQL role assignments of one account that ARM may write at the same time.

    Cosmos DB refuses a role-assignment write while another one on the same account is in
    progress (HTTP 412, "another user operation in progress which requires an exclusive
    lock"), so a first deployment with parallel writes can fail. Writes are serial when each
    pair of declarations depends on one another *directly* (ARM drops a condition-false
    resource from ``dependsOn``, so an order through a skipped resource is lost) and each
    loop has ``@batchSize(1)``.

    Parameters
    ----------
    path : Path
        A Bicep file.

    Returns
    -------
    set of str
        ``"<symbol>: loop without @batchSize(1)"`` and ``"<a> || <b>"`` for each unordered
        pair, per account; empty when every write is serial.

    Raises
    ------
    Unsupported
        If a role assignment names its account otherwise than with ``parent``.
    """
    from tests.infra.bicep_eval import Unsupported, parse_bicep

    resources = parse_bicep(path).get("resources", {})
    symbols = set(resources)
    by_account: dict[str, list[str]] = {}
    deps: dict[str, set[str]] = {}
    problems: set[str] = set()
    for symbol, resource in resources.items():
        if resource["type"] != COSMOS_SQL_ROLE_ASSIGNMENT or resource.get("existing"):
            continue
        config = resource["config"]
        body = config.get("config", config) if "condition" in config else config
        parent = body.get("parent")
        if not isinstance(parent, str) or parent not in symbols:
            raise Unsupported(f"{Path(path).name}: {symbol} must name its account with parent")
        by_account.setdefault(parent, []).append(symbol)
        deps[symbol] = _referenced_symbols(body.get("dependsOn") or [], symbols) \
            | _referenced_symbols({k: v for k, v in body.items() if k != "dependsOn"}, symbols)
        if "loop_type" in config:
            sizes = [d.get("argument") for d in resource.get("decorators", [])
                     if d.get("type") == "batchSize"]
            if sizes != [1]:
                problems.add(f"{symbol}: loop without @batchSize(1)")
    for members in by_account.values():
        for i, first in enumerate(members):
            for second in members[i + 1:]:
                if first not in deps[second] and second not in deps[first]:
                    problems.add(f"{first} || {second}")
    return problems


# ---------------------------------------------------------------- role assignments
@dataclass(frozen=True)
class Grant:
    """One role assignment as deployed: who gets which role where.

    Attributes
    ----------
    principal : Any
        The evaluated principal id (RUNTIME for a deployment-time identity).
    role : str
        The role definition GUID.
    scope_type : str
        ARM type of the scope (``Microsoft.ServiceBus/namespaces/queues``, ...).
    scope_name : Any
        The scope's evaluated name (RUNTIME when only known at deployment).
    """

    principal: Any
    role: str
    scope_type: str
    scope_name: Any


def role_grants(scope: Scope) -> set[Grant]:
    """Azure RBAC role assignments a Bicep file deploys with its parameters.

    Conditional assignments whose condition is false are left out.

    Raises
    ------
    Unsupported
        If a condition, role or scope cannot be evaluated.
    """
    from tests.infra.bicep_eval import ResourceRef, SubscriptionResourceId, Unsupported

    grants = set()
    for instance in scope.instances("Microsoft.Authorization/roleAssignments"):
        if instance.condition is RUNTIME:
            raise Unsupported(f"{scope.path.name}: {instance.symbol}: condition unknown")
        if not instance.condition:
            continue
        role = instance.body["properties"]["roleDefinitionId"]
        target = instance.body.get("scope")
        if not isinstance(role, SubscriptionResourceId) or not isinstance(target, ResourceRef):
            raise Unsupported(f"{scope.path.name}: {instance.symbol}: role or scope unknown")
        grants.add(Grant(instance.body["properties"]["principalId"], role.names[-1],
                         target.type, target.name))
    return grants
