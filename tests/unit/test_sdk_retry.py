"""The SDK's retry policy and Retry-After parsing (pure)."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from mnemograph.client.calls import RetryPolicy, parse_retry_after
from mnemograph.client.errors import InvalidInput, MnemographError, Unavailable, from_response
from mnemograph.client.routes import seg


def test_retry_after_seconds_and_dates():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (parse_retry_after(later) or 0) <= 31


def test_policy_is_bounded():
    policy = RetryPolicy(attempts=3, backoff_s=0.1, max_wait_s=5)
    assert policy.wait(1, 2.0) == 2.0
    assert policy.wait(1, 10.0) is None  # beyond the bound: give up, don't wait
    assert policy.wait(3, 1.0) is None  # attempts used up
    backoff = policy.wait(2, None)
    assert backoff is not None and 0.1 <= backoff <= 0.3


def test_errors_read_the_api_shape():
    body = {"error": {"code": "invalid_input", "message": "k: too small", "field": "k"}}
    err = from_response(422, body, "", None)
    assert isinstance(err, InvalidInput) and err.field == "k" and err.code == "invalid_input"
    other = from_response(500, None, "<html>", None)
    assert type(other) is MnemographError and other.code == "http_error"


def test_path_segments_are_escaped():
    assert seg("D1:3 x/y") == "D1%3A3%20x%2Fy"


def _after(status, committed, idempotent, attempt=1, retry_after=0.5):
    policy = RetryPolicy(attempts=3, max_wait_s=5)
    return policy.wait_after(
        attempt, status, retry_after, idempotent=idempotent, may_have_committed=committed
    )


def test_a_write_that_may_have_committed_is_not_retried():
    """The shared contract: a non-idempotent write is resent after a 503/504 only when the
    server says nothing was written; a missing field counts as "may have"."""
    for status in (503, 504):
        assert _after(status, True, idempotent=False) is None
        assert _after(status, None, idempotent=False) is None
        assert _after(status, False, idempotent=False) == 0.5
    assert _after(502, None, idempotent=False) is None  # a proxy's answer says nothing


def test_idempotent_calls_and_refusals_are_retried():
    for committed in (True, False, None):
        assert _after(503, committed, idempotent=True) == 0.5
    assert _after(429, None, idempotent=False) == 0.5  # refused before any work
    assert _after(503, False, idempotent=False, attempt=3) is None  # attempts used up
    assert _after(503, False, idempotent=False, retry_after=60) is None  # beyond max_wait_s
    assert _after(500, False, idempotent=True) is None  # not a status a retry cures
    assert _after(404, False, idempotent=True) is None


def test_errors_carry_may_have_committed():
    body = {"error": {"code": "unavailable", "message": "down", "field": None}}
    assert from_response(503, body, "", 1.0).may_have_committed is None
    body["error"]["may_have_committed"] = True
    err = from_response(503, body, "", 1.0)
    assert isinstance(err, Unavailable) and err.may_have_committed is True
    body["error"]["may_have_committed"] = False
    timeout = from_response(504, body, "", None)
    assert isinstance(timeout, Unavailable) and timeout.may_have_committed is False
