"""How the host fails and says so: its error root, Azure's failure texts, host retries.

Small leaf pieces every other part may use (the task hub included): the error root that
carries the retry flag, the Reason/Details texts the Durable extension writes, and the
bounded retry of work that fails because of the host itself. It imports no other part of
the host.
"""
