import assert from 'node:assert/strict';
import type { Answers } from '../../shared/api.js';
import type { AgentCalls, CallResult, ChildCall, JournalEntry } from '../../workers/sandbox/sandbox.types.js';
import { errorOf, runAgent, texts } from './sandbox-helpers.js';

/**
 * sys.call's journaling in the sandbox (DESIGN §19), against an AgentCalls that answers from memory:
 * what the sandbox asks of the run path, and what it replays without asking.
 */

const parent = `export default async (sys) => {
  const [a, b] = await Promise.all([sys.call('echo', { q: 1 }), sys.call('echo', { q: 2 })]);
  const { go } = await sys.ask({ message: 'Go?', inputs: [{ name: 'go', type: 'str' }] });
  sys.say(a.output[0].text + ' ' + b.output[0].text + ' ' + go);
}`;

/** Children answered by echoing their inputs, each call recorded. */
function echoCalls(depth = 0): AgentCalls & { calls: ChildCall[]; signals: AbortSignal[] } {
  const calls: ChildCall[] = [];
  const signals: AbortSignal[] = [];
  return {
    calls,
    signals,
    depth,
    childOf: (callNumber, convid) => ({ runId: `run-${callNumber}`, convid: convid ?? `conv-${callNumber}` }),
    async run(child, signal) {
      calls.push(child);
      signals.push(signal);
      return { resultCode: 'success', convid: child.convid, runId: child.runId, output: [{ type: 'text', text: JSON.stringify(child.inputs) }] } satisfies CallResult;
    },
  };
}

function answered(journal: JournalEntry[], answers: Answers): JournalEntry[] {
  const last = journal.at(-1) as Extract<JournalEntry, { op: 'ask' }>;
  return [...journal.slice(0, -1), { ...last, answers }];
}

describe('sys.call in the sandbox', () => {
  it('journals each call with its child ids, fixed from its place in the journal, and its result', async () => {
    const agentCalls = echoCalls();
    const asked = await runAgent(parent, { agentCalls });
    assert.equal(asked.resultCode, 'ask');
    const journal = asked.resultCode === 'ask' ? asked.journal : [];
    assert.deepEqual(
      journal.filter((e) => e.op === 'call').map((e) => (e.op === 'call' ? [e.runId, e.childConvid, e.convid, e.result?.output] : [])),
      [
        ['run-0', 'conv-0', null, [{ type: 'text', text: '{"q":1}' }]],
        ['run-1', 'conv-1', null, [{ type: 'text', text: '{"q":2}' }]],
      ],
    );
    assert.deepEqual(agentCalls.calls.map((c) => [c.runId, c.newConversation, c.live]), [['run-0', true, true], ['run-1', true, true]]);
  });

  it('replays recorded results without asking the run path again', async () => {
    const first = await runAgent(parent, { agentCalls: echoCalls() });
    const again = echoCalls();
    const resumed = await runAgent(parent, { agentCalls: again, journal: answered(first.resultCode === 'ask' ? first.journal : [], { go: 'yes' }) });
    assert.equal(resumed.resultCode, 'success', JSON.stringify(resumed));
    assert.deepEqual(texts(resumed), ['{"q":1} {"q":2} yes']);
    assert.equal(again.calls.length, 0);
  });

  it('waits for the recorded child of a call that had no result yet, by its recorded ids, not as a live call', async () => {
    const first = await runAgent(parent, { agentCalls: echoCalls() });
    const journal = (first.resultCode === 'ask' ? first.journal : []).map((e) => (e.op === 'call' && e.runId === 'run-1' ? { ...e, result: undefined } : e));
    const again = echoCalls();
    again.childOf = () => assert.fail('a replayed call names no new child');
    const resumed = await runAgent(parent, { agentCalls: again, journal: answered(journal, { go: 'on' }) });
    assert.equal(resumed.resultCode, 'success', JSON.stringify(resumed));
    assert.deepEqual(again.calls.map((c) => [c.runId, c.convid, c.live]), [['run-1', 'conv-1', false]]);
  });

  it('lets the children of a run that ends on an ask go on, and stops those of a run that ends otherwise', async () => {
    const hanging = (): AgentCalls & { signals: AbortSignal[] } => {
      const signals: AbortSignal[] = [];
      return { signals, depth: 0, childOf: (n) => ({ runId: `run-${n}`, convid: `conv-${n}` }), run: (_child, signal) => (signals.push(signal), new Promise<CallResult>(() => undefined)) };
    };
    const asking = hanging();
    const asked = await runAgent(`export default async (sys) => { sys.call('slow'); await sys.ask({ message: 'm', inputs: [{ name: 'a', type: 'str' }] }); }`, { agentCalls: asking });
    assert.equal(asked.resultCode, 'ask');
    assert.equal(asking.signals[0]?.reason, 'detach');
    const failing = hanging();
    const failed = await runAgent(`export default async (sys) => { sys.call('slow'); await sys.sleep(5); sys.fail('no'); }`, { agentCalls: failing });
    assert.equal(failed.resultCode, 'failCommand');
    assert.equal(failing.signals[0]?.reason, 'stop');
  });

  it('ends a run that calls at depth 8 errorInAgent, asking the run path nothing', async () => {
    const deep = echoCalls(8);
    const ended = await runAgent(`export default async (sys) => { await sys.call('child'); }`, { agentCalls: deep });
    assert.equal(ended.resultCode, 'errorInAgent');
    assert.match(errorOf(ended).message, /nest at most 8 deep/);
    assert.equal(deep.calls.length, 0);
  });

  it('throws a TypeError the agent can catch for inputs that are not JSON, before any child', async () => {
    const calls = echoCalls();
    const ended = await runAgent(
      `export default async (sys) => {
        for (const inputs of [{ f() {} }, [1], { n: 1n }, (() => { const o = {}; o.o = o; return o; })()]) {
          try { await sys.call('child', inputs); sys.say('called'); } catch (err) { sys.say(err instanceof TypeError ? 'TypeError' : 'other ' + err); }
        }
      }`,
      { agentCalls: calls },
    );
    assert.deepEqual(texts(ended), ['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    assert.equal(calls.calls.length, 0);
  });
});
