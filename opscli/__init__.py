"""The operator CLI (``python -m opscli``), run on an operator's machine, never deployed."""
