"""Stage summaries that summarise (issue 53 item 4): ingest one LoCoMo conversation into a
fresh space, build its stage schemas (the ``schemas`` job), and list every summary part that
a greeting / thank-you detector flags. The detector is this file's own short list of social
formulas, written by reading, independent of the product's
(:mod:`pipelines.ingest.salience`), so the product cannot pass by agreeing with itself.

    MNEMOGRAPH_NEO4J_USER=neo4j MNEMOGRAPH_NEO4J_PASSWORD=... \\
    .venv/bin/python -m benchmarks.summary_check --neo4j-uri bolt://127.0.0.1:7799 [--show]

Prints each flagged part (stage, field, text) and a count; exits 1 when any is flagged. The
space is deleted afterwards unless ``--keep-space``. Nothing of the dataset is written out
but what the summaries quote, on stdout.
"""

from __future__ import annotations

import argparse
import re
import sys
import uuid
from typing import Any

#: Social formulas, by reading: greetings, farewells, thanks, congratulations. A part is
#: flagged when one of them occurs as words in it (case-insensitive).
SOCIAL_FORMULAS: tuple[str, ...] = (
    r"hi",
    r"hey+",
    r"hello",
    r"hiya",
    r"howdy",
    r"good (?:morning|afternoon|evening)",
    r"long time no (?:talk|see|chat)",
    r"(?:good|great|nice) to (?:see|hear from|talk to) you",
    r"how(?:'s| is| are|'re| have) (?:it going|you(?: been| doing)?|things(?: been)?)"
    r"(?=\s*[?!.,]|$)",
    r"what'?s up",
    r"bye",
    r"goodbye",
    r"see (?:you|ya)(?: later| soon)?",
    r"talk (?:to you )?(?:soon|later)",
    r"take care",
    r"thanks?",
    r"thank you",
    r"thx",
    r"many thanks",
    r"appreciate (?:it|that|you)",
    r"congrats",
    r"congratulations",
)
_DETECTOR = re.compile(r"\b(?:" + "|".join(SOCIAL_FORMULAS) + r")\b", re.IGNORECASE)
#: The schema fields read, each a list of parts (the summary text is checked whole).
FIELDS = ("entities", "decisions", "outcomes", "open_questions", "highlights")


def flagged(text: str) -> list[str]:
    """The social formulas found in ``text``."""
    return [m.group(0) for m in _DETECTOR.finditer(text)]


def check(schemas: list[dict[str, Any]]) -> list[tuple[str, str, str, list[str]]]:
    """(stage, field, part, formulas) for every flagged part of ``schemas``."""
    out = []
    for sc in schemas:
        for field in FIELDS:
            for part in sc.get(field) or []:
                if hits := flagged(part):
                    out.append((sc["stage_id"], field, part, hits))
        # the summary text also holds the stage's name and the speakers
        if hits := flagged(sc.get("summary") or ""):
            out.append((sc["stage_id"], "summary", sc["summary"], hits))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--neo4j-uri", required=True)
    ap.add_argument("--path", default=None, help="locomo10.json (default: the usual places)")
    ap.add_argument("--conversation", type=int, default=0, help="index in the dataset")
    ap.add_argument("--show", action="store_true", help="print every summary too")
    ap.add_argument("--keep-space", action="store_true")
    args = ap.parse_args(argv)

    from benchmarks import locomo
    from benchmarks.instance import start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.sut import corpus_sessions
    from pipelines import spaces

    dataset, _ = locomo.load(args.path)
    conv = dataset.conversations[args.conversation]
    engine = start_engine(args.neo4j_uri)
    space = f"summary-check-{uuid.uuid4().hex[:8]}"
    system = MnemographSystem(engine, progress=False)
    try:
        stats = system.prepare(space, corpus_sessions(conv.sessions), schemas=True)
        stages = engine.store.read("consolidate/schema_fingerprints", space=space, stages=None)
        ids = [st["id"] for st in stages]
        rows = engine.store.read("consolidate/schema_get_many", space=space, stages=ids)
        schemas = sorted((r["schema"] for r in rows), key=lambda s: s["stage_id"])
        print(f"conversation {conv.id}: {stats.turns} turns, {len(stages)} stages, "
              f"{len(schemas)} schemas (space {space})")  # fmt: skip
        if args.show:
            for sc in schemas:
                print(f"\n[{sc['stage_id']}] {sc['summary']}")
        bad = check(schemas)
        print()
        for stage, field, part, hits in bad:
            print(f"FLAGGED {stage} {field}: {part!r} ({', '.join(hits)})")
        parts = sum(len(sc.get(f) or []) for sc in schemas for f in FIELDS)
        print(f"{len(bad)} flagged of {parts} parts and {len(schemas)} summaries")
        return 1 if bad else 0
    finally:
        if not args.keep_space:
            spaces.delete(engine.store, space)
        system.close()
        engine.close()


if __name__ == "__main__":
    sys.exit(main())
