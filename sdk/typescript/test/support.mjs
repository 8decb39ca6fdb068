// Shared by the Node tests: the live server's address from the environment (set by
// tests/integration/test_sdk_typescript.py) and a record of the routes each test called.
import { writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";

import { Client } from "../dist/index.js";

/** An environment variable the pytest runner sets; missing, the test fails (never skips). */
export function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests from tests/integration/test_sdk_typescript.py`);
  return value;
}

export const called = new Set();

/** A client on the live server that records every route answered with a 2xx. */
export function liveClient(options = {}) {
  return new Client({
    baseUrl: required("MNEMOGRAPH_TEST_URL"),
    apiKey: null,
    ...options,
    onCall: (event) => {
      if (event.status >= 200 && event.status < 300) called.add(event.route);
    },
  });
}

/** Write the routes called (for the coverage check in pytest). */
export function writeCalled() {
  const out = process.env.MNEMOGRAPH_TS_ROUTES_OUT;
  if (out) writeFileSync(out, JSON.stringify([...called].sort()));
}

export function spaceId(prefix) {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}
