// Retries and timeouts against a tiny local HTTP server that answers as an overloaded or
// failing Mnemograph does (503 with Retry-After, with or without may_have_committed).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import {
  Client,
  Conflict,
  ConnectionFailed,
  Forbidden,
  InvalidInput,
  MnemographError,
  NotFound,
  Unauthorized,
  Unavailable,
  fromResponse,
  parseRetryAfter,
  waitMs,
} from "../dist/index.js";

let server;
let base;
const hits = new Map();
const script = new Map(); // path -> answers to give in turn, then 200

function answer(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const busy = (committed, retryAfter = "0.05") => ({
  status: 503,
  headers: { "retry-after": retryAfter },
  body: {
    error: {
      code: "unavailable",
      message: "busy",
      field: null,
      ...(committed === undefined ? {} : { may_have_committed: committed }),
    },
  },
});

before(async () => {
  server = createServer((req, res) => {
    const path = req.url.split("?")[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === "/v1/spaces/hang/recall") return; // never answers
    const queue = script.get(path) ?? [];
    const next = queue.shift();
    if (next) return answer(res, next.status, next.body, next.headers);
    if (path === "/v1/spaces") return answer(res, 200, { spaces: [{ id: "s" }] });
    return answer(res, 200, { ok: true, auth: req.headers.authorization ?? null });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const client = (retry = {}) =>
  new Client({ baseUrl: base, apiKey: "k1", retry: { attempts: 4, maxWaitMs: 1000, ...retry } });

test("a read refused with 503 is retried after Retry-After, then succeeds", async () => {
  script.set("/v1/spaces", [busy(false), busy(undefined)]);
  hits.clear();
  const started = Date.now();
  const spaces = await client().listSpaces();
  assert.deepEqual(spaces.map((s) => s.id), ["s"]);
  assert.equal(hits.get("/v1/spaces"), 3);
  assert.ok(Date.now() - started >= 90, "waited Retry-After (0.05 s) twice");
});

test("a Retry-After beyond the bound is not waited out: the error comes at once", async () => {
  script.set("/v1/spaces/slow", [busy(false, "3600")]);
  hits.clear();
  await assert.rejects(client().getSpace("slow"), (e) => {
    assert.ok(e instanceof Unavailable);
    assert.deepEqual([e.status, e.code, e.retryAfter, e.mayHaveCommitted], [503, "unavailable", 3600, false]);
    return true;
  });
  assert.equal(hits.get("/v1/spaces/slow"), 1);
});

test("a non-idempotent write is retried only when the 503 says nothing was written", async () => {
  script.set("/v1/spaces/a/jobs/merge", [busy(false)]);
  hits.clear();
  assert.deepEqual((await client().runJob("a", "merge")).ok, true);
  assert.equal(hits.get("/v1/spaces/a/jobs/merge"), 2);
  for (const committed of [true, undefined]) {
    script.set("/v1/spaces/b/jobs/merge", [busy(committed)]);
    hits.clear();
    await assert.rejects(client().runJob("b", "merge"), (e) => {
      assert.ok(e instanceof Unavailable);
      assert.equal(e.mayHaveCommitted, committed ?? null);
      return true;
    });
    assert.equal(hits.get("/v1/spaces/b/jobs/merge"), 1, `may_have_committed=${committed}`);
  }
});

test("ingest with explicit ids is idempotent: retried even when the write may have committed", async () => {
  script.set("/v1/spaces/c/memories", [busy(true)]);
  hits.clear();
  await client().addMemories("c", [{ id: "m1", content: "x" }]);
  assert.equal(hits.get("/v1/spaces/c/memories"), 2);
  script.set("/v1/spaces/d/memories", [busy(true)]);
  hits.clear();
  await assert.rejects(client().addMemories("d", [{ content: "no id" }]), Unavailable);
  assert.equal(hits.get("/v1/spaces/d/memories"), 1);
});

test("429 is retried for any call; attempts are bounded", async () => {
  const limited = { status: 429, headers: { "retry-after": "0" }, body: { error: { code: "rate_limited", message: "slow down" } } };
  script.set("/v1/spaces/e/supersessions/x/revert", [limited]);
  hits.clear();
  await client().revertSupersession("e", "x");
  assert.equal(hits.get("/v1/spaces/e/supersessions/x/revert"), 2);
  script.set("/v1/spaces/f", [busy(false), busy(false), busy(false), busy(false)]);
  hits.clear();
  await assert.rejects(client({ attempts: 3 }).getSpace("f"), Unavailable);
  assert.equal(hits.get("/v1/spaces/f"), 3);
});

test("the bearer key is sent", async () => {
  const got = await client().getSpace("auth");
  assert.equal(got.auth, "Bearer k1");
});

test("a timeout aborts the call (AbortSignal): ConnectionFailed after the bounded retries", async () => {
  hits.clear();
  const started = Date.now();
  const mg = new Client({ baseUrl: base, timeoutMs: 100, retry: { attempts: 2, backoffMs: 10 } });
  await assert.rejects(mg.recall("hang", "q"), (e) => {
    assert.ok(e instanceof ConnectionFailed, String(e));
    assert.match(e.message, /no answer in time/);
    return true;
  });
  assert.equal(hits.get("/v1/spaces/hang/recall"), 2, "a read is retried after a timeout");
  assert.ok(Date.now() - started < 2000);
});

test("the caller's AbortSignal cancels without retrying", async () => {
  hits.clear();
  const controller = new AbortController();
  const pending = client().recall("hang", "q", {}, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("stop")), 50);
  await assert.rejects(pending, /stop/);
  assert.equal(hits.get("/v1/spaces/hang/recall"), 1);
});

test("a refused connection is retried, then ConnectionFailed", async () => {
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const mg = new Client({ baseUrl: `http://127.0.0.1:${port}`, retry: { attempts: 2, backoffMs: 5 } });
  await assert.rejects(mg.runJob("x", "decay"), (e) => {
    assert.ok(e instanceof ConnectionFailed);
    assert.equal(e.status, 0);
    assert.match(e.message, /ECONNREFUSED/);
    return true;
  });
});

test("Retry-After parsing and the backoff bounds", () => {
  assert.equal(parseRetryAfter("2"), 2);
  assert.equal(parseRetryAfter(null), null);
  assert.equal(parseRetryAfter("soon"), null);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now), 5);
  const policy = { attempts: 3, backoffMs: 100, maxWaitMs: 1000 };
  assert.equal(waitMs(policy, 1, null, () => 0), 50);
  assert.equal(waitMs(policy, 2, null, () => 1), 300);
  assert.equal(waitMs(policy, 3, null), null);
  assert.equal(waitMs(policy, 1, 2), null);
  assert.equal(waitMs(policy, 1, 0.5), 500);
});

test("error classes by status, as the Python SDK maps them; a proxy's body is http_error", () => {
  const expected = [
    [401, Unauthorized], [403, Forbidden], [404, NotFound], [409, Conflict],
    [422, InvalidInput], [429, Unavailable], [503, Unavailable], [500, MnemographError],
  ];
  for (const [status, cls] of expected) {
    const e = fromResponse(status, { error: { code: "c", message: "m", field: "f" } }, "", 1);
    assert.equal(e.constructor, cls, String(status));
    assert.deepEqual([e.status, e.code, e.message, e.field, e.retryAfter], [status, "c", "m", "f", 1]);
    assert.ok(e instanceof MnemographError && e instanceof Error);
  }
  const proxy = fromResponse(502, null, "<html>Bad gateway</html>", null);
  assert.deepEqual([proxy.constructor, proxy.code, proxy.message], [MnemographError, "http_error", "<html>Bad gateway</html>"]);
  assert.equal(String(fromResponse(404, { error: { code: "not_found", message: "no space" } }, "", null)), "NotFound: not_found (404): no space");
});
