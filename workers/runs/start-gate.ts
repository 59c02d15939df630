/**
 * Fair start of the runs a worker holds (DESIGN §16). A worker takes jobs in their fair order
 * (runs/fair-priority.ts), but under a flood it holds hundreds of them at once, and their starts (a
 * warm context, the agent entered until it first waits on the host) share one event loop: in arrival
 * order, a caller's one run would start behind every run of the flood taken before it. The gate lets
 * `width` runs start at once and the others wait in their fair order (the job's priority, then
 * arrival), so a caller with one run starts it next, whatever another has waiting in this worker.
 * A run leaves the gate when it first waits on the host, joins a context another run is loading
 * (run-sandbox.ts sharedContext: it holds no thread meanwhile), or ends; waiting runs cost the gate nothing.
 */
export interface StartGate {
  /** Waits for the run's turn to start; answers the function that lets the next one in (idempotent). */
  enter(priority: number): Promise<() => void>;
  /** Runs starting now, and waiting to. */
  load(): { starting: number; waiting: number };
}

interface Waiter {
  priority: number;
  seq: number;
  admit: () => void;
}

/** Runs a worker starts at once: enough to keep its isolates' threads busy, few enough that a new caller's run is next. */
export const startGateWidth = 32;

/** A gate of `width` concurrent starts, waiting runs ordered by priority then arrival. */
export function createStartGate(width: number): StartGate {
  const waiting: Waiter[] = [];
  let starting = 0;
  let seq = 0;

  const leaveFor = () => {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      starting -= 1;
      const next = popFirst(waiting);
      if (next) {
        starting += 1;
        next.admit();
      }
    };
  };

  return {
    enter(priority) {
      if (starting < width && waiting.length === 0) {
        starting += 1;
        return Promise.resolve(leaveFor());
      }
      return new Promise((resolve) => pushInOrder(waiting, { priority, seq: seq++, admit: () => resolve(leaveFor()) }));
    },
    load: () => ({ starting, waiting: waiting.length }),
  };
}

function before(a: Waiter, b: Waiter): boolean {
  return a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq);
}

/** A binary min-heap by (priority, arrival): a flood of thousands waits at O(log n) per run. */
function pushInOrder(heap: Waiter[], waiter: Waiter): void {
  heap.push(waiter);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i]!, heap[parent]!)) break;
    [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
    i = parent;
  }
}

function popFirst(heap: Waiter[]): Waiter | undefined {
  const first = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || !last) return first;
  heap[0] = last;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    const right = left + 1;
    let least = i;
    if (left < heap.length && before(heap[left]!, heap[least]!)) least = left;
    if (right < heap.length && before(heap[right]!, heap[least]!)) least = right;
    if (least === i) return first;
    [heap[i], heap[least]] = [heap[least]!, heap[i]!];
    i = least;
  }
}
