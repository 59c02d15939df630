import { useState } from 'preact/hooks';
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery, WebhookEndpoint } from '../../../clients/typescript/src/index';
import { useDocumentTitle } from '../document-title';
import { LoadState, StatusLine } from './page-state';
import { formatTime, useAdmin, useChanges, useLoaded } from './use-admin';

const pageSize = 25;
const statuses: DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/**
 * The console's Webhooks (DESIGN §14, §18): each service account's endpoint, and the delivery log,
 * newest first, a page at a time: each delivery's attempts with the receiver's answers, the next retry,
 * and Deliver again. Signing secrets are never shown (webhooks:set shows one once).
 */
export function WebhooksView() {
  useDocumentTitle('Webhooks');
  const admin = useAdmin();
  const endpoints = useLoaded(() => admin.listWebhooks(), [], 'The webhook endpoints could not be loaded. Try again.');
  const [accountInput, setAccountInput] = useState('');
  const [statusInput, setStatusInput] = useState('');
  const [filter, setFilter] = useState<{ name?: string; status?: DeliveryStatus }>({});
  // The cursor of each page shown so far (undefined: the first), so "Newer" goes back without a cursor the other way.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const log = useLoaded(() => admin.listWebhookDeliveries(filter, { limit: pageSize, ...(cursor ? { cursor } : {}) }), [filter, cursor], 'The deliveries could not be loaded. Try again.');
  const { status, change } = useChanges(log);

  const apply = (event: Event) => {
    event.preventDefault();
    setFilter({ ...(accountInput ? { name: accountInput } : {}), ...(statusInput ? { status: statusInput as DeliveryStatus } : {}) });
    setCursors([undefined]);
  };
  const redeliver = (delivery: WebhookDelivery) =>
    change(async () => {
      await admin.redeliverWebhook(delivery.webhookId);
      return `The end of run ${delivery.runId.slice(0, 8)} is queued for delivery again.`;
    }, 'It could not be queued again. Try again.');

  return (
    <section aria-labelledby="webhooks-heading">
      <h1 id="webhooks-heading">Webhooks</h1>
      <h2>Endpoints</h2>
      <p class="hint">Set with npm run cli -- webhooks:set --name ACCOUNT --url URL, which shows the signing secret once.</p>
      {endpoints.error && (
        <p class="field-error" role="alert">
          {endpoints.error}
        </p>
      )}
      {endpoints.value && !endpoints.value.length && <p>No service account has a webhook endpoint.</p>}
      {endpoints.value && endpoints.value.length > 0 && <EndpointsTable endpoints={endpoints.value} />}

      <h2>Deliveries</h2>
      <form class="run-filters" role="search" aria-label="Filter deliveries" onSubmit={apply}>
        <div class="field">
          <label for="deliveries-account">Account</label>
          <select id="deliveries-account" value={accountInput} onChange={(e) => setAccountInput(e.currentTarget.value)}>
            <option value="">any account</option>
            {endpoints.value?.map((endpoint) => (
              <option key={endpoint.accountId} value={endpoint.name}>
                {endpoint.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="deliveries-status">Status</label>
          <select id="deliveries-status" value={statusInput} onChange={(e) => setStatusInput(e.currentTarget.value)}>
            <option value="">any status</option>
            {statuses.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </div>
        <button type="submit">Show deliveries</button>
      </form>
      <StatusLine status={status} />
      <LoadState loaded={log} />
      {log.value && !log.value.deliveries.length && <p role="status">No deliveries match.</p>}
      {log.value && log.value.deliveries.length > 0 && <DeliveriesTable deliveries={log.value.deliveries} onRedeliver={(d) => void redeliver(d)} />}
      <nav class="pager" aria-label="Pages of deliveries">
        {cursors.length > 1 && (
          <button type="button" class="secondary" onClick={() => setCursors((list) => list.slice(0, -1))}>
            Newer
          </button>
        )}
        {log.value?.nextCursor && (
          <button type="button" class="secondary" onClick={() => setCursors((list) => [...list, log.value!.nextCursor!])}>
            Older
          </button>
        )}
      </nav>
    </section>
  );
}

function EndpointsTable({ endpoints }: { endpoints: WebhookEndpoint[] }) {
  return (
    <div class="table-scroll">
      <table class="console-table endpoints">
        <caption class="visually-hidden">Webhook endpoints by account</caption>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Set</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((endpoint) => (
            <tr key={endpoint.accountId}>
              <th scope="row">{endpoint.name}</th>
              <td class="wrap">
                <code>{endpoint.url}</code>
              </td>
              <td>
                <time dateTime={endpoint.createdAt}>{formatTime(endpoint.createdAt)}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DeliveriesTable({ deliveries, onRedeliver }: { deliveries: WebhookDelivery[]; onRedeliver(delivery: WebhookDelivery): void }) {
  return (
    <div class="table-scroll">
      <table class="console-table deliveries">
        <caption class="visually-hidden">Webhook deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run ended</th>
            <th scope="col">Account</th>
            <th scope="col">Agent</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Next retry</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr key={delivery.webhookId} data-webhook-id={delivery.webhookId}>
              <td>
                <time dateTime={delivery.createdAt}>{formatTime(delivery.createdAt)}</time>
              </td>
              <td>{delivery.account.name ?? `${delivery.account.id.slice(0, 8)} (deleted)`}</td>
              <td>{delivery.agentName ?? '—'}</td>
              <td>
                <span class={`delivery-${delivery.status}`}>{delivery.status}</span>
              </td>
              <td class="wrap">
                <Attempts attempts={delivery.attempts} />
              </td>
              <td>{delivery.nextAttemptAt ? <time dateTime={delivery.nextAttemptAt}>{formatTime(delivery.nextAttemptAt)}</time> : '—'}</td>
              <td>
                <button type="button" class="secondary" onClick={() => onRedeliver(delivery)}>
                  Deliver again<span class="visually-hidden"> the end of run {delivery.runId}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A delivery's attempts: the last one's answer, and every attempt when opened. */
function Attempts({ attempts }: { attempts: DeliveryAttempt[] }) {
  const last = attempts.at(-1);
  if (!last) return <span class="hint">not tried yet</span>;
  return (
    <details>
      <summary>
        {attempts.length} · {answerText(last)}
      </summary>
      <ol class="attempts">
        {attempts.map((a) => (
          <li key={a.attempt} value={a.attempt}>
            <time dateTime={a.at}>{formatTime(a.at)}</time>: {answerText(a)}
            {a.error && a.status === null ? ` (${a.error})` : ''}
          </li>
        ))}
      </ol>
    </details>
  );
}

function answerText(attempt: DeliveryAttempt): string {
  return attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`;
}
