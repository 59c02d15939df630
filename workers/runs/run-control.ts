/**
 * Which runs this worker process has going, so a cancel from the control channel can stop them.
 * A cancel can reach the worker a moment before the job does (the job was just picked up), so
 * cancels of runs not (yet) here are remembered for a while and applied when the run starts.
 */
export interface RunControl {
  /** Starts tracking a run; its signal aborts on cancel. */
  track(runId: string): TrackedRun;
  cancel(runId: string): void;
}

export interface TrackedRun {
  signal: AbortSignal;
  /** Stops the run for `reason` (see sandbox/sandbox-endings.ts `stopped`). */
  stop(reason: unknown): void;
  done(): void;
}

const rememberCancelsMs = 10 * 60_000;

export function createRunControl(): RunControl {
  const running = new Map<string, AbortController>();
  const earlyCancels = new Map<string, number>();

  const forgetOldCancels = () => {
    const cutoff = Date.now() - rememberCancelsMs;
    for (const [runId, at] of earlyCancels) {
      if (at >= cutoff) break; // insertion order is time order
      earlyCancels.delete(runId);
    }
  };

  return {
    track(runId) {
      const controller = new AbortController();
      running.set(runId, controller);
      if (earlyCancels.delete(runId)) controller.abort();
      return {
        signal: controller.signal,
        stop: (reason) => controller.abort(reason),
        done: () => void running.delete(runId),
      };
    },
    cancel(runId) {
      const controller = running.get(runId);
      if (controller) return controller.abort();
      forgetOldCancels();
      earlyCancels.set(runId, Date.now());
    },
  };
}
