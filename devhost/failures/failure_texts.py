r"""The failure texts Azure writes, each function naming the source it mirrors.

Apps parse the SDK's ``Exception(f"{Reason} \n {Details}")`` (ext#2990), so both are the
extension's; see docs/fidelity.md, "Failure texts" and "Known differences" (stack traces).
"""

from __future__ import annotations

import json
import traceback
from typing import Any

ACTIVITY_FAILED = "Activity function '{name}' failed: {message}"
"""``TaskActivityShim.RunAsync``'s reason for a user-code failure."""

ORCHESTRATOR_FAILED = "Orchestrator function '{name}' failed: {message}"
"""``OutOfProcOrchestrationShim`` / ``TaskOrchestrationShim``'s reason of a failed instance."""

RPC_EXCEPTION_FORMAT = "Result: {result}\nException: {message}\nStack: {stack}"
"""azure-functions-host ``RpcException``'s message."""

_MESSAGE_LABEL = "\nException:"
_STACK_LABEL = "\nStack:"
_OUT_OF_PROC_LABEL = "\n\n$OutOfProcData$:"

EXCEPTION_HRESULT = -2146233088
"""``HResult`` of a plain ``System.Exception`` (COR_E_EXCEPTION)."""

SYSTEM_EXCEPTION = "System.Exception, System.Private.CoreLib"
"""``$type`` of a plain ``System.Exception`` in the extension's serialised errors."""
_RPC_EXCEPTION = ("Microsoft.Azure.WebJobs.Script.Workers.Rpc.RpcException, "
                  "Microsoft.Azure.WebJobs.Script")
_EXCEPTION_DATA = {"$type": "System.Collections.ListDictionaryInternal, System.Private.CoreLib"}


def worker_message(exc: BaseException) -> str:
    """Return the worker's text for ``exc`` (``dispatcher.py`` ``_serialize_exception``)."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        return ("Unhandled exception in function. Could not serialize original exception "
                "message.")


def worker_stack(exc: BaseException) -> str:
    """Return the stack the Python worker sends (``marshall_exception_trace``)."""
    try:
        return "".join(traceback.extract_tb(exc.__traceback__).format())
    except Exception:  # noqa: BLE001 - the worker sends '' then
        return ""


def friendly_message(rpc_message: str) -> str:
    r"""Return what ``OutOfProcExceptionHelpers`` reads out of an ``RpcException`` message.

    The text between ``\nException:`` and ``\nStack:`` (space kept), cut at ``$OutOfProcData$``.
    """
    start = rpc_message.index(_MESSAGE_LABEL) + len(_MESSAGE_LABEL)
    message = rpc_message[start:rpc_message.index(_STACK_LABEL)]
    cut = message.find(_OUT_OF_PROC_LABEL)
    return message if cut < 0 else message[:cut]


def _dumps(value: Any) -> str:
    # Newtonsoft's Formatting.None: no spaces, non-ASCII characters as they are.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _exception_json(type_name: str, message: str, inner: dict[str, Any] | None,
                    **own: Any) -> dict[str, Any]:
    """One exception as the extension writes it, in order (``ErrorSerializerSettingsFactory``)."""
    return {"$type": type_name, **own, "Message": message, "Data": dict(_EXCEPTION_DATA),
            "InnerException": inner, "HelpLink": None, "Source": None,
            "HResult": EXCEPTION_HRESULT, "StackTrace": None}


def activity_failure(name: str, exc: BaseException) -> tuple[str, str]:
    """Return a TaskFailed's ``(Reason, Details)`` (``TaskActivityShim``, ``SerializeCause``)."""
    message, stack = worker_message(exc), worker_stack(exc)
    rpc_message = RPC_EXCEPTION_FORMAT.format(result="Failure", message=message, stack=stack)
    friendly = friendly_message(rpc_message)
    inner = _exception_json(_RPC_EXCEPTION, rpc_message, None, RemoteStackTrace=stack,
                            RemoteMessage=message, RemoteTypeName=None,
                            IsUserException=False)
    details = _dumps(_exception_json(SYSTEM_EXCEPTION, friendly, inner))
    return ACTIVITY_FAILED.format(name=name, message=friendly), details


def orchestrator_failure(name: str, error: str, stack: str) -> tuple[str, str]:
    """Return ``(output, Details)`` as ``OutOfProcOrchestrationShim.ScheduleDurableTaskEvents``."""
    return (ORCHESTRATOR_FAILED.format(name=name, message=error),
            f"Message: {error}, StackTrace: {stack}")


def exception_details(message: str, type_name: str = SYSTEM_EXCEPTION) -> str:
    """Return ``Utils.SerializeCause`` of a .NET exception with ``message`` (one JSON line)."""
    return _dumps(_exception_json(type_name, message, None))


def orchestrator_error_failure(name: str, message: str,
                               type_name: str = SYSTEM_EXCEPTION) -> tuple[str, str]:
    """Return ``(reason, details)`` of a runtime-failed instance (``TaskOrchestrationShim``)."""
    return (ORCHESTRATOR_FAILED.format(name=name, message=message),
            exception_details(message, type_name))
