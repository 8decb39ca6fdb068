"""Priority-budgeted prompt assembly (the "context decomposer").

A template such as ``"Context:\\n{{CONTEXT}}\\n\\nQuestion: {{QUERY}}"`` has typed
slots, each with content, a priority (lower number = more important = condensed
last) and an optional condenser name.  :func:`decompose` fills the template so
the prompt fits the model's window, condensing the least important slots first
and telling the reader model what was cut.

Algorithm (``W`` = context window, ``h`` = headroom, ``count`` = estimator):

1. **Shell.** ``s = count(template with every {{KEY}} emptied)``.
2. **Budget.** ``ceiling = floor(W * h)``; ``B = max(min_budget, ceiling - s)``
   (the spec's variable budget).  The prompt limit is
   ``L = min(s + B, W - safety_margin)`` -- i.e. ``ceiling`` in the normal case,
   ``s + min_budget`` when the shell is so large that the floor applies, but
   never past the absolute cap.  Slots share ``content_budget = min(B, L - s)``.
3. **Fast path.** If the slot contents together fit ``content_budget`` and the
   filled prompt fits ``L``, everything is used verbatim (no banner, unless
   ``upstream_tokens`` reports an earlier cut; then the banner is budgeted
   as below).
4. **Progressive condensation.** Slots are visited least important first
   (higher priority number first; equal priorities: later-declared first).
   With ``R`` tokens left and ``n`` slots left, a slot's share is
   ``floor(R / n)`` when that is at least ``min_share``; otherwise the budget
   cannot give every remaining slot ``min_share`` and the *more important*
   slots are served first: the share is ``max(0, min(min_share,
   R - min_share * (n - 1)))``.  A slot whose content fits its share is kept
   verbatim, otherwise it is condensed to the share (slot's condenser, or the
   one :func:`~pipelines.prompt.condensers.choose_condenser` picks).  ``R``
   drops by the tokens actually used, so unused share flows to more important
   slots.  *Recycling* (an addition): whatever is still unused at the end --
   typically the share of a small, very important slot such as the query --
   is offered to the condensed slots, most important first (each is
   re-condensed with its current tokens plus the leftover).
5. **Truncation banner, budgeted.** Slots whose retention
   (final / original tokens) is below ``warning_threshold`` are named in a
   banner prepended to the prompt.  The banner's tokens come out of the slot
   budget: step 4 is re-run with ``content_budget - reserve``, where the
   reserve is the banner cost of the previous round; the reserve only grows
   and the loop stops at the first round whose banner fits its reserve
   (at most ``max_banner_rounds``).  This may push a slot under the threshold
   and onto the banner, which is why it iterates.
6. **Safety loop.** While the full prompt (banner included) exceeds ``L`` --
   estimators need not be additive -- the least important slot larger than
   ``safety_min_tokens`` is halved (its *original* content is re-condensed to
   half its current tokens, so the cut is content-aware and lands on line
   boundaries); when no slot is that large, the banner switches to its
   one-line compact form, and then the least important non-empty slot is
   emptied.  Every step strictly shrinks something; after
   ``max_safety_iterations`` halvings only the last two steps are used.  The
   banner is rebuilt after each step.

**Budget invariant.**  ``count(prompt) <= L`` (``result.fits``) whenever the
prompt with every slot emptied -- the shell plus the compact banner listing
every non-empty slot -- fits ``L``; otherwise every slot is empty and ``fits``
is ``False``.  In particular, when ``s + min_budget <= floor(W*h) <= W -
safety_margin`` and that fallback fits, ``count(prompt) <= floor(W*h)``.

**Priority invariants** (tested):

* P1 -- every slot ends at or under the share it was offered;
* P2 -- if a slot was condensed, every less important slot was condensed
  too, unless its original was strictly smaller;
* P3 -- when the safety loop did not run, the shares of condensed slots never
  decrease with importance (a more important condensed slot was offered at
  least as many tokens as any less important condensed slot).

Retention itself is *not* monotone in priority -- a large important slot can
keep a smaller fraction than a small unimportant one that fits its share,
which the design wants (small low-priority content is not penalised).

Design deviations from the seed pseudocode (its known bugs are avoided):
sequential ``str.replace`` would expand ``{{KEY}}`` text found inside inserted
content -- filling is a single regex pass; ``min_share`` could push the slots
past ``B`` and starve the most important slots -- it is now granted most
important first and shares never exceed what is left; the banner was added
after the budget check -- it is budgeted; the safety loop checked
``W - margin`` instead of the headroom limit, could make no progress (every
slot at or below 50 tokens) and cut text with ``rfind('\\n') == -1`` to
nothing -- it checks ``L``, always shrinks something, and cuts on boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.prompt.condensers import CONDENSERS, condense
from pipelines.prompt.template import PLACEHOLDER, fill_template
from pipelines.prompt.tokens import (
    DEFAULT_LIMITS,
    CharsPerToken,
    PromptLimits,
    TokenEstimator,
    window_ceiling,
)
from pipelines.prompt.warning import (
    BANNER_SEPARATOR,
    TruncatedSlot,
    build_truncation_banner,
    prepend_banner,
    retention,
)

__all__ = ["PLACEHOLDER", "DecomposedPrompt", "Slot", "SlotReport", "decompose", "fill_template"]


_KEY = re.compile(r"^[A-Za-z0-9_]+$")
DROPPED = "drop"
"""Condenser name reported for a slot the safety loop emptied."""


@dataclass(frozen=True, slots=True)
class Slot:
    """A template slot: ``{{key}}`` is replaced by ``content``.

    ``priority``: lower number = more important = condensed last.
    ``condenser``: a key of :data:`~pipelines.prompt.condensers.CONDENSERS`,
    or ``None`` to pick one by content shape.
    ``upstream_tokens``: if the content was already shortened before it got
    here (e.g. a section fitted to its phase budget by
    :func:`~pipelines.assemble.sections.fit_sections`), its size before that;
    retention and the banner are then measured against it, so upstream cuts
    are not hidden from the reader.
    """

    key: str
    content: str
    priority: int
    condenser: str | None = None
    upstream_tokens: int | None = None

    def __post_init__(self) -> None:
        if not _KEY.match(self.key):
            raise ValueError(f"slot key {self.key!r} must match [A-Za-z0-9_]+")
        if self.condenser is not None and self.condenser not in CONDENSERS:
            raise ValueError(f"unknown condenser {self.condenser!r}; known: {sorted(CONDENSERS)}")
        if self.upstream_tokens is not None and self.upstream_tokens < 0:
            raise ValueError("upstream_tokens must be >= 0")


@dataclass(frozen=True, slots=True)
class SlotReport:
    """What happened to one slot."""

    key: str
    priority: int
    original_tokens: int
    """Size the retention is measured against (``upstream_tokens`` when given)."""
    input_tokens: int
    """Size of the content handed to :func:`decompose`."""
    final_tokens: int
    retention: float
    share: int | None
    """Tokens offered by the allocation (``None`` on the fast path)."""
    condenser: str | None
    """Condenser applied, ``"drop"`` if emptied by the safety loop, ``None`` if verbatim."""
    content: str
    """Final content inserted into the template."""

    @property
    def condensed(self) -> bool:
        """Whether the slot's content was changed."""
        return self.condenser is not None


@dataclass(frozen=True, slots=True)
class DecomposedPrompt:
    """Result of :func:`decompose` (see the module docstring for the quantities)."""

    prompt: str
    prompt_tokens: int
    ceiling: int
    budget: int
    limit: int
    content_budget: int
    shell_tokens: int
    fast_path: bool
    slots: tuple[SlotReport, ...]
    """In declaration order."""
    warning: str | None
    banner_reserve: int
    safety_iterations: int
    fits: bool
    """``prompt_tokens <= limit``."""

    def slot(self, key: str) -> SlotReport:
        """The report for ``key``."""
        for report in self.slots:
            if report.key == key:
                return report
        raise KeyError(key)


def _validate(template: str, slots: Sequence[Slot]) -> None:
    keys = [slot.key for slot in slots]
    if len(set(keys)) != len(keys):
        raise ValueError("slot keys must be unique")
    occurrences: dict[str, int] = {}
    for match in PLACEHOLDER.finditer(template):
        occurrences[match.group(1)] = occurrences.get(match.group(1), 0) + 1
    for key in keys:
        if occurrences.get(key, 0) != 1:
            raise ValueError(
                f"placeholder {{{{{key}}}}} must occur exactly once in the template, "
                f"found {occurrences.get(key, 0)}"
            )


class _Assembly:
    """Mutable working state of one :func:`decompose` call."""

    def __init__(
        self,
        template: str,
        slots: Sequence[Slot],
        estimator: TokenEstimator,
        config: PromptLimits,
    ) -> None:
        self.template = template
        self.slots = slots
        self.est = estimator
        self.config = config
        self.original = [estimator.count(slot.content) for slot in slots]
        self.reference = [
            max(slot.upstream_tokens, n) if slot.upstream_tokens is not None else n
            for slot, n in zip(slots, self.original, strict=True)
        ]
        # Least important first: higher priority number, then later declaration.
        self.order = sorted(range(len(slots)), key=lambda i: (-slots[i].priority, -i))
        self.contents = [slot.content for slot in slots]
        self.used: list[str | None] = [None] * len(slots)
        self.shares: list[int | None] = [None] * len(slots)
        self.banner: str | None = None
        self.compact_banner = False

    def allocate(self, budget: int) -> None:
        """Step 4: proportional shares, least important first."""
        remaining = max(0, budget)
        minimum = self.config.min_share
        for position, i in enumerate(self.order):
            left = len(self.order) - position
            fair = remaining // left
            if fair >= minimum:
                share = fair
            else:
                share = max(0, min(minimum, remaining - minimum * (left - 1)))
            slot = self.slots[i]
            if self.original[i] <= share:
                self.contents[i], self.used[i] = slot.content, None
                spent = self.original[i]
            else:
                self.contents[i], self.used[i] = condense(
                    slot.content, share, self.est, slot.condenser
                )
                spent = self.est.count(self.contents[i])
            self.shares[i] = share
            remaining -= min(spent, remaining)
        self._recycle(remaining)

    def _recycle(self, leftover: int) -> None:
        """Step 4b: give budget left unused to condensed slots, most important first.

        Visiting least important first, the spec's pass can strand the unused
        share of small *important* slots (nothing comes after them).  Each
        condensed slot, most important first, is re-condensed with what it
        already uses plus the whole leftover -- only when that exceeds its
        share -- and the leftover shrinks by the extra tokens it takes.  The
        offer is capped by the share of every more important slot that is still
        condensed, so condensed shares stay monotone in importance even when a
        coarse condenser cannot use what it was offered.
        """
        cap: int | None = None
        for i in reversed(self.order):
            if leftover <= 0:
                break
            share = self.shares[i]
            if self.used[i] is None or share is None:
                continue
            spent = self.est.count(self.contents[i])
            offered = spent + leftover if cap is None else min(spent + leftover, cap)
            if offered <= share:
                cap = share if cap is None else min(cap, share)
                continue
            slot = self.slots[i]
            if self.original[i] <= offered:
                self.contents[i], self.used[i] = slot.content, None
            else:
                self.contents[i], self.used[i] = condense(
                    slot.content, offered, self.est, slot.condenser
                )
            self.shares[i] = offered
            leftover -= self.est.count(self.contents[i]) - spent
            if self.used[i] is not None:
                cap = offered if cap is None else min(cap, offered)

    def final_tokens(self, i: int) -> int:
        return self.est.count(self.contents[i])

    def rebuild_banner(self) -> int:
        """Recompute the banner; return its token cost including the separator."""
        threshold = self.config.warning_threshold
        listed = []
        for i, slot in enumerate(self.slots):
            final = self.final_tokens(i)
            if retention(self.reference[i], final) < threshold:
                listed.append(TruncatedSlot(slot.key, self.reference[i], final))
        self.banner = build_truncation_banner(listed, compact=self.compact_banner)
        return self.est.count(self.banner + BANNER_SEPARATOR) if self.banner else 0

    def prompt(self) -> str:
        values = {slot.key: self.contents[i] for i, slot in enumerate(self.slots)}
        return prepend_banner(self.banner, fill_template(self.template, values))

    def shrink_one(self, allow_halving: bool) -> bool:
        """Step 6: shrink something; ``False`` when nothing is left to shrink.

        In order of preference: halve the least important slot above the floor
        (if halving is still allowed); switch the banner to its compact form;
        empty the least important non-empty slot.
        """
        floor = self.config.safety_min_tokens
        if allow_halving:
            for i in self.order:
                current = self.final_tokens(i)
                if current > floor:
                    slot = self.slots[i]
                    self.contents[i], self.used[i] = condense(
                        slot.content, current // 2, self.est, slot.condenser
                    )
                    return True
        if not self.compact_banner and self.banner is not None:
            self.compact_banner = True
            return True
        for i in self.order:
            if self.contents[i]:
                self.contents[i], self.used[i] = "", DROPPED
                return True
        return False

    def reports(self) -> tuple[SlotReport, ...]:
        out = []
        for i, slot in enumerate(self.slots):
            final = self.final_tokens(i)
            out.append(
                SlotReport(
                    key=slot.key,
                    priority=slot.priority,
                    original_tokens=self.reference[i],
                    input_tokens=self.original[i],
                    final_tokens=final,
                    retention=retention(self.reference[i], final),
                    share=self.shares[i],
                    condenser=self.used[i],
                    content=self.contents[i],
                )
            )
        return tuple(out)


def decompose(
    template: str,
    slots: Sequence[Slot],
    context_window: int,
    headroom: float | None = None,
    estimator: TokenEstimator | None = None,
    config: PromptLimits = DEFAULT_LIMITS,
) -> DecomposedPrompt:
    """Fill ``template`` with ``slots`` so the prompt fits ``context_window`` (the module
    docstring has the algorithm). ``headroom`` defaults to ``config.headroom``, ``estimator``
    to ``CharsPerToken(config.chars_per_token)``. ``ValueError``: slot keys repeat, or a
    slot's placeholder does not occur exactly once."""
    if context_window < 1:
        raise ValueError("context_window must be >= 1")
    est = estimator if estimator is not None else CharsPerToken(config.chars_per_token)
    h = config.headroom if headroom is None else headroom
    _validate(template, slots)

    ceiling = window_ceiling(context_window, h)
    shell_tokens = est.count(fill_template(template, {slot.key: "" for slot in slots}))
    budget = max(config.min_budget, ceiling - shell_tokens)
    limit = max(0, min(shell_tokens + budget, context_window - config.safety_margin))
    content_budget = max(0, min(budget, limit - shell_tokens))
    work = _Assembly(template, slots, est, config)

    def result(fast_path: bool, reserve: int, iterations: int) -> DecomposedPrompt:
        prompt = work.prompt()
        tokens = est.count(prompt)
        return DecomposedPrompt(
            prompt=prompt,
            prompt_tokens=tokens,
            ceiling=ceiling,
            budget=budget,
            limit=limit,
            content_budget=content_budget,
            shell_tokens=shell_tokens,
            fast_path=fast_path,
            slots=work.reports(),
            warning=work.banner,
            banner_reserve=reserve,
            safety_iterations=iterations,
            fits=tokens <= limit,
        )

    fits_verbatim = sum(work.original) <= content_budget and est.count(work.prompt()) <= limit
    if fits_verbatim and work.rebuild_banner() == 0:  # and no upstream cut to report
        return result(fast_path=True, reserve=0, iterations=0)

    applied, iterations = _fit(work, est, content_budget, limit, config)
    return result(fast_path=False, reserve=applied, iterations=iterations)


def _fit(
    work: _Assembly, est: TokenEstimator, content_budget: int, limit: int, config: PromptLimits
) -> tuple[int, int]:
    """Allocate the slots with room reserved for the banner (fixed-point rounds), then shrink
    until the prompt fits ``limit``; the banner reserve applied and the safety iterations."""
    reserve = applied = 0
    for _ in range(config.max_banner_rounds):
        applied = reserve
        work.allocate(content_budget - applied)
        cost = work.rebuild_banner()
        if cost <= applied:
            break
        reserve = cost  # grows monotonically; the banner is bounded, so this settles

    iterations = 0
    while est.count(work.prompt()) > limit:
        if not work.shrink_one(allow_halving=iterations < config.max_safety_iterations):
            break
        iterations += 1
        work.rebuild_banner()
    return applied, iterations
