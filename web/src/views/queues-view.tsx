import { useEffect, useMemo, useState } from 'preact/hooks';
import { AgentexecClient, AgentexecError, type QueuesState } from '../../../clients/typescript/src/index';
import { reportSessionEnded } from '../api/http';
import { when } from '../console-format';
import { useDocumentTitle } from '../document-title';
import { errorMessage } from '../messages';

/** How often the page reads the queues again. */
const refreshEveryMs = 3000;

/**
 * For admins (the console, DESIGN §18): each shard's waiting, running and delayed runs, each live
 * worker's runs in flight, memory and whether it takes new runs; pausing and resuming intake.
 */
export function QueuesView() {
  useDocumentTitle('Queues and workers');
  const client = useMemo(() => new AgentexecClient({ baseUrl: '' }), []);
  const [state, setState] = useState<QueuesState | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [reads, setReads] = useState(0);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | undefined>();

  const failed = (err: unknown) => {
    if (err instanceof AgentexecError && err.status === 401) reportSessionEnded(err.status, { code: err.code, message: err.message });
    setError(err instanceof AgentexecError && err.code !== 'network' ? errorMessage(err) : 'The queues could not be loaded. Try again.');
  };

  useEffect(() => {
    let current = true;
    client.getQueues().then(
      (answer) => {
        if (!current) return;
        setState(answer);
        setError(undefined);
      },
      (err: unknown) => current && failed(err),
    );
    const timer = setTimeout(() => setReads((n) => n + 1), refreshEveryMs);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [client, reads]);

  const setPaused = async (paused: boolean) => {
    setBusy(true);
    try {
      setState(paused ? await client.pauseQueues() : await client.resumeQueues());
      setNote(paused ? 'Intake paused: no queued run starts until you resume.' : 'Intake resumed: queued runs start again.');
    } catch (err) {
      failed(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="queues-heading" class="console-page">
      <h1 id="queues-heading">Queues and workers</h1>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      {!state && !error && <p role="status">Loading…</p>}
      {state && (
        <>
          <div class="intake">
            <p>
              Intake: <strong class={state.paused ? 'run-result-failed' : 'run-result-ok'}>{state.paused ? 'paused' : 'running'}</strong>
            </p>
            {state.paused ? (
              <button type="button" disabled={busy} onClick={() => void setPaused(false)}>
                Resume intake
              </button>
            ) : (
              <button type="button" class="stop" disabled={busy} onClick={() => void setPaused(true)}>
                Pause intake
              </button>
            )}
          </div>
          <p role="status" class="hint">
            {note}
          </p>
          <h2 id="shards-heading">Run queues</h2>
          <div class="table-scroll">
            <table class="runs" aria-labelledby="shards-heading">
              <thead>
                <tr>
                  <th scope="col">Shard</th>
                  <th scope="col" class="number">Waiting</th>
                  <th scope="col" class="number">Running</th>
                  <th scope="col" class="number">Delayed</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {state.shards.map((shard) => (
                  <tr key={shard.shard} data-shard={shard.shard}>
                    <td>{shard.shard}</td>
                    <td class="number">{shard.waiting}</td>
                    <td class="number">{shard.running}</td>
                    <td class="number">{shard.delayed}</td>
                    <td>{shard.paused ? 'paused' : 'taking runs'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2 id="workers-heading">Workers</h2>
          <p class="hint">Each worker reports every 2 seconds; one not heard of for 10 seconds is left out.</p>
          {!state.workers.length && <p>No worker is running: queued runs wait until one starts.</p>}
          {state.workers.length > 0 && (
            <div class="table-scroll">
              <table class="runs" aria-labelledby="workers-heading">
                <thead>
                  <tr>
                    <th scope="col">Worker</th>
                    <th scope="col" class="number">Runs in flight</th>
                    <th scope="col" class="number">Memory</th>
                    <th scope="col">New runs</th>
                    <th scope="col">Started</th>
                  </tr>
                </thead>
                <tbody>
                  {state.workers.map((worker) => (
                    <tr key={worker.id} data-worker={worker.id}>
                      <td>
                        {worker.host} <span class="hint">pid {worker.pid}</span>
                      </td>
                      <td class="number">
                        {worker.runsInFlight} <span class="hint">of {worker.concurrency}</span>
                      </td>
                      <td class="number">
                        {worker.rssMb} MB <span class="hint">of {worker.memoryBudgetMb} MB</span>
                      </td>
                      <td>{worker.takingRuns ? (state.paused ? 'intake paused' : 'takes new runs') : <span class="run-result-failed">takes none (over its memory budget)</span>}</td>
                      <td>
                        <time dateTime={worker.startedAt}>{when.format(new Date(worker.startedAt))}</time>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
