// Sending one call: URL, headers, timeout (AbortSignal), the retries the policy and the
// route allow, and reading the answer or raising the API's error.

import { ConnectionFailed, MnemographError, fromResponse } from "./errors.js";
import { mayRetryStatus, neverReached, parseRetryAfter, sleep, waitMs } from "./retry.js";
import type { RetryPolicy } from "./retry.js";
import { ROUTES, fillPath } from "./routes.js";
import type { RouteName } from "./routes.js";

/** Per call: abort it with `signal`, bound it with `timeoutMs` (each try). */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface Request {
  route: RouteName;
  params?: Record<string, string>;
  query?: Query | undefined;
  body?: unknown;
  /** Overrides the route's idempotency (ingest with explicit ids). */
  idempotent?: boolean;
  options?: CallOptions | undefined;
}

/** What a call did, for logs and tests: the route, its status (0: no answer), the try. */
export interface CallEvent {
  route: RouteName;
  method: string;
  path: string;
  status: number;
  attempt: number;
}

export interface TransportConfig {
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: typeof fetch;
  onCall?: ((event: CallEvent) => void) | undefined;
}

export class Transport {
  constructor(readonly config: TransportConfig) {}

  /** The answer to `req` after the retries allowed; a non-2xx answer raises. */
  async send(req: Request): Promise<Response> {
    const route = ROUTES[req.route];
    const idempotent = req.idempotent ?? route.idempotent;
    const path = fillPath(route.path, req.params ?? {});
    const url = this.config.baseUrl + path + queryString(req.query);
    const init: RequestInit = { method: route.method, headers: this.headers(req.body) };
    if (req.body !== undefined) init.body = JSON.stringify(req.body);
    for (let attempt = 1; ; attempt++) {
      const event = { route: req.route, method: route.method, path, attempt };
      let response: Response;
      try {
        response = await this.fetchOnce(url, init, req.options);
      } catch (error) {
        this.config.onCall?.({ ...event, status: 0 });
        const userAbort = req.options?.signal?.aborted === true;
        const retryable = !userAbort && (idempotent || neverReached(error));
        const wait = retryable ? waitMs(this.config.retry, attempt, null) : null;
        if (wait === null) throw this.failure(error, userAbort);
        await sleep(wait, req.options?.signal);
        continue;
      }
      this.config.onCall?.({ ...event, status: response.status });
      if (response.ok) return response;
      const failure = await readError(response);
      if (mayRetryStatus(response.status, idempotent, failure.mayHaveCommitted)) {
        const wait = waitMs(this.config.retry, attempt, failure.retryAfter);
        if (wait !== null) {
          await sleep(wait, req.options?.signal);
          continue;
        }
      }
      throw failure;
    }
  }

  /** The answer read as JSON. */
  async json<T>(req: Request): Promise<T> {
    const response = await this.send(req);
    return (await response.json()) as T;
  }

  private headers(body: unknown): Record<string, string> {
    const headers = { ...this.config.headers };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return headers;
  }

  private async fetchOnce(url: string, init: RequestInit, options?: CallOptions): Promise<Response> {
    const timeout = AbortSignal.timeout(options?.timeoutMs ?? this.config.timeoutMs);
    const signal = options?.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    return await this.config.fetch(url, { ...init, signal });
  }

  private failure(error: unknown, userAbort: boolean): unknown {
    if (userAbort || error instanceof MnemographError) return error;
    const name = (error as { name?: unknown } | null)?.name;
    const why = name === "TimeoutError" ? "no answer in time" : describe(error);
    return new ConnectionFailed(`cannot reach Mnemograph at ${this.config.baseUrl}: ${why}`, {
      cause: error,
    });
  }
}

async function readError(response: Response): Promise<MnemographError> {
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  return fromResponse(response.status, body, text, retryAfter);
}

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { message?: unknown; code?: unknown } } | null)?.cause;
  const detail = cause?.code ?? cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return detail ? `${message} (${String(detail)})` : message;
}
