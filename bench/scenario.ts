import type { ApiClient } from './client.js';
import type { FloorFigure } from './floor.js';
import type { Profile } from './options.js';
import type { Stack } from './stack.js';

/** What a scenario measures (its rows, declared up front) and how it runs. */

/** `×`: a ratio the scenario measured itself (e.g. to floor round trips it made alternately with its calls). */
export type Unit = 'ms' | 'calls/s' | 'MB' | 'µs/call' | '×';

export interface Target {
  op: '<=' | '>=';
  value: number;
  /** Judged on the figure ÷ the floor's matching figure (the row's `floor`), not on the figure itself. */
  ofFloor?: true;
}

/** One figure of the report: what it is, the floor figure it is compared with, its target. */
export interface Row {
  id: string;
  label: string;
  unit: Unit;
  floor?: FloorFigure;
  target?: Target;
}

export interface ScenarioContext {
  profile: Profile;
  stack: Stack;
  client: ApiClient;
  bearerKey: string;
}

export interface ScenarioRun {
  /** Row id → measured value. */
  values: Record<string, number>;
  notes?: string[];
}

export interface Scenario {
  id: string;
  title: string;
  rows: Row[];
  run(context: ScenarioContext): Promise<ScenarioRun>;
}

/** A row with its outcome: the value, or the error that kept it from being measured. */
export interface Measurement extends Row {
  scenario: string;
  value: number | null;
  error?: string;
}

/** Runs the scenarios one after another; a failing one yields its rows with the error, and the rest still run. */
export async function runScenarios(
  scenarios: Scenario[],
  context: ScenarioContext,
  log: (line: string) => void,
): Promise<{ measurements: Measurement[]; notes: Record<string, string[]> }> {
  const measurements: Measurement[] = [];
  const notes: Record<string, string[]> = {};
  for (const scenario of scenarios) {
    log(`▸ ${scenario.title}`);
    const started = performance.now();
    const outcome = await scenario.run(context).then(
      (run) => ({ run, error: undefined }),
      (err: unknown) => ({ run: undefined, error: `${err instanceof Error ? err.message : String(err)}${deadProcesses(context)}` }),
    );
    log(`  ${outcome.error ? `failed: ${outcome.error}` : 'done'} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    notes[scenario.id] = outcome.run?.notes ?? [];
    for (const row of scenario.rows) measurements.push(measurementOf(scenario.id, row, outcome.run, outcome.error));
  }
  return { measurements, notes };
}

function measurementOf(scenario: string, row: Row, run: ScenarioRun | undefined, error: string | undefined): Measurement {
  const value = run?.values[row.id];
  if (value === undefined || !Number.isFinite(value)) return { ...row, scenario, value: null, error: error ?? 'not measured' };
  return { ...row, scenario, value };
}

/** Names a product process that has exited, the likely cause of a failure. */
function deadProcesses({ stack }: ScenarioContext): string {
  const dead = [stack.web, stack.worker].filter((p) => !p.running());
  return dead.map((p) => ` [the ${p.name} process has exited: ${p.tail().slice(-300)}]`).join('');
}
