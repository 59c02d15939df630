import { postJson, type Transport } from './http.js';
import type {
  AccountList,
  AccountRef,
  CallerLimits,
  DeliveryPage,
  DeliveryStatus,
  ErrorReport,
  LimitsChange,
  Plan,
  ReportRange,
  Role,
  RoleChange,
  SecretName,
  ServiceAccountWithKey,
  UserInfo,
  UsageReport,
  WebhookEndpoint,
} from './admin-types.js';

/**
 * The admin endpoints of the console (DESIGN §18), as `client.admin`: accounts and their limits,
 * agent secrets (names only), webhooks and reports. Every call is for admins (ForbiddenError for
 * anyone else); an unknown account or delivery is NotFoundError, a bad field InvalidRequestError.
 * Calls that only read are retried after a lost connection; those that change something are not.
 */
export class AdminApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  listAccounts(): Promise<AccountList> {
    return this.#read('/api/admin/listAccounts', {});
  }

  /** Creates a service account; the answer holds its key, shown this once. */
  createServiceAccount(account: { name: string; role?: Role; plan?: Plan }): Promise<ServiceAccountWithKey> {
    return this.#change('/api/admin/createServiceAccount', account);
  }

  /** Gives a service account a new key (in the answer, this once); the old one stops working. */
  rotateKey(name: string): Promise<ServiceAccountWithKey> {
    return this.#change('/api/admin/rotateKey', { name });
  }

  async deleteServiceAccount(name: string): Promise<void> {
    await this.#change('/api/admin/deleteServiceAccount', { name });
  }

  /** Creates a user, who sets a password by email code. */
  createUser(user: { email: string; role?: Role; plan?: Plan; callName?: string }): Promise<UserInfo> {
    return this.#change('/api/admin/createUser', user);
  }

  setRole(account: AccountRef, role: Role): Promise<RoleChange> {
    return this.#change('/api/admin/setRole', { ...account, role });
  }

  getLimits(account: AccountRef): Promise<CallerLimits> {
    return this.#read('/api/admin/getLimits', account);
  }

  setLimits(account: AccountRef, change: LimitsChange): Promise<CallerLimits> {
    return this.#change('/api/admin/setLimits', { ...account, ...change });
  }

  /** Every agent name's secret names, of both sets (never a value). */
  async listSecrets(): Promise<SecretName[]> {
    return (await this.#read<{ secrets: SecretName[] }>('/api/admin/listAllSecrets', {})).secrets;
  }

  async setSecret(secret: { agentName: string; key: string; value: string; forDrafts?: boolean }): Promise<void> {
    await this.#change('/api/admin/setSecret', secret);
  }

  async deleteSecret(secret: { agentName: string; key: string; forDrafts?: boolean }): Promise<void> {
    await this.#change('/api/admin/deleteSecret', secret);
  }

  async listWebhooks(): Promise<WebhookEndpoint[]> {
    return (await this.#read<{ webhooks: WebhookEndpoint[] }>('/api/admin/listWebhooks', {})).webhooks;
  }

  /** A page of the delivery log, newest first; pass `nextCursor` as `cursor` for the next, older page. */
  listWebhookDeliveries(filter: { name?: string; status?: DeliveryStatus } = {}, page: { limit?: number; cursor?: string } = {}): Promise<DeliveryPage> {
    return this.#read('/api/admin/listWebhookDeliveries', { ...filter, ...page });
  }

  /** Delivers a webhook again, through the usual queue, with the same webhook-id. */
  async redeliverWebhook(webhookId: string): Promise<void> {
    await this.#change('/api/admin/redeliverWebhook', { webhookId });
  }

  usageReport(range: ReportRange = {}): Promise<UsageReport> {
    return this.#read('/api/admin/usageReport', range);
  }

  errorReport(range: ReportRange = {}): Promise<ErrorReport> {
    return this.#read('/api/admin/errorReport', range);
  }

  #read<T>(path: string, body: object): Promise<T> {
    return postJson<T>(this.#transport, path, body, { retry: true });
  }

  #change<T>(path: string, body: object): Promise<T> {
    return postJson<T>(this.#transport, path, body);
  }
}
