import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Agent secrets (DESIGN §13): set by an admin (API or command line), read by the agent's runs as sys.secrets. */
describe('agent secrets', () => {
  let stack: Stack;
  let admin: string;
  let developer: string;
  let api: Server;
  let apiUrl: string;
  const seen: string[] = [];

  before(async () => {
    stack = await startStack();
    admin = (await createAccount(stack.runtime.db, 'admin')).key;
    developer = (await createAccount(stack.runtime.db, 'developer')).key;
    api = createServer((req, res) => {
      seen.push(req.headers['x-api-key'] as string);
      res.end('ok');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/`;
  });
  after(async () => {
    api.close();
    await stack.close();
  });

  it('gives a run the secrets of its agent name, read-only, and a changed value to the next run', async () => {
    const agentName = uniqueAgentName('keyed');
    await publishAgent(
      stack.runtime.db,
      agentName,
      `export default async (sys) => {
        let writable = true;
        try { sys.secrets.TOKEN = 'x'; } catch { writable = false; }
        sys.say(JSON.stringify({ keys: Object.keys(sys.secrets), frozen: Object.isFrozen(sys.secrets), writable }));
        await sys.fetch(sys.inputs.url, { headers: { 'x-api-key': sys.secrets.TOKEN } });
      }`,
    );
    const first = `first-${randomBytes(6).toString('hex')}`;
    assert.equal((await post(stack.url, '/api/admin/setSecret', { agentName, key: 'TOKEN', value: first }, { key: admin })).status, 200);
    const run1 = await execAgent(stack.url, developer, { agentName, inputs: { url: apiUrl } });
    assert.equal(run1.body.resultCode, 'success', JSON.stringify(run1.body));
    assert.deepEqual(JSON.parse(run1.body.output[0].text), { keys: ['TOKEN'], frozen: true, writable: false });
    assert.equal(seen.at(-1), first);

    const second = `second-${randomBytes(6).toString('hex')}`;
    await post(stack.url, '/api/admin/setSecret', { agentName, key: 'TOKEN', value: second }, { key: admin });
    await execAgent(stack.url, developer, { agentName, inputs: { url: apiUrl } });
    assert.equal(seen.at(-1), second, 'the worker read the changed secret (announced, not waited out)');

    assert.equal((await post(stack.url, '/api/admin/deleteSecret', { agentName, key: 'TOKEN' }, { key: admin })).status, 200);
    const run3 = await execAgent(stack.url, developer, { agentName, inputs: { url: apiUrl } });
    assert.deepEqual(JSON.parse(run3.body.output[0].text).keys, []);
  });

  it('is for admins only, checks names and values, and lists names only', async () => {
    const agentName = uniqueAgentName('checked');
    const forbidden = await post(stack.url, '/api/admin/setSecret', { agentName, key: 'K', value: 'v' }, { key: developer });
    assert.equal(forbidden.status, 403);
    const bad = await post(stack.url, '/api/admin/setSecret', { agentName: 'not a name', key: '1-bad', value: '' }, { key: admin });
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body.error.details.fields).sort(), ['agentName', 'key']);
    const empty = await post(stack.url, '/api/admin/setSecret', { agentName, key: 'K', value: '' }, { key: admin });
    assert.equal(empty.status, 400);
    assert.ok(empty.body.error.details.fields.value);
    const missing = await post(stack.url, '/api/admin/deleteSecret', { agentName, key: 'NOPE' }, { key: admin });
    assert.equal(missing.status, 404);
    await post(stack.url, '/api/admin/setSecret', { agentName, key: 'B_KEY', value: 'value-b' }, { key: admin });
    await post(stack.url, '/api/admin/setSecret', { agentName, key: 'A_KEY', value: 'value-a' }, { key: admin });
    const listed = await post(stack.url, '/api/admin/listSecrets', { agentName }, { key: admin });
    assert.deepEqual(listed.body, { agentName, keys: ['A_KEY', 'B_KEY'] });
  });

  it('lets a draft of the agent name use those set for drafts, masked in its trace and errors', async () => {
    const agentName = uniqueAgentName('drafted');
    const value = `sk-draft-${randomBytes(8).toString('hex')}`;
    // A draft reads only the secrets set for drafts (DESIGN §13): see draft-secrets.test.ts.
    const set = await post(stack.url, '/api/admin/setSecret', { agentName, key: 'API_KEY', value, forDrafts: true }, { key: admin });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const source = `export default async function (sys: any) {
  sys.log('the key is', sys.secrets.API_KEY);
  sys.vars.copy = sys.secrets.API_KEY.slice(0, 3);
  await sys.fetch(sys.inputs.url + '?key=' + sys.secrets.API_KEY, { headers: { 'x-api-key': sys.secrets.API_KEY } });
  throw new Error('gave up with ' + sys.secrets.API_KEY);
}`;
    const saved = await post(stack.url, '/api/dev/saveDraft', { agentName, source, validationQuery: 'q' }, { key: developer });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const validated = await post(stack.url, '/api/dev/validateDraftStream', { draftid: saved.body.draftid, inputs: { url: apiUrl } }, { key: developer });
    const text = JSON.stringify(validated.body);
    assert.equal(seen.at(-1), value, 'the destination got the secret');
    assert.equal(text.includes(value), false, `the secret appears in the validation: ${text.slice(0, 400)}`);
    assert.match(text, /the key is \*{8}/, 'the log line is traced, masked');
    assert.match(text, /gave up with \*{8}/, 'the error is masked');
  });

  it('sets from standard input on the command line (one trailing newline trimmed), lists and deletes', async () => {
    const agentName = uniqueAgentName('cli');
    const value = `cli-${randomBytes(6).toString('hex')}`;
    const set = await runCli(['secrets:set', '--agent', agentName, '--key', 'API_KEY', '--json'], {}, `${value}\n`);
    assert.equal(set.code, 0, set.output);
    assert.equal(set.output.includes(value), false, 'the value is never printed');
    await publishAgent(stack.runtime.db, agentName, `export default async (sys) => { sys.say('[' + sys.secrets.API_KEY + ']'); }`);
    const run = await execAgent(stack.url, developer, { agentName });
    assert.deepEqual(run.body.output, [{ type: 'text', text: `[${value}]` }]);
    const listed = await runCli(['secrets:list', '--agent', agentName, '--json']);
    assert.deepEqual(listed.json, { agentName, keys: ['API_KEY'], draftKeys: [] });
    const badKey = await runCli(['secrets:set', '--agent', agentName, '--key', 'has space'], {}, 'v');
    assert.equal(badKey.code, 1);
    assert.match(badKey.output, /--key must be a letter or _/);
    assert.equal((await runCli(['secrets:delete', '--agent', agentName, '--key', 'API_KEY'])).code, 0);
    assert.equal((await runCli(['secrets:delete', '--agent', agentName, '--key', 'API_KEY'])).code, 1);
  });
});
