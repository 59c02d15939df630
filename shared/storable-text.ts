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

/** The path of the first string (or key) inside `value` that cannot be stored, or undefined. Walks without recursion. */
export function findUnstorableText(value: unknown): string[] | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (pending.length) {
    const next = pending.pop()!;
    if (typeof next.value === 'string') {
      if (!isStorableText(next.value)) return next.path;
      continue;
    }
    if (typeof next.value !== 'object' || next.value === null) continue;
    for (const [key, child] of Object.entries(next.value)) {
      if (!isStorableText(key)) return [...next.path, key];
      pending.push({ value: child, path: [...next.path, key] });
    }
  }
  return undefined;
}
