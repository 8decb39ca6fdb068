"""LangChain adapters (``langchain-core``; ``pip install mnemograph[langchain]``).

* :class:`MnemographRetriever`: a ``BaseRetriever`` over ``/recall`` (one ``Document`` per
  memory, best first) or, with ``mode="context"``, over ``/context`` (one ``Document``: the
  assembled prompt within ``context_window`` tokens).
* :class:`MnemographChatMessageHistory`: a ``BaseChatMessageHistory`` keeping a conversation
  as one Mnemograph session (see :mod:`mnemograph.integrations.session_log`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from mnemograph.client import AsyncClient, Client, models
from mnemograph.integrations.session_log import SessionLog, Turn, hit_metadata

__all__ = ["MnemographChatMessageHistory", "MnemographRetriever"]


class MnemographRetriever(BaseRetriever):
    """Memories of ``space`` relevant to the query, as LangChain documents.

    ``recall_options`` / ``context_options`` are passed to ``/recall`` / ``/context`` as they
    are (e.g. ``{"filters": {"sessions": ["s1"]}, "touch": False}``). ``async_client``, when
    given, serves ``ainvoke`` without a thread."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client
    space: str
    k: int = 5
    mode: Literal["recall", "context"] = "recall"
    context_window: int = 4000
    recall_options: dict[str, Any] = Field(default_factory=dict)
    context_options: dict[str, Any] = Field(default_factory=dict)
    async_client: AsyncClient | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.mode == "context":
            out = self.client.context(
                self.space, query, self.context_window, **self.context_options
            )
            return [_context_document(out)]
        return _recall_documents(
            self.client.recall(self.space, query, self.k, **self.recall_options)
        )

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        if self.mode == "context":
            out = await self.async_client.context(
                self.space, query, self.context_window, **self.context_options
            )
            return [_context_document(out)]
        hits = await self.async_client.recall(self.space, query, self.k, **self.recall_options)
        return _recall_documents(hits)


def _recall_documents(out: models.RecallOut) -> list[Document]:
    return [
        Document(page_content=hit.content, metadata=hit_metadata(hit), id=hit.id)
        for hit in out.results
    ]


def _context_document(out: models.ContextOut) -> Document:
    """The assembled context as one document; which memories it holds in the metadata."""
    return Document(
        page_content=out.prompt,
        metadata={"included_ids": out.included_ids, "sections": sorted(out.sections)},
    )


#: LangChain's message classes by the API's turn role, and back.
_BY_ROLE: dict[str, type[BaseMessage]] = {
    "user": HumanMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
}


def _role(message: BaseMessage) -> str:
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, ToolMessage):
        return "tool"
    raise ValueError(f"cannot store a {type(message).__name__} as a conversation turn")


def _message(turn: Turn) -> BaseMessage:
    meta: dict[str, Any] = {"memory_id": turn.id, "time": turn.time}
    if turn.role == "tool":
        # the tool call id is not kept by the server: the memory id stands in for it
        return ToolMessage(content=turn.content, tool_call_id=turn.id or "", id=turn.id)
    cls = _BY_ROLE.get(turn.role, HumanMessage)
    return cls(content=turn.content, id=turn.id, name=turn.speaker, response_metadata=meta)


class MnemographChatMessageHistory(BaseChatMessageHistory):
    """A chat history stored as session ``session_id`` of ``space``: each message one turn,
    verbatim, recallable like any memory (``MnemographRetriever`` finds them).

    ``messages`` reads the session back in order (one request per message: there is no
    "list a session" route); ``clear()`` deletes the session's memories from the space, with
    the facts extracted from them (recall no longer finds them). One writer per session."""

    def __init__(self, client: Client, space: str, session_id: str) -> None:
        self.log = SessionLog(client, space, session_id)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [_message(turn) for turn in self.log.turns()]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages as the session's next turns, in one request."""
        turns = [
            Turn(role=_role(m), content=m.text, speaker=getattr(m, "name", None)) for m in messages
        ]
        self.log.append(turns)

    def clear(self) -> None:
        """Delete every message of the session from the space."""
        self.log.clear()
