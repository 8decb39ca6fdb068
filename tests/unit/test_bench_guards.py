"""Oracle-leak guards: the system under test never receives gold evidence, gold stages,
categories, answers or the unanswerable flag.

The system here is a test double (the tests are about the harness): it records everything it is
handed. The dataset's gold fields are replaced by poison values that fail the test on ANY use,
so if the collection phase of the runner touched them, the run would fail.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from benchmarks import runner
from benchmarks.format import Conversation, Dataset, Question, Session, Turn
from benchmarks.sut import (
    ContextInput,
    CorpusSession,
    CorpusTurn,
    Hit,
    IngestStats,
    QueryInput,
    Retrieval,
    context_input,
    query_input,
)


class Poison:
    """Any use of a gold field fails the test."""

    def _boom(self, *_a, **_k):
        raise AssertionError("the harness read a gold field before scoring")

    __getattr__ = _boom
    __iter__ = _boom
    __len__ = _boom
    __bool__ = _boom
    __eq__ = _boom
    __hash__ = _boom
    __contains__ = _boom
    __str__ = _boom
    __repr__ = _boom
    __format__ = _boom


T0 = datetime(2024, 1, 1, 9, tzinfo=UTC)


def dataset() -> Dataset:
    def conv(cid: str, word: str) -> Conversation:
        s1 = Session(
            "s1",
            (
                Turn("t1", "user", "Ann", f"I bought a {word} yesterday"),
                Turn("t2", "assistant", "Bob", "Nice!"),
            ),
            started_at=T0,
        )
        s2 = Session(
            "s2",
            (Turn("t3", "user", "Ann", f"The {word} broke"), Turn("t4", "assistant", "Bob", "Oh")),
            started_at=T0.replace(day=5),
        )
        qs = (
            Question("q1", f"What did Ann buy? {word}", "single-hop", ("t1",), answer=word,
                     question_time=T0.replace(day=9)),
            Question("q2", f"What happened to the {word}?", "multi-hop", ("t1", "t3"),
                     question_time=T0.replace(day=9)),
            Question("q3", "What is Ann's dog called?", "adversarial", ("t2",),
                     question_time=T0.replace(day=9), unanswerable=True),
            Question("q4", "No evidence here", "single-hop", (), question_time=T0.replace(day=9)),
        )  # fmt: skip
        return Conversation(cid, (s1, s2), qs, speakers=("Ann", "Bob"))

    return Dataset("guard", (conv("c1", "kettle"), conv("c2", "bicycle")))


def poisoned(ds: Dataset) -> Dataset:
    p = Poison()
    convs = tuple(
        dataclasses.replace(
            c,
            questions=tuple(
                dataclasses.replace(q, evidence=p, category=p, answer=p, unanswerable=p)
                for q in c.questions
            ),
        )
        for c in ds.conversations
    )
    return dataclasses.replace(ds, conversations=convs)


class RecordingSystem:
    """A fake system: keyword lookup over what it was given, recording every input."""

    def __init__(self) -> None:
        self.prepared: dict[str, list] = {}
        self.queries: list[object] = []
        self.dropped: list[str] = []

    def prepare(self, space, sessions):
        for s in sessions:
            assert type(s) is CorpusSession
            assert {f.name for f in dataclasses.fields(s)} == {"id", "turns", "started_at", "stage"}
            for t in s.turns:
                assert type(t) is CorpusTurn
        self.prepared[space] = list(sessions)
        n = sum(len(s.turns) for s in sessions)
        return IngestStats(turns=n, seconds=0.01, memories=n, sessions=len(sessions))

    def pool_size(self, space):
        sessions = self.prepared[space]
        return {"memories": sum(len(s.turns) for s in sessions), "sessions": len(sessions)}

    def recall(self, space, query, config, k, order=None):
        assert type(query) is QueryInput
        self.queries.append(query)
        words = {w.strip("?!.").lower() for w in query.text.split()}
        hits = []
        for s in self.prepared[space]:
            for t in s.turns:
                score = len(words & {w.lower() for w in t.content.split()})
                if score:
                    hits.append((score, t.id, s.id, t.content))
        hits.sort(key=lambda h: (-h[0], h[1]))
        return Retrieval(
            hits=[Hit(i, sid, content=c) for _, i, sid, c in hits[:k]],
            abstain=not hits,
            latency_ms=1.0,
            intent="semantic" if config == "a" else None,  # "b" classifies nothing
        )

    def drop(self, space):
        self.dropped.append(space)


def test_inputs_carry_only_text_and_time():
    assert {f.name for f in dataclasses.fields(QueryInput)} == {"text", "question_time"}
    assert {f.name for f in dataclasses.fields(ContextInput)} == {
        "text",
        "question_time",
        "budget_tokens",
    }
    q = dataset().conversations[0].questions[0]
    assert query_input(q) == QueryInput(q.text, q.question_time)
    assert context_input(q, 1000) == ContextInput(q.text, q.question_time, 1000)
    # slots: nothing else can be attached to the object handed to the system
    with pytest.raises((AttributeError, TypeError)):
        query_input(q).evidence = ("t1",)  # type: ignore[attr-defined]


@pytest.mark.parametrize("setting", runner.SETTINGS)
def test_collection_never_touches_gold_and_scoring_uses_it(setting):
    real = dataset()
    system = RecordingSystem()
    options = runner.RunOptions(
        configs=["a", "b"], settings=[setting], budgets=[20, 60], progress=False
    )
    run = runner.collect(system, poisoned(real), setting, options)  # would raise on gold access
    # everything the system saw: corpus sessions and (text, time) queries only
    assert all(type(q) is QueryInput for q in system.queries)
    assert len(system.queries) == 8 * 2 + 8  # 8 questions x 2 configs + the flat context fetch
    assert sorted(system.dropped) == sorted(system.prepared)  # spaces cleaned up
    seen_text = " ".join(
        [q.text for q in system.queries]
        + [t.content for ss in system.prepared.values() for s in ss for t in s.turns]
    )
    assert "kettle" in seen_text  # (corpus and questions are visible, of course)
    result = runner.score(real, run, options)
    for config in ("a", "b"):
        c = result["configs"][config]
        assert c["turn"]["n"] == 6  # 8 questions, 2 without evidence
        assert result["questions_without_evidence"] == 2
        # the fake finds q1's turn t1 at rank 1 ("bought a <word>" shares the most words)
        assert c["turn"]["by_category"]["single-hop"]["R@1"] == 1.0
        assert c["abstention"]["tp"] + c["abstention"]["fn"] == 2
    # per intent: the system's own label, over the same questions
    by_intent = {c: result["configs"][c]["turn"]["by_intent"] for c in ("a", "b")}
    assert {i: m["n"] for i, m in by_intent["a"].items()} == {"semantic": 6}
    assert {i: m["n"] for i, m in by_intent["b"].items()} == {"(none)": 6}
    assert by_intent["a"]["semantic"]["R@1"] == result["configs"]["a"]["turn"]["R@1"]
    assert result["configs"]["a"]["session"]["by_intent"]["semantic"]["n"] == 6
    assert set(result["context"]["flat"]) == {"20", "60"}


def test_scale_setting_prefixes_ids_and_labels_each_session_as_a_stage():
    system = RecordingSystem()
    options = runner.RunOptions(configs=["a"], settings=["scale"], context=False, progress=False)
    run = runner.collect(system, poisoned(dataset()), "scale", options)
    (sessions,) = system.prepared.values()
    assert [s.id for s in sessions] == ["c1:s1", "c2:s1", "c1:s2", "c2:s2"]  # time order
    assert all(s.stage == s.id for s in sessions)
    assert {t.id for s in sessions for t in s.turns} >= {"c1:t1", "c2:t1"}
    gold = runner.gold_index(dataset(), run)
    assert gold[("c2", "q2")].turns == {"c2:t1", "c2:t3"}
    assert gold[("c2", "q2")].sessions == {"c2:s1", "c2:s2"}
    result = runner.score(dataset(), run, options)
    assert result["pool"]["memories"]["total"] == 8 and result["pool"]["spaces"] == 1


def test_per_conversation_setting_sends_no_stage_labels_for_unlabelled_data():
    system = RecordingSystem()
    options = runner.RunOptions(configs=["a"], context=False, progress=False)
    runner.collect(system, poisoned(dataset()), "per-conversation", options)
    assert len(system.prepared) == 2
    for sessions in system.prepared.values():
        assert [s.id for s in sessions] == ["s1", "s2"]
        assert all(s.stage is None for s in sessions)


def test_runner_module_reads_gold_only_in_scoring():
    """Structural check: inside ``collect`` no gold attribute name appears at all."""
    import inspect

    src = inspect.getsource(runner.collect)
    for name in ("evidence", "category", "answer", "unanswerable", "gold"):
        assert f".{name}" not in src, name


def test_recall_overrides_are_validated_by_the_config_model():
    from benchmarks.mnemograph import recall_overrides
    from pipelines.recall.config import DEFAULT_RECALL_CONFIG

    assert recall_overrides([]) is None  # no overrides: the service's default
    cfg = recall_overrides(["fusion.question_turn_factor=1", "candidates.concurrent_signals=false"])
    assert cfg.fusion.question_turn_factor == 1.0 and cfg.candidates.concurrent_signals is False
    assert cfg.fusion.rrf_k == DEFAULT_RECALL_CONFIG.fusion.rrf_k  # the rest as the default
    assert recall_overrides(["rerank.fallback=none"]).rerank.fallback == "none"
    assert recall_overrides(["space_profile_ttl_s=0"]).space_profile_ttl_s == 0.0
    for bad, message in [
        (["nope"], "FIELD=VALUE"),
        (["=1"], "FIELD=VALUE"),
        (["no_such_field=1"], "unknown setting"),
        (["fusion.nope=1"], "unknown setting"),
        (["fusion.question_turn_factor=2"], "question_turn_factor"),  # bounds hold (0 < f <= 1)
        (["fusion.rrf_k=many"], "rrf_k"),
    ]:
        with pytest.raises(ValueError, match=message):
            recall_overrides(bad)
