import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/** A receiver that never answers: it counts the deliveries it holds open, and the most at once. */
async function startHangingReceiver() {
  const state = { open: 0, mostOpen: 0, received: 0, server: undefined as unknown as Server, url: '' };
  state.server = createServer((req, res) => {
    state.received += 1;
    state.open += 1;
    state.mostOpen = Math.max(state.mostOpen, state.open);
    req.resume();
    // The response's close is the connection's: the sender gave up (its 10 s timeout).
    res.on('close', () => (state.open -= 1));
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/hooks`;
  return state;
}

/** A receiver that answers 200 at once, keeping the run ids it got. */
async function startAnsweringReceiver() {
  const state = { runIds: [] as string[], server: undefined as unknown as Server, url: '' };
  state.server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      state.runIds.push((JSON.parse(body) as { data: { runId: string } }).data.runId);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/hooks`;
  return state;
}

/**
 * Fair webhook delivery (DESIGN §16): an account whose receiver never answers holds a few of the
 * worker's delivery slots, never all of them, so another account's webhook goes out while the first
 * account's deliveries still hang. Each hanging attempt lasts the 10 s delivery timeout; 60 of them,
 * 50 at a time as before, would have kept the other account's webhook out for 10 s.
 */
describe('fair webhook delivery', function () {
  this.timeout(60_000);
  let stack: Stack;
  let hanging: Awaited<ReturnType<typeof startHangingReceiver>>;
  let answering: Awaited<ReturnType<typeof startAnsweringReceiver>>;
  const agent = uniqueAgentName('quick');

  before(async () => {
    hanging = await startHangingReceiver();
    answering = await startAnsweringReceiver();
    stack = await startStack({ WEBHOOK_ALLOW: '127.0.0.1' });
    await publishAgent(stack.runtime.db, agent, `export default async (sys) => { sys.say('done'); }`);
  });
  after(async () => {
    await stack.close();
    hanging.server.closeAllConnections();
    hanging.server.close();
    answering.server.close();
  });

  async function accountWithWebhook(url: string): Promise<string> {
    const account = await createAccount(stack.runtime.db);
    const set = await runCli(['webhooks:set', '--name', account.name, '--url', url, '--json'], { WEBHOOK_ALLOW: '127.0.0.1' });
    assert.equal(set.code, 0, set.output);
    return account.key;
  }
  const submit = async (key: string) => ((await post(stack.url, '/api/exec/submit', { agentName: agent, inputs: {} }, { key })).body as { runId: string }).runId;

  it("delivers another account's webhook while a hanging receiver's 60 deliveries wait", async () => {
    const flooder = await accountWithWebhook(hanging.url);
    const other = await accountWithWebhook(answering.url);
    for (let i = 0; i < 60; i++) await submit(flooder);
    await waitFor(() => hanging.open > 0, 15_000, 'the hanging receiver holding deliveries');
    const runId = await submit(other);
    await waitFor(() => answering.runIds.includes(runId), 15_000, "the other account's webhook");
    // Delivered while the hanging receiver still held the first of its deliveries (each held 10 s).
    assert.ok(hanging.open > 0, 'the hanging receiver still held deliveries');
    assert.ok(hanging.mostOpen <= 10, `the hanging receiver held ${hanging.mostOpen} deliveries at once`);
    assert.ok(hanging.received < 60, `all ${hanging.received} of its deliveries were attempted at once`);
  });
});
