import type { Json } from '../../shared/api.js';
import { maxTraceEvents, type TraceEvent } from '../../shared/trace.js';
import type { JournalEntry, SandboxTrace } from '../sandbox/sandbox.types.js';
import { maskSecrets } from '../../shared/agent-secrets.js';
import type { SourceMapper } from './source-position.js';

/** Longest JSON text of one traced value, or of a log line, before it is cut to a preview. */
export const maxTracedValueLength = 2000;

export interface TraceRecorder {
  /** SandboxRun.onTrace: numbers the event, places it in the draft's source, and passes it on. */
  onTrace(event: SandboxTrace): number | undefined;
  /** Every event kept, in order (a non-streamed validation answers with them). */
  readonly events: TraceEvent[];
}

export interface TraceRecorderOptions {
  toSource: SourceMapper;
  /** Strings that must never appear in a trace (the password answers the run was given). */
  secrets: readonly string[];
  /** Called with each event as it is kept (a streamed validation sends it at once). */
  emit?: (event: TraceEvent) => void;
  now?: () => Date;
}

/**
 * Turns a traced run's sandbox events into the trace events of DESIGN §5: numbered from 1, timed,
 * placed in the draft's own source, with large values cut to a preview and password answers masked.
 * After `maxTraceEvents` one `truncated` event is kept and the rest are dropped.
 */
export function createTraceRecorder(options: TraceRecorderOptions): TraceRecorder {
  const events: TraceEvent[] = [];
  const now = options.now ?? (() => new Date());
  const secrets = options.secrets.filter((secret) => secret.length > 0);
  let seq = 0;
  const keep = (event: TraceEvent) => {
    events.push(event);
    options.emit?.(event);
  };
  return {
    events,
    onTrace(raw) {
      if (seq > maxTraceEvents) return undefined;
      seq += 1;
      const where = { seq, at: now().toISOString(), ...placeOf(raw, options.toSource) };
      if (seq > maxTraceEvents) {
        keep({ ...where, kind: 'truncated', line: null, column: null });
        return undefined;
      }
      keep({ ...where, ...detailsOf(raw, (value) => preview(redact(value, secrets))) } as TraceEvent);
      return seq;
    },
  };
}

/** The password answers in a run's journal: what its trace must never show. */
export function passwordAnswers(journal: readonly JournalEntry[]): string[] {
  const secrets: string[] = [];
  for (const entry of journal) {
    if (entry.op !== 'ask' || !entry.answers) continue;
    for (const input of entry.ask.inputs) {
      const answer = input.type === 'password' ? entry.answers[input.name] : undefined;
      if (answer !== undefined) secrets.push(...(Array.isArray(answer) ? answer : [answer]));
    }
  }
  return secrets;
}

function placeOf(raw: SandboxTrace, toSource: SourceMapper): { line: number | null; column: number | null } {
  const place = raw.site && toSource(raw.site);
  return place ? { line: place.line, column: place.column } : { line: null, column: null };
}

type Clean = (value: unknown) => Json;

function detailsOf(raw: SandboxTrace, clean: Clean) {
  switch (raw.kind) {
    case 'call':
      return { kind: raw.kind, name: raw.name, args: clean(raw.args) };
    case 'result':
      return {
        kind: raw.kind,
        name: raw.name,
        call: raw.call,
        ...('value' in raw ? { value: clean(raw.value) } : {}),
        ...(raw.error !== undefined ? { error: String(clean(raw.error)) } : {}),
      };
    case 'var':
      return { kind: raw.kind, scope: raw.scope, path: raw.path, op: raw.op, ...('value' in raw ? { value: clean(raw.value) } : {}) };
    case 'log':
      return { kind: raw.kind, text: String(clean(raw.text)) };
  }
}

/** Every string inside `value` with each secret replaced by the mask. */
function redact(value: unknown, secrets: readonly string[]): unknown {
  if (!secrets.length) return value;
  if (typeof value === 'string') return maskSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redact(key, secrets) as string, redact(item, secrets)]));
  }
  return value;
}

/** The value as JSON, or a string preview of its JSON text when that is longer than the limit. */
function preview(value: unknown): Json {
  if (typeof value === 'string') return value.length > maxTracedValueLength ? `${value.slice(0, maxTracedValueLength)}…` : value;
  const text = JSON.stringify(value ?? null);
  if (text.length <= maxTracedValueLength) return JSON.parse(text) as Json;
  return `${text.slice(0, maxTracedValueLength)}…`;
}
