import type { Context } from 'koa';
import type { z } from 'zod';
import { invalidRequest } from '../shared/errors.js';

/** Parses the request body with its schema; a mismatch is a 400 naming each wrong field. */
export function validateBody<T extends z.ZodType>(schema: T, ctx: Context): z.output<T> {
  // koa-bodyparser leaves {} for an empty body.
  const body = (ctx.request as { body?: unknown }).body;
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    for (const key of unknownKeys) fields[[...issue.path, key].join('.')] = 'is not a known field';
    if (!unknownKeys.length) fields[issue.path.join('.') || '(body)'] ??= issue.message;
  }
  throw invalidRequest(fields);
}
