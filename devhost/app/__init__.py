"""The app as the Python worker sees it: found, checked, loaded and called.

Discovery of the v2 script or the v1 folders, the function metadata and binding checks,
``host.json`` and ``local.settings.json``, the one-line load errors, and calling a function
(sync or on the shared event loop, with its ``context``). It imports no other part of the
host; the work loops and the runner build on it.
"""
