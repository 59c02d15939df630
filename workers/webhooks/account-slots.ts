/**
 * Fair webhook delivery (DESIGN §16): at most `perAccount` attempts of one account's deliveries are
 * under way at once in a process, so a receiver that hangs (up to the 10 s timeout each) or fails
 * holds that many of the worker's slots and never the others'. A delivery over the cap waits here
 * for a slot of its account for `waitMs` at most (a receiver that answers frees one within
 * milliseconds, so a burst to it flows), with at most `waitingPerAccount` waiting per account; past
 * either, webhook-worker.ts defers it.
 */
export interface AccountSlots {
  /** A slot for the account, and how to give it back; undefined when none came within the wait. */
  take(accountId: string): Promise<(() => void) | undefined>;
}

export interface AccountSlotOptions {
  perAccount: number;
  waitingPerAccount: number;
  waitMs: number;
}

interface Account {
  used: number;
  waiting: Array<() => void>;
}

export function createAccountSlots({ perAccount, waitingPerAccount, waitMs }: AccountSlotOptions): AccountSlots {
  const accounts = new Map<string, Account>();
  const releaser = (accountId: string, account: Account) => {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = account.waiting.shift();
      // Handed straight to the next waiter: the slot stays taken.
      if (next) return next();
      account.used -= 1;
      if (account.used === 0) accounts.delete(accountId);
    };
  };
  return {
    async take(accountId) {
      let account = accounts.get(accountId);
      if (!account) accounts.set(accountId, (account = { used: 0, waiting: [] }));
      if (account.used < perAccount) {
        account.used += 1;
        return releaser(accountId, account);
      }
      if (account.waiting.length >= waitingPerAccount) return undefined;
      const mine = account;
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve(releaser(accountId, mine));
        };
        const timer = setTimeout(() => {
          const at = mine.waiting.indexOf(wake);
          if (at >= 0) mine.waiting.splice(at, 1);
          resolve(undefined);
        }, waitMs);
        mine.waiting.push(wake);
      });
    },
  };
}
