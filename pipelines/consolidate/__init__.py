"""Consolidation: scheduled, auditable, reversible jobs that keep a space's graph healthy.

One module per job - ``decay``, ``merge`` (undoable), ``supersede`` (explicit correction and
revert in ``supersessions``), ``communities`` (Leiden stages), ``schemas`` (stage summaries,
``ensure_schema``), ``upkeep`` (co-occurrence weights, ``ensure_entity_projection``),
``retention`` - plus ``claims`` (the pure claim rules supersession uses), ``runner`` (leases,
``JobRun`` records, dry runs, ``run_full_pass``), ``scheduler`` and ``config``.
``python -m pipelines.consolidate`` runs a job once.
"""
