"""Peer durable-execution engines run chain-5 here, each in its own subprocess.

Each module is runnable as ``python -m bench.peers.<name> --n N`` and prints one JSON line
with the same figures :mod:`bench.chain5` reports for the local host, so the parent
process can put them side by side without the peers disturbing each other or the host.
"""
