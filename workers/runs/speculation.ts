import type { RunEventSink } from './run-deps.js';

/**
 * A run started before it is known to be the right one: on the agent version this worker last read
 * while the latest is read (first-run.ts), or on the conversation the call before it left while that
 * call's commit is under way (the hot actor, conversation-run.ts). Until `confirmed` settles, the run
 * reaches nothing outside the sandbox: its async sys calls wait for `hold` (SandboxRun.hold) and its
 * parts are held back from the sink. Not confirmed (false, or a rejection): the run is stopped through
 * `signal` before `hold` settles, nothing it made is sent, and the caller runs the call again.
 */
export interface Speculation {
  /** What the run sends its parts to: held back until confirmed, dropped if not. */
  sink: RunEventSink;
  /** The run's signal: the call's, and aborted when the guess turns out wrong. */
  signal: AbortSignal;
  /** Settles once the guess is known (and after a wrong one's run was stopped). Never rejects. */
  hold: Promise<void>;
  /** The guess was wrong; meaningful once `hold` has settled. */
  wrong(): boolean;
  /** Stops following the call's signal (call when the run is over). */
  end(): void;
}

export function speculate(sink: RunEventSink, signal: AbortSignal, confirmed: Promise<boolean>, onHeldBack?: () => void): Speculation {
  const stop = new AbortController();
  const onStop = () => stop.abort(signal.reason);
  signal.addEventListener('abort', onStop, { once: true });
  if (signal.aborted) onStop();
  let wrong = false;
  // Settles only after a wrong run was stopped, so no held call or part goes out for it.
  const hold = confirmed.then(
    (right) => void (right || ((wrong = true), stop.abort())),
    () => void ((wrong = true), stop.abort()),
  );
  return {
    sink: heldBack(sink, hold, () => wrong, onHeldBack),
    signal: stop.signal,
    hold,
    wrong: () => wrong,
    end: () => signal.removeEventListener('abort', onStop),
  };
}

/**
 * A speculation confirmed only if it must be: `confirm` is called when the run first waits on `hold`
 * (an async sys call, about to reach outside the sandbox), or `showAfterMs` after it first sent its
 * sink something to show live (a part, held back until then), if it has not ended by then. A run that
 * ends sooner is settled by its caller instead (`settle`), e.g. by a commit fenced on the guess, which
 * spares the confirming read; its parts go out then.
 */
export interface LazySpeculation extends Omit<Speculation, 'hold'> {
  /** As Speculation's, and awaiting it asks for the confirmation. */
  hold: PromiseLike<void>;
  /** Settles once the guess is known, without asking for it to be confirmed. Never rejects. */
  decided: Promise<void>;
  /** Whether the run asked for the confirmation (then `decided` follows it). */
  asked(): boolean;
  /** From now on nothing asks for the confirmation: the caller settles the guess (its commit fenced on it is under way). */
  stopAsking(): void;
  /** Settles the guess (no effect once settled). */
  settle(right: boolean): void;
}

export function speculateLazily(sink: RunEventSink, signal: AbortSignal, confirm: () => Promise<boolean>, showAfterMs: number): LazySpeculation {
  let decide!: (right: boolean) => void;
  let asked = false;
  let silent = false;
  let showing: NodeJS.Timeout | undefined;
  const ask = () => {
    clearTimeout(showing);
    if (asked || silent) return;
    asked = true;
    confirm().then(decide, () => decide(false));
  };
  const settle = (right: boolean) => {
    clearTimeout(showing);
    decide(right);
  };
  const onHeldBack = () => void (showing ??= setTimeout(ask, showAfterMs));
  const speculation = speculate(sink, signal, new Promise<boolean>((resolve) => (decide = resolve)), onHeldBack);
  const decided = speculation.hold;
  // Named one by one, not spread: a spread with properties added makes this object a hidden class of
  // its own each time (some 0.4 KB more a run, held while it waits).
  return {
    sink: speculation.sink,
    signal: speculation.signal,
    wrong: speculation.wrong,
    end: speculation.end,
    hold: {
      then(onSettled, onFailed) {
        ask();
        return decided.then(onSettled, onFailed);
      },
    },
    decided,
    asked: () => asked,
    stopAsking: () => {
      clearTimeout(showing);
      silent = true;
    },
    settle,
  };
}

/**
 * `sink`, with what comes before `hold` settles sent once it has (in order), and nothing once
 * `dropped()`; `onHeldBack` is told of each event held back.
 */
function heldBack(sink: RunEventSink, hold: Promise<void>, dropped: () => boolean, onHeldBack?: () => void): RunEventSink {
  let waiting: Array<() => void> | undefined = [];
  void hold.then(() => {
    const queued = waiting ?? [];
    waiting = undefined;
    if (!dropped()) for (const send of queued) send();
  });
  const send = (event: () => void) => {
    if (waiting) {
      waiting.push(event);
      onHeldBack?.();
    } else if (!dropped()) event();
  };
  return {
    part: (part) => send(() => sink.part(part)),
    delta: (text) => send(() => sink.delta(text)),
    trace: (event) => send(() => sink.trace(event)),
  };
}
