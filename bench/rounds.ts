import type { Floor, FloorFigure } from './floor.js';
import { judge, type ReportedMeasurement } from './report.js';

/**
 * Several rounds of the same measurements (`--rounds N`), each against the floor measured at its
 * start, reported as one: each figure's median over the rounds, and its median ratio to its own
 * round's floor. This machine's speed drifts by 2× within an hour; a ratio taken within one round
 * and then the median of those is steadier than one floor against figures measured minutes later.
 */
export interface Round {
  floor: Floor | null;
  /** evaluate()d against this round's floor. */
  measurements: ReportedMeasurement[];
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Every floor figure's median over the rounds that measured the floor; null when none did. */
export function medianFloor(rounds: readonly Round[]): Floor | null {
  const floors = rounds.flatMap((round) => (round.floor ? [round.floor] : []));
  if (floors.length === 0) return null;
  const figures = Object.keys(floors[0]!) as FloorFigure[];
  return Object.fromEntries(figures.map((figure) => [figure, median(floors.map((floor) => floor[figure]))])) as unknown as Floor;
}

/**
 * One measurement per row, in the first round's order: the median of the values measured (a round
 * that failed to measure it is left out; its error is kept when no round measured it), the median of
 * the rounds' own floor ratios, and the target judged on the median value.
 */
export function medianMeasurements(rounds: readonly Round[]): ReportedMeasurement[] {
  const first = rounds[0]?.measurements ?? [];
  return first.map((row) => {
    const each = rounds.map((round) => round.measurements.find((m) => m.id === row.id)).filter((m): m is ReportedMeasurement => m !== undefined);
    const measured = each.filter((m) => m.value !== null);
    if (measured.length === 0) return row;
    const value = median(measured.map((m) => m.value!));
    const ratios = measured.flatMap((m) => (m.floorRatio === null ? [] : [m.floorRatio]));
    const floorRatio = ratios.length ? median(ratios) : null;
    const { error: _error, ...rest } = row;
    return { ...rest, value, floorRatio, pass: judge(row.target, value, floorRatio) };
  });
}

/** A note per row compared with a floor (the first round's, or its own: a `×` row): each round's value and ratio, so the spread is in the report. */
export function roundNotes(rounds: readonly Round[]): string[] {
  const first = rounds[0]?.measurements ?? [];
  return first
    .filter((row) => row.floor !== undefined || row.unit === '×')
    .map((row) => {
      const each = rounds.map((round) => round.measurements.find((m) => m.id === row.id));
      const ratio = (m: ReportedMeasurement) => (m.floorRatio === null || row.scenario === 'floor' ? '' : ` (${round3(m.floorRatio)}×)`);
      const shown = each.map((m) => (m?.value == null ? 'failed' : `${round3(m.value)} ${row.unit}${ratio(m)}`));
      return `${row.id}: ${shown.join(' / ')}`;
    });
}

function round3(value: number): string {
  return String(Number(value.toPrecision(3)));
}
