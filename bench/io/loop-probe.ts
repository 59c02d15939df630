import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Loaded into a product process with `node --import` by the waiting-runs bench: writes the process's
 * event-loop delay (p99 and max, ms) to `<LOOP_PROBE_DIR>/<pid>.json` every second, so the bench reads
 * it without the product knowing. SIGUSR2 restarts the histogram (the bench sends it as timing starts).
 */
const dir = process.env.LOOP_PROBE_DIR;
if (dir) {
  const file = `${dir}/${process.pid}.json`;
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const timer = setInterval(() => {
    writeFileSync(file, JSON.stringify({ p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, at: Date.now() }));
  }, 1000);
  timer.unref();
  process.on('SIGUSR2', () => histogram.reset());
}
