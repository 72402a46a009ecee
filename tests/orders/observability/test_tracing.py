"""Spans, trace context and the local trace store (X8)."""

from datetime import timedelta

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from typer.testing import CliRunner

from devhost.triggers.servicebus import to_function_message
from opscli.cli import app as ops_app
from orders.messaging import OutgoingMessage
from orders.messaging.local import LocalMessageSender
from orders.observability.telemetry import order_sampler
from orders.observability.trace_store import SqliteSpanExporter, TraceStore
from orders.observability.tracing import (
    ORDER_KEY,
    TRACEPARENT,
    activity_span,
    context_of,
    current_traceparent,
    message_properties,
    order_ids,
    order_span,
    traceparent_of,
    unwrap_input,
    wrap_input,
)
from sqlitebus import load_queue_catalog, open_engine
from sqlitekit.batches import ROWS_PER_STATEMENT

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def provider(monkeypatch, tmp_path):
    """A provider of the test's own, exporting to a store in tmp_path, as the global one."""
    exporter = SqliteSpanExporter(tmp_path / "traces.sqlite")
    own = TracerProvider(sampler=order_sampler(1.0))
    own.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr("orders.observability.tracing.trace.get_tracer_provider",
                        lambda: own)
    yield TraceStore(tmp_path / "traces.sqlite")
    own.shutdown()


def test_instance_ids_give_the_order_key_and_the_attempt():
    assert order_ids(instance_id="acme~ORD-1:3") == ("acme~ORD-1", 3)
    assert order_ids(instance_id="acme~ORD-1:comp:2") == ("acme~ORD-1", 2)
    assert order_ids("acme~ORD-1", None) == ("acme~ORD-1", None)


def test_activity_inputs_are_wrapped_only_with_a_context_and_read_back_as_they_were():
    data = {"orderId": "acme~ORD-1", "lines": []}
    assert wrap_input(data, None, "acme~ORD-1:1") is data
    assert unwrap_input(data) == (data, None, None)
    assert unwrap_input(wrap_input("acme~ORD-1", PARENT, "acme~ORD-1:1")) == (
        "acme~ORD-1", PARENT, "acme~ORD-1:1")


def test_a_malformed_traceparent_is_no_context():
    assert context_of("00-zz-yy-01") is None and context_of("") is None
    assert context_of(PARENT) is not None


def test_steps_continue_the_trace_they_are_given_and_tag_the_order(provider):
    with activity_span("load_order", wrap_input("acme~ORD-1", PARENT, "acme~ORD-1:2")) as data:
        assert data == "acme~ORD-1"
        inner = current_traceparent()
    [span] = provider.spans_of("acme~ORD-1")
    assert (span.trace_id, span.parent_id) == ("0af7651916cd43dd8448eb211c80319c",
                                               "b7ad6b7169203331")
    assert span.attributes == {"orders.order_key": "acme~ORD-1",
                               "orders.instance_id": "acme~ORD-1:2", "orders.attempt": 2,
                               "orders.operation": "load_order"}
    assert inner == f"00-{span.trace_id}-{span.span_id}-01"


def test_a_failing_step_ends_its_span_with_error(provider):
    with pytest.raises(LookupError), order_span("activity x", order_key="acme~ORD-2"):
        raise LookupError("missing")
    assert [s.status for s in provider.spans_of("acme~ORD-2")] == ["ERROR"]


def test_the_sampler_keeps_or_drops_a_whole_order():
    none, every = order_sampler(0.0), order_sampler(1.0)
    sampled_parent = context_of(PARENT)
    dropped_parent = context_of(PARENT[:-2] + "00")
    trace_id = int("0af7651916cd43dd8448eb211c80319c", 16)
    assert not none.should_sample(None, trace_id, "submission").decision.is_sampled()
    assert every.should_sample(None, trace_id, "submission").decision.is_sampled()
    # A later step follows the decision its traceparent carries, whatever the ratio.
    assert none.should_sample(sampled_parent, trace_id, "agent").decision.is_sampled()
    assert not every.should_sample(dropped_parent, trace_id, "agent").decision.is_sampled()


def test_messages_sent_inside_a_step_carry_its_traceparent_to_the_receiver(provider,
                                                                           tmp_path):
    engine = open_engine(tmp_path / "sb", catalog=load_queue_catalog(None))
    sender = LocalMessageSender(engine)
    with order_span("activity send_agent_request", order_key="acme~ORD-3"):
        here = current_traceparent()
        sender.send("payment-requests", OutgoingMessage(body={"a": 1}, message_id="m1",
                                                        application_properties={"k": "v"}))
    sender.send("payment-requests", OutgoingMessage(body={"a": 2}, message_id="m2"))
    received = [to_function_message(m) for m in engine.receive("payment-requests", 2)]
    assert [traceparent_of(m.application_properties) for m in received] == [here, None]
    assert received[0].application_properties["k"] == "v"
    assert message_properties({TRACEPARENT: PARENT}) == {TRACEPARENT: PARENT}
    engine.close()


def test_ops_trace_asks_for_the_client_when_an_order_id_is_ambiguous(provider, tmp_path):
    for key in ("acme~ORD-9", "globex~ORD-9", "acme~ORD-90"):
        with order_span("submission", order_key=key):
            pass
    assert provider.order_keys("ORD-9") == ["acme~ORD-9", "globex~ORD-9"]
    run = CliRunner().invoke
    ambiguous = run(ops_app, ["--data-dir", str(tmp_path), "trace", "ORD-9"])
    assert ambiguous.exit_code == 2 and "--client" in ambiguous.output
    chosen = run(ops_app, ["--data-dir", str(tmp_path), "trace", "ORD-9", "--client", "globex"])
    assert chosen.exit_code == 0 and chosen.output.startswith("globex~ORD-9\n")
    assert run(ops_app, ["--data-dir", str(tmp_path), "trace", "ORD-1"]).exit_code == 1


def test_spans_older_than_the_retention_are_deleted_at_most_once_per_period(tmp_path):
    day_ns = 86_400 * 10**9
    now = [40 * day_ns]
    exporter = SqliteSpanExporter(tmp_path / "traces.sqlite", retention=timedelta(days=30),
                                  purge_every=timedelta(hours=1), now_ns=lambda: now[0])
    own = TracerProvider(sampler=order_sampler(1.0))
    own.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = own.get_tracer("test")

    def span(order_key, started_days):
        tracer.start_span("step", attributes={"orders.order_key": order_key},
                          start_time=started_days * day_ns).end(end_time=started_days * day_ns + 1)

    span("acme~OLD", 9)      # 31 days before now: purged by this export
    span("acme~NEW", 11)     # 29 days before now: kept
    store = TraceStore(tmp_path / "traces.sqlite")
    assert (store.spans_of("acme~OLD"), len(store.spans_of("acme~NEW"))) == ([], 1)
    now[0] += day_ns // 48   # half an hour later: no purge yet
    span("acme~LATE", 5)
    assert len(store.spans_of("acme~LATE")) == 1
    now[0] += day_ns // 24   # past the hour: the next export purges it
    span("acme~NEW", 12)
    assert store.spans_of("acme~LATE") == [] and len(store.spans_of("acme~NEW")) == 2
    own.shutdown()


def test_ops_trace_matches_order_ids_exactly_case_and_wildcards_included(provider, tmp_path):
    for key in ("acme~ORD-1", "acme~ord-1", "acme~ORD_2", "acme~ORDX2", "globex~A%3"):
        with order_span("submission", order_key=key):
            pass
    assert provider.order_keys("ORD-1") == ["acme~ORD-1"]  # not its lower-case neighbour
    assert provider.order_keys("Ord-1") == []
    assert provider.order_keys("ORD_2") == ["acme~ORD_2"]
    assert provider.order_keys("%3") == provider.order_keys("_RD-1") == []
    assert provider.order_keys("globex~A%3") == ["globex~A%3"]
    run = CliRunner().invoke
    one = run(ops_app, ["--data-dir", str(tmp_path), "trace", "ord-1"])
    assert one.exit_code == 0 and one.output.startswith("acme~ord-1\n"), one.output


def test_orders_a_client_sends_under_one_span_have_separate_traces(provider):
    for key in ("acme~ORD-1", "acme~ORD-2"):  # a client's batch: one traceparent for all
        # As the submission opens its span: a trace of its own, linked to the client's.
        with order_span("submission", order_key=key, new_trace=True, links=[PARENT]):
            with order_span("starter: claim and start", order_key=key):
                pass
    spans = provider.spans_of("acme~ORD-1")
    assert {s.attributes.get(ORDER_KEY) for s in spans} == {"acme~ORD-1"}
    [root] = [s for s in spans if s.parent_id is None]
    assert root.trace_id != PARENT.split("-")[1]
    assert root.links == [(PARENT.split("-")[1], PARENT.split("-")[2])]


def test_a_steady_stream_of_spans_plateaus_under_a_short_retention(tmp_path):
    # The soak's 600 s retention: without purge_every, a purge comes every minute, not hourly.
    now = [1_800_000_000 * 10**9]
    exporter = SqliteSpanExporter(tmp_path / "traces.sqlite", retention=timedelta(seconds=600),
                                  now_ns=lambda: now[0])
    own = TracerProvider(sampler=order_sampler(1.0))
    own.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = own.get_tracer("test")
    store = TraceStore(tmp_path / "traces.sqlite")
    kept = []
    for second in range(1800):  # one span a second for three retention periods
        tracer.start_span("step", attributes={"orders.order_key": "acme~ORD-1"},
                          start_time=now[0]).end(end_time=now[0] + 1)
        now[0] += 10**9
        if second % 600 == 599:
            kept.append(len(store.spans_of("acme~ORD-1")))
    own.shutdown()
    assert kept[0] == 600 and all(600 <= n <= 660 for n in kept[1:])


def test_the_simulator_keeps_its_spans_as_long_as_its_ledger(monkeypatch, tmp_path):
    from orders.observability import trace_store
    from simulator import cli

    made = []
    monkeypatch.setattr(trace_store, "SqliteSpanExporter",
                        lambda path, retention=None: made.append(retention) or
                        SqliteSpanExporter(path, retention))
    monkeypatch.setattr("opentelemetry.trace.set_tracer_provider", lambda provider: None)
    for argv in (["--retention-days", "0.5"], ["--retention-days", "0"]):
        args = cli.parse_args(["--ledger", "x.sqlite", "--trace-store", "t.sqlite", *argv])
        cli.export_spans(args.trace_store, cli._retention(args))
    assert made == [timedelta(hours=12), None]


@pytest.mark.parametrize("spans", [1, 3, ROWS_PER_STATEMENT - 1, ROWS_PER_STATEMENT, 600])
def test_a_batch_of_spans_is_written_by_one_insert_per_chunk_with_every_span_kept(
        tmp_path, spans):
    # executemany ran one INSERT per span; a batch now takes one per ROWS_PER_STATEMENT
    # (the batch holds spans + 1 rows: the last span is given twice).
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    own = TracerProvider(sampler=order_sampler(1.0))
    own.add_span_processor(SimpleSpanProcessor(memory))
    tracer = own.get_tracer("test")
    for n in range(spans):
        with tracer.start_as_current_span(f"step-{n}",
                                          attributes={"orders.order_key": f"acme~ORD-{n % 2}",
                                                      "n": n}):
            pass
    batch = memory.get_finished_spans()
    # The last span given twice in the batch, renamed: INSERT OR REPLACE keeps the later row.
    renamed = type(batch[-1])(name="renamed", context=batch[-1].context,
                              attributes=batch[-1].attributes, start_time=batch[-1].start_time,
                              end_time=batch[-1].end_time)
    exporter = SqliteSpanExporter(tmp_path / "traces.sqlite")
    exporter.export([])  # opens the store
    statements: list[str] = []
    assert exporter._conn is not None
    exporter._conn.set_trace_callback(statements.append)
    assert exporter.export([*batch, renamed]).name == "SUCCESS"
    inserts = [s for s in statements if s.startswith("INSERT OR REPLACE INTO spans")]
    assert len(inserts) == -(-(spans + 1) // ROWS_PER_STATEMENT)
    exporter.shutdown()
    store = TraceStore(tmp_path / "traces.sqlite")
    stored = store.spans_of("acme~ORD-0") + store.spans_of("acme~ORD-1")
    assert len(stored) == spans
    assert sorted(s.attributes["n"] for s in stored) == list(range(spans))
    assert [s.name for s in stored if s.attributes["n"] == spans - 1] == ["renamed"]
