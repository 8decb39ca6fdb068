"""merge_overrides: the one validated way a space's settings override a frozen config."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from pipelines.errors import InvalidInput
from pipelines.overrides import merge_overrides


class Inner(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    rate: float = 0.5
    on: bool = False


class Outer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    k: int = 3
    pair: tuple[float, float] = (0.5, 0.5)
    inner: Inner = Inner()


def test_nested_keys_change_only_what_is_given() -> None:
    out = merge_overrides(Outer(), {"inner": {"on": True}, "pair": [0.25, 0.75]}, "settings.x")
    assert out == Outer(inner=Inner(rate=0.5, on=True), pair=(0.25, 0.75))


def test_no_overrides_returns_the_base_itself() -> None:
    base = Outer()
    assert merge_overrides(base, None, "f") is base
    assert merge_overrides(base, {}, "f") is base


def test_an_integer_fills_a_float() -> None:
    assert merge_overrides(Outer(), {"inner": {"rate": 1}}, "f").inner.rate == 1.0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"inner": {"on": "yes please"}}, "settings.x.inner.on"),
        ({"inner": {"on": 1}}, "settings.x.inner.on"),
        ({"k": "3"}, "settings.x.k"),
        ({"inner": {"rate": "not-a-number"}}, "settings.x.inner.rate"),
        ({"nope": 1}, "settings.x"),
        ({"inner": {"nope": 1}}, "settings.x.inner"),
        ({"pair": [1, 2, 3]}, "settings.x.pair"),
    ],
)
def test_bad_or_unknown_values_name_the_field(overrides: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        merge_overrides(Outer(), overrides, "settings.x")
    assert err.value.field == field


@pytest.mark.parametrize("overrides", [[1], "x", 3])
def test_not_an_object(overrides: object) -> None:
    with pytest.raises(InvalidInput) as err:
        merge_overrides(Outer(), overrides, "settings.x")
    assert err.value.field == "settings.x"
