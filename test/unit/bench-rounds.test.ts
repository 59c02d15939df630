import assert from 'node:assert/strict';
import type { Floor } from '../../bench/floor.js';
import type { ReportedMeasurement } from '../../bench/report.js';
import { median, medianFloor, medianMeasurements, roundNotes, type Round } from '../../bench/rounds.js';

/** `npm run bench -- --rounds N`: rounds reported as medians (bench/rounds.ts). */
describe('bench rounds', () => {
  const floor = (concurrentRate: number, sequentialP50: number): Floor => ({
    sequentialP50,
    sequentialP99: sequentialP50 * 4,
    sequentialRate: 1000 / sequentialP50,
    concurrentP50: 15,
    concurrentP99: 30,
    concurrentRate,
  });
  const rate = (value: number | null, floorRatio: number | null, error?: string): ReportedMeasurement => ({
    id: 'hello.concurrent.rate',
    label: '(b) hello 64 clients',
    unit: 'calls/s',
    floor: 'concurrentRate',
    target: { op: '>=', value: 3000 },
    scenario: 'hello-concurrent',
    value,
    floorRatio,
    pass: value === null ? false : value >= 3000,
    ...(error ? { error } : {}),
  });
  const cpu = (value: number): ReportedMeasurement => ({ id: 'cpu.web', label: 'web CPU', unit: 'µs/call', scenario: 'hello-concurrent', value, floorRatio: null, pass: null });

  it('takes the middle value, or the mean of the two middle ones', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([7]), 7);
  });

  it('reports each figure as its median, and each ratio as the median of the rounds’ own ratios', () => {
    // Round 2's floor was twice as fast: its ratio is the lowest, though its figure is the highest.
    // The median figure (round 1's) over the median floor (round 3's) would be 0.44; the rounds' own ratios say 0.4.
    const rounds: Round[] = [
      { floor: floor(2000, 0.8), measurements: [rate(1100, 0.55), cpu(700)] },
      { floor: floor(4000, 0.6), measurements: [rate(1200, 0.3), cpu(600)] },
      { floor: floor(2500, 0.7), measurements: [rate(1000, 0.4), cpu(650)] },
    ];
    const [hello, web] = medianMeasurements(rounds);
    assert.equal(hello!.value, 1100);
    assert.equal(hello!.floorRatio, 0.4);
    assert.equal(hello!.pass, false);
    assert.equal(web!.value, 650);
    assert.equal(web!.floorRatio, null);
    assert.deepEqual(medianFloor(rounds), floor(2500, 0.7));
  });

  it('leaves out a round that failed to measure a figure, and keeps the error when none measured it', () => {
    const rounds: Round[] = [
      { floor: floor(2000, 0.8), measurements: [rate(null, null, 'timed out')] },
      { floor: floor(3000, 0.7), measurements: [rate(3300, 1.1)] },
      { floor: null, measurements: [rate(3100, null)] },
    ];
    const [hello] = medianMeasurements(rounds);
    assert.equal(hello!.value, 3200);
    assert.equal(hello!.floorRatio, 1.1);
    assert.equal(hello!.pass, true);
    assert.equal(hello!.error, undefined);

    const none = medianMeasurements([{ floor: null, measurements: [rate(null, null, 'timed out')] }]);
    assert.equal(none[0]!.value, null);
    assert.equal(none[0]!.error, 'timed out');
    assert.equal(medianFloor([{ floor: null, measurements: [] }]), null);
  });

  it('notes every round’s figure and ratio for the rows compared with the floor', () => {
    const rounds: Round[] = [
      { floor: floor(2000, 0.8), measurements: [rate(1000, 0.5), cpu(700)] },
      { floor: floor(4000, 0.6), measurements: [rate(null, null, 'timed out'), cpu(600)] },
    ];
    assert.deepEqual(roundNotes(rounds), ['hello.concurrent.rate: 1000 calls/s (0.5×) / failed']);
  });

  it('notes every round’s value of a ratio a scenario measured against its own floor', () => {
    const paired = (value: number): ReportedMeasurement => ({ id: 'hello.paired.ratio', label: 'paired', unit: '×', target: { op: '<=', value: 2 }, scenario: 'hello-paired', value, floorRatio: null, pass: value <= 2 });
    const rounds: Round[] = [
      { floor: floor(2000, 0.8), measurements: [paired(3.16), cpu(700)] },
      { floor: floor(4000, 0.6), measurements: [paired(1.9), cpu(600)] },
      { floor: floor(3000, 0.7), measurements: [paired(2.5), cpu(650)] },
    ];
    assert.deepEqual(roundNotes(rounds), ['hello.paired.ratio: 3.16 × / 1.9 × / 2.5 ×']);
    const [ratio] = medianMeasurements(rounds);
    assert.equal(ratio!.value, 2.5);
    assert.equal(ratio!.pass, false);
  });
});
