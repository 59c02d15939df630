import type { TraceEvent } from '../api/types';

/** A draft run's trace (shared/trace.ts): each sys call, result, variable change and log line, in order. */
export function TraceList({ events }: { events: TraceEvent[] }) {
  if (!events.length) return null;
  return (
    <ol class="trace" aria-label="Trace">
      {events.map((event) => (
        <li key={event.seq} class={`trace-event trace-${event.kind}`}>
          <span class="trace-where">{event.line ? `line ${event.line}` : ''}</span> <span class="trace-what">{describe(event)}</span>
        </li>
      ))}
    </ol>
  );
}

function describe(event: TraceEvent): string {
  switch (event.kind) {
    case 'call':
      return `sys.${event.name}(${previewArguments(event.args)})`;
    case 'result':
      return event.error !== undefined ? `sys.${event.name} threw: ${event.error}` : `sys.${event.name} returned ${preview(event.value)}`;
    case 'var':
      return event.op === 'delete' ? `delete sys.${event.scope}.${event.path.join('.')}` : `sys.${event.scope}.${event.path.join('.')} = ${preview(event.value)}`;
    case 'log':
      return `log: ${event.text}`;
    case 'truncated':
      return 'More events were made than are kept; the rest are left out.';
  }
}

/** A call's arguments, which the trace names (`{markdown: "…"}`), as `markdown: "…"`. */
function previewArguments(args: unknown): string {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return preview(args);
  return Object.entries(args)
    .map(([name, value]) => `${name}: ${preview(value)}`)
    .join(', ');
}

function preview(value: unknown): string {
  if (value === undefined) return '';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
