"""Request/response models for /v1/spaces. The request bodies are the domain's
:class:`~pipelines.spaces.NewSpace` and :class:`~pipelines.spaces.SpacePatch` with their
``settings`` documented by the configurations they override (:mod:`pipelines.space_settings`:
the schema names every section, key, type and bound the check enforces); the responses are
the models the SDK reads too (:mod:`mnemograph.schema`)."""

from __future__ import annotations

from pydantic import Field

from mnemograph.schema import Space, SpaceCounts, SpaceCreated, SpaceDeleted, SpaceList
from pipelines import spaces
from pipelines.space_settings import Settings, SettingsPatch

__all__ = [
    "NewSpace",
    "Space",
    "SpaceCounts",
    "SpaceCreated",
    "SpaceDeleted",
    "SpaceList",
    "SpacePatch",
]


class NewSpace(spaces.NewSpace):
    """A space to create. Its ``settings`` override the services' configurations section by
    section (``gate``, ``assembly``, ``consolidation``, ``retention``); each is checked
    against the configuration it overrides before the space is stored."""

    settings: Settings = Field(
        default_factory=dict, description="Per-space settings, e.g. {'gate': {'enabled': true}}."
    )


class SpacePatch(spaces.SpacePatch):
    """Changes to a space. An absent field stays as it is; ``settings`` is a JSON merge patch
    (RFC 7396) over the stored settings: a key set to ``null`` is removed (so a section that
    no longer validates can always be dropped), an object is merged key by key."""

    settings: SettingsPatch = Field(
        None, description="Merge patch over the settings, e.g. {'gate': {'enabled': false}}."
    )
