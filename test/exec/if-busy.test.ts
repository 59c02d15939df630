import assert from 'node:assert/strict';
import { AgentexecClient, ConversationBusyError } from '../../clients/typescript/src/index.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Double texting (DESIGN §16): a call on a conversation with a run queued or running waits its turn
 * (`ifBusy: enqueue`, the default), is refused at once (`reject`), or stops that run and runs next
 * (`interrupt`), on execAgent and submit alike.
 */
describe('ifBusy: a call on a busy conversation', function () {
  this.timeout(60_000);
  let stack: Stack;
  let key: string;
  const agentName = uniqueAgentName('turns');

  before(async () => {
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '20000' });
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, agentName, `export default async (sys) => { await sys.sleep(Number(sys.inputs.ms ?? 0)); sys.say(String(sys.inputs.n)); }`);
  });
  after(() => stack.close());

  /** A conversation whose second run sleeps `ms` (queued or running once this returns); its runId. */
  async function busyConversation(ms: number): Promise<{ convid: string; runId: string }> {
    const first = await execAgent(stack.url, key, { agentName, inputs: { n: 'first' } });
    const { convid } = first.body as { convid: string };
    const busy = await post(stack.url, '/api/exec/submit', { agentName, convid, inputs: { n: 'busy', ms } }, { key });
    assert.equal(busy.status, 202);
    return { convid, runId: (busy.body as { runId: string }).runId };
  }

  const turnsOf = async (convid: string) =>
    ((await post(stack.url, '/api/conv/get', { convid }, { key })).body as { turns: { resultCode: string; output: { text: string }[] }[] }).turns.map(
      (turn) => `${turn.output[0]?.text ?? ''}:${turn.resultCode}`,
    );
  const endOf = async (runId: string) => {
    const res = await post(stack.url, '/api/exec/wait', { runId, timeoutMs: 20_000 }, { key });
    return (res.body as { response?: { resultCode: string } }).response?.resultCode;
  };

  it('enqueue (the default): the call waits for the busy run and runs after it', async () => {
    const { convid, runId } = await busyConversation(500);
    const res = await execAgent(stack.url, key, { agentName, convid, inputs: { n: 'after' } });
    assert.equal(res.body.resultCode, 'success');
    assert.equal(await endOf(runId), 'success');
    assert.deepEqual(await turnsOf(convid), ['first:success', 'busy:success', 'after:success']);
  });

  it('reject: 409 conversationBusy at once on execAgent and submit, and nothing is queued', async () => {
    const { convid, runId } = await busyConversation(1500);
    const refused = await execAgent(stack.url, key, { agentName, convid, ifBusy: 'reject', inputs: { n: 'refused' } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'conversationBusy');
    const submitted = await post(stack.url, '/api/exec/submit', { agentName, convid, ifBusy: 'reject', inputs: { n: 'refused' } }, { key });
    assert.equal(submitted.status, 409);
    assert.equal(await endOf(runId), 'success');
    assert.deepEqual(await turnsOf(convid), ['first:success', 'busy:success']);
    // Idle again: reject takes the turn like any call.
    const idle = await execAgent(stack.url, key, { agentName, convid, ifBusy: 'reject', inputs: { n: 'idle' } });
    assert.equal(idle.body.resultCode, 'success');
  });

  it('interrupt: the busy run ends stopped keeping nothing, and the call runs next', async () => {
    const { convid, runId } = await busyConversation(15_000);
    await waitFor(async () => ((await post(stack.url, '/api/exec/getRun', { runId }, { key })).body as { status: string }).status === 'running', 10_000);
    const res = await execAgent(stack.url, key, { agentName, convid, ifBusy: 'interrupt', inputs: { n: 'next' } });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    assert.equal(await endOf(runId), 'stopped');
    const turns = await turnsOf(convid);
    assert.equal(turns.at(-1), 'next:success');
    assert.ok(!turns.includes('busy:success'), JSON.stringify(turns));
  });

  it('interrupt through submit withdraws a run still queued behind the busy one', async () => {
    const { convid, runId } = await busyConversation(15_000);
    const queued = (await post(stack.url, '/api/exec/submit', { agentName, convid, inputs: { n: 'queued' } }, { key })).body as { runId: string };
    const next = await post(stack.url, '/api/exec/submit', { agentName, convid, ifBusy: 'interrupt', inputs: { n: 'next' } }, { key });
    assert.equal(next.status, 202);
    assert.equal(await endOf((next.body as { runId: string }).runId), 'success');
    assert.equal(await endOf(runId), 'stopped');
    assert.equal(await endOf(queued.runId), 'stopped');
  });

  it('the client sends ifBusy and throws ConversationBusyError on a refusal', async () => {
    const client = new AgentexecClient({ baseUrl: stack.url, apiKey: key });
    const { convid } = await busyConversation(1500);
    await assert.rejects(client.run(agentName, { n: 'x' }, { convid, ifBusy: 'reject' }), ConversationBusyError);
  });

  it('refuses an ifBusy that is not one of the three with 400 naming the field', async () => {
    const res = await execAgent(stack.url, key, { agentName, ifBusy: 'later', inputs: {} });
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(res.body.error), /ifBusy/);
  });
});
