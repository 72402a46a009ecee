"""An HTTP function's request and answer, converted as the Functions host and the worker do.

Sources, read at the versions the pinned bundle runs with (Functions host v4.1036.3,
Python worker 4.34.0, ``azure-functions`` as ``requirements.txt`` installs it):

- Request: azure-functions-host ``src/WebJobs.Script.Grpc/MessageExtensions/
  GrpcMessageConversionExtensions.cs`` (``ToRpcHttp``). Each query key and header is one
  ASP.NET ``StringValues`` (names compare ignoring case), so repeated ones arrive joined
  with ``,``; a query value that is empty is dropped (the Python worker does not declare
  ``UseNullableValueDictionaryForHttp``), an empty header is kept (nor
  ``IgnoreEmptyValuedRpcHttpHeaders``); header names lower case.
- Answer: azure-functions-python-worker ``azure_functions_worker/dispatcher.py``
  (``_handle__invocation_request``: the ``$return`` value always goes through
  ``bindings.to_outgoing_proto``) and ``bindings/meta.py`` (``get_datum``: a type the binding
  cannot encode is a ``TypeError``, the invocation fails, the host answers 500);
  azure-functions ``http.py`` ``HttpResponseConverter.encode`` encodes only ``HttpResponse``
  and ``str``, so ``None``, ``bytes``, ``dict`` fail. ``HttpResponse``: a ``content-type``
  from ``mimetype`` (``; charset=`` for ``text/*``) unless set, every ``Set-Cookie`` sent as
  a cookie of its own. A ``str`` is a 200 ``text/plain; charset=utf-8`` answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import azure.functions as func
from starlette.requests import Request
from starlette.responses import Response

log = logging.getLogger(__name__)

TEXT_PLAIN = "text/plain; charset=utf-8"
"""Content type of a ``str`` answer."""


def _joined(pairs: Iterable[tuple[str, str]], *, drop_empty: bool) -> dict[str, str]:
    # ASP.NET's query and header collections ignore the case of names: the first spelling
    # names the joined values.
    names: dict[str, str] = {}
    grouped: dict[str, list[str]] = {}
    for key, value in pairs:
        name = names.setdefault(key.lower(), key)
        grouped.setdefault(name, []).append(value)
    joined = {key: ",".join(values) for key, values in grouped.items()}
    return {k: v for k, v in joined.items() if v or not drop_empty}


def request_headers(request: Request) -> dict[str, str]:
    """Return the headers as the function sees them: lower-case names, repeats joined by ``,``."""
    return _joined(((k.decode("latin-1").lower(), v.decode("latin-1"))
                    for k, v in request.headers.raw), drop_empty=False)


def request_params(request: Request) -> dict[str, str]:
    """Return the query as the function sees it: repeats joined by ``,``, empty values dropped."""
    return _joined(request.query_params.multi_items(), drop_empty=True)


def http_answer(result: Any, function_name: str) -> Response:
    """Return the HTTP answer of a function's ``$return`` value (module docstring).

    Parameters
    ----------
    result : Any
        What the function returned.
    function_name : str
        Named in the error logged when the value cannot be encoded.

    Returns
    -------
    starlette.responses.Response
        The answer; 500 without a body for a value the worker cannot encode.
    """
    if isinstance(result, str):
        return Response(result.encode("utf-8"), status_code=200,
                        headers={"content-type": TEXT_PLAIN})
    if not isinstance(result, func.HttpResponse):
        log.error("Executed 'Functions.%s' (Failed): unable to encode outgoing TypedData: "
                  "unsupported type \"http\" for Python type \"%s\" (an HTTP function returns "
                  "func.HttpResponse or str)", function_name, type(result).__name__)
        return Response(status_code=500)
    headers = result.headers
    if "content-type" not in headers:
        mimetype = result.mimetype
        headers["content-type"] = (f"{mimetype}; charset={result.charset}"
                                   if mimetype.startswith("text/") else mimetype)
    response = Response(result.get_body() or b"", status_code=result.status_code)
    # Every pair, repeated names (Set-Cookie) too; the length is the body's.
    response.raw_headers += [(k.lower().encode("latin-1"), str(v).encode("latin-1"))
                             for k, v in headers.items() if k.lower() != "content-length"]
    return response
