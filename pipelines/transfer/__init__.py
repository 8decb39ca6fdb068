"""A space as JSON Lines and back: export every node and relationship of a space verbatim
(ids, times, sessions, stages, facts, supersessions, merges; embeddings optional), import
them idempotently into a space of any server, and count both sides so an import is verified.

Record kinds, in file order: ``header``, ``space``, ``node`` (every node before any
relationship), ``rel``, ``counts``. See :mod:`pipelines.transfer.spec`.
"""
