import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** The agents shipped in agents/, run as published. */
const agentsDir = fileURLToPath(new URL('../../../agents/', import.meta.url));

describe('example agents', () => {
  let stack: Stack;
  let key: string;
  let api: Server;
  const names: Record<string, string> = {};

  before(async () => {
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    for (const file of ['hello', 'ask-all', 'http-api', 'research']) {
      names[file] = uniqueAgentName(file);
      await publishAgent(stack.runtime.db, names[file]!, await readFile(`${agentsDir}${file}.ts`, 'utf8'));
    }
    api = createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ path: req.url, answer: 42 }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await stack.close();
    api.close();
  });

  it('hello greets and counts its calls in the conversation', async () => {
    const first = await execAgent(stack.url, key, { agentName: names.hello, inputs: { query: 'Ada' } });
    assert.equal(first.body.output[0].text, 'Hello, Ada! (call 1 in this conversation)');
    const second = await execAgent(stack.url, key, { agentName: names.hello, convid: first.body.convid });
    assert.equal(second.body.output[0].text, 'Hello, world! (call 2 in this conversation)');
  });

  it('research fans a question out to three researcher runs at once and combines their answers', async () => {
    const res = await execAgent(stack.url, key, { agentName: names.research, inputs: { query: 'Tides', researcher: names.hello } });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    assert.equal(
      res.body.output[0].text,
      [
        '## Tides',
        '### history',
        'Hello, Tides (history)! (call 1 in this conversation)',
        '### state of the art',
        'Hello, Tides (state of the art)! (call 1 in this conversation)',
        '### open problems',
        'Hello, Tides (open problems)! (call 1 in this conversation)',
      ].join('\n\n'),
    );
  });

  it('ask-all asks for every input type and uses the answers', async () => {
    const asked = await execAgent(stack.url, key, { agentName: names['ask-all'] });
    assert.deepEqual(
      asked.body.askInput.inputs.map((i: { type: string }) => i.type),
      ['str', 'password', 'text', 'chooseOne', 'chooseMany'],
    );
    const done = await execAgent(stack.url, key, {
      agentName: names['ask-all'],
      convid: asked.body.convid,
      inputs: { name: 'Ada', secret: 'open sesame', langs: ['ts', 'go'] },
    });
    assert.equal(done.body.resultCode, 'success');
    assert.equal(done.body.output[0].text, 'Thanks Ada: green is a fine colour, you know ts, go, and your secret has 11 characters.');
  });

  it('http-api calls an HTTP API (a listed local one) and reports the answer', async () => {
    const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/zen`;
    const res = await execAgent(stack.url, key, { agentName: names['http-api'], inputs: { url } });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    assert.match(res.body.output[0].text, /The API answered 200/);
    assert.match(res.body.output[0].text, /"answer": 42/);
  });
});
