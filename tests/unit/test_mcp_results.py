"""The MCP context result: what a model gets of a /context response."""

from app.mcp.results import context_result


def test_context_result_counts_what_each_memory_section_left_out():
    report = {
        "mode": "staged",
        "stage": {"id": "st-2", "name": "Launch", "how": "inferred", "used": True, "score": 0.7},
        "total_tokens": 812,
        "warning": None,
        "phases": {
            "current_stage": {"selected": 6, "dropped": 3, "included": 5},
            "related_prior": {"selected": 4, "dropped": 0, "included": 4},
            "stage_summaries": {"selected": 2, "dropped": 1, "included": 2,
                                "included_stages": ["st-1"]},
        },
    }  # fmt: skip
    ids = {"current_stage": ["a", "b", "c", "d", "e"], "related_prior": ["f", "g", "h", "i"],
           "stage_summaries": []}  # fmt: skip
    out = context_result("PROMPT", ids, report)
    assert out["left_out"] == {"current_stage": 4, "related_prior": 0}  # summaries: not memories
    assert out["left_out_total"] == 4 and out["included"] == 9
    assert out["included_ids"] == {"current_stage": ids["current_stage"],
                                   "related_prior": ids["related_prior"]}  # fmt: skip
    assert out["stage"] == {"id": "st-2", "name": "Launch", "how": "inferred", "used": True}
    assert out["summarised_stages"] == ["st-1"] and out["tokens"] == 812
    assert out["mode"] == "staged" and out["prompt"] == "PROMPT"


def test_a_flat_context_without_a_stage():
    report = {"mode": "flat", "total_tokens": 90, "warning": "budget too small",
              "phases": {"recalled": {"candidates": 7, "selected": 2, "dropped": 5,
                                      "included": 2}}}  # fmt: skip
    out = context_result("P", {"recalled": ["x", "y"]}, report)
    assert out["left_out"] == {"recalled": 5} and out["stage"] is None
    assert out["warning"] == "budget too small" and out["summarised_stages"] == []
