"""Compensation (SPEC S9): undo an order's completed steps, in reverse order, from its log.

The protocol, in one place
--------------------------
States of the record (all changes are conditional writes on the ETag; LockedBy fences the
orchestrations, SPEC S4):

========================  ==========================  ===================================
ProcessState              LockedBy                    Meaning
========================  ==========================  ===================================
Processing                ``<OrderID>:<n>``           attempt ``n`` of the order runs
Compensating              null                        handed over: waits for the starter
Compensating              ``<OrderID>:comp:<m>``      compensation attempt ``m`` runs
Compensated               ``<OrderID>:comp:<m>``      every completed step is undone
CompensationFailed        last holder                 an undo failed, or the budget ran out
Error                     last holder                 failed with nothing to undo
========================  ==========================  ===================================

Who does what:

1. The order workflow writes a log entry after each completed step (reserve inventory, a
   successful charge, a successful shipment), idempotent on OrderID + step. Before a
   remote step's request goes out, the activity that sends it logs the step as
   *requested* (``charge_requested``, ``ship_requested``) with its idempotency key: a
   request that never got an answer may have been carried out, so it must be undone too.
2. Whoever gives up on an order only *hands it over*
   (:func:`~orders.lifecycle.changes.hand_over`): the order workflow on a permanent
   failure reply (S7), the supervisor when FailureCount reaches MAX_FAILURES (V2). The
   record becomes Compensating with LockedBy null and the failure reason; nothing is
   started (the supervisor never starts orchestrations, V3). If the log holds nothing to
   undo, the record becomes Error instead (S7) and the client gets OrderFailed.
3. The starter (:mod:`scheduler.compensation_starter`, run with the order starter) claims a
   Compensating record with LockedBy null exactly as S3 claims a Pending one: a conditional
   update sets LockedBy to the next compensation instance id ``<OrderID>:comp:<m>`` (valid
   under SPEC D2: OrderIDs have at most 64 characters) and CompleteBy = now +
   START_GRACE_S, and only then starts the compensation orchestration under that id.
4. The compensation orchestration (``orchestrators.compensation_workflow``) sets
   its CompleteBy (COMPENSATION_DEADLINE_S), reads the log and undoes each step that was
   requested or completed and is not yet undone, newest first: cancel shipment and refund
   through the same agents (racing each reply against CompleteBy, S6), release inventory
   locally. The undo names the forward request by its idempotency key. Each undo is
   logged too, so a resumed compensation skips what is done; each agent call carries a
   stable idempotency key (``<OrderID>:refund``), so no undo happens twice (A2, X7).
   The service's error codes ``nothing_to_undo`` (never done) and ``already_undone`` mean
   *nothing to undo*: the step counts as undone
   (:data:`~orders.compensation.plan.NOTHING_TO_UNDO_CODES`); the status alone (a bare
   404, say) never does.
   Any other permanent failure ends CompensationFailed with an operator alert; success
   ends Compensated. Either way the client's reply queue gets the outcome (S8).
5. A compensation attempt that times out or meets a transient failure finishes without
   touching the record, which stays Compensating with an expired CompleteBy. The supervisor
   finds it like an expired Processing record and, fenced on the stale LockedBy, counts
   ``compensationFailures``: below MAX_COMPENSATION_FAILURES it hands the record back
   (LockedBy null, held back like V2) and the starter starts attempt ``m + 1``; at the
   limit it sets CompensationFailed, alerts an operator and tells the client.

A failed order that had something to undo therefore ends Compensated or
CompensationFailed, never Error: its ``failureReason`` and the operator alert sent when it
failed (OrderError or RetriesExhausted) say why it failed.
"""
