"""The typed report: fields left unset are absent from the JSON, ``None`` fields are there,
phase reports combine a phase's facts with its counts, and the API response keeps the shape
through FastAPI's re-validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.schemas.context import ContextOut
from pipelines.assemble.report import (
    AssemblyReport,
    BudgetReport,
    ItemReport,
    PhaseCounts,
    PhasesReport,
    RelatedFacts,
    RelatedPriorPhase,
    StageReport,
    StageVote,
    SummariesFacts,
    SummariesPhase,
    Validity,
)


def _report(**changes) -> AssemblyReport:
    budget = BudgetReport(
        context_window=2000,
        headroom=0.75,
        ceiling=1500,
        shell_tokens=40,
        budget=1460,
        limit=1500,
        content_budget=1460,
        section_budget=1400,
        split=[0.6, 0.3, 0.1],
        fits=True,
    )
    fields = dict(
        validity=Validity(include_superseded=False, as_of=None),
        ablate=[],
        mode="flat",
        mode_reason="flat recall requested (flat=true)",
        density=None,
        total_tokens=120,
        tokens={"recalled": 80, "query": 5, "prompt": 120},
        budget=budget,
        phases=PhasesReport(),
        slots=[],
        retention={},
        condensers={},
        warning=None,
        fast_path=True,
        safety_iterations=0,
        timings_ms={"total": 1.5},
    )
    return AssemblyReport(**{**fields, **changes})


def test_unset_fields_are_absent_and_none_fields_present() -> None:
    out = _report().as_dict()
    assert "stage" not in out and out["density"] is None and out["warning"] is None
    assert out["validity"] == {"include_superseded": False, "as_of": None, "known_at": None}
    assert "effective_split" not in out["budget"] and out["budget"]["fits"] is True
    assert out["phases"] == {}


def test_an_inferred_stage_carries_its_vote_and_a_named_one_does_not() -> None:
    named = StageReport(id="label:orion", name="orion", how="caller", used=True, reasoning="x")
    named.confidence = 1.0
    assert named.as_dict() == {
        "id": "label:orion",
        "name": "orion",
        "how": "caller",
        "used": True,
        "reasoning": "x",
        "confidence": 1.0,
    }
    vote = StageVote(
        score=None,
        runner_up=None,
        margin=None,
        tie_broken_by_recency=False,
        fallback=True,
        evidence_hits=0,
        summaries_compared=0,
    )
    inferred = StageReport(id=None, name=None, how="none", used=False, reasoning="y", **dict(vote))
    got = inferred.as_dict()
    assert got["score"] is None and got["runner_up"] is None and got["fallback"] is True
    assert "scores" not in got and "confidence" not in got


def test_phase_reports_combine_facts_and_counts() -> None:
    facts = RelatedFacts(run=False, reason="no current stage")
    counts = PhaseCounts(selected=0, dropped=0, minimum=3, share_tokens=400, included=0)
    phase = RelatedPriorPhase(**dict(facts), **dict(counts))
    assert phase.as_dict() == {
        "run": False,
        "reason": "no current stage",
        "selected": 0,
        "dropped": 0,
        "minimum": 3,
        "share_tokens": 400,
        "included": 0,
    }
    counts.items = [ItemReport(id="m1", tokens=9, score=None, selected=True, rank=1)]
    summaries = SummariesPhase(
        **dict(SummariesFacts(run=False, reason="ablated")),
        **dict(counts),
        included_stages=[],
        section="left out: no summary selected",
    )
    out = summaries.as_dict()
    assert out["items"] == [{"id": "m1", "tokens": 9, "score": None, "selected": True, "rank": 1}]
    assert out["section"].startswith("left out") and out["included_stages"] == []


def test_the_report_refuses_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        RelatedFacts(run=True, bogus=1)  # type: ignore[call-arg]


def test_the_api_response_keeps_the_shape_through_revalidation() -> None:
    phases = PhasesReport(
        related_prior=RelatedPriorPhase(
            run=True,
            ppr=True,
            graph=None,
            selected=1,
            dropped=0,
            minimum=1,
            share_tokens=10,
            included=1,
        )
    )
    report = _report(mode="staged", phases=phases)
    out = ContextOut(sections={"recalled": ""}, prompt="p", report=report, included_ids={})
    dumped = out.model_dump(mode="json")
    assert dumped["report"] == report.as_dict()
    assert dumped["report"]["phases"]["related_prior"]["graph"] is None
    assert "ppr_runs" not in dumped["report"]["phases"]["related_prior"]
    again = ContextOut.model_validate(dumped).model_dump(mode="json")
    assert again == dumped
