"""The simulator answers only requests addressed to it, as the local host does (issue 41).

Every form of a request crosses one guard: a foreign or malformed ``Host`` (DNS rebinding)
is refused whatever the method; a change carrying another site's ``Origin`` (a cross-site
form or fetch) is refused; programs, which send no ``Origin``, and reads pass.
"""

import pytest

from simulator.cli import build_app, parse_args

pytestmark = pytest.mark.anyio

CHARGE = {"orderId": "ORD-1", "amount": "10.00", "currency": "USD"}

CASES = [
    # (method, path, Host, Origin, status)
    ("GET", "/_admin/faults", "localhost:7072", None, 200),
    ("GET", "/_admin/faults", "127.0.0.1:7072", None, 200),
    ("GET", "/_admin/faults", "[::1]:7072", None, 200),
    ("GET", "/_admin/ledger", "attacker.example:7072", None, 403),
    ("GET", "/_admin/ledger", "localhost.attacker.example", None, 403),
    ("GET", "/_admin/ledger", "localhost:notaport", None, 403),
    ("GET", "/_admin/ledger", "", None, 403),
    ("DELETE", "/_admin/faults", "localhost:7072", "http://attacker.example", 403),
    ("DELETE", "/_admin/faults", "localhost:7072", "null", 403),
    ("DELETE", "/_admin/faults", "localhost:7072", "http://localhost:7072", 200),
    ("POST", "/payments", "localhost:7072", "https://attacker.example", 403),
    ("POST", "/payments", "rebound.example:7072", None, 403),
    ("GET", "/_admin/faults", "localhost:7072", "http://attacker.example", 200),
]


@pytest.mark.parametrize("method, path, host, origin, status", CASES)
async def test_only_requests_addressed_to_the_simulator_pass(make_client, method, path, host,
                                                            origin, status):
    client = make_client()
    headers = {"host": host, **({"origin": origin} if origin else {})}
    answer = await client.request(method, path, headers=headers, json=(
        CHARGE if method == "POST" else None))
    assert answer.status_code == status if status == 403 else answer.status_code != 403
    if status == 403:
        assert answer.json()["error"] == "forbidden_host"


def test_the_command_line_answers_its_own_host_and_the_names_it_allows(tmp_path):
    args = parse_args(["--ledger", str(tmp_path / "l.sqlite"), "--host", "10.1.2.3",
                       "--allow-host", "sim.internal"])
    app = build_app(args)
    try:
        guard = next(m for m in app.user_middleware if m.cls.__name__ == "HostGuard")
        assert set(guard.kwargs["hosts"]) == {"127.0.0.1", "localhost", "::1", "10.1.2.3",
                                              "sim.internal"}
    finally:
        app.state.ledger.close()
