"""Fault knobs of the remote-service simulator (X1), validated once at the edge.

The same models validate ``--config`` and ``POST /_admin/faults``, so an unknown knob or an
out-of-range value is refused naming the field; the knobs are in docs/simulator.md.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from azurekit.services import catalogue
from simulator.operations import IMPLEMENTATIONS, forward_kinds

SERVICES: tuple[str, ...] = tuple(catalogue().services)


def _check_services(extra: dict[str, Any] | None) -> None:
    unknown = sorted(set(extra or {}) - set(SERVICES))
    if unknown:
        raise ValueError(f"{unknown[0]}: not a service of services.json "
                         f"(known: {', '.join(SERVICES)})")


def _check_kinds(kinds: list[str]) -> list[str]:
    known = {i.kind for i in IMPLEMENTATIONS.values()}
    unknown = sorted(set(kinds) - known)
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not an operation (known: {sorted(known)})")
    return kinds


class Decline(BaseModel):
    """A permanent refusal for one order: ``status`` 402 or 422, ``reason`` the body's ``error``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal[402, 422] = 402
    reason: str = Field("declined", min_length=1)


class ServiceFaults(BaseModel):
    """Fault knobs of one simulated service; the defaults inject nothing (docs/simulator.md).

    ``outage_start`` alone is refused; ``outage_for_s`` excludes both window ends.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    transient_rate: float = Field(0.0, ge=0.0, le=1.0)
    transient_statuses: list[Literal[429, 503]] = Field(default=[503, 429], min_length=1)
    retry_after_s: int = Field(1, ge=0)
    latency_s: float = Field(0.0, ge=0.0)
    outage_start: AwareDatetime | None = None
    outage_end: AwareDatetime | None = None
    outage_for_s: float | None = Field(None, gt=0)
    black_hole_order_ids: list[str] = []
    black_hole_first_n: int | None = Field(None, ge=1)
    black_hole_performs_effect: bool = False
    order_fault_operations: Annotated[list[str], AfterValidator(_check_kinds)] = Field(
        default_factory=forward_kinds, min_length=1)
    decline: dict[str, Decline] = {}
    fail_forever_order_ids: list[str] = []

    @model_validator(mode="after")
    def _check_outage(self) -> ServiceFaults:
        if self.outage_for_s is not None and (self.outage_start or self.outage_end):
            raise ValueError("outage_for_s: cannot be combined with outage_start/outage_end")
        if self.outage_start is not None and self.outage_end is None:
            raise ValueError("outage_end: required when outage_start is set")
        if self.outage_start and self.outage_end and self.outage_end <= self.outage_start:
            raise ValueError("outage_end: must be later than outage_start")
        return self

    def resolved(self, now: datetime) -> ServiceFaults:
        """Return a copy whose outage, if any, is a window (``outage_for_s`` starts at ``now``)."""
        if self.outage_for_s is not None:
            end = now + timedelta(seconds=self.outage_for_s)
            return self.model_copy(
                update={"outage_start": now, "outage_end": end, "outage_for_s": None}
            )
        if self.outage_end is not None and self.outage_start is None:
            return self.model_copy(update={"outage_start": now})
        return self

    def outage_end_at(self, now: datetime) -> datetime | None:
        """Return the end of the outage if ``now`` falls inside its window, else None."""
        if self.outage_start is None or self.outage_end is None:
            return None
        return self.outage_end if self.outage_start <= now < self.outage_end else None


class FaultUpdate(BaseModel):
    """A change to the fault knobs, as read from ``--config`` or ``POST /_admin/faults``.

    A service named is replaced wholesale (``all`` first); an unknown service is refused.
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, ServiceFaults] = Field(init=False)

    seed: int | None = None
    all: ServiceFaults | None = None

    @model_validator(mode="after")
    def _known_services(self) -> FaultUpdate:
        _check_services(self.__pydantic_extra__)
        return self

    def for_service(self, service: str) -> ServiceFaults | None:
        """Return the knobs given for ``service`` itself, None if it is not named."""
        return (self.__pydantic_extra__ or {}).get(service)


class SimulatorConfig(BaseModel):
    """The fault knobs in force: a seed and one :class:`ServiceFaults` per service."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, ServiceFaults] = Field(init=False)

    seed: int = 0

    @model_validator(mode="after")
    def _every_service(self) -> SimulatorConfig:
        extra = self.__pydantic_extra__
        assert extra is not None
        _check_services(extra)
        for service in SERVICES:
            extra.setdefault(service, ServiceFaults())
        return self

    def for_service(self, service: str) -> ServiceFaults:
        """Return the knobs of ``service``; a KeyError naming it if it is not one."""
        faults = (self.__pydantic_extra__ or {}).get(service)
        if faults is None:
            raise KeyError(f"service: {service!r} is not a simulated service "
                           f"(known: {', '.join(SERVICES)})")
        return faults

    def updated(self, update: FaultUpdate, now: datetime) -> SimulatorConfig:
        """Return a new configuration with ``update`` applied; relative outages start at ``now``."""
        changes: dict[str, Any] = {"seed": self.seed if update.seed is None else update.seed}
        for service in SERVICES:
            faults = update.for_service(service) or update.all
            changes[service] = (self.for_service(service) if faults is None
                                else faults.resolved(now))
        return SimulatorConfig.model_validate(changes)


def load_update(path: str | Path) -> FaultUpdate:
    """Read a fault config file (JSON object in the shape of :class:`FaultUpdate`).

    Raises
    ------
    ValueError
        If the file is not JSON or a knob is unknown or out of range; the message names
        the file and the field.
    """
    try:
        return FaultUpdate.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    except ValidationError as exc:
        raise ValueError(f"{path}: invalid fault config: {describe_errors(exc)}") from exc


def describe_errors(exc: ValidationError) -> str:
    """Render pydantic errors as ``field.path: message`` pairs separated by ``; ``."""
    parts = []
    for error in exc.errors():
        loc = ".".join(str(item) for item in error["loc"]) or "body"
        parts.append(f"{loc}: {error['msg']}")
    return "; ".join(parts)
