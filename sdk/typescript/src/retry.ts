// Retries: which failures a retry may cure, and how long to wait (the server's Retry-After,
// else exponential backoff with jitter), bounded in attempts and in wait.

/** Retries of refused calls and of connections that failed. A `Retry-After` longer than
 * `maxWaitMs` is not waited out (the error is raised at once); at most `attempts` tries. */
export interface RetryPolicy {
  attempts: number;
  backoffMs: number;
  maxWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, backoffMs: 250, maxWaitMs: 30_000 };
export const NO_RETRY: RetryPolicy = { attempts: 1, backoffMs: 0, maxWaitMs: 0 };

/** Milliseconds to wait before try `attempt + 1` (`attempt` counts from 1), or null: give up.
 * `retryAfterS` is the server's Retry-After in seconds, when it sent one. */
export function waitMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterS: number | null,
  random: () => number = Math.random,
): number | null {
  if (attempt >= policy.attempts) return null;
  if (retryAfterS !== null) {
    const ms = retryAfterS * 1000;
    return ms <= policy.maxWaitMs ? ms : null;
  }
  const base = policy.backoffMs * 2 ** (attempt - 1);
  return Math.min(policy.maxWaitMs, base * (0.5 + random()));
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.max(0, Number(trimmed));
  const when = Date.parse(trimmed);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - now) / 1000);
}

/** Statuses a retry may cure: the server refused the call or was overloaded or down. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Whether a refused answer may be retried (the shared 503 contract): 429 always (refused
 * before any work); 502-504 when the call is idempotent, or when the body says that nothing
 * was written (`may_have_committed: false`; a missing flag counts as true). */
export function mayRetryStatus(
  status: number,
  idempotent: boolean,
  mayHaveCommitted: boolean | null,
): boolean {
  if (!RETRY_STATUSES.has(status)) return false;
  if (status === 429 || idempotent) return true;
  return mayHaveCommitted === false;
}

const NEVER_REACHED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

/** Whether a failed fetch never reached the server (then any call may be retried). */
export function neverReached(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === "string" && NEVER_REACHED.has(cause.code);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort(): void {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });
}
