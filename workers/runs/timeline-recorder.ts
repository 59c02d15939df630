import { maskSecrets } from '../../shared/agent-secrets.js';
import { maxTimelineEntries, maxTimelineTextLength, type TimelineEntry } from '../../shared/run-timeline.js';
import { toStorableText } from '../../shared/storable-text.js';

/** A run's timeline as it is made (SandboxRun.onTimeline), for its execution record. */
export interface TimelineRecorder {
  onTimeline(entry: TimelineEntry): void;
  /** Every entry kept, in order. */
  readonly entries: TimelineEntry[];
}

/**
 * Keeps a run's timeline entries (shared/run-timeline.ts): `secrets` (the agent's secret values, the
 * password answers the run was given) masked in every text, a URL without its query or fragment (where
 * keys and personal data travel), texts cut, and past `maxTimelineEntries` one `truncated` entry.
 */
export function createTimelineRecorder(secrets: readonly string[]): TimelineRecorder {
  const entries: TimelineEntry[] = [];
  const values = secrets.filter((secret) => secret.length > 0);
  const clean = (text: string) => cut(values.length ? maskSecrets(text, values) : text);
  return {
    entries,
    onTimeline(entry) {
      if (entries.length > maxTimelineEntries) return;
      if (entries.length === maxTimelineEntries) {
        entries.push({ kind: 'truncated', at: entry.at });
        return;
      }
      entries.push(cleanEntry(entry, clean));
    },
  };
}

function cleanEntry(entry: TimelineEntry, clean: (text: string) => string): TimelineEntry {
  switch (entry.kind) {
    case 'fetch':
      return { ...entry, url: clean(withoutQuery(entry.url)), error: entry.error === null ? null : clean(entry.error) };
    case 'ask':
      return { ...entry, message: clean(entry.message) };
    case 'log':
      return { ...entry, text: clean(entry.text) };
    case 'truncated':
      return entry;
  }
}

function withoutQuery(url: string): string {
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
}

/** Cut to maxTimelineTextLength, never between the halves of a surrogate pair; what PostgreSQL cannot store replaced. */
function cut(text: string): string {
  if (text.length <= maxTimelineTextLength) return toStorableText(text);
  let end = maxTimelineTextLength - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${toStorableText(text.slice(0, end))}…`;
}
