"""Claim rules of automatic supersession: what counts, and (mostly) what must not."""

import pytest

from pipelines.consolidate.claims import claim_coverage, extract_claims, same_value


def one(text):
    claims = extract_claims(text)
    assert len(claims) == 1, (text, claims)
    return claims[0]


@pytest.mark.parametrize(
    ("text", "attribute", "value", "positive"),
    [
        ("I live in Paris.", "i:residence", "paris", True),
        ("Guess what, I moved to Berlin last month, loving it!", "i:residence", "berlin", True),
        ("Now I live in Berlin", "i:residence", "berlin", True),
        ("I'm not living in Paris anymore.", "i:residence", "paris", False),
        ("We're based in London.", "we:residence", "london", True),
        ("My favourite colour is blue.", "i:favourite colour", "blue", True),
        ("My favorite color is green now.", "i:favourite colour", "green", True),
        ("I work at Google.", "i:employer", "google", True),
        ("I started working at Microsoft in May.", "i:employer", "microsoft", True),
        ("I work as a nurse at the hospital", "i:occupation", "nurse", True),
        ("I'm 30 years old", "i:age", "30", True),
        ("I just turned 31!", "i:age", "31", True),
        ("I'm not married.", "i:relationship status", "married", False),
        ("We got engaged!", "we:relationship status", "engaged", True),
        ("My boss is Sarah.", "i:boss", "sarah", True),
        ("my phone number is 555-1234", "i:phone number", "555-1234", True),
        ("I moved to Berlin in May 2023 because of work.", "i:residence", "berlin", True),
        ("I live in New York City with my wife and kids.", "i:residence", "new york city", True),
    ],
)
def test_claims_found(text, attribute, value, positive):
    c = one(text)
    assert (c.attribute, c.value, c.positive) == (attribute, value, positive)


def test_attitudes_carry_polarity():
    like = one("I like sushi.")
    hate = one("I hate sushi.")
    dont = one("I don't like sushi anymore.")
    fan = one("I'm a big fan of jazz.")
    assert like.attribute == hate.attribute == dont.attribute == "i:attitude:sushi"
    assert like.positive and not hate.positive and not dont.positive and dont.update
    assert fan.attribute == "i:attitude:jazz" and fan.positive


@pytest.mark.parametrize(
    "text",
    [
        "I moved to a bigger flat.",  # not a proper name
        "My boss is great.",  # a person attribute needs a name
        "I used to live in Paris.",  # habitual past
        "Maybe I will move to Rome.",  # hedged / future
        "If I lived in Paris I would walk more.",  # conditional
        "I live in Paris too.",  # additive
        "I also work at Google.",  # additive
        "Do you live in Paris?",  # question
        "She lives in Paris.",  # not first person
        "My sister lives in Paris.",  # someone else's
        "I think I live in Paris.",  # not a clause-initial claim
        "I love you",  # pronoun object
        "I love it when it rains",
        "The meeting is at 3pm.",
        "My point is that we should wait.",  # not a single-valued attribute
        "I went to the LGBTQ support group yesterday and it was so powerful.",
        "I joined a gym.",
        "I'm going to move to Berlin.",
    ],
)
def test_no_claim(text):
    assert extract_claims(text) == []


def test_one_claim_per_attribute_last_wins():
    claims = extract_claims("I live in Paris. Actually no, I live in Lyon.")
    assert [(c.attribute, c.value) for c in claims] == [("i:residence", "lyon")]


def test_same_value():
    paris = one("I live in Paris.")
    assert same_value(paris, one("I live in Paris, France."))  # containment
    assert not same_value(paris, one("I moved to Berlin."))
    assert not same_value(paris, one("I don't live in Paris anymore."))  # polarity


def test_coverage():
    text = "I live in Paris."
    assert claim_coverage(text, extract_claims(text)) == 1.0
    long = "I live in Paris. The weather was awful all week and the trains were late again."
    assert claim_coverage(long, extract_claims(long)) < 0.5


def test_candidate_pattern_is_a_superset_of_the_rules():
    import re

    from pipelines.consolidate.claims import might_claim
    from pipelines.language.claims import CANDIDATE_PATTERN

    texts = [
        "I live in Paris.",
        "Guess what, I moved to Berlin last month!",
        "My favorite color is green now.",
        "I'm 30 years old",
        "I just turned 31!",
        "We got engaged!",
        "I don't like sushi anymore.",
        "I'm a big fan of jazz.",
        "I got a job at Sony.",
        "I was hired by Sony.",
    ]
    for text in texts:
        assert extract_claims(text), text
        assert might_claim(text) and re.fullmatch(CANDIDATE_PATTERN, text), text
    assert not might_claim("The weather is nice today.")
