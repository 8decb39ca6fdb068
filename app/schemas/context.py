"""Request/response models of ``POST /v1/spaces/{space}/context`` (stage-aware assembly).

The body is the domain request itself (:class:`~pipelines.assemble.request.ContextRequest`):
every rule is checked once, when it is parsed, and a refusal names its field.  The body is
strict: the benchmark-only switches (forced flat mode, ablations) are not part of it, so a
body that sends them is refused naming the field.
"""

from __future__ import annotations

from pydantic import BaseModel

from pipelines.assemble.report import AssemblyReport
from pipelines.assemble.request import ContextRequest, TemplateSlot

__all__ = ["ContextBody", "ContextOut", "TemplateSlotIn"]

ContextBody = ContextRequest
TemplateSlotIn = TemplateSlot


class ContextOut(BaseModel):
    sections: dict[str, str]
    prompt: str
    report: AssemblyReport
    included_ids: dict[str, list[str]]
