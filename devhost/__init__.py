"""The local host: the app's Functions host and Durable extension on one machine.

:mod:`.app` loads and calls the app, :mod:`.run` assembles and runs the host, over the task
hub (:mod:`.taskhub`), orchestrator episodes (:mod:`.orchestration`), entities, the work
loops (:mod:`.workers`), triggers, the Durable HTTP API (:mod:`.http_api`) and the shared
failure pieces (:mod:`.failures`).
"""
