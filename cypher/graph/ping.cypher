// The breaker's probe: the database answers a query (not just the port a connection).
RETURN 1 AS ok
