"""The recall steps, one module each; a preset (:mod:`pipelines.recall.presets`) lists them in
the order they run: ``understand``, ``lexical_ahead``, ``session_ranking``, ``embed``,
``standing_ahead``, ``candidates``, ``chunks``, ``standing``, ``fuse``, ``rerank``,
``session_documents``, ``late_interaction``, ``session_late_interaction``, ``embeddings``,
``echoes``, ``select``, ``replies``, ``order``, ``abstain``, ``touch``."""
