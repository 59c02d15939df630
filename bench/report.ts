import { writeFileSync } from 'node:fs';
import type { Environment } from './environment.js';
import type { Floor, FloorFigure } from './floor.js';
import type { Measurement, Row, Target, Unit } from './scenario.js';

/** The results: each figure with its ratio to the floor and its target verdict, as a table and as JSON. */

export interface ReportedMeasurement extends Measurement {
  /** value ÷ the floor's matching figure. */
  floorRatio: number | null;
  /** Whether the target is met; null when the row has no target. */
  pass: boolean | null;
}

export interface Results {
  environment: Environment;
  /** With `--rounds N` (N > 1): every figure is the median of N rounds, each against its own floor (bench/rounds.ts). */
  rounds?: number;
  /** Why the bench stopped early (set-up failed); the figures measured before are still reported. */
  fatal?: string;
  floor: Floor | null;
  measurements: ReportedMeasurement[];
  notes: Record<string, string[]>;
  /** What the product processes printed (they run with LOG_LEVEL=warn, so every line is a warning or worse). */
  productOutput: Record<string, string[]>;
  teardown: string[];
  summary: { targetsMet: number; targetsMissed: number; failedMeasurements: number };
}

const floorRows: (Row & { id: string; floor: FloorFigure })[] = [
  { id: 'floor.sequential.p50', label: '(a) floor: BullMQ round trip sequential p50', unit: 'ms', floor: 'sequentialP50' },
  { id: 'floor.sequential.p99', label: '(a) floor: BullMQ round trip sequential p99', unit: 'ms', floor: 'sequentialP99' },
  { id: 'floor.sequential.rate', label: '(a) floor: BullMQ round trip sequential', unit: 'calls/s', floor: 'sequentialRate' },
  { id: 'floor.concurrent.rate', label: '(a) floor: BullMQ round trip 64 in flight', unit: 'calls/s', floor: 'concurrentRate' },
  { id: 'floor.concurrent.p50', label: '(a) floor: BullMQ round trip 64 in flight p50', unit: 'ms', floor: 'concurrentP50' },
  { id: 'floor.concurrent.p99', label: '(a) floor: BullMQ round trip 64 in flight p99', unit: 'ms', floor: 'concurrentP99' },
];

/** The floor's own figures as measurements (each its own reference), or their error. */
export function floorMeasurements(floor: Floor | null, error: string | undefined): Measurement[] {
  return floorRows.map((row) => ({ ...row, scenario: 'floor', value: floor ? floor[row.floor] : null, ...(error ? { error } : {}) }));
}

export function evaluate(measurements: Measurement[], floor: Floor | null): ReportedMeasurement[] {
  return measurements.map((m) => {
    const reference = floor && m.floor ? floor[m.floor] : undefined;
    const floorRatio = m.value !== null && reference ? m.value / reference : null;
    return { ...m, floorRatio, pass: judge(m.target, m.value, floorRatio) };
  });
}

/** Whether a figure meets its row's target (null: no target); a target of the floor ratio fails without one. */
export function judge(target: Target | undefined, value: number | null, floorRatio: number | null): boolean | null {
  if (!target) return null;
  const judged = target.ofFloor ? floorRatio : value;
  return judged !== null && meetsTarget(target, judged);
}

/** Whether `value` meets `target`. */
export function meetsTarget(target: Target, value: number): boolean {
  return target.op === '<=' ? value <= target.value : value >= target.value;
}

export function summarizeResults(measurements: ReportedMeasurement[]): Results['summary'] {
  return {
    targetsMet: measurements.filter((m) => m.pass === true).length,
    targetsMissed: measurements.filter((m) => m.pass === false).length,
    failedMeasurements: measurements.filter((m) => m.value === null).length,
  };
}

export function writeResults(path: string, results: Results): void {
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

/** The report as text: environment, the table, then errors, notes, product output and clean-up. */
export function formatReport(results: Results): string {
  const env = results.environment;
  const lines = [
    `agentexec bench — ${env.profile} run${results.rounds ? `, medians of ${results.rounds} rounds` : ''}, ${env.date}`,
    `node ${env.node}, ${env.cpuCount} × ${env.cpuModel}, commit ${env.gitCommit ?? 'unknown'}`,
    ...(results.fatal ? ['', `STOPPED EARLY: ${results.fatal}`] : []),
    '',
    ...formatTable(results.measurements),
    '',
    `targets met ${results.summary.targetsMet}, missed ${results.summary.targetsMissed}; measurements failed ${results.summary.failedMeasurements}`,
  ];
  const errors = [...new Map(results.measurements.filter((m) => m.error).map((m) => [m.scenario, m.error!])).entries()];
  if (errors.length) lines.push('', 'errors:', ...errors.map(([scenario, error]) => `  ${scenario}: ${error}`));
  lines.push('', 'notes:', ...Object.entries(results.notes).flatMap(([id, notes]) => notes.map((n) => `  ${id}: ${n}`)));
  for (const [name, output] of Object.entries(results.productOutput)) {
    if (output.length) lines.push('', `${name} process printed ${output.length} line(s) at warn or above, first ones:`, ...output.slice(0, 5).map((l) => `  ${l.slice(0, 300)}`));
  }
  lines.push('', 'clean-up:', ...results.teardown.map((t) => `  ${t}`));
  return lines.join('\n');
}

function formatTable(measurements: ReportedMeasurement[]): string[] {
  const header = ['measurement', 'figure', '÷ floor', 'target', 'result'];
  const rows = measurements.map((m) => [
    m.label,
    m.value === null ? 'error' : `${formatValue(m.value, m.unit)} ${m.unit}`,
    m.floorRatio === null ? '—' : `${m.floorRatio.toFixed(m.floorRatio < 10 ? 2 : 1)}×`,
    m.target ? `${m.target.op} ${m.target.value}${m.target.ofFloor ? '× floor' : ` ${m.unit}`}` : '',
    m.pass === null ? (m.value === null ? 'error' : '') : m.pass ? 'pass' : 'FAIL',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [format(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(format)];
}

function formatValue(value: number, unit: Unit): string {
  if (unit === 'ms') return value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0);
  if (unit === 'MB') return value.toFixed(1);
  if (unit === '×') return value.toFixed(2);
  return Math.round(value).toString();
}
