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

import copy
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler, create_model
from pydantic.config import JsonDict
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.consolidate.config import (
    DEFAULT_CONSOLIDATION_CONFIG,
    ConsolidationConfig,
    RetentionPolicy,
)
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, GateConfig
from pipelines.overrides import INT_MAX, INT_MIN, merge_overrides


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


def _patch_model(model: type[BaseModel], made: dict[type[BaseModel], type[BaseModel]]) -> Any:
    """``model`` as a merge patch documents it: every field optional and nullable (``null``
    removes the key), nested models patched the same way, constraints kept."""
    if model not in made:
        fields: dict[str, Any] = {}
        for name, info in model.model_fields.items():
            kind: Any = info.annotation
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                kind = _patch_model(kind, made)
            field = copy.copy(info)
            field.default = None
            if field.json_schema_extra is not None:
                field.json_schema_extra = _on_value(field.json_schema_extra)
            fields[name] = (kind | None, field)
        made[model] = create_model(
            f"{model.__name__}Patch", __config__=model.model_config, **fields
        )
    return made[model]


def _on_value(extra: JsonDict | Callable[[JsonDict], None]) -> Callable[[JsonDict], None]:
    """A field's schema extra applied to its value's branch of ``anyOf [value, null]``."""

    def apply(schema: JsonDict) -> None:
        branches = schema.get("anyOf")
        targets = (
            [b for b in branches if isinstance(b, dict) and b.get("type") != "null"]
            if (isinstance(branches, list))
            else [schema]
        )
        for target in targets:
            if callable(extra):
                extra(target)
            else:
                target.update(extra)
            _null_entries(target)

    return apply


def _null_entries(schema: JsonDict) -> None:
    """A merge patch's object of entries (``category_offsets``' object form) takes ``null``
    for an entry too: it removes that entry."""
    branches = schema.get("anyOf")
    for branch in branches if isinstance(branches, list) else [schema]:
        if not isinstance(branch, dict) or branch.get("type") != "object":
            continue
        entry = branch.get("additionalProperties")
        if isinstance(entry, dict):
            branch["additionalProperties"] = {"anyOf": [entry, {"type": "null"}]}


SpaceSettingsPatch: type[BaseModel] = _patch_model(SpaceSettings, {})


class DocumentedBy:
    """Marks a raw ``settings`` field: validated by :func:`validate` (strict, field by field
    over the defaults), documented by ``model``'s JSON schema with nothing required (an
    override names what it changes) and every integer bounded to +-2**53 (as
    :func:`~pipelines.overrides.merge_overrides` reads them)."""

    def __init__(self, model: type[BaseModel], nullable: bool = False) -> None:
        self.model = model
        self.nullable = nullable

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(self.model.__pydantic_core_schema__)
        _bound_integers(out, handler, set())
        return {"anyOf": [out, {"type": "null"}]} if self.nullable else out


def _bound_integers(schema: Any, handler: GetJsonSchemaHandler, seen: set[str]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _bound_integers(item, handler, seen)
        return
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if ref not in seen:
            seen.add(ref)
            _bound_integers(handler.resolve_ref_schema({"$ref": ref}), handler, seen)
        return
    schema.pop("required", None)  # an override names only what it changes
    if schema.get("type") == "integer":
        schema.setdefault("minimum", INT_MIN)
        schema.setdefault("maximum", INT_MAX)
    for value in schema.values():
        _bound_integers(value, handler, seen)


#: A new space's ``settings``: overrides by section, documented by :class:`SpaceSettings`.
Settings = Annotated[dict[str, Any], DocumentedBy(SpaceSettings)]
#: A PATCH's ``settings``: a merge patch over the stored ones (``null`` removes a key).
SettingsPatch = Annotated[dict[str, Any] | None, DocumentedBy(SpaceSettingsPatch, True)]
