"""Orchestration versioning: which instances this host runs, as DTFx decides it.

The Durable extension gives the Durable Task Framework's dispatcher the versioning settings
of host.json (``defaultVersion``, ``versionMatchStrategy``, ``versionFailureStrategy``;
Microsoft's "Orchestration versioning" article for Durable Functions). Before each episode
the dispatcher compares the instance's version with ``defaultVersion``:

* ``None``: every instance runs;
* ``Strict``: only an instance of exactly that version runs;
* ``CurrentOrOlder`` (the default): an instance whose version compares greater does not run
  (:func:`compare_versions`: empty is older than anything, two ``System.Version`` strings
  compare as versions, anything else case-insensitively as text).

An instance that may not run is rejected (``Reject``, the default: its work item is
abandoned and retried later, the instance stays as it is) or failed (``Fail``: it ends
Failed with ``VersionMismatch``). Note that with ``CurrentOrOlder`` and no
``defaultVersion``, an instance started with an explicit version never runs: the host logs
a warning each time it rejects one, because Azure is silent about it.
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
    """Compare two orchestration versions as DTFx ``VersioningSettings.CompareVersions``.

    Parameters
    ----------
    source, other : str or None
        Versions; None, empty and blank mean "no version".

    Returns
    -------
    int
        Negative, zero or positive as ``source`` is older than, equal to or newer than
        ``other``.
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
    """The worker's versioning settings.

    Attributes
    ----------
    version : str or None
        host.json ``defaultVersion``.
    match : str
        ``None``, ``Strict`` or ``CurrentOrOlder``.
    failure : str
        ``Reject`` or ``Fail``.
    """

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
