"""The order service's core: what every role stands on, and nothing that runs on its own.

Layers, from the ground up; each imports only from those below: ``clocks``, ``sqlitekit``,
``durable_http``, ``azurekit`` -> ``sqlitebus`` -> ``orders`` -> ``agents``, ``activities``,
``orchestrators`` -> ``scheduler``, ``supervisor`` -> ``ops`` -> ``function_app.py``. None
imports the workshop (``devhost``, ...) in any form.
"""
