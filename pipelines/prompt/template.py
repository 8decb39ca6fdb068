"""Prompt templates: ``{{KEY}}`` placeholders filled in one pass (:func:`fill_template`), a
template of the caller's slots, a preamble, context sections and the query
(:func:`build_template`), and the budget quantities the decomposer will derive for a template
before it is filled (:func:`prompt_budget`), so sections can be sized to them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pipelines.prompt.tokens import DEFAULT_LIMITS, PromptLimits, TokenEstimator, window_ceiling

__all__ = ["PLACEHOLDER", "PromptBudget", "build_template", "fill_template", "prompt_budget"]

PLACEHOLDER = re.compile(r"\{\{([A-Za-z0-9_]+)\}\}")


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """Replace each ``{{KEY}}`` with ``values[KEY]`` in one pass.

    Placeholders without a value are left as they are, and text inside the
    inserted values is never scanned for placeholders.
    """
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def build_template(
    leading_keys: Sequence[str],
    context_keys: Sequence[str],
    query_key: str,
    query_title: str,
    preamble: str | None = None,
) -> str:
    """``{{KEY}}`` placeholders separated by blank lines: the caller's slots first (in the
    order given), then ``preamble`` (e.g. the note that recalled records are data), the context
    sections, and the query under its own header.  ``preamble`` must not contain ``{{``."""
    if preamble is not None and "{{" in preamble:
        raise ValueError("the preamble must not contain placeholders")
    parts = [f"{{{{{key}}}}}" for key in leading_keys]
    if preamble:
        parts.append(preamble)
    parts.extend(f"{{{{{key}}}}}" for key in context_keys)
    parts.append(f"## {query_title}\n{{{{{query_key}}}}}")
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """The decomposer's budget quantities for a template (see
    :mod:`pipelines.prompt.decomposer`): identical to what ``decompose`` computes."""

    ceiling: int
    shell_tokens: int
    budget: int
    limit: int
    content_budget: int


def prompt_budget(
    template: str,
    keys: Iterable[str],
    context_window: int,
    headroom: float,
    estimator: TokenEstimator,
    config: PromptLimits = DEFAULT_LIMITS,
) -> PromptBudget:
    """The quantities :func:`~pipelines.prompt.decomposer.decompose` will derive for
    ``template`` in a ``context_window``-token model (shell, budget ``B``, limit ``L``, and the
    content budget the slots share)."""
    ceiling = window_ceiling(context_window, headroom)
    shell = estimator.count(fill_template(template, {key: "" for key in keys}))
    budget = max(config.min_budget, ceiling - shell)
    limit = max(0, min(shell + budget, context_window - config.safety_margin))
    content = max(0, min(budget, limit - shell))
    return PromptBudget(ceiling, shell, budget, limit, content)
