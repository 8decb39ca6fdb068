// A minimal agent loop on Mnemograph: recall, build the context, call the model, remember
// the turn. `callModel` is yours (OpenAI, Anthropic, a local model...).
import { Client } from "mnemograph";

export async function agentTurn(mg, { space, sessionId, turn, userText, callModel }) {
  // 1. What do we already know that answers this? (ranked memories, with an abstain flag)
  const hits = await mg.recall(space, userText, { k: 5 });
  // 2. A ready-to-send context within the model's budget (stage-aware, summarised)
  const ctx = await mg.context(space, userText, 4000);
  // 3. Your model: the context as the system prompt
  const answer = await callModel({ system: ctx.prompt, user: userText });
  // 4. Remember the exchange (explicit turn ids: a retried call stores nothing twice)
  await mg.addSession(space, {
    session_id: sessionId,
    turns: [
      { id: `${sessionId}:${turn}:user`, role: "user", content: userText },
      { id: `${sessionId}:${turn}:assistant`, role: "assistant", content: answer },
    ],
  });
  return { answer, recalled: hits.results.map((r) => r.content), abstain: hits.abstain };
}

// `node examples/agent-loop.mjs`: two turns against MNEMOGRAPH_URL (default 127.0.0.1:8000).
if (import.meta.url === `file://${process.argv[1]}`) {
  const mg = new Client(); // MNEMOGRAPH_URL, MNEMOGRAPH_API_KEY
  const space = "agent-demo";
  await mg.createSpace(space);
  const callModel = async ({ system, user }) => `(model) ${user} — context: ${system.length} chars`;
  for (const [turn, userText] of ["We chose Postgres for the ledger.", "Which database did we pick?"].entries()) {
    const { answer } = await agentTurn(mg, { space, sessionId: "chat-1", turn, userText, callModel });
    console.log(answer);
  }
}
