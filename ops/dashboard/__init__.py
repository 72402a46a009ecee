"""The operator dashboard: the ops view in a browser, served by the app itself (S7, X8).

An HTTP-triggered page (:mod:`ops.dashboard.blueprint`) with plain HTML, CSS and a small
script (``static/``: no build step, nothing fetched from elsewhere; charts are SVG drawn by
the script), over JSON endpoints that read what the operator CLI and ``api/ops/summary``
read: :mod:`~ops.dashboard.overview` (orders by state, charts of the last hour
(:mod:`~ops.dashboard.series`), orders needing attention, compensated orders, queues, dead
letters, circuits, retry budget, alerts linking to their orders; every store read
bounded), :mod:`~ops.dashboard.detail` (one order, looked up by client and OrderID, with
its attempts' histories and trace) and the CLI's resubmit. :mod:`~ops.dashboard.web`
holds the HTTP rules: strict parameters, 4xx refusals with a reason, security headers.

Every value is put on the page as text (``textContent``), never as markup, and the
Content-Security-Policy allows no inline script: an order whose fields hold HTML or script
shows them literally.

May import: what :mod:`ops` may (never ``devhost``).
"""
