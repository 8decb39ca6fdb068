"""LlamaIndex adapters (``llama-index-core``; ``pip install mnemograph[llama-index]``).

* :class:`MnemographRetriever`: a ``BaseRetriever`` over ``/recall``: one ``NodeWithScore``
  per memory, best first (the node id is the memory id).
* :class:`MnemographMemory`: a ``llama_index.core.memory.BaseMemory``: the chat memory an
  agent or chat engine takes (``memory=``). It is a ``BaseMemory`` rather than a
  ``BaseChatStore`` under ``ChatMemoryBuffer``: the buffer counts tokens with tiktoken, which
  fetches its encoding from the network on first use, and would hold the history in its own
  store; here the history is the Mnemograph session itself (see
  :mod:`mnemograph.integrations.session_log`), and ``get(input)`` can add what the space
  remembers about ``input`` from other sessions.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemory
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import ConfigDict, Field, PrivateAttr

from mnemograph.client import AsyncClient, Client, models
from mnemograph.integrations.session_log import SessionLog, Turn, hit_metadata

__all__ = ["MnemographMemory", "MnemographRetriever"]


class MnemographRetriever(BaseRetriever):
    """Memories of ``space`` relevant to the query (``k`` of them; ``recall_options`` are the
    other ``/recall`` fields). ``async_client``, when given, serves ``aretrieve``."""

    def __init__(
        self,
        client: Client,
        space: str,
        k: int = 5,
        *,
        recall_options: dict[str, Any] | None = None,
        async_client: AsyncClient | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.space = space
        self.k = k
        self.recall_options = dict(recall_options or {})
        self.async_client = async_client

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        out = self.client.recall(self.space, query_bundle.query_str, self.k, **self.recall_options)
        return _nodes(out)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.async_client is None:
            return self._retrieve(query_bundle)
        out = await self.async_client.recall(
            self.space, query_bundle.query_str, self.k, **self.recall_options
        )
        return _nodes(out)


def _nodes(out: models.RecallOut) -> list[NodeWithScore]:
    nodes = []
    for hit in out.results:
        node = TextNode(id_=hit.id, text=hit.content, metadata=hit_metadata(hit))
        nodes.append(NodeWithScore(node=node, score=hit.score))
    return nodes


_ROLES: dict[MessageRole, str] = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.SYSTEM: "system",
    MessageRole.DEVELOPER: "system",
    MessageRole.TOOL: "tool",
    MessageRole.FUNCTION: "tool",
}
_BACK: dict[str, MessageRole] = {
    "user": MessageRole.USER,
    "assistant": MessageRole.ASSISTANT,
    "system": MessageRole.SYSTEM,
    "tool": MessageRole.TOOL,
}


def _turn(message: ChatMessage) -> Turn:
    role = _ROLES.get(message.role)
    if role is None:
        raise ValueError(f"cannot store a {message.role.value!r} message as a conversation turn")
    return Turn(role=role, content=message.content or "")


def _message(turn: Turn) -> ChatMessage:
    return ChatMessage(
        role=_BACK.get(turn.role, MessageRole.USER),
        content=turn.content,
        additional_kwargs={"memory_id": turn.id, "time": turn.time},
    )


class MnemographMemory(BaseMemory):
    """Chat memory kept as session ``session_id`` of ``space``.

    ``get(input)`` returns the last ``last_n`` messages in order; with ``recall_k > 0`` and an
    ``input``, first a system message listing the ``recall_k`` memories of the space (other
    sessions included) most relevant to ``input`` that are not among those messages.
    ``get_all()`` is the whole session, ``put`` appends, ``reset`` deletes the session's
    memories from the space. Reading costs one request per message (no "list a session"
    route). One writer per session."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client
    space: str
    session_id: str
    last_n: int = Field(20, ge=1)
    recall_k: int = Field(0, ge=0)
    _log: SessionLog = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        self._log = SessionLog(self.client, self.space, self.session_id)

    @classmethod
    def class_name(cls) -> str:
        return "MnemographMemory"

    @classmethod
    def from_defaults(cls, **kwargs: Any) -> MnemographMemory:
        """``client``, ``space`` and ``session_id`` are required; ``last_n``, ``recall_k``."""
        return cls(**kwargs)

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        recent = [_message(t) for t in self._log.turns(last=self.last_n)]
        if not input or self.recall_k == 0:
            return recent
        shown = {m.additional_kwargs.get("memory_id") for m in recent}
        hits = self.client.recall(self.space, input, self.recall_k, touch=False).results
        lines = [f"- {h.content}" for h in hits if h.id not in shown]
        if not lines:
            return recent
        text = "Relevant memories from earlier conversations:\n" + "\n".join(lines)
        return [ChatMessage(role=MessageRole.SYSTEM, content=text), *recent]

    def get_all(self) -> list[ChatMessage]:
        return [_message(t) for t in self._log.turns()]

    def put(self, message: ChatMessage) -> None:
        self._log.append([_turn(message)])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """All in one request (the base class sends one per message)."""
        self._log.append([_turn(m) for m in messages])

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the session's messages with ``messages``."""
        self._log.clear()
        self.put_messages(messages)

    def reset(self) -> None:
        """Delete every message of the session from the space."""
        self._log.clear()
