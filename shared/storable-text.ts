/**
 * Text PostgreSQL cannot store: U+0000 (refused in text and jsonb) and a surrogate without its other
 * half (not Unicode; jsonb refuses its escape). Callers refuse it at the edge or replace it.
 */
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const unstorableEverywhere = new RegExp(unstorable.source, 'g');

export function isStorableText(text: string): boolean {
  return !unstorable.test(text);
}

/** The text with each unstorable character replaced by U+FFFD (the replacement character). */
export function toStorableText(text: string): string {
  return unstorable.test(text) ? text.replace(unstorableEverywhere, '\ufffd') : text;
}

/**
 * The deepest nesting a request body or an agent's variables may have. Far more than any call needs,
 * and far less than what overflows a recursive validator (zod's z.json() throws RangeError a few
 * thousand levels down) or PostgreSQL's jsonb.
 */
export const maxJsonDepth = 64;

/** Where a JSON value holds something it should not: text that cannot be stored, or nesting too deep. */
export interface UnacceptableJson {
  problem: 'text' | 'fieldName' | 'depth';
  /** Down to the value; for `fieldName`, down to the object whose field name it is. */
  path: string[];
}

/**
 * The first place inside `value` with a string or field name that cannot be stored, or an object or
 * array nested deeper than `maxDepth`; undefined when there is none. Walks without recursion, so a
 * value of any depth is measured safely.
 */
export function findUnacceptableJson(value: unknown, maxDepth = Infinity): UnacceptableJson | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (pending.length) {
    const next = pending.pop()!;
    if (typeof next.value === 'string') {
      if (!isStorableText(next.value)) return { problem: 'text', path: next.path };
      continue;
    }
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.path.length >= maxDepth) return { problem: 'depth', path: next.path };
    for (const [key, child] of Object.entries(next.value)) {
      if (!isStorableText(key)) return { problem: 'fieldName', path: next.path };
      pending.push({ value: child, path: [...next.path, key] });
    }
  }
  return undefined;
}
