/**
 * What is asked during one turn of the event loop, handed over as one batch at the next: the calls
 * that end together share a statement instead of one each. The batch is taken after everything in it
 * was asked, so a statement it leads to sees whatever was committed before any of them asked.
 */
export function batchPerTurn<T>(handle: (batch: T[]) => void): (item: T) => void {
  let batch: T[] | undefined;
  return (item) => {
    if (!batch) {
      batch = [];
      setImmediate(() => {
        const taken = batch!;
        batch = undefined;
        handle(taken);
      });
    }
    batch.push(item);
  };
}

/**
 * As batchPerTurn, where every item of a batch is answered by the batch's one outcome: each call
 * returns the same promise for its turn (one promise a batch, not one an item), settled with what
 * `handle` makes of the batch.
 */
export function settledPerTurn<T, R>(handle: (batch: T[]) => Promise<R>): (item: T) => Promise<R> {
  let pending: { outcome: Promise<R>; settle: (outcome: Promise<R>) => void } | undefined;
  const take = batchPerTurn<T>((batch) => {
    const { settle } = pending!;
    pending = undefined;
    let outcome: Promise<R>;
    try {
      outcome = handle(batch);
    } catch (err) {
      outcome = Promise.reject(err);
    }
    settle(outcome);
  });
  return (item) => {
    if (!pending) {
      let settle!: (outcome: Promise<R>) => void;
      const outcome = new Promise<R>((resolve) => (settle = resolve));
      // Each caller reports its own failure; the shared promise must not also be unhandled.
      outcome.catch(() => undefined);
      pending = { outcome, settle };
    }
    take(item);
    return pending.outcome;
  };
}
