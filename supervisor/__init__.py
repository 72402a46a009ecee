"""The supervisor (V1-V5); imports only ``orders`` and ``clocks``: it starts nothing (V3)."""
