import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { AgentexecClient, AgentexecError, type AdminRun, type RunTimelineEntry } from '../../../clients/typescript/src/index';
import { reportSessionEnded } from '../api/http';
import { OutputParts } from '../components/output-parts';
import { accountText, durationText, resultClass, when } from '../console-format';
import { useDocumentTitle } from '../document-title';
import { errorMessage } from '../messages';
import { followLink } from '../router';

/** How often a queued or running run is read again, until it ends. */
const refreshEveryMs = 2000;

type Loaded = { state: 'loading' } | { state: 'run'; run: AdminRun } | { state: 'missing' } | { state: 'failed'; message: string };

/** For admins (the console, DESIGN §18): one run of any caller, its timeline, output, error and trace id; Cancel while it goes on. */
export function RunView({ runId }: { runId: string }) {
  const client = useMemo(() => new AgentexecClient({ baseUrl: '' }), []);
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [reads, setReads] = useState(0);
  const [cancelNote, setCancelNote] = useState<string | undefined>();
  const run = loaded.state === 'run' ? loaded.run : undefined;
  useDocumentTitle(run ? `Run of ${run.agentName}` : 'Run');

  useEffect(() => {
    let current = true;
    client.adminGetRun(runId).then(
      (answer) => current && setLoaded({ state: 'run', run: answer }),
      (err: unknown) => {
        if (!current) return;
        if (err instanceof AgentexecError && err.status === 401) reportSessionEnded(err.status, { code: err.code, message: err.message });
        if (err instanceof AgentexecError && err.code === 'notFound') setLoaded({ state: 'missing' });
        else setLoaded({ state: 'failed', message: err instanceof AgentexecError && err.code !== 'network' ? errorMessage(err) : 'The run could not be loaded. Try again.' });
      },
    );
    return () => void (current = false);
  }, [client, runId, reads]);

  // A run still going is read again until it has ended.
  useEffect(() => {
    if (!run || run.status === 'ended') return;
    const timer = setTimeout(() => setReads((n) => n + 1), refreshEveryMs);
    return () => clearTimeout(timer);
  }, [run]);

  const cancel = async () => {
    setCancelNote(undefined);
    try {
      const cancelled = await client.adminCancelRun(runId);
      setCancelNote(cancelled ? 'Cancelled: the run ends stopped.' : 'The run had already ended.');
      setReads((n) => n + 1);
    } catch (err) {
      setCancelNote(err instanceof AgentexecError ? errorMessage(err) : 'The run could not be cancelled. Try again.');
    }
  };

  return (
    <section aria-labelledby="run-heading" class="console-page">
      <p>
        <a href="/runs" onClick={followLink}>
          ← Runs
        </a>
      </p>
      <h1 id="run-heading">{run ? `Run of ${run.agentName}` : 'Run'}</h1>
      {loaded.state === 'loading' && <p role="status">Loading…</p>}
      {loaded.state === 'missing' && <p class="field-error">No run has the id {runId}.</p>}
      {loaded.state === 'failed' && (
        <p class="field-error" role="alert">
          {loaded.message}
        </p>
      )}
      {run && (
        <>
          <RunFacts run={run} />
          {run.status !== 'ended' && (
            <p>
              <button type="button" class="stop" onClick={() => void cancel()}>
                Cancel run
              </button>
            </p>
          )}
          <p role="status" class="hint">
            {cancelNote}
          </p>
          <h2>Timeline</h2>
          <Timeline run={run} />
          {run.response?.error && (
            <>
              <h2>Error</h2>
              <p class="run-error">
                {run.response.error.message}
                {run.response.error.line !== undefined && ` (line ${run.response.error.line}${run.response.error.column !== undefined ? `, column ${run.response.error.column}` : ''})`}
              </p>
            </>
          )}
          {run.response && (
            <>
              <h2>Output</h2>
              {run.response.output.length ? <OutputParts parts={run.response.output} /> : <p class="hint">No output.</p>}
            </>
          )}
        </>
      )}
    </section>
  );
}

function RunFacts({ run }: { run: AdminRun }) {
  const facts: [string, ComponentChildren][] = [
    ['Status', run.status],
    ['Result', run.resultCode ? <span class={resultClass(run.resultCode)}>{run.resultCode}</span> : '—'],
    ['Account', accountText(run.account)],
    ['Agent version', run.draftId ? `draft ${run.draftId}, revision ${run.agentVersion ?? '—'}` : String(run.agentVersion ?? '—')],
    ['Conversation', <code>{run.convid}</code>],
    ['Run id', <code>{run.runId}</code>],
    ...(run.parentRunId ? ([['Called by', <ParentLink runId={run.parentRunId} />]] as [string, ComponentChildren][]) : []),
    ['Request id', run.requestId ? <code>{run.requestId}</code> : '—'],
    ['Started with', run.background ? 'submit (background)' : 'a call waiting for its answer'],
    ['Queued', timeText(run.submittedAt)],
    ['Started', timeText(run.startedAt)],
    ['Ended', timeText(run.finishedAt)],
    ['Duration', run.durationMs === null ? '—' : durationText(run.durationMs)],
    ['Trace id', run.traceId ? <code>{run.traceId}</code> : 'not traced (tracing is off in the process that ran it)'],
  ];
  return (
    <dl class="facts">
      {facts.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A child run's parent (sys.call, DESIGN §19): the run whose agent called this one, a link to its page. */
function ParentLink({ runId }: { runId: string }) {
  return (
    <a href={`/runs/${runId}`} onClick={followLink} data-parent-run>
      run <code>{runId}</code>
    </a>
  );
}

/** Queued, started, each entry of the run's timeline, ended: times from its start. */
function Timeline({ run }: { run: AdminRun }) {
  const origin = Date.parse(run.startedAt ?? run.submittedAt ?? '') || undefined;
  const rows: { at: string | null; what: ComponentChildren; kind: string }[] = [
    { at: run.submittedAt, what: 'Queued', kind: 'queued' },
    { at: run.startedAt, what: run.startedAt ? 'Started' : 'Not started yet', kind: 'started' },
    ...run.timeline.map((entry) => ({ at: entry.at, what: entryText(entry), kind: entry.kind })),
    ...(run.status === 'ended' ? [{ at: run.finishedAt, what: `Ended ${run.resultCode ?? ''}`, kind: 'ended' }] : []),
  ];
  return (
    <>
      <p class="hint">Times from the run's start.</p>
      <ol class="timeline">
        {rows.map((row, i) => (
          <li key={i} data-kind={row.kind}>
            <span class="timeline-at">
              {row.at ? (
                <time dateTime={row.at} title={when.format(new Date(row.at))}>
                  {offsetText(row.at, origin)}
                </time>
              ) : (
                '—'
              )}
            </span>
            <span class="timeline-what">{row.what}</span>
          </li>
        ))}
      </ol>
      {run.status === 'ended' && !run.timeline.length && <p class="hint">The run fetched, asked and logged nothing.</p>}
      {run.status !== 'ended' && <p class="hint">Its fetches, asks and log lines are shown once it has ended.</p>}
    </>
  );
}

function entryText(entry: RunTimelineEntry): ComponentChildren {
  switch (entry.kind) {
    case 'fetch':
      return (
        <>
          {entry.method} <code>{entry.url}</code> → {entry.status !== null ? <span class={entry.status < 400 ? 'run-result-ok' : 'run-result-failed'}>{entry.status}</span> : <span class="run-result-failed">failed: {entry.error}</span>} in{' '}
          {durationText(entry.durationMs)}
        </>
      );
    case 'ask':
      return `Asked: ${entry.message}`;
    case 'log':
      return (
        <>
          Log: <code>{entry.text}</code>
        </>
      );
    case 'truncated':
      return 'More happened than is kept.';
  }
}

/** `at` from the run's start (+12 ms; −1.2 s before it for the queueing); the wall-clock time when the run has no start yet. */
function offsetText(at: string, origin: number | undefined): string {
  if (origin === undefined) return when.format(new Date(at));
  const ms = Date.parse(at) - origin;
  return `${ms < 0 ? '−' : '+'}${durationText(Math.abs(ms))}`;
}

function timeText(at: string | null): ComponentChildren {
  return at ? <time dateTime={at}>{when.format(new Date(at))}</time> : '—';
}
