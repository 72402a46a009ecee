"""Dead-letter the message a trigger holds, with a reason, through the settlement port (S1).

Used by every Service Bus-triggered function: the scheduler's and the agents'.
"""

import logging
from typing import Any

from orders.runtime import services

log = logging.getLogger("orders.settle")


def dead_letter(queue: str, message: Any, reason: str, description: str) -> None:
    """Dead-letter ``message`` on ``queue`` and log why (never drop a bad message, S1).

    Parameters
    ----------
    queue : str
        The trigger's queue.
    message : azure.functions.ServiceBusMessage
        The message being processed.
    reason, description : str
        DeadLetterReason and DeadLetterErrorDescription. Characters UTF-8 cannot encode
        (unpaired surrogates quoted from a bad body) are escaped, so recording why a
        message is bad can never fail because of the message itself.
    """
    reason, description = _encodable(reason), _encodable(description)
    log.warning("dead-lettering message %s on %s: %s: %s", message.message_id, queue, reason,
                description)
    services().settler.dead_letter(queue, message, reason, description)


def _encodable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
