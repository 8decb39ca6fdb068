"""Context assembly: pure algorithms (no I/O, no database, no models).

Modules: ``config`` (every tunable), ``tokens`` (estimators), ``budget``
(window-adaptive and per-phase budgets), ``condensers`` (domain-aware
shortening), ``decomposer`` (priority-budgeted prompt filling with a
truncation banner), ``warning`` (the banner), ``blocks`` (escaped,
provenance-tagged data blocks), ``sections`` (the three context sections and
flat-baseline packing), ``ppr`` (Personalized PageRank for Phase 2) and
``stage_inference`` (current-stage choice and the density gate).
"""
