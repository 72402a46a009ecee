"""The supervisor (SPEC V1-V5): finds stuck attempts and requests their recovery.

May import: ``orders`` (core) and ``clocks``; it starts nothing (V3), so it never imports
``scheduler`` or ``orchestrators``.
"""
