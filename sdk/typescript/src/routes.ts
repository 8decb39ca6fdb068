// Every public route of the API, by the client method that calls it. One entry per line:
// tests/unit/test_sdk_ts_routes.py reads this file and checks it against the server's
// OpenAPI document, and the live test checks that each route is called.

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export interface Route {
  readonly method: Method;
  readonly path: string;
  /** A retry cannot change the outcome (reads, PATCH, DELETE, idempotent writes). */
  readonly idempotent: boolean;
}

export const ROUTES = {
  healthz: { method: "GET", path: "/healthz", idempotent: true },
  readyz: { method: "GET", path: "/readyz", idempotent: true },
  limits: { method: "GET", path: "/v1/limits", idempotent: true },
  browserGuide: { method: "GET", path: "/browser/guide", idempotent: true },
  browserStyle: { method: "GET", path: "/browser/style.grass", idempotent: true },
  listSpaces: { method: "GET", path: "/v1/spaces", idempotent: true },
  createSpace: { method: "POST", path: "/v1/spaces", idempotent: true },
  getSpace: { method: "GET", path: "/v1/spaces/{space}", idempotent: true },
  updateSpace: { method: "PATCH", path: "/v1/spaces/{space}", idempotent: true },
  deleteSpace: { method: "DELETE", path: "/v1/spaces/{space}", idempotent: true },
  addSession: { method: "POST", path: "/v1/spaces/{space}/sessions", idempotent: true },
  addMemories: { method: "POST", path: "/v1/spaces/{space}/memories", idempotent: false },
  getMemory: { method: "GET", path: "/v1/spaces/{space}/memories/{memory_id}", idempotent: true },
  deleteMemory: { method: "DELETE", path: "/v1/spaces/{space}/memories/{memory_id}", idempotent: true },
  supersede: { method: "POST", path: "/v1/spaces/{space}/memories/{memory_id}/supersede", idempotent: false },
  timeline: { method: "GET", path: "/v1/spaces/{space}/memories/{memory_id}/timeline", idempotent: true },
  recall: { method: "POST", path: "/v1/spaces/{space}/recall", idempotent: true },
  context: { method: "POST", path: "/v1/spaces/{space}/context", idempotent: true },
  listEntities: { method: "GET", path: "/v1/spaces/{space}/entities", idempotent: true },
  getEntity: { method: "GET", path: "/v1/spaces/{space}/entities/{key}", idempotent: true },
  listStages: { method: "GET", path: "/v1/spaces/{space}/stages", idempotent: true },
  getStage: { method: "GET", path: "/v1/spaces/{space}/stages/{stage_id}", idempotent: true },
  stageSchema: { method: "GET", path: "/v1/spaces/{space}/stages/{stage_id}/schema", idempotent: true },
  listFacts: { method: "GET", path: "/v1/spaces/{space}/facts", idempotent: true },
  runJob: { method: "POST", path: "/v1/spaces/{space}/jobs/{job}", idempotent: false },
  listJobs: { method: "GET", path: "/v1/spaces/{space}/jobs", idempotent: true },
  getJobRun: { method: "GET", path: "/v1/spaces/{space}/jobs/runs/{run_id}", idempotent: true },
  listMerges: { method: "GET", path: "/v1/spaces/{space}/merges", idempotent: true },
  getMerge: { method: "GET", path: "/v1/spaces/{space}/merges/{merge_id}", idempotent: true },
  undoMerge: { method: "POST", path: "/v1/spaces/{space}/merges/{merge_id}/undo", idempotent: false },
  listSupersessions: { method: "GET", path: "/v1/spaces/{space}/supersessions", idempotent: true },
  getSupersession: { method: "GET", path: "/v1/spaces/{space}/supersessions/{supersession_id}", idempotent: true },
  revertSupersession: { method: "POST", path: "/v1/spaces/{space}/supersessions/{supersession_id}/revert", idempotent: false },
  exportSpace: { method: "GET", path: "/v1/spaces/{space}/export", idempotent: true },
  exportCounts: { method: "GET", path: "/v1/spaces/{space}/export/counts", idempotent: true },
  importRecords: { method: "POST", path: "/v1/spaces/{space}/import", idempotent: true },
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;

/** The route's path with its `{params}` filled in, each one escaped as one segment. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}
