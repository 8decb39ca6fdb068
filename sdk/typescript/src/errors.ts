// Errors of the SDK: one class per error class of the API (as the Python SDK's
// mnemograph/client/errors.py), each carrying the server's code, message and field.

/** What the API's error body holds: `{"error": {"code", "message", "field", ...}}`. */
export interface ErrorBody {
  code?: string;
  message?: string;
  field?: string | null;
  details?: Array<{ field?: string | null; message?: string }> | null;
  may_have_committed?: boolean;
}

export interface ErrorInit {
  status?: number;
  code?: string;
  field?: string | null;
  details?: Array<Record<string, unknown>>;
  retryAfter?: number | null;
  mayHaveCommitted?: boolean | null;
  cause?: unknown;
}

/** A call failed. `status` is the HTTP status (0: no response), `code` the server's error
 * code, `message` the server's message, `field` the request field it names (if any), `details` every problem, `retryAfter`
 * the server's Retry-After in seconds, `mayHaveCommitted` the 503 body's flag (null: unsaid). */
export class MnemographError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | null;
  readonly details: Array<Record<string, unknown>>;
  readonly retryAfter: number | null;
  readonly mayHaveCommitted: boolean | null;

  constructor(message: string, init: ErrorInit = {}) {
    const status = init.status ?? 0;
    const code = init.code ?? "error";
    super(message, { cause: init.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.field = init.field ?? null;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter ?? null;
    this.mayHaveCommitted = init.mayHaveCommitted ?? null;
  }

  /** `NotFound: not_found (404): no space 'x'`: the class, code and status with the message. */
  override toString(): string {
    const where = this.status ? `${this.code} (${this.status}): ` : "";
    return `${this.name}: ${where}${this.message}`;
  }
}

/** 422 (and 400, 413): the request was refused; `field` names the offending field. */
export class InvalidInput extends MnemographError {}
/** 401: missing or unknown API key. */
export class Unauthorized extends MnemographError {}
/** 403: the API key may not access this space, or is read-only on a write route. */
export class Forbidden extends MnemographError {}
/** 404: no such space, memory, run, ... */
export class NotFound extends MnemographError {}
/** 409: e.g. a job already running for the space. */
export class Conflict extends MnemographError {}
/** 503 or 429 after the retries: the server or its database is busy or down. */
export class Unavailable extends MnemographError {}
/** The server could not be reached at all, or did not answer in time (after the retries). */
export class ConnectionFailed extends MnemographError {}

type ErrorClass = new (message: string, init?: ErrorInit) => MnemographError;

const BY_STATUS: ReadonlyMap<number, ErrorClass> = new Map<number, ErrorClass>([
  [400, InvalidInput],
  [401, Unauthorized],
  [403, Forbidden],
  [404, NotFound],
  [409, Conflict],
  [413, InvalidInput],
  [422, InvalidInput],
  [429, Unavailable],
  [503, Unavailable],
  [504, Unavailable],
]);

/** The error for a non-2xx answer: the API's error shape, or any other body (a proxy's). */
export function fromResponse(
  status: number,
  body: unknown,
  text: string,
  retryAfter: number | null,
): MnemographError {
  const cls = BY_STATUS.get(status) ?? MnemographError;
  const error = errorBody(body);
  if (error) {
    return new cls(String(error.message ?? ""), {
      status,
      code: String(error.code ?? "error"),
      field: typeof error.field === "string" ? error.field : null,
      details: Array.isArray(error.details) ? error.details : [],
      retryAfter,
      mayHaveCommitted: typeof error.may_have_committed === "boolean"
        ? error.may_have_committed
        : null,
    });
  }
  return new cls(text.slice(0, 500) || `HTTP ${status}`, {
    status,
    code: "http_error",
    retryAfter,
  });
}

function errorBody(body: unknown): ErrorBody | null {
  if (body && typeof body === "object" && "error" in body) {
    const error = (body as { error: unknown }).error;
    if (error && typeof error === "object") return error as ErrorBody;
  }
  return null;
}
