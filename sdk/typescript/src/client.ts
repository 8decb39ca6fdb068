// The client: one method per route of the API (see ROUTES), async iterators over listings.

import { Transport } from "./http.js";
import type { CallEvent, CallOptions, Query, Request } from "./http.js";
import { DEFAULT_RETRY } from "./retry.js";
import type { RetryPolicy } from "./retry.js";
import type * as T from "./types.gen.js";

export const DEFAULT_URL = "http://127.0.0.1:8000";

export interface ClientOptions {
  /** Default: `MNEMOGRAPH_URL`, else http://127.0.0.1:8000. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <key>`. Default: `MNEMOGRAPH_API_KEY`. */
  apiKey?: string | null;
  /** Each try of a call (default 60 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  headers?: Record<string, string>;
  /** Another fetch (a proxy agent, a test double). Default: the platform's. */
  fetch?: typeof fetch;
  /** Called after every try of every call. */
  onCall?: (event: CallEvent) => void;
}

export type JobName = T.RunJobPath["job"];
export type RecallOptions = Omit<T.RecallRequest, "query">;
export type ContextOptions = Omit<T.ContextRequest, "query" | "context_window">;
export type IngestOptions = Omit<T.MemoriesCreate, "memories">;
export type SpaceFields = Omit<T.NewSpace, "id">;
/** One record of an export (JSON Lines): header, space, nodes, relationships, counts. */
export type ExportRecord = T.ImportBatch["records"][number];
export interface Paging {
  pageSize?: number;
}

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name];
}

/** Mnemograph over HTTP: `new Client({ baseUrl, apiKey })`, then `await client.recall(...)`. */
export class Client {
  readonly baseUrl: string;
  private readonly http: Transport;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? env("MNEMOGRAPH_URL") ?? DEFAULT_URL).replace(/\/+$/, "");
    const apiKey = options.apiKey === undefined ? env("MNEMOGRAPH_API_KEY") : options.apiKey;
    const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
    if (apiKey) headers["Authorization"] = `Bearer ${apiKey}`;
    this.http = new Transport({
      baseUrl: this.baseUrl,
      headers,
      timeoutMs: options.timeoutMs ?? 60_000,
      retry: { ...DEFAULT_RETRY, ...options.retry },
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      onCall: options.onCall,
    });
  }

  private call<R>(req: Request): Promise<R> {
    return this.http.json<R>(req);
  }

  /** Every item of a listing, fetched page by page (`skip`/`limit`). */
  async *paginate<I>(
    page: (skip: number, limit: number) => Promise<I[]>,
    pageSize = 100,
  ): AsyncGenerator<I, void, undefined> {
    for (let skip = 0; ; skip += pageSize) {
      const items = await page(skip, pageSize);
      yield* items;
      if (items.length < pageSize) return;
    }
  }

  // -- health --------------------------------------------------------------------------
  healthz(options?: CallOptions): Promise<{ status: string }> {
    return this.call({ route: "healthz", options });
  }

  /** Readiness (Neo4j, GDS, indexes, models). A 503 is retried per the policy and raised
   * as `Unavailable` when the server stays unready. */
  readyz(options?: CallOptions): Promise<Record<string, unknown> & { ready: boolean }> {
    return this.call({ route: "readyz", options });
  }

  /** The server's request limits (items, characters, body bytes, embedding inputs per request). */
  limits(options?: CallOptions): Promise<T.Limits> {
    return this.call({ route: "limits", options });
  }

  /** The Neo4j Browser guide (HTML) the server serves. */
  async browserGuide(options?: CallOptions): Promise<string> {
    return await (await this.http.send({ route: "browserGuide", options })).text();
  }

  /** Neo4j Browser's graph style (GraSS). */
  async browserStyle(options?: CallOptions): Promise<string> {
    return await (await this.http.send({ route: "browserStyle", options })).text();
  }

  // -- spaces --------------------------------------------------------------------------
  async listSpaces(query: T.ListSpacesQuery = {}, options?: CallOptions): Promise<T.Space[]> {
    const page = await this.call<T.SpaceList>({ route: "listSpaces", query: q(query), options });
    return page.spaces;
  }

  iterSpaces(paging: Paging = {}): AsyncGenerator<T.Space, void, undefined> {
    return this.paginate((skip, limit) => this.listSpaces({ skip, limit }), paging.pageSize);
  }

  /** Create a space (an existing id returns it unchanged, `created: false`). */
  createSpace(space: string, fields: SpaceFields = {}, options?: CallOptions): Promise<T.SpaceCreated> {
    return this.call({ route: "createSpace", body: { id: space, ...fields }, options });
  }

  getSpace(space: string, options?: CallOptions): Promise<T.Space> {
    return this.call({ route: "getSpace", params: { space }, options });
  }

  /** Change a space; `settings` is a JSON merge patch (a null value removes that key). */
  updateSpace(space: string, patch: T.SpacePatch, options?: CallOptions): Promise<T.Space> {
    return this.call({ route: "updateSpace", params: { space }, body: patch, options });
  }

  /** Delete a space and everything in it. */
  deleteSpace(space: string, options?: CallOptions): Promise<T.SpaceDeleted> {
    return this.call({ route: "deleteSpace", params: { space }, options });
  }

  // -- writing -------------------------------------------------------------------------
  /** Store one conversation session in one transaction (idempotent: turn ids default to
   * `session_id#index`, so a retry stores nothing twice). */
  addSession(space: string, session: T.SessionCreate, options?: CallOptions): Promise<T.IngestResponse> {
    return this.call({ route: "addSession", params: { space }, body: session, options });
  }

  /** Store free memories in one transaction. Retried after a 503 that may have committed
   * only when every memory has an explicit `id` (then a retry is idempotent). */
  addMemories(
    space: string,
    memories: T.MemoryCreate[],
    ingest: IngestOptions = {},
    options?: CallOptions,
  ): Promise<T.IngestResponse> {
    const idempotent = memories.length > 0 && memories.every((m) => typeof m.id === "string");
    const body = { ...ingest, memories };
    return this.call({ route: "addMemories", params: { space }, body, idempotent, options });
  }

  /** A memory with its entities, facts, stage, session, neighbours and supersessions. */
  getMemory(space: string, memoryId: string, options?: CallOptions): Promise<T.MemoryDetail> {
    return this.call({ route: "getMemory", params: { space, memory_id: memoryId }, options });
  }

  deleteMemory(space: string, memoryId: string, options?: CallOptions): Promise<T.MemoryDeleted> {
    return this.call({ route: "deleteMemory", params: { space, memory_id: memoryId }, options });
  }

  /** Retire `memoryId` in favour of new `content` or of `by_memory_id` (history kept). */
  supersede(
    space: string,
    memoryId: string,
    request: T.SupersedeRequest,
    options?: CallOptions,
  ): Promise<T.SupersedeResult> {
    const params = { space, memory_id: memoryId };
    return this.call({ route: "supersede", params, body: request, options });
  }

  /** The supersession chain `memoryId` belongs to, oldest first. */
  timeline(space: string, memoryId: string, options?: CallOptions): Promise<T.Timeline> {
    return this.call({ route: "timeline", params: { space, memory_id: memoryId }, options });
  }

  // -- reading -------------------------------------------------------------------------
  /** Ranked memories for `query`; `abstain` says when the evidence is weak. */
  recall(space: string, query: string, more: RecallOptions = {}, options?: CallOptions): Promise<T.RecallOut> {
    return this.call({ route: "recall", params: { space }, body: { ...more, query }, options });
  }

  /** The context for `query` within `contextWindow` tokens: `prompt` is ready to send,
   * `report` says what was selected and cut. */
  context(
    space: string,
    query: string,
    contextWindow: number,
    more: ContextOptions = {},
    options?: CallOptions,
  ): Promise<T.ContextOut> {
    const body = { ...more, query, context_window: contextWindow };
    return this.call({ route: "context", params: { space }, body, options });
  }

  async listEntities(space: string, query: T.ListEntitiesQuery = {}, options?: CallOptions): Promise<T.Entity[]> {
    const req = { route: "listEntities", params: { space }, query: q(query), options } as const;
    return (await this.call<T.EntityList>(req)).entities;
  }

  iterEntities(space: string, filter: { q?: string } & Paging = {}): AsyncGenerator<T.Entity, void, undefined> {
    const { pageSize, ...rest } = filter;
    return this.paginate((skip, limit) => this.listEntities(space, { ...rest, skip, limit }), pageSize);
  }

  getEntity(space: string, key: string, query: T.GetEntityQuery = {}, options?: CallOptions): Promise<T.EntityDetail> {
    return this.call({ route: "getEntity", params: { space, key }, query: q(query), options });
  }

  async listStages(space: string, query: T.ListStagesQuery = {}, options?: CallOptions): Promise<T.StageSummary[]> {
    const req = { route: "listStages", params: { space }, query: q(query), options } as const;
    return (await this.call<T.StageList>(req)).stages;
  }

  iterStages(space: string, paging: Paging = {}): AsyncGenerator<T.StageSummary, void, undefined> {
    return this.paginate((skip, limit) => this.listStages(space, { skip, limit }), paging.pageSize);
  }

  getStage(space: string, stageId: string, query: T.GetStageQuery = {}, options?: CallOptions): Promise<T.StageDetail> {
    const params = { space, stage_id: stageId };
    return this.call({ route: "getStage", params, query: q(query), options });
  }

  /** The stage's schema summary, built now if missing or stale. */
  stageSchema(
    space: string,
    stageId: string,
    query: T.StageSchemaQuery = {},
    options?: CallOptions,
  ): Promise<T.StageSchema> {
    const params = { space, stage_id: stageId };
    return this.call({ route: "stageSchema", params, query: q(query), options });
  }

  async listFacts(space: string, query: T.ListFactsQuery = {}, options?: CallOptions): Promise<T.Fact[]> {
    const req = { route: "listFacts", params: { space }, query: q(query), options } as const;
    return (await this.call<T.FactList>(req)).facts;
  }

  iterFacts(
    space: string,
    filter: Omit<T.ListFactsQuery, "skip" | "limit"> & Paging = {},
  ): AsyncGenerator<T.Fact, void, undefined> {
    const { pageSize, ...rest } = filter;
    return this.paginate((skip, limit) => this.listFacts(space, { ...rest, skip, limit }), pageSize);
  }

  // -- jobs ----------------------------------------------------------------------------
  /** Run one consolidation job now (`Conflict` while another runner holds its lease). */
  runJob(space: string, job: JobName, request: T.JobRequest = {}, options?: CallOptions): Promise<T.JobRun> {
    return this.call({ route: "runJob", params: { space, job }, body: request, options });
  }

  /** Recorded runs, newest first. */
  async listJobs(space: string, query: T.ListRunsQuery = {}, options?: CallOptions): Promise<T.JobRun[]> {
    const req = { route: "listJobs", params: { space }, query: q(query), options } as const;
    return (await this.call<T.JobRunList>(req)).runs;
  }

  iterJobs(
    space: string,
    filter: { job?: JobName } & Paging = {},
  ): AsyncGenerator<T.JobRun, void, undefined> {
    const { pageSize = 50, ...rest } = filter;
    return this.paginate((skip, limit) => this.listJobs(space, { ...rest, skip, limit }), pageSize);
  }

  getJobRun(space: string, runId: string, options?: CallOptions): Promise<T.JobRun> {
    return this.call({ route: "getJobRun", params: { space, run_id: runId }, options });
  }

  // -- merges and supersessions --------------------------------------------------------
  async listMerges(space: string, query: T.ListMergesQuery = {}, options?: CallOptions): Promise<T.Merge[]> {
    const req = { route: "listMerges", params: { space }, query: q(query), options } as const;
    return (await this.call<T.MergeList>(req)).merges;
  }

  iterMerges(
    space: string,
    filter: { status?: string } & Paging = {},
  ): AsyncGenerator<T.Merge, void, undefined> {
    const { pageSize = 50, ...rest } = filter;
    return this.paginate((skip, limit) => this.listMerges(space, { ...rest, skip, limit }), pageSize);
  }

  getMerge(space: string, mergeId: string, options?: CallOptions): Promise<T.Merge> {
    return this.call({ route: "getMerge", params: { space, merge_id: mergeId }, options });
  }

  /** Undo a merge exactly: the duplicates active again, the canonical's counters restored. */
  undoMerge(space: string, mergeId: string, options?: CallOptions): Promise<T.MergeUndone> {
    return this.call({ route: "undoMerge", params: { space, merge_id: mergeId }, options });
  }

  async listSupersessions(
    space: string,
    query: T.ListSupersessionsQuery = {},
    options?: CallOptions,
  ): Promise<T.Supersession[]> {
    const req = { route: "listSupersessions", params: { space }, query: q(query), options } as const;
    return (await this.call<T.SupersessionList>(req)).supersessions;
  }

  iterSupersessions(
    space: string,
    filter: { by?: string } & Paging = {},
  ): AsyncGenerator<T.Supersession, void, undefined> {
    const { pageSize = 50, ...rest } = filter;
    return this.paginate((skip, limit) => this.listSupersessions(space, { ...rest, skip, limit }), pageSize);
  }

  getSupersession(space: string, supersessionId: string, options?: CallOptions): Promise<T.Supersession> {
    const params = { space, supersession_id: supersessionId };
    return this.call({ route: "getSupersession", params, options });
  }

  /** Undo a supersession: the older memory and its facts get their prior status back. */
  revertSupersession(
    space: string,
    supersessionId: string,
    options?: CallOptions,
  ): Promise<T.SupersessionReverted> {
    const params = { space, supersession_id: supersessionId };
    return this.call({ route: "revertSupersession", params, options });
  }

  // -- export and import ---------------------------------------------------------------
  /** The space's records (JSON Lines, streamed), header first and counts last. */
  async *exportSpace(
    space: string,
    query: T.ExportSpaceQuery = {},
    options?: CallOptions,
  ): AsyncGenerator<ExportRecord, void, undefined> {
    const response = await this.http.send({ route: "exportSpace", params: { space }, query: q(query), options });
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffered = "";
    const reader = response.body.getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffered += decoder.decode(read.value, { stream: true });
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) if (line.trim()) yield JSON.parse(line) as ExportRecord;
      }
    } finally {
      reader.releaseLock();
      await response.body.cancel().catch(() => undefined); // a consumer that stopped early
    }
    buffered += decoder.decode();
    if (buffered.trim()) yield JSON.parse(buffered) as ExportRecord;
  }

  /** What an export of the space holds, counted by the server (import verification). */
  exportCounts(space: string, options?: CallOptions): Promise<T.TransferCounts> {
    return this.call({ route: "exportCounts", params: { space }, options });
  }

  /** Send exported records in batches (each one transaction; idempotent), counts summed. */
  async importRecords(
    space: string,
    records: Iterable<ExportRecord> | AsyncIterable<ExportRecord>,
    batch = 500,
    options?: CallOptions,
  ): Promise<T.ImportResult> {
    const total: T.ImportResult = { nodes: {}, relationships: {} };
    let chunk: ExportRecord[] = [];
    const flush = async (): Promise<void> => {
      const body: T.ImportBatch = { records: chunk };
      const result = await this.call<T.ImportResult>({ route: "importRecords", params: { space }, body, options });
      add(total.nodes, result.nodes);
      add(total.relationships, result.relationships);
      chunk = [];
    };
    for await (const record of records) {
      chunk.push(record);
      if (chunk.length >= batch) await flush();
    }
    if (chunk.length) await flush();
    return total;
  }
}

function q(query: object): Query {
  return query as Query;
}

function add(into: Record<string, number>, more: Record<string, number>): void {
  for (const [key, n] of Object.entries(more)) into[key] = (into[key] ?? 0) + n;
}
