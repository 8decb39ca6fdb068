"""Compact records: the best matching sentence of a memory, cut to a token cap."""

from pipelines.assemble.flat import ELLIPSIS, compact_text, query_terms
from pipelines.prompt.tokens import CharsPerToken
from pipelines.recall.request import ChunkSpan

EST = CharsPerToken()
TEXT = (
    "We spent the morning on the migration plan. "
    "The Postgres replica in Frankfurt lags by two minutes during backups. "
    "After lunch we reviewed the dashboard colours."
)


def test_a_memory_within_the_cap_stays_whole():
    assert compact_text("I adopted a cat named Miso.", (), ("miso",), 30, EST) is None


def test_the_sentence_with_most_query_terms_is_shown_marked_as_an_excerpt():
    terms = query_terms(["Postgres", "replica", "Frankfurt"])
    out = compact_text(TEXT, (), terms, 40, EST)
    assert out == (
        f"{ELLIPSIS} The Postgres replica in Frankfurt lags by two minutes during backups. "
        f"{ELLIPSIS}"
    )
    assert EST.count(out) <= 40


def test_without_matching_terms_the_most_informative_sentence_is_shown():
    out = compact_text(TEXT, (), query_terms(["holiday"]), 30, EST)
    assert out is not None and out.startswith(f"{ELLIPSIS} The Postgres replica in Frankfurt")
    assert out.endswith(ELLIPSIS) and EST.count(out) <= 30


def test_a_greeting_opening_is_not_what_a_compact_record_keeps():
    text = "Wow, Caroline! Thanks so much. I finished the pottery class in Leeds last week. "
    out = compact_text(text * 3, (), query_terms(["holiday"]), 30, EST)
    assert out is not None and "pottery class in Leeds" in out and "Wow" not in out


def test_a_long_sentence_is_cut_at_a_word_boundary_within_the_cap():
    words = " ".join(f"word{n}" for n in range(200))
    out = compact_text(words, (), query_terms(["word7"]), 20, EST)
    assert out is not None and EST.count(out) <= 20
    assert out.endswith(f" {ELLIPSIS}") and out.split(" ")[-2].startswith("word")


def test_a_long_memory_takes_its_sentence_from_the_chunk_recall_matched():
    text = "Intro about nothing. " * 40 + "The cache key includes the tenant id. " + "Tail. " * 40
    start = text.index("The cache key")
    span = ChunkSpan(id="c7", index=7, start=start - 21, end=start + 38, of=20)
    out = compact_text(text, (span,), query_terms(["cache"]), 30, EST)
    assert out is not None and "The cache key includes the tenant id." in out
    assert out.startswith(ELLIPSIS)


def test_query_terms_fold_case_and_drop_duplicates():
    assert query_terms(["Orion", "orion", " ", "Lisbon"]) == ("orion", "lisbon")
