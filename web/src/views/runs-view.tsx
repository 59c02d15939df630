import { useEffect, useMemo, useState } from 'preact/hooks';
import { AgentexecClient, AgentexecError, type RunListEntry, type RunListFilter, type RunListPage } from '../../../clients/typescript/src/index';
import { reportSessionEnded } from '../api/http';
import type { ResultCode } from '../api/types';
import { useDocumentTitle } from '../document-title';
import { errorMessage } from '../messages';
import { followLink } from '../router';
import { accountText, durationText, resultClass, when } from '../console-format';

const resultCodes: readonly ResultCode[] = ['success', 'ask', 'callFailed', 'failCommand', 'errorInAgent', 'unknownConversation', 'timedOut', 'stopped', 'mustLogin', 'unexpected'];
const pageSize = 50;

/** For admins (the console, DESIGN §18): every caller's ended runs, newest first, filtered by agent and result code, a page at a time. */
export function RunsView() {
  useDocumentTitle('Runs');
  const client = useMemo(() => new AgentexecClient({ baseUrl: '' }), []);
  const [agentInput, setAgentInput] = useState('');
  const [resultInput, setResultInput] = useState('');
  const [filter, setFilter] = useState<RunListFilter>({});
  // The cursor of each page shown so far (undefined: the first), so "Newer" goes back without a cursor the other way.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<RunListPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    let current = true;
    setPage(undefined);
    setError(undefined);
    client.listRuns(filter, { limit: pageSize, ...(cursor ? { cursor } : {}) }).then(
      (answer) => current && setPage(answer),
      (err: unknown) => {
        if (!current) return;
        if (err instanceof AgentexecError && err.status === 401) reportSessionEnded(err.status, { code: err.code, message: err.message });
        setError(err instanceof AgentexecError && err.code !== 'network' ? errorMessage(err) : 'The runs could not be loaded. Try again.');
      },
    );
    return () => void (current = false);
  }, [client, filter, cursor]);

  const apply = (event: Event) => {
    event.preventDefault();
    const agentName = agentInput.trim();
    setFilter({ ...(agentName ? { agentName } : {}), ...(resultInput ? { resultCode: resultInput as ResultCode } : {}) });
    setCursors([undefined]);
  };

  return (
    <section aria-labelledby="runs-heading">
      <h1 id="runs-heading">Runs</h1>
      <p class="hint">Every caller’s ended runs, newest first. Runs still queued or running appear once they end.</p>
      <form class="run-filters" role="search" aria-label="Filter runs" onSubmit={apply}>
        <div class="field">
          <label for="runs-agent">Agent</label>
          <input id="runs-agent" name="agentName" value={agentInput} onInput={(e) => setAgentInput(e.currentTarget.value)} placeholder="any agent" autoComplete="off" />
        </div>
        <div class="field">
          <label for="runs-result">Result code</label>
          <select id="runs-result" name="resultCode" value={resultInput} onChange={(e) => setResultInput(e.currentTarget.value)}>
            <option value="">any result</option>
            {resultCodes.map((code) => (
              <option key={code} value={code}>
                {code}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Show runs</button>
      </form>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      {!page && !error && <p role="status">Loading…</p>}
      {page && !page.runs.length && <p role="status">No runs match.</p>}
      {page && page.runs.length > 0 && <RunsTable runs={page.runs} />}
      <nav class="pager" aria-label="Pages of runs">
        {cursors.length > 1 && (
          <button type="button" class="secondary" onClick={() => setCursors((list) => list.slice(0, -1))}>
            Newer
          </button>
        )}
        {page?.nextCursor && (
          <button type="button" class="secondary" onClick={() => setCursors((list) => [...list, page.nextCursor!])}>
            Older
          </button>
        )}
      </nav>
    </section>
  );
}

function RunsTable({ runs }: { runs: RunListEntry[] }) {
  return (
    <div class="table-scroll">
      <table class="runs">
        <caption class="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Agent</th>
            <th scope="col">Account</th>
            <th scope="col">Result</th>
            <th scope="col" class="number">
              Duration
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.runId} data-run-id={run.runId}>
              <td>
                <a href={`/runs/${run.runId}`} onClick={followLink}>
                  <time dateTime={run.startedAt}>{when.format(new Date(run.startedAt))}</time>
                </a>
              </td>
              <td>
                {run.agentName}
                {run.draftId && <span class="hint"> (draft)</span>}
              </td>
              <td>{accountText(run.account)}</td>
              <td>
                <span class={resultClass(run.resultCode)}>{run.resultCode}</span>
              </td>
              <td class="number">{durationText(run.durationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
