// mnemograph: the TypeScript client of the Mnemograph memory server.
export { Client, DEFAULT_URL } from "./client.js";
export type {
  ClientOptions,
  ContextOptions,
  ExportRecord,
  IngestOptions,
  JobName,
  Paging,
  RecallOptions,
  SpaceFields,
} from "./client.js";
export {
  Conflict,
  ConnectionFailed,
  Forbidden,
  InvalidInput,
  MnemographError,
  NotFound,
  Unauthorized,
  Unavailable,
  fromResponse,
} from "./errors.js";
export type { ErrorBody, ErrorInit } from "./errors.js";
export type { CallEvent, CallOptions } from "./http.js";
export { DEFAULT_RETRY, NO_RETRY, RETRY_STATUSES, mayRetryStatus, parseRetryAfter, waitMs } from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export { ROUTES, fillPath } from "./routes.js";
export type { Method, Route, RouteName } from "./routes.js";
export type * from "./types.gen.js";
