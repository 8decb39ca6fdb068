"""The SDK's retry policy and Retry-After parsing (pure)."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from mnemograph.client.calls import RetryPolicy, parse_retry_after, seg
from mnemograph.client.errors import InvalidInput, MnemographError, from_response


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
