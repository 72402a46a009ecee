"""The metrics the running app emits: snapshot gauges, submissions, agent calls (X8)."""

from tests.e2e.harness import make_order


def test_running_app_records_backlog_submissions_and_agent_calls(make_system, readings):
    # Two clients: acme's quota is half of MAX_IN_FLIGHT.
    system = make_system(settings={"MAX_IN_FLIGHT": "6"})
    for n in range(5):  # three admitted, two rejected
        system.submit(make_order(n))
    system.engine.send("orders-acme", b"{not json", message_id="poison")
    system.engine.send("orders", b"{}", message_id="shared")  # the retired shared queue
    system.run(61)  # the ops snapshot timer fires at 00:01:00
    points = readings.points()
    submissions = points["orders.submissions"]
    assert submissions[(("outcome", "accepted"), ("reason", ""))] == 3
    assert submissions[(("outcome", "rejected"), ("reason", "AdmissionControl"))] == 2
    assert submissions[(("outcome", "dead_lettered"), ("reason", "InvalidJson"))] == 1
    assert submissions[(("outcome", "dead_lettered"), ("reason", "UseClientQueue"))] == 1
    # The snapshot ran after the three orders were processed.
    assert points["orders.state.count"][(("state", "Processed"),)] == 3
    assert points["orders.in_flight"] == {(): 0}
    assert points["orders.in_flight.limit"] == {(): 6}
    depths = points["servicebus.dead_letter.depth"]
    assert depths[(("queue", "orders-acme"),)] == depths[(("queue", "orders"),)] == 1
    assert depths[(("queue", "orders-globex"),)] == 0
    assert points["agent.calls"] == {(("service", "payment"),): 3,
                                     (("service", "shipping"),): 3}
    assert points["agent.circuit.state"] == {(("service", "payment"),): 0,
                                             (("service", "shipping"),): 0}
