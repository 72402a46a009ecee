"""Dead-letter the message a trigger holds, with a reason, through the settlement port (S1)."""

import logging
from typing import Any

from orders.runtime import services

log = logging.getLogger("orders.settle")


def dead_letter(queue: str, message: Any, reason: str, description: str) -> None:
    """Dead-letter ``message`` on ``queue`` and log why; texts are made UTF-8-encodable first."""
    reason, description = _encodable(reason), _encodable(description)
    log.warning("dead-lettering message %s on %s: %s: %s", message.message_id, queue, reason,
                description)
    services().settler.dead_letter(queue, message, reason, description)


def _encodable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
