"""The recall steps, one module per concept (the step and its pure algorithms); a preset
(:mod:`pipelines.recall.presets`) lists them in the order they run: ``understand``, ``embed``,
``candidates``, ``identifiers``, ``chunks``, ``standing``, ``validity``, ``fuse``, ``rerank``,
``session_documents``, ``late_interaction``, ``session_late_interaction``, ``embeddings``,
``echoes``, ``select``, ``replies``, ``standing_slots``, ``exact_first``, ``order``,
``abstain``, ``touch``. The round trips they wait for (``lexical``, ``session_ranking``,
``standing_statements``) are declared by the steps and started by the runner."""
