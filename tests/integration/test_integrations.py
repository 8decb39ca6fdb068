"""The LangChain and LlamaIndex adapters with the real frameworks against a live server:
retrieval finds the stored turn first, chat histories round-trip in order, sync and async."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from llama_index.core.base.llms.types import ChatMessage, MessageRole

from mnemograph.client import AsyncClient, Client
from mnemograph.integrations import langchain as lc
from mnemograph.integrations import llama_index as li
from mnemograph.integrations.session_log import SessionLog, Turn

TURNS = [
    {"id": "k1", "role": "user", "speaker": "Ana", "content": "Our ledger runs on Postgres 16."},
    {"id": "k2", "role": "assistant", "content": "Noted: the ledger database is Postgres 16."},
    {"id": "k3", "role": "user", "speaker": "Ana", "content": "My cat Miso sleeps on the piano."},
    {"id": "k4", "role": "user", "speaker": "Ana", "content": "The deploy window is Thursday."},
]
QUESTION = "Where does the cat Miso sleep?"


@pytest.fixture(scope="module")
def filled(live) -> Iterator[tuple[Client, str]]:
    """One space with a stored session; the sync client over it."""
    space = f"int-{uuid.uuid4().hex[:8]}"
    with Client(live.url) as mg:
        mg.create_space(space)
        mg.add_session(space, {"session_id": "past", "turns": TURNS})
        try:
            yield mg, space
        finally:
            mg.delete_space(space)


def test_langchain_retriever_returns_the_stored_turn_first(filled, live):
    mg, space = filled
    retriever = lc.MnemographRetriever(client=mg, space=space, k=3)
    docs = retriever.invoke(QUESTION)
    assert docs[0].page_content == TURNS[2]["content"]
    meta = docs[0].metadata
    assert (meta["memory_id"], meta["session_id"], meta["speaker"]) == ("k3", "past", "Ana")
    assert meta["score"] > 0 and meta["time"]

    async def main() -> list[str]:
        async with AsyncClient(live.url) as amg:
            aretriever = lc.MnemographRetriever(client=mg, async_client=amg, space=space, k=3)
            return [d.metadata["memory_id"] for d in await aretriever.ainvoke(QUESTION)]

    assert asyncio.run(main())[0] == "k3"


def test_langchain_retriever_in_context_mode_gives_one_document(filled):
    mg, space = filled
    retriever = lc.MnemographRetriever(client=mg, space=space, mode="context", context_window=1500)
    [doc] = retriever.invoke("What database is the ledger on?")
    assert "Postgres 16" in doc.page_content
    assert any("k1" in ids or "k2" in ids for ids in doc.metadata["included_ids"].values())


def test_langchain_chat_history_round_trip(filled):
    mg, space = filled
    history = lc.MnemographChatMessageHistory(mg, space, f"chat-{uuid.uuid4().hex[:6]}")
    assert history.messages == []
    history.add_messages([SystemMessage("Be brief."), HumanMessage("I moved to Lisbon.")])
    history.add_ai_message("Lisbon, noted.")
    again = lc.MnemographChatMessageHistory(mg, space, history.log.session_id)  # fresh reader
    got = again.messages
    assert [type(m) for m in got] == [SystemMessage, HumanMessage, AIMessage]
    assert [m.text for m in got] == ["Be brief.", "I moved to Lisbon.", "Lisbon, noted."]
    # the turns are memories like any other: recall finds them
    hits = mg.recall(space, "Who moved to Lisbon?", k=2, touch=False)
    assert hits.results[0].id == f"{history.log.session_id}#1"

    async def main() -> list[str]:
        await again.aadd_messages([HumanMessage("And I adopted a dog.")])
        return [m.text for m in await again.aget_messages()]

    assert asyncio.run(main())[-1] == "And I adopted a dog."
    history.clear()
    assert lc.MnemographChatMessageHistory(mg, space, history.log.session_id).messages == []
    assert mg.get_space(space).counts.memories == len(TURNS)


def test_llama_index_retriever_returns_the_stored_turn_first(filled, live):
    mg, space = filled
    retriever = li.MnemographRetriever(mg, space, k=3)
    nodes = retriever.retrieve(QUESTION)
    assert nodes[0].node.node_id == "k3" and nodes[0].node.get_content() == TURNS[2]["content"]
    assert nodes[0].score is not None and nodes[0].score > 0
    assert nodes[0].node.metadata["session_id"] == "past"

    async def main() -> str:
        async with AsyncClient(live.url) as amg:
            aretriever = li.MnemographRetriever(mg, space, k=3, async_client=amg)
            return (await aretriever.aretrieve(QUESTION))[0].node.node_id

    assert asyncio.run(main()) == "k3"


def test_llama_index_memory_round_trip(filled):
    mg, space = filled
    session = f"li-{uuid.uuid4().hex[:6]}"
    memory = li.MnemographMemory.from_defaults(
        client=mg, space=space, session_id=session, last_n=2, recall_k=2
    )
    assert memory.get_all() == []
    memory.put(ChatMessage(role=MessageRole.USER, content="Remind me about the deploy."))
    memory.put_messages(
        [
            ChatMessage(role=MessageRole.ASSISTANT, content="Sure, when is it?"),
            ChatMessage(role=MessageRole.USER, content="Check my notes."),
        ]
    )
    fresh = li.MnemographMemory(client=mg, space=space, session_id=session, last_n=2)
    assert [m.content for m in fresh.get_all()] == [
        "Remind me about the deploy.",
        "Sure, when is it?",
        "Check my notes.",
    ]
    assert [m.role for m in fresh.get()] == [MessageRole.ASSISTANT, MessageRole.USER]
    # with recall: what the space remembers about the input comes first, as a system message
    recalled = memory.get(input="When is the deploy window?")
    assert recalled[0].role == MessageRole.SYSTEM and "Thursday" in (recalled[0].content or "")
    assert [m.content for m in recalled[1:]] == ["Sure, when is it?", "Check my notes."]
    assert [m.content for m in asyncio.run(fresh.aget())] == [
        "Sure, when is it?",
        "Check my notes.",
    ]
    memory.set([ChatMessage(role=MessageRole.USER, content="Start over.")])
    assert [m.content for m in fresh.get_all()] == ["Start over."]
    memory.reset()
    assert li.MnemographMemory(client=mg, space=space, session_id=session).get_all() == []


def test_a_session_log_finds_its_length_by_bisection(filled):
    """37 turns: a fresh reader finds the length (doubling, then bisection), reads the last
    ones in order, and an append after another reader's append lands after it."""
    mg, space = filled
    session = f"long-{uuid.uuid4().hex[:6]}"
    SessionLog(mg, space, session).append([Turn("user", f"note number {i}") for i in range(37)])
    reader = SessionLog(mg, space, session)
    assert len(reader) == 37
    assert [t.content for t in reader.turns(last=3)] == [f"note number {i}" for i in (34, 35, 36)]
    SessionLog(mg, space, session).append([Turn("assistant", "the 38th")])
    reader.append([Turn("user", "the 39th")])  # its hint (37) is stale: counted again
    assert [t.id for t in reader.turns(last=2)] == [f"{session}#37", f"{session}#38"]
    assert reader.clear() == 39 and len(SessionLog(mg, space, session)) == 0
