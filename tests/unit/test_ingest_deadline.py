"""The ingest deadline (pure): it stops work once passed or once the client has gone, and a
deadline error says how long to wait."""

from __future__ import annotations

import pytest

from pipelines.ingest.deadline import ClientGone, Deadline, DeadlineExceeded, check


def test_a_deadline_in_the_future_lets_work_go_on() -> None:
    Deadline.after(600).check()
    check(None)  # no deadline: nothing to check


def test_a_passed_deadline_stops_work_and_says_how_long_to_wait() -> None:
    with pytest.raises(DeadlineExceeded) as stopped:
        Deadline.after(0).check()
    assert stopped.value.status == 503 and stopped.value.retry_after == 1
    assert "nothing was written" in stopped.value.message
    with pytest.raises(DeadlineExceeded) as later:
        check(Deadline(seconds=90.5, at=0.0))
    assert later.value.retry_after == 91 and "90.5 s" in later.value.message


def test_a_client_that_has_gone_stops_work_first() -> None:
    with pytest.raises(ClientGone) as gone:
        Deadline.after(0, gone=lambda: True).check()
    assert gone.value.status == 499 and gone.value.code == "client_closed_request"
