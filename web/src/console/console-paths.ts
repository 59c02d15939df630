/** The console's pages (DESIGN §18) under web/src/console/, each at /<page>, in the order the menu shows them. */
export const consolePages = ['accounts', 'secrets', 'webhooks', 'reports'] as const;
export type ConsolePage = (typeof consolePages)[number];

export const consolePageLabels: Record<ConsolePage, string> = { accounts: 'Accounts', secrets: 'Secrets', webhooks: 'Webhooks', reports: 'Reports' };
