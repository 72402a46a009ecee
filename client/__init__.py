"""A client application of the order service: submits orders and watches their status (S8).

``python -m client`` (:mod:`client.cli`; docs/client.md). Never deployed (``.funcignore``).
"""
