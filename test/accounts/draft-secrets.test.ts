import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Drafts see only the secrets set for drafts (DESIGN §13, issue "Drafts read production secrets"): a
 * developer may save a draft under any agent name, so its validation must never read what an admin set
 * for the published agent.
 */
describe('agent secrets for drafts', () => {
  let stack: Stack;
  let admin: string;
  let developer: string;

  before(async () => {
    stack = await startStack();
    admin = (await createAccount(stack.runtime.db, 'admin')).key;
    developer = (await createAccount(stack.runtime.db, 'developer')).key;
  });
  after(() => stack.close());

  const setSecret = async (agentName: string, key: string, value: string, forDrafts?: boolean) => {
    const set = await post(stack.url, '/api/admin/setSecret', { agentName, key, value, ...(forDrafts === undefined ? {} : { forDrafts }) }, { key: admin });
    assert.equal(set.status, 200, JSON.stringify(set.body));
  };
  const listSecrets = async (agentName: string, forDrafts: boolean) => (await post(stack.url, '/api/admin/listSecrets', { agentName, forDrafts }, { key: admin })).body.keys;
  const dev = (path: string, body: unknown) => post(stack.url, `/api/dev/${path}`, body, { key: developer });
  const secretsSeen = (body: any) => JSON.parse(body.output[0].text) as Record<string, string>;
  const tellSecrets = 'export default async function (sys: any) { sys.say(JSON.stringify(sys.secrets)); }';
  const unique = (label: string) => `${label}-${randomBytes(8).toString('hex')}`;

  it('gives a draft only the secrets set for drafts and a published run only the production ones, each change read at once', async () => {
    const agentName = uniqueAgentName('split');
    const production = unique('sk-prod');
    await setSecret(agentName, 'API_KEY', production);
    await setSecret(agentName, 'PROD_ONLY', unique('prod-only'), false);
    const saved = await dev('saveDraft', { agentName, source: tellSecrets, validationQuery: 'q' });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const { draftid } = saved.body;
    assert.equal((await dev('publishDraft', { draftid })).status, 200);

    // The published run first, so the production set is what the worker has read for the name.
    const published = await execAgent(stack.url, developer, { agentName });
    assert.deepEqual(Object.keys(secretsSeen(published.body)).sort(), ['API_KEY', 'PROD_ONLY']);
    assert.equal(secretsSeen(published.body).API_KEY, production);

    const withNone = await dev('validateDraftStream', { draftid });
    assert.equal(withNone.body.resultCode, 'success', JSON.stringify(withNone.body));
    assert.deepEqual(secretsSeen(withNone.body), {}, 'no secrets were set for drafts: the draft sees none');

    const forDrafts = unique('sk-test');
    await setSecret(agentName, 'API_KEY', forDrafts, true);
    await setSecret(agentName, 'DRAFT_ONLY', unique('draft-only'), true);
    const validated = await dev('validateDraftStream', { draftid });
    assert.deepEqual(Object.keys(secretsSeen(validated.body)).sort(), ['API_KEY', 'DRAFT_ONLY']);
    assert.equal(secretsSeen(validated.body).API_KEY, forDrafts);
    assert.equal(JSON.stringify(validated.body).includes(production), false, 'the production value is nowhere in the validation');
    assert.match(JSON.stringify(validated.body.trace), /\*{8}/, 'the trace masks the drafts’ values too');

    const changed = unique('sk-test2');
    await setSecret(agentName, 'API_KEY', changed, true);
    assert.equal(secretsSeen((await dev('validateDraftStream', { draftid })).body).API_KEY, changed, 'the announced change reached the drafts set');
    const again = await execAgent(stack.url, developer, { agentName });
    assert.deepEqual(Object.keys(secretsSeen(again.body)).sort(), ['API_KEY', 'PROD_ONLY']);
    assert.equal(secretsSeen(again.body).API_KEY, production, 'the published run still reads the production value');

    assert.deepEqual(await listSecrets(agentName, false), ['API_KEY', 'PROD_ONLY']);
    assert.deepEqual(await listSecrets(agentName, true), ['API_KEY', 'DRAFT_ONLY']);
    const deleted = await post(stack.url, '/api/admin/deleteSecret', { agentName, key: 'PROD_ONLY', forDrafts: true }, { key: admin });
    assert.equal(deleted.status, 404, 'PROD_ONLY is not in the drafts set');
    assert.equal((await post(stack.url, '/api/admin/deleteSecret', { agentName, key: 'DRAFT_ONLY', forDrafts: true }, { key: admin })).status, 200);
    assert.deepEqual(Object.keys(secretsSeen((await dev('validateDraftStream', { draftid })).body)), ['API_KEY']);
    assert.deepEqual(await listSecrets(agentName, false), ['API_KEY', 'PROD_ONLY'], 'the production set is untouched');

    for (const line of stack.logLines) {
      for (const value of [production, forDrafts, changed]) assert.equal(line.includes(value), false, `a secret appears in the logs: ${line.slice(0, 300)}`);
    }
  });

  it('gives a draft resumed after its ask the drafts set again, never the production one', async () => {
    const agentName = uniqueAgentName('resumed');
    const production = unique('sk-prod');
    const forDrafts = unique('sk-test');
    await setSecret(agentName, 'API_KEY', production);
    await setSecret(agentName, 'API_KEY', forDrafts, true);
    const source = `export default async function (sys: any) {
  await sys.ask({ message: 'Go on?', inputs: [{ name: 'go', type: 'str' }] });
  sys.say(JSON.stringify(sys.secrets));
}`;
    const { draftid } = (await dev('saveDraft', { agentName, source, validationQuery: 'q' })).body;
    const asked = await dev('validateDraftStream', { draftid });
    assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
    const resumed = await dev('validateDraftStream', { draftid, convid: asked.body.convid, inputs: { go: 'yes' } });
    assert.equal(resumed.body.resultCode, 'success', JSON.stringify(resumed.body));
    assert.deepEqual(secretsSeen(resumed.body), { API_KEY: forDrafts });
  });

  it('answers 400 naming forDrafts when it is not a boolean, and changes nothing', async () => {
    const agentName = uniqueAgentName('typed');
    await setSecret(agentName, 'KEPT', 'kept-production');
    await setSecret(agentName, 'KEPT', 'kept-for-drafts', true);
    const calls: [string, Record<string, unknown>][] = [
      ['setSecret', { agentName, key: 'NEW', value: 'new-value', forDrafts: 'true' }],
      ['setSecret', { agentName, key: 'KEPT', value: 'replaced', forDrafts: 1 }],
      ['setSecret', { agentName, key: 'NEW', value: 'new-value', forDrafts: null }],
      ['deleteSecret', { agentName, key: 'KEPT', forDrafts: 'yes' }],
      ['listSecrets', { agentName, forDrafts: 0 }],
    ];
    for (const [path, body] of calls) {
      const refused = await post(stack.url, `/api/admin/${path}`, body, { key: admin });
      assert.equal(refused.status, 400, `${path} ${JSON.stringify(body)}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error.code, 'invalidRequest');
      assert.deepEqual(Object.keys(refused.body.error.details.fields), ['forDrafts']);
    }
    assert.deepEqual(await listSecrets(agentName, false), ['KEPT']);
    assert.deepEqual(await listSecrets(agentName, true), ['KEPT']);
    const saved = await dev('saveDraft', { agentName, source: tellSecrets, validationQuery: 'q' });
    assert.deepEqual(secretsSeen((await dev('validateDraftStream', { draftid: saved.body.draftid })).body), { KEPT: 'kept-for-drafts' });
  });

  it('sets and deletes the drafts’ secrets on the command line with --drafts, and lists both sets saying which is which', async () => {
    const agentName = uniqueAgentName('cli');
    const production = unique('cli-prod');
    const forDrafts = unique('cli-test');
    const setProduction = await runCli(['secrets:set', '--agent', agentName, '--key', 'API_KEY'], {}, `${production}\n`);
    assert.equal(setProduction.code, 0, setProduction.output);
    const setForDrafts = await runCli(['secrets:set', '--agent', agentName, '--key', 'TEST_KEY', '--drafts', '--json'], {}, `${forDrafts}\n`);
    assert.equal(setForDrafts.code, 0, setForDrafts.output);
    assert.deepEqual(setForDrafts.json, { agentName, key: 'TEST_KEY', forDrafts: true });
    assert.equal(setForDrafts.output.includes(forDrafts), false, 'the value is never printed');

    const listed = await runCli(['secrets:list', '--agent', agentName]);
    assert.equal(listed.code, 0, listed.output);
    assert.deepEqual(listed.output.trim().split('\n'), ['API_KEY (production)', 'TEST_KEY (drafts)']);
    const listedJson = await runCli(['secrets:list', '--agent', agentName, '--json']);
    assert.deepEqual(listedJson.json, { agentName, keys: ['API_KEY'], draftKeys: ['TEST_KEY'] });
    assert.equal(listed.output.includes(production) || listedJson.output.includes(forDrafts), false);

    const saved = await dev('saveDraft', { agentName, source: tellSecrets, validationQuery: 'q' });
    assert.deepEqual(secretsSeen((await dev('validateDraftStream', { draftid: saved.body.draftid })).body), { TEST_KEY: forDrafts });

    const wrongSet = await runCli(['secrets:delete', '--agent', agentName, '--key', 'API_KEY', '--drafts']);
    assert.equal(wrongSet.code, 1, 'API_KEY is not in the drafts set');
    assert.match(wrongSet.output, /has no secret API_KEY for drafts/);
    assert.equal((await runCli(['secrets:delete', '--agent', agentName, '--key', 'TEST_KEY', '--drafts'])).code, 0);
    assert.deepEqual((await runCli(['secrets:list', '--agent', agentName, '--json'])).json, { agentName, keys: ['API_KEY'], draftKeys: [] });
  });
});
