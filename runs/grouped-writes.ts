import { batchPerTurn } from './per-turn-batch.js';

export type WriteOutcome = 'committed' | 'stale';

export interface GroupedWriteOptions<T> {
  /** Writes one item in a statement of its own. */
  alone(item: T): Promise<WriteOutcome>;
  /** Writes items in one statement, all or nothing: 'committed' only when every one of them was kept. */
  together(items: T[]): Promise<WriteOutcome>;
  /** Items one statement takes at most: a bound on its size. */
  maxGroup: number;
  /** Whether an item may share a statement at all (every one may, unless told). */
  fits?: (item: T) => boolean;
  /** Items with the same key never share a statement: the second of a batch is written alone. */
  key?: (item: T) => string | undefined;
}

interface Pending<T> {
  item: T;
  resolve: (outcome: WriteOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Writes asked for in one turn of the event loop, sent together in statements of up to `maxGroup`
 * items instead of one statement each: with many runs ending at once, a statement a run was a round
 * trip, a wake-up of a PostgreSQL backend and a WAL flush each. A statement that does not commit
 * whole (it failed, or one of its items was stale) is written again item by item, so each gets its own
 * outcome: 'stale' for that one, its error for one that fails alone.
 */
export function groupedWrites<T>(options: GroupedWriteOptions<T>): (item: T) => Promise<WriteOutcome> {
  const { alone, together, maxGroup, fits = () => true, key } = options;
  const writeAlone = ({ item, resolve, reject }: Pending<T>) => alone(item).then(resolve, reject);

  const writeGroup = async (group: Pending<T>[]) => {
    if (group.length === 1) return writeAlone(group[0]!);
    const outcome = await together(group.map((each) => each.item)).catch(() => 'failed' as const);
    if (outcome === 'committed') for (const each of group) each.resolve(outcome);
    else await Promise.all(group.map(writeAlone));
  };

  const enqueue = batchPerTurn<Pending<T>>((batch) => {
    const grouped: Pending<T>[] = [];
    const keys = new Set<string>();
    for (const each of batch) {
      const itemKey = key?.(each.item);
      if (!fits(each.item) || (itemKey !== undefined && keys.has(itemKey))) {
        void writeAlone(each);
        continue;
      }
      if (itemKey !== undefined) keys.add(itemKey);
      grouped.push(each);
    }
    for (let i = 0; i < grouped.length; i += maxGroup) void writeGroup(grouped.slice(i, i + maxGroup));
  });

  return (item) => new Promise((resolve, reject) => enqueue({ item, resolve, reject }));
}
