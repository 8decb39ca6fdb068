"""A synthetic, topically dense conversation corpus for the speed benchmark.

Deterministic for a seed: the same seed always yields the same stream of sessions, and a corpus
of N memories is the first N turns of that stream (so a space can be filled to 1K, then 10K,
then 100K). It is NOT LoCoMo text: every sentence comes from the templates and word lists below.

What makes it realistic enough for latency: many speakers (60 people, recurring in pairs), 24
topics with their own vocabulary, recurring named entities (people, organisations, places,
products) that spaCy picks up, so the entity graph and co-occurrence edges grow as in real use,
dates that advance over about three years, and topical density (hundreds of sessions per topic
that share words and entities, so the full-text and vector candidates are crowded). Sessions
carry an explicit stage label ``<topic>-<year>q<quarter>`` (a work segment), about 24 × 12
stages at 100K memories.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from benchmarks.sut import CorpusSession, CorpusTurn


def _l(text: str) -> list[str]:
    return text.split("|")


FIRST = _l(
    "Amara|Bruno|Chen|Dalia|Emeka|Farah|Gustavo|Hana|Idris|Jonas|Keiko|Lars|Maya|Nikhil|Olga|"
    "Pablo|Quinn|Rosa|Samir|Tamsin|Umar|Vera|Wendell|Ximena|Yusuf|Zofia|Aiden|Beatriz|Cyrus|"
    "Delphine"
)
LAST = _l("Okafor|Lindqvist|Moreau|Tanaka|Alvarez|Novak|Haddad|Brennan|Castillo|Ivanova")
PEOPLE = [f"{f} {LAST[(i * 7) % len(LAST)]}" for i, f in enumerate(FIRST)] + [
    f"{f} {LAST[(i * 3 + 1) % len(LAST)]}" for i, f in enumerate(FIRST)
]
ORGS = _l(
    "Northwind Labs|Bluefin Analytics|Harbor & Pike|Cedar Health|Orion Logistics|Meridian Bank|"
    "Quarry Studio|Pinecrest School|Atlas Robotics|Juniper Foods|Silverline Media|"
    "Redwood Council|Tidewater Clinic|Kestrel Airlines|Lumen Energy"
)
PLACES = _l(
    "Lisbon|Osaka|Nairobi|Toronto|Valparaíso|Kraków|Hanoi|Edinburgh|Marseille|Austin|Tbilisi|"
    "Cape Town|Reykjavík|Montreal|Porto|Seoul|Bergen|Oaxaca|Melbourne|Ljubljana"
)
PRODUCTS = _l(
    "Postgres|Kubernetes|Garmin Forerunner|Fujifilm X100|Notion|Figma|Airtable|Roland FP-30|"
    "Dyson V15|Kindle Paperwhite|Trello|Grafana|Terraform|Lightroom|Strava|Duolingo"
)
WEEKDAYS = _l("Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday")
MONTHS = _l("January|February|March|April|May|June|July|August|September|October|November|December")

TOPICS: dict[str, dict[str, list[str]]] = {
    "kitchen-renovation": {
        "things": _l(
            "countertops|cabinet doors|tile samples|plumbing quote|range hood|floor plan|"
            "electrician visit|permit application|backsplash|dishwasher"
        ),
        "actions": _l(
            "measure the window|call the contractor|order the grout|"
            "book the inspection|pick a paint colour"
        ),
    },
    "marathon-training": {
        "things": _l(
            "long run|interval session|taper week|race bib|recovery plan|knee brace|"
            "hydration belt|tempo pace|half marathon|training log"
        ),
        "actions": _l(
            "foam roll|register for the race|buy new shoes|stretch after runs|sleep earlier"
        ),
    },
    "data-platform": {
        "things": _l(
            "ingestion job|schema migration|nightly backfill|dashboard latency|"
            "warehouse costs|on-call rotation|data contract|retention policy|query planner|"
            "staging cluster"
        ),
        "actions": _l(
            "page the on-call|write the postmortem|rotate the credentials|"
            "review the pull request|tag the release"
        ),
    },
    "wedding-planning": {
        "things": _l(
            "guest list|venue deposit|catering tasting|seating chart|florist|"
            "invitations|rehearsal dinner|photographer|playlist|dress fitting"
        ),
        "actions": _l(
            "send the invitations|confirm the caterer|pay the deposit|"
            "book the photographer|finalise the vows"
        ),
    },
    "gardening": {
        "things": _l(
            "tomato seedlings|raised bed|compost heap|drip irrigation|pruning shears|"
            "rose bushes|herb spiral|greenhouse|mulch|apple tree"
        ),
        "actions": _l(
            "water the seedlings|turn the compost|order bulbs|prune the roses|fix the irrigation"
        ),
    },
    "job-search": {
        "things": _l(
            "cover letter|portfolio|recruiter call|take-home task|salary range|"
            "reference check|offer letter|onsite interview|LinkedIn profile|notice period"
        ),
        "actions": _l(
            "update the resume|follow up with the recruiter|prepare the presentation|"
            "negotiate the offer|ask for references"
        ),
    },
    "photography": {
        "things": _l(
            "street photos|prime lens|darkroom session|photo walk|exhibition prints|"
            "film rolls|tripod|editing preset|golden hour shoot|portfolio review"
        ),
        "actions": _l(
            "back up the photos|develop the film|clean the sensor|print the series|"
            "submit to the contest"
        ),
    },
    "cooking": {
        "things": _l(
            "sourdough starter|ramen broth|spice rack|dinner party menu|cast iron pan|"
            "fermentation jar|knife skills class|tasting menu|pasta dough|curry paste"
        ),
        "actions": _l(
            "feed the starter|buy fresh basil|prep the stock|sharpen the knives|"
            "book the cooking class"
        ),
    },
    "japan-trip": {
        "things": _l(
            "rail pass|ryokan booking|temple visit|itinerary|packing list|"
            "travel insurance|cherry blossom forecast|visa paperwork|flight change|onsen day"
        ),
        "actions": _l(
            "book the ryokan|activate the rail pass|exchange money|check the forecast|"
            "print the tickets"
        ),
    },
    "fundraising": {
        "things": _l(
            "pitch deck|term sheet|investor update|cap table|seed round|due diligence|"
            "runway model|board meeting|advisor equity|demo day"
        ),
        "actions": _l(
            "send the investor update|revise the deck|schedule the board meeting|"
            "model the runway|call the lawyer"
        ),
    },
    "piano-lessons": {
        "things": _l(
            "Chopin nocturne|scales practice|recital|sight reading|metronome|"
            "piano teacher|pedal technique|theory exam|duet piece|practice schedule"
        ),
        "actions": _l(
            "practise the left hand|book the recital hall|tune the piano|"
            "record the piece|learn the arpeggios"
        ),
    },
    "dog-adoption": {
        "things": _l(
            "shelter visit|puppy training|vet appointment|dog crate|leash training|"
            "adoption form|microchip|dog walker|chew toys|obedience class"
        ),
        "actions": _l(
            "fill in the adoption form|buy dog food|book the vet|puppy-proof the flat|"
            "find a dog walker"
        ),
    },
    "book-club": {
        "things": _l(
            "reading list|discussion questions|library hold|author talk|audiobook|"
            "book swap|chapter notes|meeting snacks|translated novel|poetry night"
        ),
        "actions": _l(
            "pick the next book|send the discussion questions|reserve the room|"
            "finish the last chapter|invite the author"
        ),
    },
    "car-repair": {
        "things": _l(
            "brake pads|winter tyres|oil change|check engine light|timing belt|"
            "insurance claim|mechanic quote|battery|windscreen chip|roadworthy test"
        ),
        "actions": _l(
            "book the garage|swap the tyres|call the insurer|top up the coolant|"
            "renew the registration"
        ),
    },
    "moving-house": {
        "things": _l(
            "moving boxes|lease agreement|removal van|utility transfer|mortgage offer|"
            "school enrolment|storage unit|address change|house survey|deposit refund"
        ),
        "actions": _l(
            "pack the books|book the van|redirect the mail|read the meters|sign the lease"
        ),
    },
    "tax-return": {
        "things": _l(
            "receipts folder|deduction list|accountant meeting|quarterly estimate|"
            "pension contribution|invoice backlog|expense report|filing deadline|refund|"
            "tax software"
        ),
        "actions": _l(
            "scan the receipts|email the accountant|pay the estimate|file the return|"
            "reconcile the invoices"
        ),
    },
    "volunteering": {
        "things": _l(
            "food bank shift|fundraising gala|tutoring session|beach clean-up|"
            "volunteer roster|donation drive|community garden|charity run|board minutes|"
            "shelter kitchen"
        ),
        "actions": _l(
            "sign up for a shift|print the flyers|collect the donations|"
            "train the new volunteers|book the hall"
        ),
    },
    "chess-club": {
        "things": _l(
            "opening repertoire|blitz tournament|endgame study|rating|club league|"
            "Sicilian defence|time control|simul event|chess clock|puzzle streak"
        ),
        "actions": _l(
            "review the game|register for the tournament|study endgames|"
            "prepare the opening|analyse the blunder"
        ),
    },
    "health-checkup": {
        "things": _l(
            "blood test|physiotherapy|dentist appointment|sleep tracker|vitamin D|"
            "eye exam|allergy test|cholesterol result|back pain|meal plan"
        ),
        "actions": _l(
            "book the blood test|pick up the prescription|do the stretches|"
            "cut down on coffee|schedule the dentist"
        ),
    },
    "film-festival": {
        "things": _l(
            "screening schedule|short film|festival pass|director Q&A|jury notes|"
            "subtitles|premiere tickets|documentary|press badge|closing night"
        ),
        "actions": _l(
            "buy the festival pass|reserve the screening|write the review|"
            "meet the director|submit the short"
        ),
    },
    "mobile-app": {
        "things": _l(
            "release build|crash report|onboarding flow|push notifications|"
            "app store review|beta testers|dark mode|offline sync|analytics event|"
            "login bug"
        ),
        "actions": _l(
            "ship the hotfix|update the screenshots|triage the crashes|"
            "invite beta testers|bump the version"
        ),
    },
    "language-learning": {
        "things": _l(
            "Portuguese lessons|vocabulary deck|conversation partner|grammar drill|"
            "immersion weekend|listening practice|exam registration|tutor|podcast|"
            "irregular verbs"
        ),
        "actions": _l(
            "review the flashcards|book the tutor|register for the exam|"
            "watch a film without subtitles|practise the verbs"
        ),
    },
    "home-office": {
        "things": _l(
            "standing desk|monitor arm|noise-cancelling headphones|ergonomic chair|"
            "webcam|cable tray|desk lamp|bookshelf|router upgrade|plant corner"
        ),
        "actions": _l(
            "assemble the desk|return the chair|upgrade the router|tidy the cables|order the lamp"
        ),
    },
    "family-reunion": {
        "things": _l(
            "family tree|reunion venue|old photos|group chat|potluck list|"
            "grandma's recipes|travel plans|name tags|slideshow|camping spot"
        ),
        "actions": _l(
            "scan the old photos|book the venue|call the cousins|plan the slideshow|"
            "collect the recipes"
        ),
    },
}

ADJ = _l(
    "great|disappointing|surprisingly cheap|too expensive|confusing|excellent|late again|"
    "better than expected|a bit rushed|perfect"
)
FEEL = _l("excited|nervous|relieved|tired|curious|worried|proud|annoyed|hopeful|happy")

TEMPLATES = (
    "I finally sorted out the {thing} yesterday; it took most of {weekday}.",
    "Did you hear back from {person} at {org} about the {thing}?",
    "We're meeting {person} in {place} on {date} to go over the {thing} and the {thing2}.",
    "I think the {thing} has to come before the {thing2}, otherwise we'll redo everything.",
    "The budget for the {thing} is now around ${amount}, a bit over what we planned.",
    "{person} recommended {product} for the {thing}. Have you tried it?",
    "Remember to {action} before {date}.",
    "Last {weekday} I spent {hours} hours on the {thing} with {person}.",
    "The {thing} in {place} was {adj}, but the {thing2} was {adj2}.",
    "Decision: we go with the {thing2} and postpone the {thing} until {month}.",
    "Honestly I'm {feel} about the {thing}. {person} thinks it's fine though.",
    "Can you {action}? I keep forgetting and {person} asked twice already.",
    "Quick update: the {thing} is done, the {thing2} still needs work.",
    "{person} from {org} says the {thing} will be ready by {date}.",
    "Why did the {thing} cost ${amount}? That seems like a lot.",
    "I moved the {thing} to {weekday} because of the trip to {place}.",
    "Let's not forget the {thing} — last time in {place} we missed it.",
    "Do you still have the notes on the {thing} from {month}?",
    "I'd rather use {product} than keep doing the {thing} by hand.",
    "Great news, {person} agreed to help with the {thing2}!",
)
QUESTION_TEMPLATES = (
    "What did {person} recommend for the {thing}?",
    "When are we meeting {person} in {place}?",
    "How much is the budget for the {thing}?",
    "What did we decide about the {thing}?",
    "What does {person} think about the {thing}?",
    "Who at {org} was asked about the {thing}?",
    "What happened with the {thing} in {place}?",
    "When is the {thing} going to be ready?",
)


@dataclass(frozen=True)
class SynthConfig:
    seed: int = 7
    start: datetime = datetime(2023, 1, 2, 9, 0, tzinfo=UTC)
    min_turns: int = 8
    max_turns: int = 28
    off_topic_share: float = 0.2


def _products(topic: str) -> list[str]:
    """Three products per topic (a topic keeps mentioning the same tools)."""
    h = list(TOPICS).index(topic) * 2
    return [PRODUCTS[(h + j) % len(PRODUCTS)] for j in range(3)]


def _fill(template: str, rng: random.Random, topic: str) -> str:
    vocab = TOPICS[topic]
    things = rng.sample(vocab["things"], 2)
    values = {
        "thing": things[0],
        "thing2": things[1],
        "action": rng.choice(vocab["actions"]),
        "person": rng.choice(PEOPLE),
        "org": rng.choice(ORGS),
        "place": rng.choice(PLACES),
        "product": rng.choice(_products(topic)),
        "weekday": rng.choice(WEEKDAYS),
        "month": rng.choice(MONTHS),
        "date": f"{rng.randint(1, 28)} {rng.choice(MONTHS)}",
        "amount": f"{rng.randrange(50, 20000, 50):,}",
        "hours": str(rng.randint(1, 9)),
        "adj": rng.choice(ADJ),
        "adj2": rng.choice(ADJ),
        "feel": rng.choice(FEEL),
    }
    text = template.format(**values)
    return text[0].upper() + text[1:]


def sessions(config: SynthConfig = SynthConfig()) -> Iterator[CorpusSession]:
    """An endless, deterministic stream of sessions."""
    rng = random.Random(config.seed)
    topics = list(TOPICS)
    pairs = [(PEOPLE[i], PEOPLE[(i * 5 + 3) % len(PEOPLE)]) for i in range(len(PEOPLE))]
    t = config.start
    n = 0
    while True:
        wander = rng.random() < 0.3
        topic = topics[rng.randrange(len(topics))] if wander else topics[n % len(topics)]
        a, b = pairs[rng.randrange(len(pairs))]
        turns = []
        tt = t
        for i in range(rng.randint(config.min_turns, config.max_turns)):
            tp = rng.choice(topics) if rng.random() < config.off_topic_share else topic
            speaker, role = (a, "user") if i % 2 == 0 else (b, "assistant")
            text = _fill(rng.choice(TEMPLATES), rng, tp)
            turns.append(CorpusTurn(f"s{n}-t{i}", role, speaker, text, tt))
            tt += timedelta(seconds=rng.randint(20, 240))
        quarter = (t.month - 1) // 3 + 1
        yield CorpusSession(
            id=f"s{n}", turns=tuple(turns), started_at=t, stage=f"{topic}-{t.year}q{quarter}"
        )
        n += 1
        t += timedelta(minutes=rng.randint(30, 600))


def take(count: int, config: SynthConfig = SynthConfig(), skip: int = 0) -> list[CorpusSession]:
    """Sessions covering turns ``skip`` .. ``count`` of the stream (sessions are cut to fit)."""
    out: list[CorpusSession] = []
    seen = 0
    for s in sessions(config):
        lo, hi = seen, seen + len(s.turns)
        seen = hi
        if hi <= skip:
            continue
        a, b = max(0, skip - lo), min(len(s.turns), count - lo)
        if a < b:
            part = s.turns[a:b]
            out.append(
                CorpusSession(
                    id=s.id if a == 0 else f"{s.id}~{a}",
                    turns=part,
                    started_at=part[0].time,
                    stage=s.stage,
                )
            )
        if seen >= count:
            break
    return out


def queries(n: int = 40, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    topics = list(TOPICS)
    return [_fill(rng.choice(QUESTION_TEMPLATES), rng, rng.choice(topics)) for _ in range(n)]
