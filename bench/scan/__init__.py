"""Supervisor scan benchmark: cost and time of one scan over a large state store (V1).

Run ``python -m bench.scan``; see :mod:`bench.scan.__main__` for the options.
"""
