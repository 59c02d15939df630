import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/**
 * Loaded into a product process with `node --import` by the waiting-runs bench: writes the process's
 * event-loop delay (p99 and max, ms) and its garbage-collection pauses (how many, their total and the
 * longest, ms; the process's own heap, not the agents' isolates) to `<LOOP_PROBE_DIR>/<pid>.json`
 * every second, and its memory (process.memoryUsage) as its RSS peaked, so the bench reads them without the product knowing. SIGUSR2 starts both over (the
 * bench sends it as timing starts).
 * With LOOP_PROBE_PROFILE_SECONDS, SIGUSR2 also starts a CPU profile of that many seconds of the timed
 * window, written to `<LOOP_PROBE_DIR>/<pid>.cpuprofile` (the start-up wave left out), at the first
 * SIGUSR2 only (with `--burst`, the burst's start).
 */
const dir = process.env.LOOP_PROBE_DIR;
if (dir) {
  const file = `${dir}/${process.pid}.json`;
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let gc = { pauses: 0, totalMs: 0, maxMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.pauses += 1;
      gc.totalMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  // The process's memory when its RSS was highest: how much of it is the process's own heap (host-side state) and how much is not (isolates, buffers).
  let memory = { rssMb: 0, heapUsedMb: 0, heapTotalMb: 0, externalMb: 0 };
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    const mb = (bytes: number) => Math.round(bytes / 1048576);
    if (now.rss / 1048576 > memory.rssMb) memory = { rssMb: mb(now.rss), heapUsedMb: mb(now.heapUsed), heapTotalMb: mb(now.heapTotal), externalMb: mb(now.external) };
    try {
      writeFileSync(file, JSON.stringify({ p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, gc, memory, at: Date.now() }));
    } catch {
      // The bench removed the directory as it ended (its own process writes here until it exits).
    }
  }, 1000);
  timer.unref();
  const profileSeconds = Number(process.env.LOOP_PROBE_PROFILE_SECONDS ?? 0);
  // Only the first signal's: with --burst that is the burst's start, and the steady state's window signals again.
  let profiled = false;
  process.on('SIGUSR2', () => {
    histogram.reset();
    gc = { pauses: 0, totalMs: 0, maxMs: 0 };
    memory = { rssMb: 0, heapUsedMb: 0, heapTotalMb: 0, externalMb: 0 };
    if (profileSeconds > 0 && !profiled) profileFor(profileSeconds, `${dir}/${process.pid}.cpuprofile`);
    profiled = true;
  });
}

function profileFor(seconds: number, path: string): void {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable', () =>
    session.post('Profiler.start', () => {
      setTimeout(() => {
        session.post('Profiler.stop', (err, result) => {
          if (!err) writeFileSync(path, JSON.stringify(result.profile));
          session.disconnect();
        });
      }, seconds * 1000).unref();
    }),
  );
}
