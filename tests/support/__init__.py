"""Test-only servers and helpers (never deployed, not part of the local host)."""
