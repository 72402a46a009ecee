"""ISO 8601 durations as ARM and Service Bus write them (``PT30S``, ``PT10M``, ``P14D``)."""

from __future__ import annotations

import re
from datetime import timedelta

_DURATION = re.compile(
    r"^P(?:(?P<weeks>\d+)W|(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?)$"
)


def parse_duration(text: str) -> timedelta:
    """Parse ``PnW`` or ``P[nD][T[nH][nM][n[.f]S]]`` (at least one component), e.g. ``P1DT2H``.

    Raises
    ------
    ValueError
        If ``text`` is not a string, uses years or months, or is not of the form above.
    """
    if not isinstance(text, str):
        raise ValueError(f"expected an ISO 8601 duration string such as 'PT30S', got {text!r}")
    match = _DURATION.match(text)
    if (
        match is None
        or text.endswith("T")
        or not any(value is not None for value in match.groupdict().values())
    ):
        hint = " (years and months are not allowed)" if re.match(r"^P\d+[YM]", text) else ""
        raise ValueError(
            f"{text!r} is not an ISO 8601 duration of the form PnW or "
            f"P[nD][T[nH][nM][nS]]{hint}, e.g. 'PT30S', 'PT10M', 'P14D'"
        )
    parts = {key: float(value) for key, value in match.groupdict().items() if value is not None}
    try:
        return timedelta(**parts)
    except OverflowError as exc:
        raise ValueError(f"{text!r} is longer than the largest supported duration") from exc


def format_duration(value: timedelta) -> str:
    """Format a duration as ISO 8601, e.g. ``P1DT2H0.5S`` (``PT0S`` for zero).

    Raises
    ------
    ValueError
        If ``value`` is negative.
    """
    if value < timedelta(0):
        raise ValueError(f"duration must not be negative, got {value}")
    days = value.days
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "P" + (f"{days}D" if days else "")
    time = ""
    if hours:
        time += f"{hours}H"
    if minutes:
        time += f"{minutes}M"
    if seconds or value.microseconds:
        frac = f".{value.microseconds:06d}".rstrip("0") if value.microseconds else ""
        time += f"{seconds}{frac}S"
    if time:
        text += "T" + time
    return text if text != "P" else "PT0S"
