"""What the app and the local host must agree on with Azure, written once for both.

The local host (``devhost``) is never deployed and the app (``orders``) never imports it,
yet an adapter over the local host must hand the app the same decisions Azure's answers
would: whether a failed call may be retried (:mod:`azurekit.errors`), which messages
Service Bus refuses (:mod:`azurekit.servicebus`). And each rule both sides check has its
one home here: the queue catalog of ``infra/queues.json`` (:mod:`azurekit.queues`, with
:mod:`azurekit.durations`), instance ids (:mod:`azurekit.instance_ids`), client ids
(:mod:`azurekit.client_ids`), the local host's settings record
(:mod:`azurekit.app_settings`) and the remote services of ``infra/services.json``
(:mod:`azurekit.services`). Both import this package; it imports nothing outside the
standard library but pydantic, and is deployed with the app.
"""
