"""Neo4j access for the domain: named statements in, plain dicts out.

Every statement is a file under ``cypher/`` referenced by name; user values travel only as
parameters. Space scoping is the statements' job (each one filters on ``$space``); this module
adds transactions, routing and a clear error when the database cannot be reached.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import neo4j
import neo4j.graph
from neo4j import READ_ACCESS, WRITE_ACCESS, GraphDatabase, ManagedTransaction
from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

import cypher
from pipelines import tracing
from pipelines.graph_faults import (
    Breaker,
    GraphUnavailable,
    WriteLog,
    mark,
    marked,
    note_commit,
    request_committed,
    request_started,
    tracking,
)
from pipelines.graph_warmup import Key, PlanWarmer

__all__ = [
    "GraphConfig",
    "GraphStore",
    "GraphUnavailable",
    "ReadOnlyStore",
    "Row",
    "Tx",
    "WriteLog",
    "mark",
    "marked",
    "note_commit",
    "request_committed",
    "request_started",
    "tracking",
]

T = TypeVar("T")
Row = dict[str, Any]
log = logging.getLogger("mnemograph.graph")

#: The longest the statements not planned before the breaker closed are planned after it.
SETTLE_BUDGET_S = 60.0


@dataclass(frozen=True)
class GraphConfig:
    uri: str = "bolt://127.0.0.1:7687"
    user: str | None = None
    password: str | None = None
    database: str = "neo4j"
    max_connection_pool_size: int = 50
    connection_timeout_s: float = 5.0
    #: The longest wait for a pooled connection (the driver's default is a minute).
    connection_acquisition_timeout_s: float = 5.0
    #: How long a transaction is retried after transient errors (never once Neo4j is known
    #: to be unreachable: then it fails at once).
    max_transaction_retry_time_s: float = 5.0
    #: The first delay before a retry after a transient error; each next one doubles.
    first_retry_delay_s: float = 0.1
    #: While Neo4j is unreachable, calls fail at once and it is probed this often.
    unavailable_backoff_s: float = 0.5
    #: Once it answers again, the statements run so far are planned (EXPLAIN, the most run
    #: first) for at most this long before requests are let through (0: none), the rest after.
    plan_warmup_budget_s: float = 5.0
    #: For this long after the breaker closes again (and while the statements not planned
    #: before are planned) the store is *recovering*: cold plans, a cold JVM. A request's
    #: transactions then have server-side timeouts that end them ``recovering_budget_s``
    #: after the request started (0: none): it answers, or is refused, within it.
    recovering_window_s: float = 30.0
    recovering_budget_s: float = 4.5
    #: While Neo4j answers, one query this often checks that it still does, so work in flight
    #: learns at once that it died (0: only failed calls tell).
    liveness_interval_s: float = 1.0
    #: Every session in READ access mode (Neo4j refuses any write), and a call that asks for a
    #: write transaction is refused before it reaches Neo4j: a read replica's store, or the
    #: test proving that reads never write.
    read_only: bool = False


_SCALARS = (str, int, float, bool, type(None))

#: The shortest server-side timeout worth a transaction (less: refused before it opens).
MIN_TX_TIMEOUT_S = 0.05

#: How Neo4j reports a transaction it ended at its timeout (running, or waiting on a lock).
_TIMED_OUT = ("TransactionTimedOut", "LockClientStopped", "Transaction.Terminated")


def _plain(value: Any) -> Any:
    """``Record.data()``'s conversion (nodes and relationships to dicts), minus its cost on
    vectors: a list whose first item is a float is taken as a vector and kept as it is (the
    driver's generic transform visits and type-checks every one of its 384 floats, which
    made ~60 % of a /context call on LoCoMo)."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, list):
        if value and type(value[0]) is float:
            return value
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, neo4j.graph.Node):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, neo4j.graph.Relationship):
        return (_plain(value.start_node), value.type, _plain(value.end_node))
    if isinstance(value, neo4j.graph.Path):
        return [_plain(x) for x in value]  # nodes and relationships, as Record.data() does
    return value  # temporal and spatial values, bytes


def to_native(value: Any) -> Any:
    """A driver temporal value (``neo4j.time.DateTime`` …) as its Python equivalent; any other
    value unchanged."""
    convert = getattr(value, "to_native", None)
    return convert() if convert is not None else value


def as_utc(moment: datetime | None) -> datetime | None:
    """``moment`` in UTC; a naive datetime is taken to be UTC already."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_epoch_micros(value: int | None) -> datetime | None:
    """UTC datetime from integer microseconds since the epoch (exact, any sign).

    Hot queries return times as ``t.epochSeconds * 1000000 + t.microsecond``: the driver's
    DateTime hydration costs more than the query when a result carries hundreds of them."""
    return None if value is None else _EPOCH + timedelta(microseconds=int(value))


def _row(record: neo4j.Record) -> Row:
    return {k: _plain(v) for k, v in zip(record.keys(), record.values(), strict=True)}


Statements = Callable[[str], str]
"""Where a store reads statement texts by name (production: :func:`cypher.load`)."""


class ReadOnlyStore(RuntimeError):
    """A write transaction was asked of a store opened read-only (``GraphConfig.read_only``)."""


class Tx:
    """A write transaction handle that runs named statements (each one a span, with tracing
    on: the one place named statements run in a transaction)."""

    def __init__(
        self,
        tx: ManagedTransaction | neo4j.Transaction,
        statements: Statements = cypher.load,
        warmer: PlanWarmer | None = None,
        database: str = "neo4j",
    ) -> None:
        self._tx = tx
        self._statements = statements
        self._warmer = warmer
        self._database = database

    def run(self, statement: str, /, **params: Any) -> list[Row]:
        text = self._statements(statement)
        if self._warmer is not None:
            self._warmer.note(text, params)
        with tracing.statement(statement, text, self._database):
            return [_row(r) for r in self._tx.run(text, params)]


class GraphStore:
    """Thin wrapper around the official driver."""

    def __init__(
        self,
        config: GraphConfig,
        statements: Statements = cypher.load,
        driver: neo4j.Driver | None = None,
        warmer: PlanWarmer | None = None,
    ) -> None:
        """A store on its own driver, or on ``driver`` (shared: the store does not own it)."""
        self.config = config
        self._statements = statements
        self.warmer = warmer or PlanWarmer()
        auth = (config.user, config.password or "") if config.user else None
        self.driver = driver or GraphDatabase.driver(
            config.uri,
            auth=auth,
            max_connection_pool_size=config.max_connection_pool_size,
            connection_timeout=config.connection_timeout_s,
            connection_acquisition_timeout=config.connection_acquisition_timeout_s,
            max_transaction_retry_time=config.max_transaction_retry_time_s,
            # "property key does not exist" notices are expected on a fresh space; keep the rest
            notifications_disabled_classifications=["UNRECOGNIZED"],
        )
        self._warmed: list[Key] = []
        self._breaker = Breaker(
            config.uri,
            config.unavailable_backoff_s,
            self._ping,
            self._warm,
            self._settle,
            recovering_s=config.recovering_window_s,
        )
        if driver is None and config.liveness_interval_s > 0:  # one watch per driver
            self._breaker.watch(config.liveness_interval_s)

    def close(self) -> None:
        self._breaker.stop()
        self.driver.close()

    def _ping(self) -> None:
        """One query on the database, no retries (the breaker's probe)."""
        with self._session(self._any_mode) as s, s.begin_transaction() as tx:
            tx.run(cypher.load("graph/ping")).consume()

    def _warm(self) -> None:
        """Plan the most run statements (the breaker's warm-up once Neo4j answers again)."""
        self._warmed = self._plan("before requests", self.config.plan_warmup_budget_s, [])

    def _settle(self) -> None:
        """Plan the other statements (the breaker has closed: requests flow meanwhile)."""
        self._plan("after", SETTLE_BUDGET_S, self._warmed)

    def _plan(self, when: str, budget_s: float, skip: list[Key]) -> list[Key]:
        t0 = time.monotonic()
        tried = self.warmer.warm(self._explain, budget_s, skip=set(skip))
        log.info(
            "Neo4j answers again: %d of %d known statements planned (EXPLAIN) %s in %.1f s",
            len(tried),
            len(self.warmer),
            when,
            time.monotonic() - t0,
        )
        return skip + tried

    def _explain(self, text: str, params: dict[str, Any]) -> bool:
        """Plan ``text`` without running it; False if it does not plan (Neo4j gone: raises)."""
        try:
            with self._session(self._any_mode) as s:
                s.run("EXPLAIN " + text, params).consume()
        except (ServiceUnavailable, SessionExpired):
            raise
        except (Neo4jError, DriverError):
            return False
        return True

    def using(self, statements: Statements) -> GraphStore:
        """A store on this one's driver (not closed separately) that reads statement texts
        from ``statements``: how tests and benchmarks run their own named statements."""
        return GraphStore(self.config, statements, self.driver, self.warmer)

    def write_autocommit(self, statement: str, /, **params: Any) -> None:
        """Run one named write statement as an auto-commit transaction: the only kind that
        may batch itself with ``CALL { ... } IN TRANSACTIONS`` (not retried). Once it was
        sent, a failure may have committed part of it."""
        text = self._statements(statement)
        self.warmer.note(text, params)
        db = self.config.database
        with tracing.statement(statement, text, db), self._breaker.guard():
            try:
                with self._session(WRITE_ACCESS) as s:
                    s.run(text, params).consume()
            except Exception as exc:
                note_commit()
                mark(exc)
                raise
            note_commit()

    def run_schema(self, text: str, /, **params: Any) -> None:
        """Run one schema statement given as text, in its own transaction (migrations only:
        schema changes cannot share a transaction with data writes)."""
        with self._session(WRITE_ACCESS) as session:
            session.run(text, params).consume()

    def verify(self) -> None:
        try:
            self.driver.verify_connectivity()
        except (ServiceUnavailable, OSError) as exc:
            raise GraphUnavailable(
                f"Neo4j is not reachable at {self.config.uri}: {exc}. Start it with `make neo4j`."
            ) from exc

    def _transaction(self, work: Callable[[Tx], T], mode: str) -> T:
        """``work`` in one explicit transaction, retried by the breaker (not the driver).

        A failure that escapes says whether the work may have committed
        (:func:`pipelines.graph_faults.mark`): only when the connection failed during or after
        the commit of a write attempt (Neo4j rolls back a transaction whose connection dies
        before its commit, and an error it answers to the commit is a rollback)."""
        unknown = False  # an attempt's commit may have gone through
        timeout: float | None = None  # the last attempt's server-side timeout

        def attempt() -> T:
            nonlocal unknown, timeout
            timeout = self._tx_timeout()
            db = self.config.database
            with (
                self._session(mode) as s,
                s.begin_transaction(timeout=timeout) as tx,
            ):
                result = work(Tx(tx, self._statements, self.warmer, db))
                try:
                    tx.commit()
                except Neo4jError:
                    raise  # the server answered the commit with an error: rolled back
                except BaseException:
                    if mode == WRITE_ACCESS:
                        unknown = True
                        note_commit()  # its outcome is unknown: count it as written
                    raise
                if mode == WRITE_ACCESS:
                    note_commit()
                return result

        c = self.config
        try:
            return self._breaker.run(attempt, c.max_transaction_retry_time_s, c.first_retry_delay_s)
        except Neo4jError as exc:
            if timeout is not None and any(c in (exc.code or "") for c in _TIMED_OUT):
                raise GraphUnavailable(
                    "Neo4j is slow after a restart: the request passed its "
                    f"{self.config.recovering_budget_s:g} s and its transaction was rolled "
                    "back; retry shortly"
                ) from exc
            mark(exc, unknown)
            raise
        except Exception as exc:
            mark(exc, unknown)
            raise

    def _tx_timeout(self) -> float | None:
        """The server-side timeout of a transaction: none, but while the store recovers from a
        Neo4j restart (cold plans) what is left of the request's ``recovering_budget_s``
        (a request past it is refused before its transaction opens). Work outside a budgeted
        request (jobs, in-process calls) has none."""
        budget = self.config.recovering_budget_s
        started = request_started()
        if budget <= 0 or started is None or not self._breaker.recovering:
            return None
        left = budget - (time.monotonic() - started)
        if left < MIN_TX_TIMEOUT_S:
            raise GraphUnavailable(
                f"Neo4j is recovering from a restart and the request used its {budget:g} s; "
                "its next transaction was not started; retry shortly"
            )
        return left

    def check_available(self) -> None:
        """:class:`GraphUnavailable` at once while Neo4j is known to be down (long work in
        flight checks it between its steps, so it stops soon after Neo4j dies)."""
        with self._breaker.guard():
            pass

    def _execute(self, statement: str, params: Mapping[str, Any], mode: str) -> list[Row]:
        return self._transaction(lambda tx: tx.run(statement, **params), mode)

    def read(self, statement: str, /, **params: Any) -> list[Row]:
        """Run a read-only statement in its own auto-retried transaction."""
        return self._execute(statement, params, READ_ACCESS)

    def write(self, statement: str, /, **params: Any) -> list[Row]:
        """Run one write statement in its own auto-retried transaction."""
        return self._execute(statement, params, WRITE_ACCESS)

    def write_tx(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` in ONE write transaction (all or nothing; retried on transient errors,
        so ``work`` must be idempotent)."""
        return self._transaction(work, WRITE_ACCESS)

    def read_tx(self, work: Callable[[Tx], T]) -> T:
        return self._transaction(work, READ_ACCESS)

    @contextmanager
    def session(self) -> Iterator[neo4j.Session]:
        with self._session(WRITE_ACCESS) as session:
            yield session

    @property
    def _any_mode(self) -> str:
        """The mode of a call that neither reads data nor writes it (a probe, a plan)."""
        return READ_ACCESS if self.config.read_only else WRITE_ACCESS

    def _session(self, mode: str) -> neo4j.Session:
        """A session on the database in ``mode``; a read-only store refuses WRITE."""
        if self.config.read_only and mode != READ_ACCESS:
            raise ReadOnlyStore("a write was asked of a read-only store")
        return self.driver.session(database=self.config.database, default_access_mode=mode)
