"""A client application of the order service: submits orders and watches their status.

Why it exists: SPEC "Who uses it" - client applications send orders to the ``orders``
Service Bus queue and read status messages from their own reply queue
(``replies-<clientId>``, SPEC S8). Orders come from TPC-H data (:mod:`client.tpch`) or
JSON lines (:mod:`client.jsonl`); :mod:`client.submit` sends them and
:mod:`client.watch` follows them to a terminal status. ``python -m client`` is the
command line (:mod:`client.cli`). Never deployed to Azure (``.funcignore``).
"""
