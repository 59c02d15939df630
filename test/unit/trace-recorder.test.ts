import assert from 'node:assert/strict';
import { maxTraceEvents, traceEvent } from '../../shared/trace.js';
import { createTraceRecorder, maxTracedValueLength, passwordAnswers } from '../../workers/runs/trace-recorder.js';
import type { JournalEntry } from '../../workers/sandbox/sandbox.types.js';

const identity = (site: { line: number; column: number }) => site;
const at = new Date('2026-01-02T03:04:05.678Z');

describe('trace recorder', () => {
  it('numbers events from 1, times them, places them through the source map, and returns each number', () => {
    const recorder = createTraceRecorder({ toSource: ({ line, column }) => ({ line: line - 10, column }), secrets: [], now: () => at });
    assert.equal(recorder.onTrace({ kind: 'log', text: 'hi', site: { line: 12, column: 3 } }), 1);
    assert.equal(recorder.onTrace({ kind: 'call', name: 'now', args: {}, site: null }), 2);
    assert.deepEqual(recorder.events, [
      { seq: 1, at: at.toISOString(), line: 2, column: 3, kind: 'log', text: 'hi' },
      { seq: 2, at: at.toISOString(), line: null, column: null, kind: 'call', name: 'now', args: {} },
    ]);
    for (const event of recorder.events) assert.ok(traceEvent.safeParse(event).success, 'matches the documented schema');
  });

  it('masks every secret wherever it appears: values, nested keys, log text, errors', () => {
    const recorder = createTraceRecorder({ toSource: identity, secrets: ['s3cret', ''], now: () => at });
    recorder.onTrace({ kind: 'log', text: 'pw=s3cret!', site: null });
    recorder.onTrace({ kind: 'var', scope: 'vars', path: ['a'], op: 'set', value: { s3cret: ['x s3cret y'] }, site: null });
    recorder.onTrace({ kind: 'result', name: 'fetch', call: 1, error: 'failed for s3cret', site: null });
    const text = JSON.stringify(recorder.events);
    assert.ok(!text.includes('s3cret'));
    assert.equal((recorder.events[0] as { text: string }).text, 'pw=********!');
    assert.deepEqual((recorder.events[1] as { value: unknown }).value, { '********': ['x ******** y'] });
  });

  it('cuts a large value to a string preview of its JSON', () => {
    const recorder = createTraceRecorder({ toSource: identity, secrets: [] });
    const big = { list: Array.from({ length: 1000 }, (_, i) => i) };
    recorder.onTrace({ kind: 'var', scope: 'conv', path: ['big'], op: 'set', value: big, site: null });
    const value = (recorder.events[0] as { value: unknown }).value as string;
    assert.equal(typeof value, 'string');
    assert.equal(value.length, maxTracedValueLength + 1);
    assert.ok(value.startsWith('{"list":[0,1,2,'));
    assert.ok(value.endsWith('…'));
  });

  it('keeps at most maxTraceEvents events, then one truncated event, then nothing', () => {
    const emitted: unknown[] = [];
    const recorder = createTraceRecorder({ toSource: identity, secrets: [], emit: (event) => emitted.push(event) });
    for (let i = 0; i < maxTraceEvents + 10; i++) recorder.onTrace({ kind: 'log', text: String(i), site: null });
    assert.equal(recorder.events.length, maxTraceEvents + 1);
    assert.equal(emitted.length, maxTraceEvents + 1);
    assert.equal(recorder.events.at(-1)!.kind, 'truncated');
    assert.equal(recorder.onTrace({ kind: 'log', text: 'late', site: null }), undefined);
  });

  it('finds the password answers in a journal, and only those', () => {
    const journal: JournalEntry[] = [
      { op: 'now', value: 1 },
      {
        op: 'ask',
        ask: {
          message: 'm',
          inputs: [
            { name: 'user', type: 'str', label: null, description: null, options: null, default: null },
            { name: 'pw', type: 'password', label: null, description: null, options: null, default: null },
          ],
        },
        answers: { user: 'ada', pw: 'hunter22' },
      },
    ];
    assert.deepEqual(passwordAnswers(journal), ['hunter22']);
  });
});
