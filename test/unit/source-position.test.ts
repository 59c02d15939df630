import assert from 'node:assert/strict';
import { compileAgent } from '../../shared/compile-agent.js';
import { createSourceMapper, mapStackToSource } from '../../workers/runs/source-position.js';

describe('source positions', () => {
  it('maps a stack into the agent’s own source and leaves out the sandbox’s frames', async () => {
    const compiled = await compileAgent('type T = number;\nexport default async function (sys: any) {\n  const n: T = 1;\n  throw new Error("x" + n);\n}\n');
    assert.ok(compiled.ok);
    const line = compiled.code.split('\n').findIndex((l) => l.includes('throw new Error')) + 1;
    const column = compiled.code.split('\n')[line - 1]!.indexOf('throw') + 1;
    const stack = [`Error: x1`, `    at default (agent.js:${line}:${column})`, '    at runAgent (agentexec-sandbox.js:300:9)', '    at async startRun (agentexec-sandbox.js:320:5)'].join('\n');
    assert.equal(mapStackToSource(stack, createSourceMapper(compiled.sourceMap), 'greeter.ts'), 'Error: x1\n    at default (greeter.ts:4:3)');
  });

  it('places nothing when there is no usable source map', () => {
    assert.equal(createSourceMapper('')({ line: 1, column: 1 }), null);
    assert.equal(createSourceMapper('not json')({ line: 1, column: 1 }), null);
  });
});
