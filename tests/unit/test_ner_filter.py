"""Which texts the entity recogniser reads (pipelines.ingest.ner_filter)."""

from __future__ import annotations

from pipelines.ingest.ner_filter import ner_needed, ner_ranges, sentence_ranges


def test_a_text_without_capitals_is_skipped() -> None:
    assert ner_needed(["that sounds great, see you tomorrow"]) == [False]


def test_the_pronoun_i_is_no_name() -> None:
    assert ner_needed(["yes I'm sure, I've done it before", "i think I'll go"]) == [False, False]


def test_an_ordinary_word_opening_a_sentence_is_no_name() -> None:
    # "Thanks" and "That" are stop words or seen in lower case in the batch.
    texts = ["Thanks! That sounds great.", "thanks a lot", "Sure. It was fun", "sure"]
    assert ner_needed(texts) == [False, False, False, False]


def test_a_word_opening_a_sentence_counts_only_when_seen_in_lower_case() -> None:
    # "Glad" is ordinary once the batch shows "glad"; "Barcelona" never appears in lower case.
    assert ner_needed(["Glad you liked it!"]) == [True]
    assert ner_needed(["Glad you liked it!", "so glad"]) == [False, False]
    assert ner_needed(["Barcelona was amazing!", "we loved it"]) == [True, False]
    assert ner_needed(["Barcelona was amazing!"]) == [True]


def test_a_capitalised_word_inside_a_sentence_is_read() -> None:
    texts = ["we went to Paris last week", "my friend Jon said hi", "i love the NBA"]
    assert ner_needed(texts) == [True, True, True]


def test_all_capitals_at_a_sentence_start_are_read() -> None:
    assert ner_needed(["NASA launched it. so cool", "nasa"]) == [True, False]


def test_sentence_starts_after_punctuation_and_new_lines() -> None:
    texts = ["ok.\nMaybe later?  Sure", '"Great" she said', "- Nope", "maybe sure great nope"]
    assert ner_needed(texts) == [False, False, False, False]
    assert ner_needed(["ok, Maybe later", "maybe"]) == [True, False]


def test_empty_input() -> None:
    assert ner_needed([]) == []
    assert ner_needed([""]) == [False]


def test_sentence_ranges_cover_the_text() -> None:
    text = "Hey Mel! how are you?  I went to Paris.\nok"
    ranges = sentence_ranges(text)
    assert [text[s:e] for s, e in ranges] == [
        "Hey Mel! ",
        "how are you?  ",
        "I went to Paris.\n",
        "ok",
    ]
    assert "".join(text[s:e] for s, e in ranges) == text
    assert sentence_ranges("") == []


def test_only_sentences_that_may_hold_a_name_are_read_adjacent_ones_together() -> None:
    text = "thanks! we saw Jon. Then Anna came. so fun. i loved the NBA game"
    [ranges] = ner_ranges([text, "then"])[:1]
    assert [text[s:e] for s, e in ranges] == [
        "we saw Jon. Then Anna came. ",
        "i loved the NBA game",
    ]
    assert ner_ranges(["thanks a lot", "Thanks! That sounds great."]) == [[], []]
