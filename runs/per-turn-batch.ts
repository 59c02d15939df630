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
