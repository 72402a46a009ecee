"""ops.history: the status endpoint's failures carry the HTTP status and the retry flag."""

import httpx
import pytest

from ops.history import HistoryError, fetch_status
from orders.errors import OrderServiceError


def client_answering(status=None):
    def handler(request):
        if status is None:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(status, json={"runtimeStatus": "Running"})
    return httpx.Client(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(("status", "retryable"), [
    (None, True), (500, True), (503, True), (429, True), (401, False), (400, False)])
def test_failures_say_whether_to_retry(status, retryable):
    with pytest.raises(HistoryError) as info:
        fetch_status("http://host", "ORD-1:1", client=client_answering(status))
    assert isinstance(info.value, OrderServiceError)
    assert (info.value.status, info.value.retryable, info.value.retry_after) == (
        status, retryable, None)


def test_unknown_instance_is_none_and_a_running_one_its_status():
    assert fetch_status("http://host", "ORD-1:1", client=client_answering(404)) is None
    assert fetch_status("http://host", "ORD-1:1", client=client_answering(202)) == {
        "runtimeStatus": "Running"}


def test_the_system_key_travels_in_a_header_never_in_the_url():
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json={"runtimeStatus": "Completed"})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    fetch_status("https://app.example", "acme~ORD-1:1", code="system-key", client=client)
    (request,) = seen
    assert request.headers["x-functions-key"] == "system-key"
    assert "system-key" not in str(request.url) and "code" not in request.url.params
    assert request.url.params["showHistory"] == "true"
