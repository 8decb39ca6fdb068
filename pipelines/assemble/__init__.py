"""Context assembly: the ``/context`` service as a preset of steps on one runner.

Read top to bottom: ``service`` (the presets, each an ordered list of steps, and the
:class:`~pipelines.assemble.service.Assembler`), ``steps`` (what each step does and hands on),
``state`` (one assembly's state, the runner, the one report builder). The steps call modules
with one job each: ``request`` (what a caller may ask, and one assembly's inputs), ``stage``
(the mode gates, the current stage named or inferred), ``recalls`` (whole-space recall, Phase
1, the facts), ``related`` (Phase 2: PageRank fused with recall), ``summaries`` (Phase 3),
``packing`` (staged mode's budget plan), ``flat`` (flat mode's packing), ``render`` (layout,
sections, the decomposer, reading back), ``items`` (candidates as rendered records),
``report`` (the typed report) and ``config`` (every tunable). Prompt text itself (blocks,
condensers, the decomposer) is :mod:`pipelines.prompt`.
"""
