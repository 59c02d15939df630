import assert from 'node:assert/strict';
import { errorStatus } from '../../shared/errors.js';
import type { RawResponse } from './raw-http.js';

const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;
const errorKeys = new Set(['code', 'message', 'details']);

/**
 * The answer contract for any input (DESIGN §2): never a 5xx; an answer from the application carries a
 * sane X-Request-Id; every non-2xx answer is the error body `{"error":{"code","message","details"?}}` with
 * a known code whose status is the HTTP status (an invalidRequest names what is wrong in details.fields).
 * Node's own HTTP parser refuses some requests (malformed header bytes, headers too large) before the
 * application sees them: a bare 400 or 431 without a body, which is allowed.
 */
export function assertKeepsContract(response: RawResponse, what: string, options: { bodyless?: boolean } = {}): void {
  assert.ok(Number.isInteger(response.status), `${what}: an HTTP status`);
  assert.ok(response.status < 500, `${what}: answered ${response.status} ${response.text.slice(0, 300)}`);
  if (isParserRefusal(response)) return;
  assert.match(response.headers['x-request-id'] ?? '', acceptableRequestId, `${what}: X-Request-Id`);
  // An answer to HEAD has no body to check.
  if (response.status < 300 || options.bodyless) return;
  assertErrorBody(response, what);
}

function isParserRefusal(response: RawResponse): boolean {
  return (response.status === 400 || response.status === 431) && response.text === '' && response.headers['x-request-id'] === undefined;
}

export function assertErrorBody(response: RawResponse, what: string): void {
  const body = response.json as { error?: Record<string, unknown> } | undefined;
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `${what}: a JSON error body, got ${response.status} ${response.headers['content-type']} ${response.text.slice(0, 200)}`);
  assert.deepEqual(Object.keys(body), ['error'], `${what}: only "error" at the top`);
  const error = body.error;
  assert.ok(error && typeof error === 'object' && !Array.isArray(error), `${what}: error is an object`);
  for (const key of Object.keys(error)) assert.ok(errorKeys.has(key), `${what}: unexpected error.${key}`);
  const code = error.code;
  assert.ok(typeof code === 'string' && Object.hasOwn(errorStatus, code), `${what}: known code, got ${String(code)}`);
  assert.equal(errorStatus[code as keyof typeof errorStatus], response.status, `${what}: ${code} goes with its own status`);
  assert.ok(typeof error.message === 'string' && error.message.length > 0, `${what}: a message`);
  assert.doesNotMatch(error.message, /\bat .*\.[jt]s:\d+|\n\s+at /, `${what}: no stack trace`);
  if ('details' in error) assert.ok(isPlainObject(error.details), `${what}: details is an object`);
  if (code === 'invalidRequest') {
    const fields = (error.details as { fields?: unknown } | undefined)?.fields;
    assert.ok(isPlainObject(fields) && Object.keys(fields).length > 0, `${what}: invalidRequest names its fields, got ${JSON.stringify(error.details)}`);
    for (const [field, problem] of Object.entries(fields)) assert.equal(typeof problem, 'string', `${what}: details.fields.${field}`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
