// The SDK against a live Mnemograph on a real Neo4j: every call family, pagination, the
// error classes with the server's code and field, auth.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client, Forbidden, InvalidInput, NotFound, Unauthorized, ROUTES } from "../dist/index.js";
import { liveClient, required, spaceId, writeCalled } from "./support.mjs";

const mg = liveClient();
const space = spaceId("ts");

const t = (day, minute) => new Date(Date.UTC(2024, 0, 1 + day, 9, minute)).toISOString();
const SESSION = {
  session_id: "s1",
  started_at: t(0, 0),
  stage: "planning",
  turns: [
    { id: "t1", role: "user", speaker: "Ana", content: "We picked Postgres for the ledger.", time: t(0, 0) },
    { id: "t2", role: "assistant", speaker: "Bot", content: "Noted: Postgres, ledger.", time: t(0, 1) },
    { role: "user", speaker: "Ana", content: "I went to the support group yesterday and it was so powerful.", time: t(0, 2) },
  ],
};
const REPEAT = {
  session_id: "s2",
  turns: [
    { role: "user", speaker: "Ana", content: "My dog Rex loves the beach in Lisbon.", time: t(31, 0) },
    { role: "user", speaker: "Ana", content: "I went to the support group yesterday, and it was so powerful!", time: t(31, 1) },
  ],
};

before(async () => {
  const created = await mg.createSpace(space, { name: "TS SDK test" });
  assert.equal(created.created, true);
  await mg.addSession(space, SESSION);
  await mg.addSession(space, REPEAT);
});

after(async () => {
  await mg.deleteSpace(space).catch(() => undefined);
  writeCalled();
});

describe("health and browser", () => {
  test("healthz, readyz, the Browser guide and style", async () => {
    assert.deepEqual(await mg.healthz(), { status: "ok" });
    assert.equal((await mg.readyz()).ready, true);
    assert.ok((await mg.limits()).max_embedding_inputs > 0);
    assert.match(await mg.browserGuide(), /<article|<section|<h\d/i);
    assert.match(await mg.browserStyle(), /node/);
  });
});

describe("spaces", () => {
  test("create is idempotent, get has counts, update merges settings", async () => {
    assert.equal((await mg.createSpace(space)).created, false);
    const got = await mg.getSpace(space);
    assert.equal(got.id, space);
    assert.ok(got.counts && got.counts.memories >= 5);
    let changed = await mg.updateSpace(space, { settings: { gate: { enabled: true, threshold: 0.2 } } });
    assert.deepEqual(changed.settings, { gate: { enabled: true, threshold: 0.2 } });
    changed = await mg.updateSpace(space, { name: "TS", settings: { gate: null } });
    assert.deepEqual([changed.name, changed.settings], ["TS", {}]);
  });

  test("iterSpaces walks every page", async () => {
    const ids = [spaceId("pg"), spaceId("pg"), spaceId("pg")];
    for (const id of ids) await mg.createSpace(id);
    try {
      const seen = [];
      for await (const s of mg.iterSpaces({ pageSize: 2 })) seen.push(s.id);
      for (const id of ids) assert.ok(seen.includes(id), id);
      assert.equal(seen.length, new Set(seen).size);
      assert.ok((await mg.listSpaces({ skip: 0, limit: 1 })).length === 1);
    } finally {
      for (const id of ids) await mg.deleteSpace(id);
    }
  });
});

describe("memories, recall, context", () => {
  test("ingest, recall, context, get, supersede, timeline, delete", async () => {
    const again = await mg.addSession(space, SESSION);
    assert.ok(again.items.every((i) => i.decision === "unchanged"), "a re-sent session stores nothing");
    const note = await mg.addMemories(space, [{ id: "note-1", content: "The ledger must be audited yearly." }]);
    assert.equal(note.items[0].decision, "stored");
    const hits = await mg.recall(space, "Which database for the ledger?", { k: 3 });
    assert.ok(hits.results.length > 0);
    assert.match(hits.results[0].content, /Postgres/);
    const ctx = await mg.context(space, "Which database for the ledger?", 2000);
    assert.match(ctx.prompt, /Postgres/);
    assert.ok(Object.keys(ctx.included_ids).length > 0);
    const first = hits.results[0].id;
    const fixed = await mg.supersede(space, first, { reason: "moved", content: "We moved the ledger to SQLite." });
    assert.equal(fixed.older, first);
    assert.ok(fixed.created_memory);
    assert.equal((await mg.getMemory(space, first)).memory.status, "superseded");
    const chain = await mg.timeline(space, first);
    assert.equal(chain.memory_id, first);
    assert.ok(chain.chain.length >= 2);
    const supersessions = [];
    for await (const s of mg.iterSupersessions(space, { pageSize: 1 })) supersessions.push(s);
    assert.ok(supersessions.some((s) => s.older === first));
    const one = await mg.getSupersession(space, supersessions[0].id);
    assert.equal(one.id, supersessions[0].id);
    const reverted = await mg.revertSupersession(space, one.id);
    assert.equal(reverted.reverted, true);
    assert.equal((await mg.getMemory(space, first)).memory.status, "active");
    const gone = await mg.deleteMemory(space, "note-1");
    assert.equal(gone.deleted.memories, 1);
  });
});

describe("graph browsing", () => {
  test("entities, stages, stage schema, facts (paged)", async () => {
    const oneByOne = [];
    for await (const e of mg.iterEntities(space, { pageSize: 1 })) oneByOne.push(e.key);
    const all = (await mg.listEntities(space, { limit: 500 })).map((e) => e.key);
    assert.deepEqual(oneByOne, all);
    assert.ok(all.includes("lisbon"), JSON.stringify(all));
    const entity = await mg.getEntity(space, all[0], { limit: 5 });
    assert.equal(entity.entity.key, all[0]);
    const stages = [];
    for await (const s of mg.iterStages(space)) stages.push(s);
    const stage = stages.find((s) => s.id.includes("planning")) ?? stages[0];
    assert.ok(stage, "the session's explicit stage is listed");
    const detail = await mg.getStage(space, stage.id, { limit: 10 });
    assert.ok(detail);
    assert.equal((await mg.runJob(space, "schemas")).status, "ok"); // reads never build one
    const schema = await mg.stageSchema(space, stage.id);
    assert.equal(schema.stage_id, stage.id);
    const facts = [];
    for await (const f of mg.iterFacts(space, { pageSize: 2 })) facts.push(f.id);
    const listed = (await mg.listFacts(space, { limit: 1000 })).map((f) => f.id);
    assert.deepEqual(facts, listed);
  });
});

describe("jobs and merges", () => {
  test("run a job, list and get runs, merge and undo", async () => {
    const dry = await mg.runJob(space, "decay", { dry_run: true });
    assert.equal(dry.job, "decay");
    assert.equal(dry.status, "ok");
    const run = await mg.getJobRun(space, dry.id);
    assert.equal(run.id, dry.id);
    const merged = await mg.runJob(space, "merge", { dry_run: false });
    assert.ok(merged.counts.merged >= 1, JSON.stringify(merged)); // the two support-group turns
    const runs = [];
    for await (const r of mg.iterJobs(space, { pageSize: 1 })) runs.push(r.id);
    assert.ok([dry.id, merged.id].every((id) => runs.includes(id))); // and the schemas run
    assert.deepEqual((await mg.listJobs(space, { job: "merge" })).map((r) => r.id), [merged.id]);
    const merges = [];
    for await (const m of mg.iterMerges(space)) merges.push(m);
    assert.ok(merges.length >= 1 && merges.every((m) => m.status === "applied"));
    assert.equal((await mg.getMerge(space, merges[0].id)).status, "applied");
    const undone = await mg.undoMerge(space, merges[0].id);
    assert.ok(undone.restored >= 1);
    assert.deepEqual((await mg.listMerges(space, { status: "undone" })).map((m) => m.id), [merges[0].id]);
  });
});

describe("export and import", () => {
  test("export streams records; deleted, the space is restored by import", async () => {
    const records = [];
    for await (const r of mg.exportSpace(space, { embeddings: true })) records.push(r);
    assert.equal(records[0].type, "header");
    assert.equal(records.at(-1).type, "counts");
    const counts = await mg.exportCounts(space);
    assert.deepEqual(records.at(-1).nodes, counts.nodes);
    assert.deepEqual(records.at(-1).relationships, counts.relationships);
    await mg.deleteSpace(space);
    await assert.rejects(mg.exportCounts(space), NotFound);
    const result = await mg.importRecords(space, records, 10);
    assert.ok(Object.keys(result.nodes).length > 0);
    const restored = await mg.exportCounts(space);
    assert.deepEqual([restored.nodes, restored.relationships], [counts.nodes, counts.relationships]);
  });
});

describe("errors", () => {
  test("a 422 names the field, a 404 is NotFound", async () => {
    await assert.rejects(mg.recall(space, "anything", { k: 0 }), (e) => {
      assert.ok(e instanceof InvalidInput);
      assert.deepEqual([e.status, e.code, e.field], [422, "invalid_input", "k"]);
      return true;
    });
    await assert.rejects(mg.getMemory(space, "no-such-memory"), (e) => {
      assert.ok(e instanceof NotFound);
      assert.deepEqual([e.status, e.code], [404, "not_found"]);
      return true;
    });
    await assert.rejects(mg.recall(spaceId("none"), "x"), NotFound);
    await assert.rejects(mg.createSpace(space, { settings: { gate: { bogus: 1 } } }), (e) => {
      assert.ok(e instanceof InvalidInput && e.field?.startsWith("settings"), String(e.field));
      return true;
    });
  });
});

describe("auth", () => {
  const url = required("MNEMOGRAPH_TEST_SECURED_URL");
  const adminKey = required("MNEMOGRAPH_TEST_ADMIN_KEY");
  const limitedKey = required("MNEMOGRAPH_TEST_LIMITED_KEY");
  const limitedSpace = required("MNEMOGRAPH_TEST_LIMITED_SPACE");

  test("a bearer key is sent; a wrong key is Unauthorized, another space Forbidden", async () => {
    const admin = new Client({ baseUrl: url, apiKey: adminKey });
    const other = spaceId("other");
    await admin.createSpace(limitedSpace);
    await admin.createSpace(other);
    try {
      await assert.rejects(new Client({ baseUrl: url, apiKey: "wrong" }).listSpaces(), (e) => {
        assert.ok(e instanceof Unauthorized);
        assert.deepEqual([e.status, e.code], [401, "unauthorized"]);
        return true;
      });
      await assert.rejects(new Client({ baseUrl: url, apiKey: null }).listSpaces(), Unauthorized);
      const limited = new Client({ baseUrl: url, apiKey: limitedKey });
      const seen = [];
      for await (const s of limited.iterSpaces()) seen.push(s.id);
      assert.deepEqual(seen, [limitedSpace]);
      await assert.rejects(limited.recall(other, "x"), (e) => e instanceof Forbidden && e.status === 403);
    } finally {
      await admin.deleteSpace(limitedSpace);
      await admin.deleteSpace(other);
    }
  });
});

test("the route table names every client method", () => {
  for (const name of Object.keys(ROUTES)) assert.equal(typeof mg[name], "function", name);
});

describe("the README's agent loop", () => {
  test("remembers a turn, recalls it on the next, with the context as the system prompt", async () => {
    const { agentTurn } = await import("../examples/agent-loop.mjs");
    const prompts = [];
    const callModel = async ({ system, user }) => {
      prompts.push(system);
      return `Noted: ${user}`;
    };
    const chat = { space, sessionId: "chat-1", callModel };
    await agentTurn(mg, { ...chat, turn: 0, userText: "Our deploy target is Kubernetes on Hetzner." });
    const second = await agentTurn(mg, { ...chat, turn: 1, userText: "Where do we deploy?" });
    assert.match(prompts[1], /Kubernetes/);
    assert.ok(second.recalled.some((c) => c.includes("Kubernetes")), JSON.stringify(second.recalled));
    const stored = await mg.getMemory(space, "chat-1:0:assistant");
    assert.equal(stored.memory.text, "Noted: Our deploy target is Kubernetes on Hetzner.");
  });
});
