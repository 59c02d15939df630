import assert from 'node:assert/strict';
import type { OutputPart } from '../../shared/api.js';
import { errorOf, runAgent, texts } from './sandbox-helpers.js';

describe('sandbox sys', () => {
  it('exposes agentName, convid, inputs, query, caller and history', async () => {
    const history = [{ agentName: 'other', query: 'q0', resultCode: 'success' as const, at: '2024-01-01T00:00:00.000Z' }];
    const outcome = await runAgent(
      `export default async function (sys) {
        sys.vars.seen = { agentName: sys.agentName, convid: sys.convid, inputs: sys.inputs, query: sys.query,
          caller: sys.caller, history: sys.history };
      }`,
      { inputs: { query: 'what?', n: [1, { x: 2 }] }, history },
    );
    assert.equal(outcome.resultCode, 'success');
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars.seen, {
      agentName: 'probe',
      convid: 'conv-1',
      inputs: { query: 'what?', n: [1, { x: 2 }] },
      query: 'what?',
      caller: { kind: 'user', id: 'user-1', role: 'developer' },
      history,
    });
  });

  it('leaves query undefined when inputs.query is not a string', async () => {
    const outcome = await runAgent(`export default async function (sys) { sys.vars.q = typeof sys.query; }`, {
      inputs: { query: 42 },
    });
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars, { q: 'undefined' });
  });

  it('gives the agent a deep copy of inputs', async () => {
    const inputs = { query: 'q', nested: { a: 1 } };
    await runAgent(`export default async function (sys) { sys.inputs.nested.a = 2; }`, { inputs });
    assert.deepEqual(inputs, { query: 'q', nested: { a: 1 } });
  });

  it('returns the final vars and conv', async () => {
    const outcome = await runAgent(
      `export default async function (sys) { sys.vars.count = (sys.vars.count ?? 0) + 1; delete sys.conv.old; sys.conv.list = [1, 'two']; }`,
      { vars: { count: 4 }, conv: { old: true, keep: null } },
    );
    assert.deepEqual(outcome, { resultCode: 'success', output: [], vars: { count: 5 }, conv: { keep: null, list: [1, 'two'] } });
  });

  it('makes text, html and image parts and reports them live', async () => {
    const live: OutputPart[] = [];
    const outcome = await runAgent(
      `export default async function (sys) {
        sys.say('# Title');
        sys.html('<b>bold</b>');
        sys.image('https://example.com/cat.png', 'image/png');
        sys.image('iVBORw0KGgo=', 'image/png');
        sys.image('data:image/gif;base64,R0lGOD', undefined);
      }`,
      { onPart: (part) => live.push(part) },
    );
    const expected: OutputPart[] = [
      { type: 'text', text: '# Title' },
      { type: 'html', html: '<b>bold</b>' },
      { type: 'image', mimeType: 'image/png', url: 'https://example.com/cat.png' },
      { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'image', mimeType: 'image/gif', data: 'R0lGOD' },
    ];
    assert.deepEqual(outcome.output, expected);
    assert.deepEqual(live, expected);
  });

  it('writes into the current text part, or starts one after another kind of part', async () => {
    const events: string[] = [];
    const outcome = await runAgent(
      `export default async function (sys) {
        sys.write('Hel'); sys.write('lo'); sys.html('<hr>'); sys.write('A'); sys.say('B'); sys.write('C');
      }`,
      { onPart: (part) => events.push(`part:${JSON.stringify(part)}`), onDelta: (text) => events.push(`delta:${text}`) },
    );
    assert.deepEqual(outcome.output, [
      { type: 'text', text: 'Hello' },
      { type: 'html', html: '<hr>' },
      { type: 'text', text: 'A' },
      { type: 'text', text: 'BC' },
    ]);
    assert.deepEqual(events, [
      'part:{"type":"text","text":"Hel"}',
      'delta:lo',
      'part:{"type":"html","html":"<hr>"}',
      'part:{"type":"text","text":"A"}',
      'part:{"type":"text","text":"B"}',
      'delta:C',
    ]);
  });

  it('keeps written text in order with parts, logs and sys calls, and sends it before the code that follows yields', async () => {
    const events: string[] = [];
    const outcome = await runAgent(
      `export default async function (sys) {
        sys.write('a'); sys.log('log 1'); sys.write('b'); sys.now(); sys.write('c');
        await sys.sleep(1);
        sys.write('d'); sys.say('e'); sys.write('f');
        await new Promise((resolve) => resolve());
        sys.log('log 2');
        sys.write('g');
      }`,
      {
        onPart: (part) => events.push(`part:${part.type === 'text' ? part.text : part.type}`),
        onDelta: (text) => events.push(`delta:${text}`),
        onTimeline: (entry) => entry.kind === 'log' && events.push(`log:${entry.text}`),
      },
    );
    assert.deepEqual(outcome.output, [
      { type: 'text', text: 'abcd' },
      { type: 'text', text: 'efg' },
    ]);
    assert.deepEqual(events, ['part:a', 'log:log 1', 'delta:b', 'delta:c', 'delta:d', 'part:e', 'delta:f', 'log:log 2', 'delta:g']);
  });

  it('formats log arguments to one line, console.log included', async () => {
    const lines: string[] = [];
    await runAgent(
      `export default async function (sys) { sys.log('count', 3, { a: [1] }, null, undefined); console.log('via console'); }`,
      { onTimeline: (entry) => entry.kind === 'log' && lines.push(entry.text) },
    );
    assert.deepEqual(lines, ['count 3 {"a":[1]} null undefined', 'via console']);
  });

  it('sleeps without blocking and gives now() as epoch milliseconds', async () => {
    const before = Date.now();
    const outcome = await runAgent(
      `export default async function (sys) { const a = sys.now(); await sys.sleep(30); sys.vars.t = [a, sys.now(), Date.now(), new Date().getTime()]; }`,
    );
    const [a, b, c, d] = (outcome.resultCode === 'success' ? outcome.vars.t : []) as number[];
    assert.ok(a! >= before && a! <= Date.now(), 'now() is the wall clock');
    assert.ok(b! - a! >= 25, 'sleep waited');
    assert.ok(c! >= b! && d! >= c!);
  });

  it('keeps Date working for explicit dates and instanceof', async () => {
    const outcome = await runAgent(
      `export default async function (sys) {
        const d = new Date(0);
        class MyDate extends Date {}
        sys.vars.r = [d.toISOString(), Date.UTC(2000, 0, 1), new MyDate(5).getTime(), new Date() instanceof Date, typeof Date()];
      }`,
    );
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars.r, ['1970-01-01T00:00:00.000Z', 946684800000, 5, true, 'string']);
  });

  it('seeds Math.random from the run', async () => {
    const source = `export default async function (sys) { sys.vars.r = [Math.random(), Math.random()]; }`;
    const [a, b, c] = await Promise.all([
      runAgent(source, { randomSeed: 7 }),
      runAgent(source, { randomSeed: 7 }),
      runAgent(source, { randomSeed: 8 }),
    ]);
    const values = [a, b, c].map((o) => (o!.resultCode === 'success' ? o!.vars.r : null));
    assert.deepEqual(values[0], values[1]);
    assert.notDeepEqual(values[0], values[2]);
    for (const r of values[0] as number[]) assert.ok(r >= 0 && r < 1);
  });

  it('pauses at ask with the vars as they are and the normalised askInput', async () => {
    const outcome = await runAgent(
      `export default async function (sys) {
        sys.vars.step = 1;
        sys.say('Question coming');
        await sys.ask({ message: 'Colour?', inputs: [{ name: 'c', type: 'chooseOne', options: ['red', 'blue'] }] });
        sys.vars.step = 2;
      }`,
    );
    assert.equal(outcome.resultCode, 'ask');
    if (outcome.resultCode !== 'ask') return;
    assert.deepEqual(outcome.vars, { step: 1 });
    assert.deepEqual(texts(outcome), ['Question coming']);
    const askInput = {
      message: 'Colour?',
      inputs: [
        {
          name: 'c',
          type: 'chooseOne' as const,
          label: null,
          description: null,
          options: [
            { value: 'red', label: 'red' },
            { value: 'blue', label: 'blue' },
          ],
          default: null,
        },
      ],
    };
    assert.deepEqual(outcome.askInput, askInput);
    assert.deepEqual(outcome.journal, [{ op: 'ask', ask: askInput }]);
  });

  it('ends failCommand at sys.fail even when the agent catches it', async () => {
    const outcome = await runAgent(
      `export default async function (sys) { sys.say('before'); try { sys.fail('no can do'); } catch {} sys.say('after'); }`,
    );
    assert.equal(outcome.resultCode, 'failCommand');
    assert.equal(errorOf(outcome).message, 'no can do');
    assert.deepEqual(texts(outcome), ['before']);
  });
});

describe('sandbox: text PostgreSQL cannot store', () => {
  it('turns U+0000 and unpaired surrogates in output and asks into U+FFFD', async () => {
    const outcome = await runAgent(
      `export default async function (sys) {
        sys.say('a\\u0000b');
        sys.write('\\ud800!');
        sys.html('<p>\\udc00</p>');
        await sys.ask({ message: 'm\\u0000', inputs: [{ name: 'n', type: 'str', label: '\\ud83d' }] });
      }`,
    );
    assert.equal(outcome.resultCode, 'ask');
    assert.deepEqual(texts(outcome), ['a\ufffdb\ufffd!']);
    assert.deepEqual(outcome.output[1], { type: 'html', html: '<p>\ufffd</p>' });
    assert.equal(outcome.resultCode === 'ask' && outcome.askInput.message, 'm\ufffd');
    assert.equal(outcome.resultCode === 'ask' && outcome.askInput.inputs[0]!.label, '\ufffd');
  });

  it('ends errorInAgent, naming where, when sys.vars or sys.conv holds such text', async () => {
    const outcome = await runAgent(`export default async function (sys) { sys.conv.notes = { last: 'x\\u0000' }; }`);
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /sys\.conv\.notes\.last holds U\+0000 or an unpaired surrogate/);
  });
});
