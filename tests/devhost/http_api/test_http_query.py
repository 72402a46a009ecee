from datetime import UTC, datetime, timedelta

import pytest
from azure.durable_functions import OrchestrationRuntimeStatus

from tests.devhost.http_api.helpers import finish, run


@pytest.fixture
def populated(server, clock):
    """25 instances created one minute apart (q-00 at 00:00 ... q-24 at 00:24); every
    fifth one (q-00, q-05, ...) Completed, the others Pending."""
    client = server.client()

    async def start_all():
        for n in range(25):
            clock.set(datetime(2030, 1, 1, 0, n, tzinfo=UTC))
            await client.start_new("Hello", f"q-{n:02d}", n)
    run(start_all())
    for n in range(0, 25, 5):
        finish(server.taskhub, clock, f"q-{n:02d}")
    return server


def pages(http, server, params):
    """Follow x-ms-continuation-token until the last page; return the pages of ids."""
    result, token = [], None
    while True:
        headers = {"x-ms-continuation-token": token} if token else {}
        response = http.get(f"{server.api}/instances", params=params, headers=headers)
        assert response.status_code == 200
        result.append([s["instanceId"] for s in response.json()])
        token = response.headers.get("x-ms-continuation-token")
        if token is None:
            return result


def test_paging_over_25_instances_with_top_10_returns_each_exactly_once(populated, http):
    got = pages(http, populated, {"top": "10"})
    assert [len(p) for p in got] == [10, 10, 5]
    flat = [i for p in got for i in p]
    assert flat == [f"q-{n:02d}" for n in range(25)]


def test_paging_with_a_runtime_status_filter(populated, http):
    got = pages(http, populated, {"top": "10", "runtimeStatus": "Pending"})
    assert [len(p) for p in got] == [10, 10]
    flat = [i for p in got for i in p]
    assert sorted(flat) == [f"q-{n:02d}" for n in range(25) if n % 5]
    assert len(set(flat)) == 20
    got = pages(http, populated, {"top": "3", "runtimeStatus": "Completed,Terminated"})
    assert [i for p in got for i in p] == [f"q-{n:02d}" for n in range(0, 25, 5)]


def test_created_time_window_is_inclusive(populated, http):
    got = pages(http, populated, {"top": "4", "createdTimeFrom": "2030-01-01T00:05:00Z",
                            "createdTimeTo": "2030-01-01T00:14:00Z"})
    assert [i for p in got for i in p] == [f"q-{n:02d}" for n in range(5, 15)]


def test_created_time_and_status_combined(populated, http):
    got = pages(http, populated, {"top": "10", "runtimeStatus": "Pending",
                            "createdTimeFrom": "2030-01-01T00:05:00+00:00"})
    assert [i for p in got for i in p] == [f"q-{n:02d}" for n in range(6, 25) if n % 5]


def test_instance_id_prefix(populated, http):
    assert pages(http, populated, {"instanceIdPrefix": "q-1"}) == \
        [[f"q-{n}" for n in range(10, 20)]]


def test_list_payload_shows_input_unless_asked_not_to(populated, http):
    # OrchestrationStatusQueryCondition.ShowInput defaults to true in the extension.
    body = http.get(f"{populated.api}/instances", params={"top": "1"}).json()
    assert body[0]["input"] == "0"  # the JSON text start_new sent (json.dumps(0))
    body = http.get(f"{populated.api}/instances", params={"top": "1", "showInput": "false"})
    assert body.json()[0]["input"] is None
    body = http.get(f"{populated.api}/instances", params={"top": "1", "showInput": "no"})
    assert body.json()[0]["input"] == "0"  # not a .NET boolean: the default


def test_sdk_get_status_by_and_all(populated):
    client = populated.client()
    completed = run(client.get_status_by(runtime_status=[OrchestrationRuntimeStatus.Completed]))
    assert [s.instance_id for s in completed] == [f"q-{n:02d}" for n in range(0, 25, 5)]
    assert all(s.runtime_status.value == "Completed" for s in completed)
    window = run(client.get_status_by(created_time_from=datetime(2030, 1, 1, 0, 20),
                                      created_time_to=datetime(2030, 1, 1, 0, 22)))
    assert [s.instance_id for s in window] == ["q-20", "q-21", "q-22"]
    assert len(run(client.get_status_all())) == 25


def test_sdk_get_status_by_with_datetime_min(populated):
    # The SDK formats year 1 as "1-01-01..." on Linux; it still means "from the beginning".
    found = run(populated.client().get_status_by(created_time_from=datetime.min))
    assert len(found) == 25


def test_canceled_status_matches_nothing(populated, http):
    response = http.get(f"{populated.api}/instances", params={"runtimeStatus": "Canceled"})
    assert (response.status_code, response.json()) == (200, [])


@pytest.mark.parametrize(("params", "expected"), [
    ({"top": "ten"}, 25),  # int.TryParse fails: the default page size (100)
    ({"runtimeStatus": "Done"}, 25),  # Enum.TryParse fails for every value: no filter
    ({"runtimeStatus": "Done,Completed"}, 5),  # the values that parse filter
    ({"runtimeStatus": "1"}, 5),  # Enum.TryParse takes the number (1: Completed)
    ({"createdTimeFrom": "yesterday"}, 25),  # DateTime.TryParse fails: no bound
])
def test_query_parameters_parse_as_the_extension_parses_them(populated, http, params,
                                                             expected):
    response = http.get(f"{populated.api}/instances/", params=params)
    assert response.status_code == 200
    assert len(response.json()) == expected


@pytest.mark.parametrize(("params", "headers", "message"), [
    ({"top": "0"}, {}, "top: must be between 1 and 1000, got 0"),
    ({"top": "1001"}, {}, "top: must be between 1 and 1000, got 1001"),
    ({}, {"x-ms-continuation-token": "!!!"}, "x-ms-continuation-token: malformed"),
    ({}, {"x-ms-continuation-token": "bm90IGpzb24="}, "continuationToken: malformed"),
])
def test_bad_query_parameters_are_400(server, params, headers, message, http):
    response = http.get(f"{server.api}/instances/", params=params, headers=headers)
    assert response.status_code == 400
    assert response.json()["ExceptionMessage"].startswith(message)


def test_empty_task_hub_lists_nothing(server, http):
    response = http.get(f"{server.api}/instances")
    assert response.json() == []
    assert "x-ms-continuation-token" not in response.headers


def test_list_is_ordered_by_creation_then_id(server, clock, http):
    for name in ("b", "a", "c"):
        run(server.client().start_new("Hello", name))
    clock.advance(timedelta(seconds=1))
    run(server.client().start_new("Hello", "0-later"))
    assert pages(http, server, {"top": "2"}) == [["a", "b"], ["c", "0-later"]]
