import type { Context } from 'koa';
import type { z } from 'zod';
import { invalidRequest, type FieldErrors } from '../shared/errors.js';
import { findUnacceptableJson, maxJsonDepth, type UnacceptableJson } from '../shared/storable-text.js';

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

const unacceptable: Record<UnacceptableJson['problem'], string> = {
  text: 'must not contain U+0000 or unpaired surrogates',
  fieldName: 'has a field name with U+0000 or unpaired surrogates',
  depth: `is nested deeper than ${maxJsonDepth} levels`,
};

/** What no schema should have to meet: nesting deeper than maxJsonDepth, and text that cannot be stored. */
function findUnacceptableValue(body: unknown): FieldErrors | undefined {
  const found = findUnacceptableJson(body, maxJsonDepth);
  return found && { [found.path.join('.') || '(body)']: unacceptable[found.problem] };
}
