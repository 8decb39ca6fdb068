"""Context assembly: the ``/context`` service and its pure algorithms.

The service (:mod:`~pipelines.assemble.service`, the orchestrator) runs one assembly through
modules with one job each: ``request`` (what a caller may ask, validated once), ``mode`` (the
gates choosing staged or flat), ``stage`` (the current stage, named or inferred), ``recalls``
(whole-space recall and Phase 1), ``related`` and ``pagerank`` (Phase 2), ``summaries``
(Phase 3), ``packing`` (what fits the budget), ``render`` (template, sections, decomposer),
``flat`` (flat mode), ``report`` (the typed report), with ``items`` (candidates as rendered
records), ``run`` (one assembly's inputs and services) and ``memo`` (the query-embedding memo).

Pure algorithms, no I/O: ``config`` (every tunable), ``tokens`` (estimators), ``budget``
(window-adaptive and per-phase budgets), ``plan`` (phase counts, stage votes, schema text),
``condensers`` with ``text_condensers`` and ``memory_condenser`` (domain-aware shortening),
``decomposer`` (priority-budgeted prompt filling with a truncation banner), ``warning`` (the
banner), ``blocks`` (escaped, provenance-tagged data blocks), ``sections`` (the three context
sections and first-fit packing), ``ppr`` (Personalized PageRank reference and seed
weighting) and ``stage_inference`` (the stage choice record and the density gate).
"""
