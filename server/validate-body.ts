import type { Context } from 'koa';
import type { z } from 'zod';
import { invalidRequest, type FieldErrors } from '../shared/errors.js';
import { isStorableText } from '../shared/storable-text.js';

/**
 * The deepest nesting a body may have. Far more than any call needs, and far less than what overflows the
 * stack of a recursive validator (zod's z.json() throws RangeError a few thousand levels down).
 */
export const maxBodyDepth = 64;


/** Parses the request body with its schema; a mismatch is a 400 naming each wrong field. */
export function validateBody<T extends z.ZodType>(schema: T, ctx: Context): z.output<T> {
  // koa-bodyparser leaves {} for an empty body.
  const body = (ctx.request as { body?: unknown }).body ?? {};
  const unacceptable = findUnacceptableValue(body);
  if (unacceptable) throw invalidRequest(unacceptable);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const fields: FieldErrors = {};
  for (const issue of result.error.issues) {
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    for (const key of unknownKeys) fields[[...issue.path, key].join('.')] = 'is not a known field';
    if (!unknownKeys.length) fields[issue.path.join('.') || '(body)'] ??= issue.message;
  }
  throw invalidRequest(fields);
}

/**
 * What no schema should have to meet: nesting deeper than maxBodyDepth, and text that cannot be stored.
 * Walks the body without recursion, so a body of any depth is measured safely.
 */
function findUnacceptableValue(body: unknown): FieldErrors | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value: body, path: [] }];
  const name = (path: string[]) => path.join('.') || '(body)';
  while (pending.length) {
    const { value, path } = pending.pop()!;
    if (typeof value === 'string' && !isStorableText(value)) return { [name(path)]: 'must not contain U+0000 or unpaired surrogates' };
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= maxBodyDepth) return { [name(path)]: `is nested deeper than ${maxBodyDepth} levels` };
    for (const [key, child] of Object.entries(value)) {
      if (!isStorableText(key)) return { [name(path)]: 'has a field name with U+0000 or unpaired surrogates' };
      pending.push({ value: child, path: [...path, key] });
    }
  }
  return undefined;
}
