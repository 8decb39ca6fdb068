"""The abstention calibration's pure parts: scoring collected features under thresholds and
choosing a grid point per dataset and jointly."""

from benchmarks.abstention import best, calibrate, grid_points, score


def _row(dataset: str, unanswerable: bool, sim: float, speaker: float | None = None) -> dict:
    return {
        "dataset": dataset,
        "unanswerable": unanswerable,
        "inputs": {
            "top_vector_similarity": sim,
            "top_fulltext_score": 3.0,
            "keyword_coverage": 1.0,
            "candidate_count": 20,
            "signal_agreement": 0.5,
            "speaker_match": speaker,
        },
    }


ROWS = [
    _row("a", True, 0.25),
    _row("a", False, 0.55),
    _row("a", False, 0.5),
    _row("b", True, 0.45, speaker=0.1),
    _row("b", False, 0.45, speaker=0.9),
]


def test_score_replays_the_decision_per_dataset():
    never = score(ROWS, {"min_evidence": 0.0, "min_speaker_match": 0.0})
    assert never["a"]["tp"] == 0 and never["a"]["fp"] == 0
    strict = score(ROWS, {"min_evidence": 0.9, "min_speaker_match": 0.5})
    # b's unanswerable question: its speaker said too little of the best matches.
    assert strict["b"]["tp"] == 1
    # a: the evidence of every question is under 0.9, so everything abstains.
    assert strict["a"]["tp"] == 1 and strict["a"]["fp"] == 2


def test_grid_points_keep_strong_above_min_similarity():
    points = list(grid_points())
    assert points
    assert all(p["strong_vector_similarity"] > p["min_vector_similarity"] for p in points)


def test_best_respects_the_false_abstention_cap():
    table = [
        ({"x": 1.0}, {"a": {"f1": 0.9, "abstain_rate_answerable": 0.5}}),
        ({"x": 2.0}, {"a": {"f1": 0.4, "abstain_rate_answerable": 0.05}}),
        ({"x": 3.0}, {"a": {"f1": 0.4, "abstain_rate_answerable": 0.01}}),
    ]
    assert best(table, ["a"], 0.1) == table[2]
    assert best(table, ["a"], 1.0) == table[0]
    assert best(table, ["a"], 0.0) is None


def test_calibrate_reports_defaults_joint_and_two_fold():
    report = calibrate(ROWS, max_false_rate=1.0)
    assert set(report["defaults"]) == {"a", "b"}
    assert report["joint"] is not None
    assert set(report["two_fold"]) == {"a", "b"}
    joint = report["joint"]["metrics"]
    # The joint choice is at least as good, on mean F1, as the defaults.
    mean = lambda m: (m["a"]["f1"] or 0) + (m["b"]["f1"] or 0)  # noqa: E731
    assert mean(joint) >= mean(report["defaults"])


def test_kept_spaces_reads_the_per_conversation_setting_or_the_only_one() -> None:
    from benchmarks.signals import kept_spaces

    def unit(space: str, *convs: str) -> dict:
        return {"space": space, "conversations": list(convs)}

    both = {
        "results": {
            "per-conversation": {"ingest": [unit("s0", "c0"), unit("s1", "c1")]},
            "scale": {"ingest": [unit("all", "c0", "c1")]},
        }
    }
    assert kept_spaces(both) == {"c0": "s0", "c1": "s1"}
    assert kept_spaces(both, "scale") == {"c0": "all", "c1": "all"}
    scale_only = {"results": {"scale": both["results"]["scale"]}}
    assert kept_spaces(scale_only) == {"c0": "all", "c1": "all"}
