"""Observability: Prometheus metrics (``/metrics``), structured JSON logs with a request id
echoed in ``X-Request-ID``."""
