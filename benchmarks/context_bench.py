"""Context-assembly benchmark adapters: the assembler (issue 5) and the flat-recall baseline.

* :class:`FlatRecallContext` — recall (one preset, ``k`` large) and the results packed in rank
  order into the token budget (:mod:`benchmarks.packing`). This is the baseline the assembler
  must beat; it is implemented here, in the harness.
* :class:`AssemblerContext` — ``pipelines.assemble.service.Assembler(engine, read_ahead=...)
  .assemble(space, ContextRequest(...), preset)``. The request gets the question
  text, ``context_window`` = the budget and ``headroom`` = 1.0 (and the assembler's
  ``safety_margin`` = 0), so the assembler's whole budget is the figure in the report (its
  query, data notice, section headers and block delimiters count against it; the flat baseline
  counts only its memory lines, so the comparison is conservative for the assembler); the
  question time goes in as ``now``. Each variant is an assembly preset (:data:`ASSEMBLER_VARIANTS`:
  the product's ``auto``, its forced-flat ``flat``, and the ablations built here from the same
  steps and configuration overlays); the API offers none but ``auto``. When the service cannot
  be imported
  :func:`load_assembler` raises :class:`ContextBenchUnavailable`, and the runner reports the
  assembler as "not run", never a made-up figure.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from benchmarks.packing import pack, spans
from benchmarks.sut import AssembledContext, ContextInput, ContextSpan, QueryInput, RecallSystem


class ContextBenchUnavailable(RuntimeError):
    """The context assembler (pipelines.assemble.service) is not available yet."""


@dataclass
class FlatRecallContext:
    """Flat recall packed into the budget. ``recall_k`` results are fetched once per question
    (:meth:`fetch`), in rank order (event-order questions too, which recall otherwise returns
    in time order: a prefix of those would be the earliest memories, not the best), and packed
    for every budget (:meth:`pack`)."""

    system: RecallSystem
    preset: str = "full"
    recall_k: int = 100
    name: str = "flat"

    def fetch(self, space: str, query: QueryInput):
        return self.system.recall(space, query, self.preset, self.recall_k, order="relevance")

    @staticmethod
    def pack(retrieval, budgets: Sequence[int]) -> dict[int, AssembledContext]:
        out = {}
        by_id = {h.id: h for h in retrieval.hits}
        for b in budgets:
            p = pack(retrieval.hits, b)
            out[b] = AssembledContext(
                memory_ids=list(p.ids),
                used_tokens=p.used_tokens,
                latency_ms=retrieval.latency_ms,
                report={"offered": p.offered, "skipped": p.skipped},
                spans=spans([by_id[i] for i in p.ids]),
            )
        return out


def load_assembler() -> tuple[Any, Any, dict[str, Any]]:
    """(Assembler, ContextRequest, the variants' presets) or ContextBenchUnavailable with the
    reason."""
    try:
        from pipelines.assemble.request import ContextRequest
        from pipelines.assemble.service import Assembler
    except ImportError as exc:
        raise ContextBenchUnavailable(
            "context assembly benchmark not available yet: pipelines.assemble.service "
            f"(Assembler, ContextRequest) cannot be imported ({exc})"
        ) from exc
    return Assembler, ContextRequest, assembler_variants()


_ID_ATTRS = ("memory_ids", "included_ids", "included", "memories")


def included_memory_ids(resp: Any) -> list[str]:
    """The memory ids an assembler response put into the context, in section order.

    Looks for a response-level list (``memory_ids`` / ``included_ids`` / ``included``), a
    per-section mapping of such lists, or per-section objects carrying one. Raises
    ContextBenchUnavailable naming what it found when none of these shapes is present.
    """

    def ids_of(value: Any) -> list[str] | None:
        if value is None:
            return None
        if isinstance(value, dict):
            out: list[str] = []
            for v in value.values():
                got = ids_of(v)
                if got is None:
                    return None
                out.extend(got)
            return out
        if isinstance(value, list | tuple):
            out = []
            for v in value:
                if isinstance(v, str):
                    out.append(v)
                elif getattr(v, "id", None) is not None:
                    out.append(str(v.id))
                elif isinstance(v, dict) and "id" in v:
                    out.append(str(v["id"]))
                else:
                    return None
            return out
        return None

    for attr in _ID_ATTRS:
        got = ids_of(getattr(resp, attr, None))
        if got is not None:
            return got
    sections = getattr(resp, "sections", None)
    if sections is not None:
        items = sections.values() if isinstance(sections, dict) else sections
        out: list[str] = []
        found = False
        for sec in items:
            for attr in _ID_ATTRS:
                got = ids_of(getattr(sec, attr, None))
                if got is not None:
                    out.extend(got)
                    found = True
                    break
        if found:
            return out
    raise ContextBenchUnavailable(
        f"cannot find the included memory ids on {type(resp).__name__} (looked for "
        f"{', '.join(_ID_ATTRS)} on the response and on its sections); adapt "
        "benchmarks/context_bench.included_memory_ids to the assembler's response"
    )


#: The section whose records are summaries, not memories (no span of it names a memory).
SUMMARIES_SECTION = "stage_summaries"


def response_spans(
    sections: Mapping[str, str], included: Mapping[str, Sequence[str]]
) -> tuple[ContextSpan, ...]:
    """A context response's section texts as spans: each record's own lines (``who: what``
    and its continuations) with the memory it shows, the rest (headers, group lines, data
    tags, banners, summary blocks) as framing.

    The k-th record of a memory section is the k-th id of ``included[section]`` (the
    assembler reads its sections back that way); in the facts section the k-th record's turn
    is the k-th id there while each turn shows one fact (``facts_per_memory`` = 1, the
    default). Where the counts differ the records are kept unattributed (``memory_id``
    None), never guessed."""
    from pipelines.prompt.blocks import parse_records

    out: list[ContextSpan] = []
    for section, text in sections.items():
        if not text:
            continue
        records = [] if section == SUMMARIES_SECTION else parse_records(text)
        ids: list[str | None] = list(included.get(section) or [])
        if len(ids) != len(records):
            ids = [None] * len(records)
        covered = 0
        for rec, memory_id in zip(records, ids, strict=True):
            out.append(ContextSpan(section, rec.end - rec.start, memory_id, record=True))
            covered += rec.end - rec.start
        out.append(ContextSpan(section, len(text) - covered))
    return tuple(out)


def _full_window_config() -> dict[str, Any]:
    """The assembler's configuration for the benchmark: no safety margin, so (with headroom
    1.0) the whole prompt may use exactly the budget, as the flat baseline's lines do. The
    product default keeps 64 tokens of every window free for the answer."""
    try:
        from pipelines.assemble.config import AssemblyConfig
    except ImportError:
        return {}
    return {"config": AssemblyConfig(safety_margin=0)}


def assembler_variants() -> dict[str, Any]:
    """The assembler variants the harness knows, by name: assembly presets. The ablations
    leave a step out, give it other parameters, or overlay the configuration (PageRank's
    weight 0, the facts' share 0); ``report.ablate`` names what each leaves out."""
    from pipelines.assemble.service import AUTO, FLAT
    from pipelines.assemble.steps import OwnStage

    return {
        "assembler": AUTO,
        "assembler-flat": FLAT,
        "assembler-no-selection": AUTO.replacing(
            OwnStage(selection="score"),
            name="no-selection",
            description="Phase 1 in score order (no MMR).",
            ablates=("selection",),
        ),
        "assembler-no-ppr": AUTO.variant(
            "no-ppr",
            "Phase 2 by whole-space recall only (no PageRank walk).",
            overlay={"related_ppr_weight": 0.0},
            ablates=("ppr",),
        ),
        "assembler-no-summaries": AUTO.without(
            "summaries_ahead",
            "summaries",
            "flat_summaries",
            name="no-summaries",
            description="No stage summaries (Phase 3, and flat mode's for a summary question).",
            ablates=("summaries",),
        ),
        "assembler-no-facts": AUTO.variant(
            "no-facts",
            "No facts tier.",
            overlay={"facts_share": 0.0},
            ablates=("facts",),
        ),
    }


ASSEMBLER_VARIANTS: tuple[str, ...] = (
    "assembler",
    "assembler-flat",
    "assembler-no-selection",
    "assembler-no-ppr",
    "assembler-no-summaries",
    "assembler-no-facts",
)
ABLATION_VARIANTS: tuple[str, ...] = (
    "assembler-no-selection",
    "assembler-no-ppr",
    "assembler-no-summaries",
    "assembler-no-facts",
)


class AssemblerContext:
    """One assembler variant (see :data:`ASSEMBLER_VARIANTS`): ``assembler-flat`` is the
    assembler's own flat-recall mode, rendered in the same blocks as the staged mode.  The
    assembler's read-ahead pool is this object's: :meth:`close` shuts it down."""

    def __init__(
        self,
        engine: Any,
        variant: str = "assembler",
        api: tuple[Any, Any, Any] | None = None,
        overlay: dict[str, Any] | None = None,
    ) -> None:
        """``overlay``: configuration values on top of ``variant``'s (a variant of one's own,
        named ``variant`` + the values)."""
        if variant not in ASSEMBLER_VARIANTS:
            raise ValueError(f"unknown assembler variant {variant!r}: {sorted(ASSEMBLER_VARIANTS)}")
        assembler_cls, self._request_cls, presets = api or load_assembler()
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bench-assemble")
        self._recall_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bench-recall")
        extra = _full_window_config()
        if "recall_executor" in inspect.signature(assembler_cls).parameters:
            extra["recall_executor"] = self._recall_pool
        self._assembler = assembler_cls(engine, read_ahead=self._pool, **extra)
        self.name = variant
        self._preset = presets[variant]
        if overlay:
            self.name = variant + "".join(f"+{k}={v}" for k, v in sorted(overlay.items()))
            merged = {**self._preset.overlay, **overlay}
            self._preset = self._preset.variant(self.name, self.name, overlay=merged)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._recall_pool.shutdown(wait=True, cancel_futures=True)

    def assemble(self, space: str, query: ContextInput) -> AssembledContext:
        kwargs: dict[str, Any] = {
            "query": query.text,
            "context_window": query.budget_tokens,
            "headroom": 1.0,
        }
        if query.question_time is not None:
            kwargs["now"] = query.question_time
        t0 = time.perf_counter()
        resp = self._assembler.assemble(space, self._request_cls(**kwargs), self._preset)
        latency = (time.perf_counter() - t0) * 1000
        report = resp.report
        return AssembledContext(
            memory_ids=included_memory_ids(resp),
            used_tokens=int(report.total_tokens),
            latency_ms=latency,
            report={"mode": report.mode},
            spans=response_spans(resp.sections, resp.included_ids),
            prompt=resp.prompt,
        )
