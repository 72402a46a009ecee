"""Orchestration versioning: which instances this host runs, as DTFx decides it.

The extension gives DTFx's dispatcher host.json's ``defaultVersion``,
``versionMatchStrategy`` and ``versionFailureStrategy`` (Microsoft's "Orchestration
versioning" article). ``None`` runs every instance; ``Strict`` only that version;
``CurrentOrOlder`` (default) not a newer one (:func:`compare_versions`). A refused instance
is rejected (``Reject``, default: abandoned, retried later) or failed (``Fail``:
``VersionMismatch``). With ``CurrentOrOlder`` and no ``defaultVersion`` an explicitly
versioned instance never runs; Azure is silent, the host warns on each rejection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from devhost.app.host_config import DurableSettings

REJECT_DELAY = timedelta(seconds=10)
"""How long a rejected instance's messages stay hidden before it is tried again."""

MISMATCH_MESSAGE = "Orchestration version did not comply with Worker Versioning"
"""DTFx's FailureDetails message for a version mismatch (``ErrorType`` VersionMismatch)."""

_VERSION_PART = re.compile(r"^\s*\+?\d+\s*$")


def _system_version(text: str) -> tuple[int, ...] | None:
    """Parse ``text`` as .NET ``System.Version`` (2 to 4 numeric parts); None if it is not."""
    parts = text.split(".")
    if not 2 <= len(parts) <= 4 or not all(_VERSION_PART.match(p) for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if any(n > 2**31 - 1 for n in numbers):
        return None
    return tuple(numbers + [-1] * (4 - len(numbers)))  # missing build/revision is -1


def compare_versions(source: str | None, other: str | None) -> int:
    """Compare versions as DTFx ``VersioningSettings.CompareVersions``: <0, 0, >0.

    None or blank is older than anything; two ``System.Version`` strings compare as versions,
    others as text ignoring case.
    """
    blank_source = not (source or "").strip()
    blank_other = not (other or "").strip()
    if blank_source or blank_other:
        return int(blank_other) - int(blank_source)
    assert source is not None and other is not None
    a, b = _system_version(source), _system_version(other)
    if a is not None and b is not None:
        return (a > b) - (a < b)
    x, y = source.upper(), other.upper()
    return (x > y) - (x < y)


@dataclass(frozen=True)
class Versioning:
    """Versioning settings (``match`` None/Strict/CurrentOrOlder, ``failure`` Reject/Fail)."""

    version: str | None = None
    match: str = "CurrentOrOlder"
    failure: str = "Reject"

    @classmethod
    def from_settings(cls, settings: DurableSettings) -> Versioning:
        """Build from host.json's Durable settings."""
        return cls(settings.default_version, settings.version_match, settings.version_failure)

    def complies(self, instance_version: str | None) -> bool:
        """Tell whether an instance of ``instance_version`` may run on this host."""
        if self.match == "Strict":
            return (instance_version or None) == (self.version or None)
        if self.match == "CurrentOrOlder":
            return compare_versions(instance_version, self.version) <= 0
        return True

    def explain(self, instance_id: str, instance_version: str | None) -> str:
        """Return the warning logged when an instance is rejected or failed."""
        action = ("rejected and retried later (versionFailureStrategy Reject), as on Azure"
                  if self.failure == "Reject" else "failed (versionFailureStrategy Fail)")
        return (f"instance {instance_id!r} has version {instance_version or ''!r}, which "
                f"versionMatchStrategy {self.match} does not run with defaultVersion "
                f"{self.version or ''!r}; its work is {action}")
