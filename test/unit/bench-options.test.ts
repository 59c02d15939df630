import assert from 'node:assert/strict';
import { parseOptions } from '../../bench/options.js';

/** `npm run bench` options (bench/options.ts): the stack is warmed before measuring unless `--cold`. */
describe('bench options', () => {
  it('warms the stack by default, more calls for the full profile than for --quick', () => {
    const full = parseOptions([]);
    const quick = parseOptions(['--quick']);
    assert.equal(full.cold, false);
    assert.equal(quick.cold, false);
    assert.ok(full.profile.stackWarmupCalls > quick.profile.stackWarmupCalls);
    assert.ok(quick.profile.stackWarmupCalls > 0);
  });

  it('measures the stack as started with --cold, alongside the other options', () => {
    const options = parseOptions(['--cold', '--rounds', '3', '--only', 'hello-paired']);
    assert.equal(options.cold, true);
    assert.equal(options.rounds, 3);
    assert.deepEqual(options.only, ['hello-paired']);
  });

  it('refuses an unknown option with the usage line, which names --cold', () => {
    assert.throws(() => parseOptions(['--warm']), (err: Error) => err.message.includes('unknown option --warm') && err.message.includes('[--cold]'));
  });
});
