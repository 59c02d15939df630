import { createHmac } from 'node:crypto';
import { AppError, invalidRequest } from '../../shared/errors.js';

/**
 * Idempotency-Key (DESIGN §4): the first call with a key records its run for 24 h
 * (db/idempotency-keys.repository.ts); a retry with the same key from the same caller joins that run
 * instead of starting another. A retry with a different request under the same key is refused, as
 * running it would break the promise.
 */
export const idempotencyHeader = 'Idempotency-Key';
const acceptableKey = /^[A-Za-z0-9._:-]{1,128}$/;

/** The header's key, checked; undefined when the caller sent none. */
export function readIdempotencyKey(header: string): string | undefined {
  if (header === '') return undefined;
  if (!acceptableKey.test(header)) {
    throw invalidRequest({ [idempotencyHeader]: 'must be 1-128 letters, digits, or . _ : -' }, 'The Idempotency-Key header is not valid.');
  }
  return header;
}

/** Keyed digest of the request, kept in the key's record (the inputs may hold passwords, so never the request itself). */
export function fingerprintRequest(secret: string, request: unknown): string {
  return createHmac('sha256', `agentexec idempotency\0${secret}`).update(JSON.stringify(request)).digest('base64url');
}

/** A retry whose request is not the one its key was first used for. */
export function differentRequestError(): AppError {
  return new AppError('invalidRequest', `This ${idempotencyHeader} was used for a different request; use a new key.`, {
    fields: { [idempotencyHeader]: 'already used for a different request' },
  });
}
