import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How late this process's event loop runs: a measure of how much more work it can take on. */
export interface LoopLag {
  /** How late, on average, a timer ran in the last full window (ms). */
  lateMs(): number;
  stop(): void;
}

/**
 * Samples the event loop's lateness every `resolutionMs` and averages it over windows of `windowMs`.
 * Costs one timer per sample (Node's event-loop delay histogram), nothing per call.
 */
export function watchLoopLag({ resolutionMs = 10, windowMs = 250 }: { resolutionMs?: number; windowMs?: number } = {}): LoopLag {
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let late = 0;
  const window = setInterval(() => {
    // The histogram holds the intervals between samples: their excess over the resolution is the lateness.
    late = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs) : 0;
    histogram.reset();
  }, windowMs);
  window.unref();
  return {
    lateMs: () => late,
    stop() {
      clearInterval(window);
      histogram.disable();
    },
  };
}
