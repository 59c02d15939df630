import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { answerTokens, startLlmServer, type LlmServer } from '../helpers/llm-server.js';
import { openStream, type SseEvent } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

const agentsDir = fileURLToPath(new URL('../../../agents/', import.meta.url));

/**
 * Agents that stream from an LLM (DESIGN §13), through the real API, against a real server started
 * here that speaks the OpenAI chat-completions stream format.
 */
describe('agents streaming from an LLM', () => {
  let stack: Stack;
  let llm: LlmServer;
  let key: string;
  const apiKey = `sk-test-${randomBytes(12).toString('hex')}`;
  const chat = uniqueAgentName('chat');
  const streamThenAsk = uniqueAgentName('stream-ask');
  const catcher = uniqueAgentName('catcher');

  /** The text the client saw: part and delta events joined. */
  const textOf = (events: SseEvent[]) => events.map((e) => (e.event === 'part' ? e.data.text : e.event === 'delta' ? e.data.text : '')).join('');

  before(async () => {
    llm = await startLlmServer();
    stack = await startStack();
    const db = stack.runtime.db;
    key = (await createAccount(db)).key;
    const admin = (await createAccount(db, 'admin')).key;
    await publishAgent(db, chat, await readFile(`${agentsDir}chat.ts`, 'utf8'));
    const streamingCall = `await sys.fetch(sys.secrets.LLM_BASE_URL + '/chat/completions', {
      method: 'POST', stream: true,
      headers: { authorization: 'Bearer ' + sys.secrets.LLM_API_KEY },
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: sys.query }] }),
    })`;
    const readTokens = `let text = ''; for await (const e of response.events()) if (e.data !== '[DONE]') text += JSON.parse(e.data).choices[0].delta.content;`;
    await publishAgent(
      db,
      streamThenAsk,
      `export default async (sys) => {
        const response = ${streamingCall};
        ${readTokens}
        sys.say(text);
        const { more } = await sys.ask({ message: 'More?', inputs: [{ name: 'more', type: 'str' }] });
        sys.say(text + ' / ' + more);
      }`,
    );
    await publishAgent(
      db,
      catcher,
      `export default async (sys) => {
        const response = ${streamingCall};
        try { ${readTokens} sys.say(text); } catch (err) { sys.say('the model went away: ' + err.name); }
      }`,
    );
    for (const agentName of [chat, streamThenAsk, catcher]) {
      for (const [secretKey, value] of [['LLM_BASE_URL', llm.baseUrl], ['LLM_API_KEY', apiKey]]) {
        const set = await post(stack.url, '/api/admin/setSecret', { agentName, key: secretKey, value }, { key: admin });
        assert.equal(set.status, 200, JSON.stringify(set.body));
      }
    }
  });
  afterEach(() => llm.holdAfter(null));
  after(async () => {
    await stack.close();
    await llm.close();
  });

  it('relays each token to an SSE client before the run ends; the model saw the secret key, the client never did', async () => {
    llm.holdAfter(3);
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: chat, inputs: { query: 'the quick brown fox' }, stream: true }, { key });
    const tokens = answerTokens('the quick brown fox');
    await waitFor(() => textOf(stream.events) === tokens.slice(0, 3).join(''), 5000, 'the first three tokens at the client');
    assert.equal(stream.events.some((e) => e.event === 'end'), false, 'the run is still going');
    llm.holdAfter(null);
    llm.release();
    const events = await stream.done;
    const end = events.at(-1)!;
    assert.equal(end.event, 'end');
    assert.equal(end.data.resultCode, 'success');
    assert.equal(textOf(events), tokens.join(''));
    assert.equal(llm.requests.at(-1)!.authorization, `Bearer ${apiKey}`);
    assert.equal(stream.text().includes(apiKey), false);
    assert.equal(stack.logLines.some((line) => line.includes(apiKey)), false);

    // The conversation goes on from the kept messages.
    const next = await execAgent(stack.url, key, { agentName: chat, convid: end.data.convid, inputs: { query: 'and then?' } });
    assert.equal(next.body.resultCode, 'success');
    assert.deepEqual(
      llm.requests.at(-1)!.messages.map((m) => [m.role, m.content]).slice(1),
      [
        ['user', 'the quick brown fox'],
        ['assistant', tokens.join('')],
        ['user', 'and then?'],
      ],
    );
    assert.equal(JSON.stringify(next.body).includes(apiKey), false);
  });

  it('resumes a run that asked after a stream without asking the model again', async () => {
    const first = await execAgent(stack.url, key, { agentName: streamThenAsk, inputs: { query: 'hello there' } });
    assert.equal(first.body.resultCode, 'ask', JSON.stringify(first.body));
    const requests = llm.requests.length;
    const answered = await execAgent(stack.url, key, { agentName: streamThenAsk, convid: first.body.convid, inputs: { more: 'yes' } });
    assert.equal(answered.body.resultCode, 'success', JSON.stringify(answered.body));
    assert.deepEqual(answered.body.output, [{ type: 'text', text: `${answerTokens('hello there').join('')} / yes` }]);
    assert.equal(llm.requests.length, requests, 'no second request to the model');
  });

  it('closes the upstream socket within 100 ms of a cancel mid-stream', async () => {
    llm.holdAfter(1);
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: chat, inputs: { query: 'cancel me' }, stream: true }, { key });
    const start = await stream.next((e) => e.event === 'start');
    await stream.next((e) => e.event === 'part' || e.event === 'delta');
    const request = llm.requests.length;
    const cancelledAt = Date.now();
    const cancel = await post(stack.url, '/api/exec/cancel', { convid: start.data.convid }, { key });
    assert.equal(cancel.body.cancelled, true);
    await waitFor(() => llm.closedSockets.has(request), 1000, 'the upstream socket to close');
    const closedAfterMs = llm.closedSockets.get(request)! - cancelledAt;
    assert.ok(closedAfterMs <= 100, `closed ${closedAfterMs} ms after the cancel`);
    const end = await stream.next((e) => e.event === 'end');
    assert.equal(end.data.resultCode, 'stopped');
  });

  it('ends callFailed when the model cuts the stream, unless the agent catches it', async () => {
    llm.holdAfter(2);
    const failed = execAgent(stack.url, key, { agentName: chat, inputs: { query: 'cut me off' } });
    await waitFor(() => llm.held() === 1, 5000, 'the answer to stop after two tokens');
    llm.cut();
    const uncaught = await failed;
    assert.equal(uncaught.body.resultCode, 'callFailed', JSON.stringify(uncaught.body));
    assert.match(uncaught.body.error.message, /connection closed before the response ended/);

    const caught = execAgent(stack.url, key, { agentName: catcher, inputs: { query: 'cut me off too' } });
    await waitFor(() => llm.held() === 1, 5000, 'the answer to stop after two tokens');
    llm.cut();
    const handled = await caught;
    assert.equal(handled.body.resultCode, 'success', JSON.stringify(handled.body));
    assert.deepEqual(handled.body.output, [{ type: 'text', text: 'the model went away: FetchError' }]);
  });
});
