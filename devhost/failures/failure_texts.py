r"""The failure texts Azure writes, in one place: what the Durable extension and DTFx say.

An orchestrator reads a failed activity or sub-orchestration as the Python SDK builds it:
``Exception(f"{Reason} \n {Details}")`` from the TaskFailed or SubOrchestrationInstanceFailed
event. Apps parse that text (azure-functions-durable-extension#2990 shows the parser the
community uses: the JSON on the second line, its ``Message`` after the first colon), so the
host writes ``Reason`` and ``Details`` as the extension does. Each function names the source
it mirrors:

* an activity's failure (:func:`activity_failure`): the Python worker sends the exception
  as ``<Type>: <message>`` with the traceback (azure-functions-python-worker
  ``azure_functions_worker/dispatcher.py`` ``_serialize_exception``); the Functions host
  wraps it in an ``RpcException`` whose message is ``Result: Failure\nException:
  <message>\nStack: <stack>`` (azure-functions-host ``Workers/Rpc/RpcException.cs``); the
  extension's ``TaskActivityShim`` takes the text between ``\nException:`` and
  ``\nStack:`` (``OutOfProcExceptionHelpers.TryGetExceptionWithFriendlyMessage``, the space
  after the colon included), and throws ``TaskFailureException("Activity function '<name>'
  failed: <that text>", Utils.SerializeCause(...))``: the details are the exception
  serialised by the extension's error converter (Newtonsoft, ``TypeNameHandling.Objects``,
  ``ErrorSerializerSettingsFactory.cs``) on one line;
* an orchestrator's failure (:func:`orchestrator_failure`): the SDK's error text goes into
  ``OutOfProcOrchestrationShim.ScheduleDurableTaskEvents``'s
  ``OrchestrationFailureException("Orchestrator function '<name>' failed: <error>",
  "Message: <error>, StackTrace: <stack>")``; DTFx writes the first as the instance's output
  and as the parent's ``Reason``, the second as the parent's ``Details``
  (``TaskOrchestrationDispatcher.ProcessWorkflowCompletedTaskDecision``, with
  ``IncludeDetails`` on, as ``DurableTaskExtension`` sets it);
* a failure outside the SDK's text (an orchestrator function that does not exist, a
  custom status over its limit, the host's own failures): ``TaskOrchestrationShim``
  wraps the exception as ``Orchestrator function '<name>' failed: <message>`` with the
  serialised exception as details (:func:`orchestrator_error_failure`).

What cannot be the same: the .NET stack traces (``StackTrace`` of the host's exceptions).
The host writes the Python traceback where the extension writes the worker's stack, and
``null`` where .NET would write its own frames (docs/fidelity.md, "Known differences").
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
    """Return the exception text the Python worker sends the Functions host.

    Mirrors azure-functions-python-worker ``dispatcher.py`` ``_serialize_exception``.
    """
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

    The text between ``\nException:`` and ``\nStack:`` (so it starts with the space the
    host's format puts after the colon), cut before an ``$OutOfProcData$`` payload.
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
    """One exception as the extension's error converter writes it (properties in order)."""
    return {"$type": type_name, **own, "Message": message, "Data": dict(_EXCEPTION_DATA),
            "InnerException": inner, "HelpLink": None, "Source": None,
            "HResult": EXCEPTION_HRESULT, "StackTrace": None}


def activity_failure(name: str, exc: BaseException) -> tuple[str, str]:
    """Return ``(Reason, Details)`` of a TaskFailed for an activity that raised ``exc``.

    Parameters
    ----------
    name : str
        The activity name the orchestrator called (the shim is named by the call).
    exc : BaseException
        What the activity function raised.

    Returns
    -------
    (str, str)
        ``Activity function '<name>' failed:  <Type>: <message>`` and the serialised
        exception (one line of JSON, ``Message`` the text after ``failed: ``).
    """
    message, stack = worker_message(exc), worker_stack(exc)
    rpc_message = RPC_EXCEPTION_FORMAT.format(result="Failure", message=message, stack=stack)
    friendly = friendly_message(rpc_message)
    inner = _exception_json(_RPC_EXCEPTION, rpc_message, None, RemoteStackTrace=stack,
                            RemoteMessage=message, RemoteTypeName=None,
                            IsUserException=False)
    details = _dumps(_exception_json(SYSTEM_EXCEPTION, friendly, inner))
    return ACTIVITY_FAILED.format(name=name, message=friendly), details


def orchestrator_failure(name: str, error: str, stack: str) -> tuple[str, str]:
    """Return ``(reason, details)`` of an orchestrator whose code raised (the SDK's error).

    Parameters
    ----------
    name : str
        The orchestrator name the instance was started with.
    error : str
        The SDK's ``error``: ``str()`` of the orchestrator's exception.
    stack : str
        The orchestrator's traceback (where the extension writes the worker's stack).

    Returns
    -------
    (str, str)
        The instance's output / the parent's ``Reason``, and the parent's ``Details``.
    """
    return (ORCHESTRATOR_FAILED.format(name=name, message=error),
            f"Message: {error}, StackTrace: {stack}")


def exception_details(message: str, type_name: str = SYSTEM_EXCEPTION) -> str:
    """Return ``Utils.SerializeCause`` of a .NET exception with ``message`` (one JSON line).

    Parameters
    ----------
    message : str
        The exception's ``Message``.
    type_name : str
        Its assembly-qualified type (``$type``).
    """
    return _dumps(_exception_json(type_name, message, None))


def orchestrator_error_failure(name: str, message: str,
                               type_name: str = SYSTEM_EXCEPTION) -> tuple[str, str]:
    """Return ``(reason, details)`` of an instance failed by the runtime, not by its code.

    ``TaskOrchestrationShim.InvokeUserCodeAndHandleResults`` wraps such an exception as
    ``Orchestrator function '<name>' failed: <message>`` with the serialised exception as
    details.
    """
    return (ORCHESTRATOR_FAILED.format(name=name, message=message),
            exception_details(message, type_name))
