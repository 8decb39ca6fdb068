"""Model loading, all offline: embeddings, spaCy, the optional FlashRank cross-encoder.

Every loader returns a :class:`ModelStatus` so start-up can report each model's readiness.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelStatus:
    name: str
    ready: bool
    detail: str
    load_seconds: float = 0.0
    required: bool = True

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "ready": self.ready,
            "required": self.required,
            "detail": self.detail,
            "load_seconds": round(self.load_seconds, 3),
        }
