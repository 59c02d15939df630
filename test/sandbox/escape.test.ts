import assert from 'node:assert/strict';
import { compileAgent } from '../../shared/compile-agent.js';
import { errorOf, runAgent } from './sandbox-helpers.js';

/** Runs `attempt` as the agent body; the escape must fail with errorInAgent. */
async function assertRefused(attempt: string): Promise<string> {
  const outcome = await runAgent(`export default async function (sys) { ${attempt}; sys.say('escaped'); }`);
  assert.equal(outcome.resultCode, 'errorInAgent', `${attempt} → ${JSON.stringify(outcome)}`);
  assert.deepEqual(outcome.output, []);
  return errorOf(outcome).message;
}

describe('sandbox escapes', () => {
  it('has no process', async () => {
    assert.match(await assertRefused('sys.vars.env = process.env'), /ReferenceError: process is not defined/);
  });

  it('has no require, at compile time or at run time', async () => {
    const compiled = await compileAgent(`export default async function () { require('fs'); }`);
    assert.equal(compiled.ok, false);
    assert.match(await assertRefused(`(0, eval)('require')('fs')`), /ReferenceError: require is not defined/);
  });

  it('cannot reach process through the Function constructor', async () => {
    assert.match(await assertRefused(`globalThis.constructor.constructor('return process')()`), /ReferenceError/);
  });

  it('cannot import modules', async () => {
    const compiled = await compileAgent(`export default async function () { await import('fs'); }`);
    assert.equal(compiled.ok, false);
    assert.match(await assertRefused(`const name = 'fs'; await import(name)`), /import\(\) is not available/);
  });

  it('has no timers and no global fetch', async () => {
    assert.match(await assertRefused('setTimeout(() => {}, 1)'), /ReferenceError: setTimeout is not defined/);
    assert.match(await assertRefused(`await fetch('https://example.com')`), /ReferenceError: fetch is not defined/);
  });

  it('reports only harmless globals and no isolated-vm handle anywhere in reach', async () => {
    const outcome = await runAgent(`export default async function (sys) {
      const names = Object.getOwnPropertyNames(globalThis);
      const handles = [];
      const seen = new Set();
      function scan(value, path, depth) {
        if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value) || depth > 3) return;
        seen.add(value);
        for (const key of ['applySync', 'applySyncPromise', 'derefInto', 'copySync']) {
          try { if (typeof value[key] === 'function') handles.push(path + '.' + key); } catch {}
        }
        for (const key of Object.getOwnPropertyNames(value)) {
          let child;
          try { child = value[key]; } catch { continue; }
          scan(child, path + '.' + key, depth + 1);
        }
      }
      scan(globalThis, 'globalThis', 0);
      scan(sys, 'sys', 0);
      sys.vars.result = {
        leaked: names.filter((n) => ['require', 'process', 'setTimeout', 'setInterval', 'fetch', 'module', 'Buffer'].includes(n)
          || n.startsWith('$') || n.toLowerCase().includes('host') || n.toLowerCase().includes('ivm')),
        handles,
        agentModule: typeof globalThis.__agentModule,
      };
    }`);
    assert.equal(outcome.resultCode, 'success');
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars.result, { leaked: [], handles: [], agentModule: 'undefined' });
  });

  it('cannot install a stack trace hook to reach frame receivers', async () => {
    const outcome = await runAgent(`export default async function (sys) {
      try { Error.prepareStackTrace = (e, frames) => frames; } catch {}
      sys.vars.hook = typeof Error.prepareStackTrace;
    }`);
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars, { hook: 'undefined' });
  });
});
