"""Per-space (or per-request) overrides of a frozen configuration model, validated once.

Every configuration in ``pipelines`` is a frozen pydantic model with defaults. A space may
override any of its fields through its ``settings`` (``{"gate": {"threshold": 0.4}}``): this
module is the one place such overrides are merged, so an unknown key or a value the model
refuses is always an :class:`~pipelines.errors.InvalidInput` naming the exact field
(``settings.gate.threshold``), never a silently coerced or ignored setting.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from pipelines.errors import InvalidInput

M = TypeVar("M", bound=BaseModel)
#: Integers an override may hold: what Neo4j stores, a Cypher parameter carries and a float
#: (the schema's bounds, JavaScript's numbers) represents exactly.
INT_MIN, INT_MAX = -(2**53), 2**53


def merge_overrides(base: M, overrides: object, field: str) -> M:
    """``base`` with ``overrides`` applied and validated by ``base``'s own model.

    Nested models take nested mappings (only the keys given change). ``field`` is where the
    overrides came from (``"settings.gate"``); errors name ``field`` plus the path inside it.

    Raises:
        InvalidInput: ``overrides`` is not a mapping, names a field the model does not have,
            or gives a value the model refuses (types are strict: ``"yes"`` is not a bool).
    """
    if overrides is None:
        return base
    if not isinstance(overrides, Mapping):
        raise InvalidInput("must be an object", field=field)
    if not overrides:
        return base
    data = _merged(base.model_dump(mode="json"), type(base), overrides, field)
    try:
        # JSON mode, strict: arrays may fill tuples and integers floats, but no string
        # becomes a bool or a number ("yes please" is not ``true``).
        return type(base).model_validate_json(json.dumps(data), strict=True)
    except (ValidationError, TypeError, ValueError) as exc:
        if not isinstance(exc, ValidationError):
            raise InvalidInput(f"not JSON data: {exc}", field=field) from exc
        err = exc.errors()[0]
        path = ".".join(str(p) for p in err.get("loc", ()))
        raise InvalidInput(
            str(err.get("msg", "invalid value")), field=f"{field}.{path}" if path else field
        ) from exc


def _merged(
    data: dict[str, Any], model: type[BaseModel], overrides: Mapping[Any, Any], field: str
) -> dict[str, Any]:
    """``data`` (a model dumped as JSON) with ``overrides`` applied recursively into nested
    models; a key the model does not have is refused."""
    fields = model.model_fields
    out = dict(data)
    for key, value in overrides.items():
        if not isinstance(key, str) or key not in fields:
            raise InvalidInput(f"unknown setting {key!r}; known: {sorted(fields)}", field=field)
        nested = fields[key].annotation
        if (
            isinstance(nested, type)
            and issubclass(nested, BaseModel)
            and isinstance(value, Mapping)
            and isinstance(out.get(key), dict)
        ):
            out[key] = _merged(out[key], nested, value, f"{field}.{key}")
        else:
            out[key] = _integral(value, f"{field}.{key}")
    return out


def _integral(value: Any, field: str) -> Any:
    """``value`` with numbers as the documented schema reads them: a float without a fraction
    within ``INT_MIN..INT_MAX`` is that integer (JSON Schema's ``integer`` includes ``34.0``),
    an integer beyond them a float (a number field takes it; an integer field, bounded to
    them, refuses it)."""
    if isinstance(value, list):
        return [_integral(v, field) for v in value]
    if isinstance(value, dict):
        return {k: _integral(v, f"{field}.{k}") for k, v in value.items()}
    if isinstance(value, float) and value.is_integer() and INT_MIN <= value <= INT_MAX:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        try:
            return float(value)
        except OverflowError as exc:
            raise InvalidInput("a number beyond any float", field=field) from exc
    return value
