"""Run the host: assemble it, serve its HTTP side, start its processes, the CLI.

:mod:`.runtime` builds a complete host from the app (:mod:`devhost.app`), the task hub,
the work loops and the triggers; :mod:`.host` runs them, :mod:`.http_host` serves HTTP,
:mod:`.worker_processes` the extra processes of ``--workers N``, and :mod:`.cli` is
``python -m devhost``. Nothing else in the host imports this package.
"""
