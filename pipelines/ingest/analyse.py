"""Analysis of new memories: entity candidates, atomic facts, standing statements (pure CPU).

Runs in a worker thread (:mod:`pipelines.ingest.service`): spaCy's entity
recogniser over the batch (``nlp.pipe``, only the components entities need), the fact rules
(:mod:`pipelines.ingest.facts`) and, on user turns, standing instructions and preferences
(:mod:`pipelines.ingest.standing`). A clause kept as a standing statement is not kept again
as a generic ``preference`` or ``constraint`` fact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pipelines.ingest.config import IngestConfig
from pipelines.ingest.extractor import EntityExtractor
from pipelines.ingest.facts import extract_facts
from pipelines.ingest.items import Item
from pipelines.ingest.standing import extract_standing
from pipelines.ingest.text import normalise_for_match

__all__ = ["Analyser"]

_DUPLICATED_BY_STANDING = frozenset({"preference", "constraint"})


class Analyser:
    def __init__(self, nlp: Any, config: IngestConfig) -> None:
        self.config = config
        self.nlp = nlp
        self.extractor = EntityExtractor(nlp, config.entities)

    def analyse(self, items: Sequence[Item], check: Callable[[], None] | None = None) -> None:
        """Fill ``mentions``, ``facts`` and ``standing`` of each item (embeddings of standing
        statements are added later, :meth:`standing_texts`); ``check`` is called between
        spaCy's batches and between items (it raises to stop)."""
        if not items:
            return
        texts = [it.text for it in items]
        speakers = [it.speaker for it in items]
        found = self.extractor.extract_batch(texts, check, speakers)
        for it, mentions in zip(items, found, strict=True):
            it.mentions = mentions
        for it in items:
            if check is not None:
                check()
            it.standing = self._standing(it)
            it.facts = self._facts(it, {normalise_for_match(s["text"]) for s in it.standing})

    def _standing(self, it: Item) -> list[dict[str, Any]]:
        cfg = self.config.facts
        if not (cfg.enabled and cfg.standing):
            return []
        return [
            {
                "id": f"{it.id}#s{j}",
                "category": s.category,
                "text": s.text,
                "speaker": it.speaker or it.role,
                "role": it.role.casefold(),
                "confidence": s.confidence,
                "rule": s.rule,
                "source_id": it.id,
                "change": s.change,
                "negated": s.negated,
                "condition": s.condition,
                "embedding": None,
                "condition_embedding": None,
            }
            for j, s in enumerate(extract_standing(it.text, it.role, cfg.user_roles, self.nlp))
        ]

    def _facts(self, it: Item, standing: set[str]) -> list[dict[str, Any]]:
        facts = extract_facts(
            it.text,
            it.role,
            it.speaker,
            config=self.config.facts,
            entities=[m.name for m in it.mentions],
            nlp=self.nlp,
            when=it.event_time,
        )
        rows = []
        for j, f in enumerate(facts):
            unit = normalise_for_match(f.text)
            if f.category in _DUPLICATED_BY_STANDING and any(
                unit in s or s in unit for s in standing
            ):
                continue
            rows.append(
                {
                    "id": f"{it.id}#f{j}",
                    "category": f.category,
                    "text": f.text,
                    "speaker": f.speaker,
                    "role": f.role,
                    "confidence": f.confidence,
                    "rule": f.rule,
                    "source_id": it.id,
                    "embedding": None,
                }
            )
        return rows

    @staticmethod
    def standing_texts(items: Sequence[Item]) -> list[dict[str, Any]]:
        """The standing statements of the items, to be embedded (in item order)."""
        return [s for it in items for s in it.standing]

    def fact_rows(self, items: Sequence[Item]) -> list[dict[str, Any]]:
        """The facts of the items whose category is embedded (``FactConfig.embedded_categories``),
        in item order."""
        embedded = self.config.facts.embedded_categories
        return [f for it in items for f in it.facts if f["category"] in embedded]
