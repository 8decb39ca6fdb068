"""A space's settings: every section checked against the configuration it overrides."""

from __future__ import annotations

import pytest

from pipelines import space_settings
from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG
from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG
from pipelines.errors import InvalidInput
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG


def test_the_sections_are_the_configurations_read_per_space() -> None:
    assert space_settings.SECTIONS == ("gate", "assembly", "consolidation", "retention")
    defaults = space_settings.validate({})
    assert defaults.gate == DEFAULT_INGEST_CONFIG.gate
    assert defaults.assembly == DEFAULT_ASSEMBLY_CONFIG
    assert defaults.consolidation == DEFAULT_CONSOLIDATION_CONFIG
    assert defaults.retention == DEFAULT_CONSOLIDATION_CONFIG.retention.default_policy


def test_overrides_change_only_what_they_name() -> None:
    got = space_settings.validate(
        {"gate": {"threshold": 0.4}, "consolidation": {"merge": {"similarity": 0.97}}}
    )
    assert got.gate.threshold == 0.4 and got.gate.enabled == DEFAULT_INGEST_CONFIG.gate.enabled
    assert got.consolidation.merge.similarity == 0.97
    assert got.consolidation.merge.lexical == DEFAULT_CONSOLIDATION_CONFIG.merge.lexical


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"gate": {"threshold": "not-a-number"}}, "settings.gate.threshold"),
        ({"gate": {"unknown": 1}}, "settings.gate"),
        ({"recall": {"k": 3}}, "settings"),
        ({"assembly": {"headroom": 2.0}}, "settings.assembly.headroom"),
        (
            {"consolidation": {"decay": {"labile": {"heat_floor": 3}}}},
            "settings.consolidation.decay.labile.heat_floor",
        ),
        ({"retention": {"apply": 1}}, "settings.retention.apply"),
        ({"gate": []}, "settings.gate"),
    ],
)
def test_bad_settings_name_the_field(settings: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        space_settings.validate(settings)
    assert err.value.field == field
