/**
 * Clean-up steps, run in reverse order of registration, each one even when an earlier one fails;
 * run at most once (the normal end, a failure and an interrupt all lead here).
 */
export interface Teardown {
  add(name: string, step: () => unknown): void;
  /** Runs the steps; one line per step telling how it went. */
  run(): Promise<string[]>;
}

export function createTeardown(): Teardown {
  const steps: { name: string; step: () => unknown }[] = [];
  let running: Promise<string[]> | undefined;
  const runAll = async () => {
    const lines: string[] = [];
    for (const { name, step } of steps.reverse()) {
      try {
        const result = await step();
        lines.push(`${name}: ${result === undefined ? 'ok' : String(result)}`);
      } catch (err) {
        lines.push(`${name}: FAILED ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return lines;
  };
  return {
    add: (name, step) => void steps.push({ name, step }),
    run: () => (running ??= runAll()),
  };
}

/** Ctrl-C (or SIGTERM) still stops the processes and removes the database and keys. */
export function cleanUpOnInterrupt(teardown: Teardown, log: (line: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void teardown.run().then((lines) => {
        for (const line of lines) log(`  ${line}`);
        process.exit(130);
      });
    });
  }
}
