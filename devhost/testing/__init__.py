"""The local host as a test bench for any Durable Functions Python app (docs/testing.md).

Installing ``durable-devhost`` registers the pytest plugin (:mod:`.plugin`): the
``durable_host`` fixture gives a :class:`DurableHost` with the app loaded in-process on a
manual clock. :class:`DurableHost` works without pytest too.
"""

from devhost.testing.host import DurableHost

__all__ = ["DurableHost"]
