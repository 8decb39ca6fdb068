"""Prompt text, independent of what fills it: escaped, provenance-tagged data blocks
(``blocks``), token estimation and a window's limits (``tokens``), the condensers that shorten
text by its shape (``condensers``, ``text_condensers``), the priority decomposer that fits
slots into a window (``decomposer``) and its truncation banner (``warning``). Context assembly
(:mod:`pipelines.assemble`) renders its sections with these.
"""
