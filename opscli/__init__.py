"""The operator CLI (``python -m opscli``), run on an operator's machine, never deployed.

It reads the same stores and queues as the app, through :mod:`ops` and :mod:`orders`, and
renders them with rich; the deployed operator tools (the summary endpoint, the dashboard)
are in :mod:`ops`.
"""
