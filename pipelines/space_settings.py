"""A space's ``settings``: per-space overrides of the services' configurations, one section
per configuration, checked when the space is created.

Sections (each read through :func:`pipelines.overrides.merge_overrides`, field by field):

* ``gate`` - the write path's encoding gate (:class:`~pipelines.ingest.config.GateConfig`);
* ``assembly`` - context assembly (:class:`~pipelines.assemble.config.AssemblyConfig`);
* ``consolidation`` - the consolidation jobs, by job
  (:class:`~pipelines.consolidate.config.ConsolidationConfig`);
* ``retention`` - the space's retention policy
  (:class:`~pipelines.consolidate.config.RetentionPolicy`).

An unknown section, an unknown key or a value a configuration refuses is an
:class:`~pipelines.errors.InvalidInput` naming the field (``settings.gate.threshold``), so a
typo is refused when the space is created rather than found when a request reads it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.consolidate.config import (
    DEFAULT_CONSOLIDATION_CONFIG,
    ConsolidationConfig,
    RetentionPolicy,
)
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, GateConfig
from pipelines.overrides import merge_overrides


class SpaceSettings(BaseModel):
    """Every section a space may override, with the services' defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gate: GateConfig = DEFAULT_INGEST_CONFIG.gate
    assembly: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG
    consolidation: ConsolidationConfig = DEFAULT_CONSOLIDATION_CONFIG
    retention: RetentionPolicy = DEFAULT_CONSOLIDATION_CONFIG.retention.default_policy


SECTIONS: tuple[str, ...] = tuple(SpaceSettings.model_fields)
_DEFAULTS = SpaceSettings()


def validate(settings: dict[str, Any]) -> SpaceSettings:
    """``settings`` applied over the defaults, every section validated by its configuration.

    Raises:
        InvalidInput: an unknown section (field ``settings``) or a bad value in one (the
            field's path, e.g. ``settings.consolidation.merge.similarity``).
    """
    return merge_overrides(_DEFAULTS, settings, "settings")
