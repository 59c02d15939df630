import { useEffect, useState } from 'preact/hooks';
import { useDocumentTitle } from '../document-title';
import { ApiError, postJson } from '../api/http';
import type { AgentList } from '../api/types';
import { errorMessage } from '../messages';
import { followLink } from '../router';

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** For developers: their drafts (to edit and validate) and the published agents. */
export function DraftsView() {
  const [list, setList] = useState<AgentList | undefined>();
  const [error, setError] = useState<string | undefined>();
  useDocumentTitle('Drafts');

  useEffect(() => {
    postJson<AgentList>('/api/dev/listAgents', {}).then(setList, (err: unknown) =>
      setError(err instanceof ApiError ? errorMessage(err.body) : 'The list could not be loaded.'),
    );
  }, []);

  return (
    <section aria-labelledby="drafts-heading">
      <h1 id="drafts-heading">Develop</h1>
      <p>
        <a class="button" href="/dev/new" onClick={followLink}>
          New draft
        </a>
      </p>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      {list && (
        <>
          <h2>Drafts</h2>
          {list.drafts.length ? (
            <ul class="plain-list">
              {list.drafts.map((draft) => (
                <li key={draft.draftid}>
                  <a href={`/dev/drafts/${encodeURIComponent(draft.draftid)}`} onClick={followLink}>
                    {draft.agentName}
                  </a>{' '}
                  {!draft.compiles && <strong class="draft-broken">does not compile</strong>}{' '}
                  <span class="hint">saved {when.format(new Date(draft.updatedAt))}</span>
                </li>
              ))}
            </ul>
          ) : (
            <p>No drafts yet.</p>
          )}
          <h2>Published agents</h2>
          {list.agents.length ? (
            <ul class="plain-list">
              {list.agents.map((agent) => (
                <li key={agent.agentName}>
                  {agent.agentName} <span class="hint">version {agent.version}, {when.format(new Date(agent.publishedAt))}</span>
                </li>
              ))}
            </ul>
          ) : (
            <p>No agents published yet.</p>
          )}
        </>
      )}
    </section>
  );
}
