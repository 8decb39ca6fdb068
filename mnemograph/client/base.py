"""What the sync and async clients share: configuration, headers, reading an answer."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from mnemograph.client.calls import RETRY_STATUSES, Call, RetryPolicy, parse_retry_after
from mnemograph.client.errors import ConnectionFailed, MnemographError, from_response

DEFAULT_URL = "http://127.0.0.1:8000"


class ClientConfig:
    """Where the server is and how to call it. ``base_url`` and ``api_key`` default to the
    environment (``MNEMOGRAPH_URL``, ``MNEMOGRAPH_API_KEY``)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("MNEMOGRAPH_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("MNEMOGRAPH_API_KEY")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.headers = {"Accept": "application/json", **(headers or {})}
        if self.api_key:
            self.headers["Authorization"] = f"Bearer {self.api_key}"


def request_args(call: Call[Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"params": dict(call.params) or None}
    if call.json is not None:
        args["json"] = call.json
    return args


def retry_after(response: httpx.Response) -> float | None:
    return parse_retry_after(response.headers.get("retry-after"))


def raise_for(response: httpx.Response) -> None:
    """Raise the API's error for a non-2xx answer (read in full first)."""
    if response.is_success:
        return
    try:
        data: Any = response.json()
    except ValueError:
        data = None
    raise from_response(response.status_code, data, response.text, retry_after(response))


def read(call: Call[Any], response: httpx.Response) -> Any:
    raise_for(response)
    return call.read(response.json())


def may_have_committed(response: httpx.Response) -> bool | None:
    """The error body's ``error.may_have_committed`` (None: absent, or no such body)."""
    try:
        data: Any = response.json()
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    flag = error.get("may_have_committed") if isinstance(error, dict) else None
    return flag if isinstance(flag, bool) else None


def refusal_wait(
    config: ClientConfig, call: Call[Any], attempt: int, response: httpx.Response
) -> float | None:
    """Seconds to wait before resending ``call`` after this error answer, or None: don't
    (the body is read only when the call is not idempotent: a stream stays unread)."""
    if response.status_code not in RETRY_STATUSES:
        return None
    committed = None if call.idempotent else may_have_committed(response)
    return config.retry.wait_after(
        attempt,
        response.status_code,
        retry_after(response),
        idempotent=call.idempotent,
        may_have_committed=committed,
    )


def retryable(exc: httpx.TransportError, call: Call[Any]) -> bool:
    """A failed connection never reached the server: any call may be retried; a call that
    may have reached it only when sending it twice is the same as once."""
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return True
    return call.idempotent


def connection_failed(config: ClientConfig, exc: httpx.TransportError) -> MnemographError:
    return ConnectionFailed(f"cannot reach Mnemograph at {config.base_url}: {exc}")
