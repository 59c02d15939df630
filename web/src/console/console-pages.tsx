import { AccountsView } from './accounts-view';
import { ReportsView } from './reports-view';
import { SecretsView } from './secrets-view';
import { WebhooksView } from './webhooks-view';
import type { ConsolePage } from './console-paths';

/** The console page at /<page>. */
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
