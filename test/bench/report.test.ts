import assert from 'node:assert/strict';
import { evaluate, judge } from '../../bench/report.js';
import type { Floor } from '../../bench/floor.js';

/** The bench's verdicts (bench/report.ts): a target on the figure, or on the figure ÷ the floor's. */
describe('bench report targets', () => {
  it('judges a target on the figure itself', () => {
    assert.equal(judge({ op: '<=', value: 2 }, 1.5, 9), true);
    assert.equal(judge({ op: '<=', value: 2 }, 2.5, 0.1), false);
    assert.equal(judge(undefined, 1, 1), null);
  });

  it('judges a target of the floor ratio on the ratio, and fails it when there is no floor to divide by', () => {
    assert.equal(judge({ op: '>=', value: 1, ofFloor: true }, 3000, 1.1), true);
    assert.equal(judge({ op: '>=', value: 1, ofFloor: true }, 3000, 0.6), false);
    assert.equal(judge({ op: '>=', value: 1, ofFloor: true }, 3000, null), false);
  });

  it("divides each row by the floor's matching figure before judging it", () => {
    const floor = { concurrentRate: 4000, sequentialP50: 0.5 } as Floor;
    const [rate, p50] = evaluate(
      [
        { id: 'r', label: 'rate', unit: 'calls/s', floor: 'concurrentRate', scenario: 's', value: 2400, target: { op: '>=', value: 1, ofFloor: true } },
        { id: 'p', label: 'p50', unit: 'ms', floor: 'sequentialP50', scenario: 's', value: 0.7, target: { op: '<=', value: 1.5, ofFloor: true } },
      ],
      floor,
    );
    assert.equal(rate!.floorRatio, 0.6);
    assert.equal(rate!.pass, false);
    assert.ok(Math.abs(p50!.floorRatio! - 1.4) < 1e-9);
    assert.equal(p50!.pass, true);
  });
});
