"""Recall (read path): a preset's steps (:mod:`pipelines.recall.presets`) run over one state
(:mod:`pipelines.recall.runner`). Each step concept is one module of
:mod:`pipelines.recall.steps`, holding the step and its pure algorithms; the query's
understanding (intent, query text, speakers, time expressions) and heat are pure modules the
steps share."""
