"""How long one ingest request may work, and whether its client is still waiting.

The write path checks its :class:`Deadline` between slices of the encoder's batches, between
spaCy's batches, before each transaction and inside it once the space's write lock is held
(before the first write), so a request stopped by it leaves nothing half-written: a single
session or a batch of free memories is one transaction, and it is either committed whole
before the check or never started. A multi-session call (in-process only) names the sessions
it committed before it stopped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from pipelines.errors import DomainError, Unavailable

__all__ = ["ClientGone", "Deadline", "DeadlineExceeded", "check"]


#: What a stopped single-transaction request tells its client.
NOTHING_WRITTEN = "nothing was written"


class DeadlineExceeded(Unavailable):
    """The request ran past its deadline (503; ``Retry-After`` is the deadline's length, so a
    client does not re-run heavy work at once)."""

    code = "deadline_exceeded"

    def __init__(
        self,
        reason: str,
        retry_after: int,
        written: str = NOTHING_WRITTEN,
        field: str | None = None,
    ) -> None:
        super().__init__(
            f"{reason}; {written}; retry when the server is less busy, or send fewer or "
            "shorter items per request",
            field,
        )
        self.reason = reason
        self.retry_after = retry_after


class ClientGone(DomainError):
    """The client closed the connection: the work stops (499, which no client reads; it
    shows in the access log and the metrics)."""

    status = 499
    code = "client_closed_request"

    def __init__(
        self,
        reason: str = "the client closed the connection",
        written: str = NOTHING_WRITTEN,
        field: str | None = None,
    ) -> None:
        super().__init__(f"{reason}; {written}", field)
        self.reason = reason


@dataclass(frozen=True)
class Deadline:
    seconds: float
    at: float  # time.monotonic() it falls at
    gone: Callable[[], bool] | None = None  # whether the client has disconnected

    @classmethod
    def after(cls, seconds: float, gone: Callable[[], bool] | None = None) -> Deadline:
        return cls(seconds, time.monotonic() + seconds, gone)

    def check(self) -> None:
        """Raise :class:`ClientGone` or :class:`DeadlineExceeded` when the work must stop."""
        if self.gone is not None and self.gone():
            raise ClientGone()
        if time.monotonic() >= self.at:
            raise DeadlineExceeded(
                f"the request did not finish within its deadline of {self.seconds:g} s",
                retry_after=max(1, math.ceil(self.seconds)),
            )


def check(deadline: Deadline | None) -> None:
    """:meth:`Deadline.check`, for code that may run without a deadline."""
    if deadline is not None:
        deadline.check()
