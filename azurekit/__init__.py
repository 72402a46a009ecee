"""What the app and the local host must agree on with Azure, written once for both.

The local host (``devhost``) is never deployed and the app (``orders``) never imports it,
yet an adapter over the local host must hand the app the same decisions Azure's answers
would: whether a failed call may be retried (:mod:`azurekit.errors`), and which messages
Service Bus refuses (:mod:`azurekit.servicebus`). Both import this package; it imports
nothing outside the standard library, like ``clocks``, and is deployed with the app.
"""
