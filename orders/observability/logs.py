"""Log records that carry OrderID, orchestration instance id and attempt (X8, D4).

Every record gets ``order_id``, ``instance_id``, ``attempt`` (``"-"`` when unknown) and
``log_ids`` (:func:`install_log_record_factory`), from :func:`log_context` (a context
variable, per thread or task) or a bound :func:`order_logger`; :func:`replay_safe_logger`
is silent while an orchestrator replays. Never pass these names in ``extra=``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(log_ids)s] %(message)s"

UNKNOWN = "-"


@dataclass(frozen=True)
class LogIds:
    """The ids one log line is about; None when unknown."""

    order_key: str | None = None
    instance_id: str | None = None
    attempt: int | None = None

    def text(self) -> str:
        """Render as ``order=<id> instance=<id> attempt=<n>``."""
        return (f"order={self.order_key or UNKNOWN} instance={self.instance_id or UNKNOWN} "
                f"attempt={self.attempt if self.attempt is not None else UNKNOWN}")


_NO_IDS = LogIds()
_current: ContextVar[LogIds] = ContextVar("orders_log_ids", default=_NO_IDS)  # noqa: B039 - frozen
_install_lock = threading.Lock()
_installed = False


def ids_for(order_key: str | None = None, instance_id: str | None = None,
            attempt: int | None = None) -> LogIds:
    """Build :class:`LogIds`, filling OrderID and attempt from an ``<OrderID>:<n>`` instance id."""
    if instance_id and (order_key is None or attempt is None):
        head, sep, tail = instance_id.rpartition(":")
        if sep and tail.isdigit():
            order_key = order_key or head
            attempt = attempt if attempt is not None else int(tail)
    return LogIds(order_key, instance_id, attempt)


def current_ids() -> LogIds:
    """Return the ids of the innermost :func:`log_context` (all None outside one)."""
    return _current.get()


@contextmanager
def log_context(order_key: str | None = None, instance_id: str | None = None,
                attempt: int | None = None) -> Iterator[LogIds]:
    """Attach the ids to every record logged inside the block; values not given are inherited."""
    outer = _current.get()
    own = ids_for(order_key, instance_id, attempt)
    ids = replace(outer, **{k: v for k, v in vars(own).items() if v is not None})
    token = _current.set(ids)
    try:
        yield ids
    finally:
        _current.reset(token)


def install_log_record_factory() -> None:
    """Give every log record the ids' attributes; once per process, later calls do nothing."""
    global _installed
    with _install_lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            ids = _current.get()
            record.order_id = ids.order_key or UNKNOWN  # the custom dimension keeps its name
            record.instance_id = ids.instance_id or UNKNOWN
            record.attempt = ids.attempt if ids.attempt is not None else UNKNOWN
            record.log_ids = ids.text()
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


class OrderLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger bound to one order's ids (see :func:`order_logger`)."""

    def __init__(self, logger: logging.Logger, ids: LogIds) -> None:
        super().__init__(logger, {})
        self.ids = ids

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log with the bound ids in force; the caller's line is reported, not this one."""
        if not self.isEnabledFor(level):
            return
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 1
        with log_context(self.ids.order_key, self.ids.instance_id, self.ids.attempt):
            msg, kwargs = self.process(msg, kwargs)
            self.logger.log(level, msg, *args, **kwargs)

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        """Leave the message unchanged (the ids travel as record attributes)."""
        return msg, kwargs


class ReplaySafeLogger(OrderLogger):
    """An :class:`OrderLogger` that is silent while its orchestration replays (D4)."""

    def __init__(self, logger: logging.Logger, context: Any, ids: LogIds) -> None:
        super().__init__(logger, ids)
        self.context = context

    def isEnabledFor(self, level: int) -> bool:
        """Return False while replaying history, else the logger's answer."""
        if getattr(self.context, "is_replaying", False):
            return False
        return self.logger.isEnabledFor(level)


def order_logger(logger: logging.Logger, order_key: str | None = None,
                 instance_id: str | None = None, attempt: int | None = None) -> OrderLogger:
    """Return ``logger`` bound to one order (and attempt) for code outside orchestrators."""
    return OrderLogger(logger, ids_for(order_key, instance_id, attempt))


def replay_safe_logger(context: Any, logger: logging.Logger,
                       order_key: str | None = None) -> ReplaySafeLogger:
    """Return a logger for orchestrator code: ids from ``context``, silent during replay (D4)."""
    return ReplaySafeLogger(logger, context, ids_for(order_key, context.instance_id))
