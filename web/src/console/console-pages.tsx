import { AccountsView } from './accounts-view';
import { ReportsView } from './reports-view';
import { SecretsView } from './secrets-view';
import { WebhooksView } from './webhooks-view';

/** The console's pages (DESIGN §18) that this module draws, each at /<page>, in the order the menu shows them. */
export const consolePages = ['accounts', 'secrets', 'webhooks', 'reports'] as const;
export type ConsolePage = (typeof consolePages)[number];

export const consolePageLabels: Record<ConsolePage, string> = { accounts: 'Accounts', secrets: 'Secrets', webhooks: 'Webhooks', reports: 'Reports' };

export function ConsolePageView({ page }: { page: ConsolePage }) {
  switch (page) {
    case 'accounts':
      return <AccountsView />;
    case 'secrets':
      return <SecretsView />;
    case 'webhooks':
      return <WebhooksView />;
    case 'reports':
      return <ReportsView />;
  }
}
