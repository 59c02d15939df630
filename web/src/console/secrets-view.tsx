import { useState } from 'preact/hooks';
import type { SecretName } from '../../../clients/typescript/src/index';
import { useDocumentTitle } from '../document-title';
import { LoadState, StatusLine } from './page-state';
import { formatTime, useAdmin, useChanges, useLoaded } from './use-admin';

const setName = (forDrafts: boolean) => (forDrafts ? 'drafts' : 'published versions');

/**
 * The console's Secrets (DESIGN §13, §18): every agent name's secret names, in the set its published
 * versions read or the one its drafts read. Values are sealed when set and never shown again.
 */
export function SecretsView() {
  useDocumentTitle('Secrets');
  const admin = useAdmin();
  const secrets = useLoaded(() => admin.listSecrets(), [], 'The secrets could not be loaded. Try again.');
  const { status, change } = useChanges(secrets);
  const remove = (secret: SecretName) => {
    if (!confirm(`Delete the secret ${secret.key} of ${secret.agentName} (${setName(secret.forDrafts)})? Its runs no longer read it.`)) return;
    void change(async () => {
      await admin.deleteSecret({ agentName: secret.agentName, key: secret.key, forDrafts: secret.forDrafts });
      return `${secret.key} of ${secret.agentName} was deleted.`;
    }, 'The secret could not be deleted. Try again.');
  };

  return (
    <section aria-labelledby="secrets-heading">
      <h1 id="secrets-heading">Secrets</h1>
      <p class="hint">An agent reads its secrets as sys.secrets. Its drafts read only the secrets set for drafts. Values are never shown.</p>
      <StatusLine status={status} />
      <LoadState loaded={secrets} />
      {secrets.value && !secrets.value.length && <p>No agent has secrets yet.</p>}
      {secrets.value && secrets.value.length > 0 && <SecretsTable secrets={secrets.value} onDelete={remove} />}
      <SetSecretForm
        onSet={(secret) =>
          change(async () => {
            await admin.setSecret(secret);
            return `${secret.key} of ${secret.agentName} (${setName(secret.forDrafts)}) was set.`;
          }, 'The secret could not be set. Try again.')
        }
      />
    </section>
  );
}

function SecretsTable({ secrets, onDelete }: { secrets: SecretName[]; onDelete(secret: SecretName): void }) {
  return (
    <div class="table-scroll">
      <table class="console-table secrets">
        <caption class="visually-hidden">Secret names by agent</caption>
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Secret</th>
            <th scope="col">Read by</th>
            <th scope="col">Set</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {secrets.map((secret) => (
            <tr key={`${secret.agentName}/${secret.forDrafts}/${secret.key}`} data-secret={`${secret.agentName}/${secret.key}/${secret.forDrafts ? 'drafts' : 'published'}`}>
              <td>{secret.agentName}</td>
              <th scope="row">
                <code>{secret.key}</code>
              </th>
              <td>{setName(secret.forDrafts)}</td>
              <td>
                <time dateTime={secret.updatedAt}>{formatTime(secret.updatedAt)}</time>
              </td>
              <td>
                <button type="button" class="secondary danger" onClick={() => onDelete(secret)}>
                  Delete
                  <span class="visually-hidden">
                    {' '}
                    {secret.key} of {secret.agentName} ({setName(secret.forDrafts)})
                  </span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SetSecretForm({ onSet }: { onSet(secret: { agentName: string; key: string; value: string; forDrafts: boolean }): Promise<boolean> }) {
  const [agentName, setAgentName] = useState('');
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [forDrafts, setForDrafts] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    // The value leaves the page's state whatever the answer: it is typed again rather than kept.
    const sent = value;
    setValue('');
    if (await onSet({ agentName: agentName.trim(), key: key.trim(), value: sent, forDrafts })) setKey('');
  };
  return (
    <form class="console-form" aria-labelledby="set-secret-heading" onSubmit={submit}>
      <h2 id="set-secret-heading">Set a secret</h2>
      <p class="hint form-hint" id="secret-key-hint">
        A name such as OPENAI_API_KEY. Setting a name again replaces its value.
      </p>
      <div class="field">
        <label for="secret-agent">Agent</label>
        <input id="secret-agent" value={agentName} onInput={(e) => setAgentName(e.currentTarget.value)} required autoComplete="off" />
      </div>
      <div class="field">
        <label for="secret-key">Name</label>
        <input id="secret-key" value={key} onInput={(e) => setKey(e.currentTarget.value)} required autoComplete="off" aria-describedby="secret-key-hint" />
      </div>
      <div class="field">
        <label for="secret-value">Value</label>
        <input id="secret-value" type="password" value={value} onInput={(e) => setValue(e.currentTarget.value)} required autoComplete="new-password" />
      </div>
      <label class="choice">
        <input type="checkbox" checked={forDrafts} onChange={(e) => setForDrafts(e.currentTarget.checked)} />
        For drafts (only the agent’s drafts read it)
      </label>
      <button type="submit">Set secret</button>
    </form>
  );
}
