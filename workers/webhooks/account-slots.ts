/**
 * Fair webhook delivery (DESIGN §16): at most `perAccount` attempts of one account's deliveries are
 * under way at once in a process, so a receiver that hangs (up to the 10 s timeout each) or fails
 * holds that many of the worker's slots and never the others' (webhook-worker.ts defers the rest).
 */
export interface AccountSlots {
  /** A slot for the account, and how to give it back; undefined when its deliveries hold all theirs. */
  take(accountId: string): (() => void) | undefined;
}

export function createAccountSlots(perAccount: number): AccountSlots {
  const used = new Map<string, number>();
  return {
    take(accountId) {
      const now = used.get(accountId) ?? 0;
      if (now >= perAccount) return undefined;
      used.set(accountId, now + 1);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        const left = (used.get(accountId) ?? 1) - 1;
        if (left > 0) used.set(accountId, left);
        else used.delete(accountId);
      };
    },
  };
}
