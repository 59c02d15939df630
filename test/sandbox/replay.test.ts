import assert from 'node:assert/strict';
import type { Answers, OutputPart } from '../../shared/api.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxEnding } from '../../workers/sandbox/sandbox-endings.js';
import type { JournalEntry, SandboxRun } from '../../workers/sandbox/sandbox.types.js';
import { compile, errorOf, makeRun, startServer, texts, waitFor, type TestServer } from './sandbox-helpers.js';

const agentSource = `
export default async function (sys) {
  const r = Math.random();
  const d = Date.now();
  const n = sys.now();
  const res = await sys.fetch(sys.inputs.url);
  let refused = null;
  try { await sys.fetch('http://10.255.255.1/'); } catch (e) { refused = e.message; }
  await sys.sleep(5);
  sys.say('before first ask');
  sys.log('log before first ask');
  sys.vars.first = { r, d, n, body: res.text, refused };
  const a1 = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] });
  sys.say('hello ' + a1.name);
  const a2 = await sys.ask({ message: 'Pick', inputs: [{ name: 'p', type: 'chooseMany', options: ['x', 'y'] }] });
  sys.vars.done = { r, d, n, name: a1.name, picked: a2.p, later: Math.random() };
  sys.say('done');
}`;

/** Everything a run reported live, to check that replayed output is not emitted again. */
interface Seen {
  parts: OutputPart[];
  logs: string[];
}

function answered(journal: JournalEntry[], answers: Answers): JournalEntry[] {
  const last = journal[journal.length - 1];
  assert.equal(last?.op, 'ask');
  return [...journal.slice(0, -1), { ...(last as Extract<JournalEntry, { op: 'ask' }>), answers }];
}

describe('sandbox replay', () => {
  let server: TestServer;
  let code: string;

  before(async () => {
    server = await startServer((_req, res) => res.end(`hit ${server.hits()}`));
    code = await compile(agentSource);
  });

  after(async () => {
    await server.close();
  });

  function run(journal: JournalEntry[], seen: Seen, overrides: Partial<SandboxRun> = {}): Promise<SandboxEnding> {
    return runSandbox(
      makeRun(code, {
        inputs: { url: `${server.origin}/data` },
        httpAllow: ['127.0.0.1'],
        journal,
        onPart: (part) => seen.parts.push(part),
        onTimeline: (entry) => entry.kind === 'log' && seen.logs.push(entry.text),
        ...overrides,
      }),
    );
  }

  it('replays recorded values, does not repeat calls or output, and asks twice in a row', async () => {
    const seen1: Seen = { parts: [], logs: [] };
    const first = await run([], seen1);
    assert.equal(first.resultCode, 'ask');
    if (first.resultCode !== 'ask') return;
    assert.equal(server.hits(), 1);
    assert.deepEqual(texts(first), ['before first ask']);
    assert.deepEqual(seen1.logs, ['log before first ask']);
    assert.deepEqual(
      first.journal.map((e) => e.op),
      ['now', 'now', 'fetch', 'fetch', 'sleep', 'ask'],
    );
    const recorded = first.vars.first as { d: number; refused: string };
    assert.match(recorded.refused, /destination refused/);

    // Make sure a live clock would read differently now.
    await waitFor(() => Date.now() > recorded.d + 5, 'the clock to move');

    const seen2: Seen = { parts: [], logs: [] };
    const second = await run(answered(first.journal, { name: 'Ada' }), seen2);
    assert.equal(second.resultCode, 'ask');
    if (second.resultCode !== 'ask') return;
    assert.deepEqual(second.vars.first, first.vars.first, 'same random, Date.now, sys.now, fetch body and fetch error');
    assert.equal(server.hits(), 1, 'the recorded fetch is not sent again');
    assert.deepEqual(texts(second), ['hello Ada'], 'output before the ask is not made again');
    assert.deepEqual(seen2.parts, [{ type: 'text', text: 'hello Ada' }]);
    assert.deepEqual(seen2.logs, []);
    assert.equal(second.askInput.message, 'Pick');
    assert.equal(second.journal.length, 7);
    assert.deepEqual(second.journal[5], { ...first.journal[5], answers: { name: 'Ada' } });
    assert.equal((second.journal[6] as { answers?: Answers }).answers, undefined);

    const seen3: Seen = { parts: [], logs: [] };
    const third = await run(answered(second.journal, { p: ['y'] }), seen3);
    assert.equal(third.resultCode, 'success');
    if (third.resultCode !== 'success') return;
    const firstValues = first.vars.first as { r: number; d: number; n: number };
    assert.deepEqual(third.vars.done && { ...(third.vars.done as object), later: 0 }, {
      r: firstValues.r,
      d: firstValues.d,
      n: firstValues.n,
      name: 'Ada',
      picked: ['y'],
      later: 0,
    });
    assert.deepEqual(texts(third), ['done']);
    assert.equal(server.hits(), 1);
  });

  it('ends errorInAgent "replay diverged" when the agent makes a different call', async () => {
    const first = await run([], { parts: [], logs: [] });
    assert.equal(first.resultCode, 'ask');
    if (first.resultCode !== 'ask') return;
    const hits = server.hits();
    const moved = await run(answered(first.journal, { name: 'Bo' }), { parts: [], logs: [] }, {
      inputs: { url: `${server.origin}/other` },
    });
    assert.equal(moved.resultCode, 'errorInAgent');
    assert.match(errorOf(moved).message, /^replay diverged/);
    assert.equal(server.hits(), hits, 'nothing was fetched for the diverging call');
  });

  it('ends errorInAgent "replay diverged" when the kind of call or the ask changes', async () => {
    const source = `export default async function (sys) {
      if (sys.inputs.sleepFirst) await sys.sleep(1); else sys.now();
      await sys.ask({ message: sys.inputs.message, inputs: [{ name: 'a', type: 'str' }] });
    }`;
    const agent = await compile(source);
    const first = await runSandbox(makeRun(agent, { inputs: { sleepFirst: false, message: 'm' } }));
    assert.equal(first.resultCode, 'ask');
    if (first.resultCode !== 'ask') return;
    const journal = answered(first.journal, { a: 'x' });
    for (const inputs of [{ sleepFirst: true, message: 'm' }, { sleepFirst: false, message: 'changed' }]) {
      const outcome = await runSandbox(makeRun(agent, { inputs, journal }));
      assert.equal(outcome.resultCode, 'errorInAgent', JSON.stringify(inputs));
      assert.match(errorOf(outcome).message, /^replay diverged/);
    }
  });

  it('ends errorInAgent "replay diverged" when the agent finishes with journal entries left', async () => {
    const agent = await compile(`export default async function (sys) { sys.say('nothing to replay'); }`);
    const outcome = await runSandbox(makeRun(agent, { journal: [{ op: 'now', value: 1 }] }));
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /^replay diverged/);
  });
});
