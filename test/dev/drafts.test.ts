import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Role } from '../../shared/api.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Drafts: save, get, list, publish, and who may use them (DESIGN §5). */
describe('drafts', () => {
  let stack: Stack;
  let developer: string;
  let otherDeveloper: string;
  let admin: string;
  let user: string;

  before(async () => {
    stack = await startStack();
    const key = async (role: Role) => (await createAccount(stack.runtime.db, role)).key;
    [developer, otherDeveloper, admin, user] = await Promise.all([key('developer'), key('developer'), key('admin'), key('user')]);
  });
  after(() => stack.close());

  const dev = (path: string, body: unknown, key = developer) => post(stack.url, `/api/dev/${path}`, body, { key });
  const good = `export default async function (sys: { say(text: string): void; query: string }) {\n  sys.say('v1 ' + sys.query);\n}\n`;

  it('saves a draft that compiles, returns it, and counts a revision per save', async () => {
    const agentName = uniqueAgentName('drafted');
    const saved = await dev('saveDraft', { agentName, source: good, validationQuery: 'Ada' });
    assert.equal(saved.status, 200);
    assert.deepEqual(saved.body.compileErrors, []);
    assert.match(saved.body.draftid, /^[0-9a-f-]{36}$/);

    const again = await dev('saveDraft', { draftid: saved.body.draftid, agentName, source: good.replace('v1', 'v2'), validationQuery: 'Grace' });
    assert.deepEqual(again.body, { draftid: saved.body.draftid, compileErrors: [] });

    const got = await dev('getDraft', { draftid: saved.body.draftid });
    assert.equal(got.status, 200);
    assert.equal(got.body.agentName, agentName);
    assert.equal(got.body.source, good.replace('v1', 'v2'));
    assert.equal(got.body.validationQuery, 'Grace');
    assert.equal(got.body.revision, 2);
    assert.deepEqual(got.body.compileErrors, []);
  });

  it('reports compile errors at their line and column in the draft source', async () => {
    const source = `// a comment\nexport default async function (sys: any) {\n  const x = ;\n}\n`;
    const saved = await dev('saveDraft', { agentName: uniqueAgentName('broken'), source, validationQuery: '' });
    assert.equal(saved.status, 200);
    assert.equal(saved.body.compileErrors.length, 1);
    const [error] = saved.body.compileErrors;
    assert.equal(error.line, 3);
    assert.equal(error.column, 13);
    assert.match(error.message, /Unexpected/);
    assert.deepEqual((await dev('getDraft', { draftid: saved.body.draftid })).body.compileErrors, saved.body.compileErrors);
  });

  it('publishes a draft as the next version of its agent, which execAgent then runs', async () => {
    const agentName = uniqueAgentName('published');
    const { body: saved } = await dev('saveDraft', { agentName, source: good, validationQuery: 'q' });
    const first = await dev('publishDraft', { draftid: saved.draftid });
    assert.deepEqual(first.body, { agentName, version: 1 });
    await dev('saveDraft', { draftid: saved.draftid, agentName, source: good.replace('v1', 'v2'), validationQuery: 'q' });
    assert.deepEqual((await dev('publishDraft', { draftid: saved.draftid })).body, { agentName, version: 2 });

    const run = await execAgent(stack.url, user, { agentName, inputs: { query: 'Ada' } });
    assert.deepEqual(run.body.output, [{ type: 'text', text: 'v2 Ada' }]);
  });

  it('refuses to publish a draft that does not compile, and publishes nothing', async () => {
    const agentName = uniqueAgentName('unpublishable');
    const { body: saved } = await dev('saveDraft', { agentName, source: 'export default (', validationQuery: '' });
    const res = await dev('publishDraft', { draftid: saved.draftid });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalidRequest');
    assert.deepEqual(res.body.error.details.compileErrors, saved.compileErrors);
    const run = await execAgent(stack.url, user, { agentName });
    assert.equal(run.status, 404);
    assert.equal(run.body.error.code, 'agentNotFound');
  });

  it('lists published agents and the newest drafts of every developer', async () => {
    const agentName = uniqueAgentName('listed');
    const { body: mine } = await dev('saveDraft', { agentName, source: good, validationQuery: '' });
    await dev('publishDraft', { draftid: mine.draftid });
    const { body: theirs } = await dev('saveDraft', { agentName: uniqueAgentName('theirs'), source: 'export default (', validationQuery: '' }, otherDeveloper);

    const list = await dev('listAgents', {});
    assert.equal(list.status, 200);
    const agent = list.body.agents.find((a: any) => a.agentName === agentName);
    assert.equal(agent.version, 1);
    assert.ok(!Number.isNaN(Date.parse(agent.publishedAt)));
    assert.equal(list.body.drafts[0].draftid, theirs.draftid, 'newest first');
    assert.equal(list.body.drafts[0].compiles, false);
    assert.equal(list.body.drafts.find((d: any) => d.draftid === mine.draftid).compiles, true);
  });

  it('shares drafts among developers, while a validation’s conversation stays its caller’s', async () => {
    const agentName = uniqueAgentName('shared');
    const { body: saved } = await dev('saveDraft', { agentName, source: good, validationQuery: 'Ada' });
    assert.equal((await dev('getDraft', { draftid: saved.draftid }, otherDeveloper)).body.source, good);
    const edited = await dev('saveDraft', { draftid: saved.draftid, agentName, source: good.replace('v1', 'v2'), validationQuery: 'Ada' }, otherDeveloper);
    assert.equal(edited.status, 200);
    assert.equal((await dev('getDraft', { draftid: saved.draftid })).body.revision, 2);

    const mine = await dev('validateDraftStream', { draftid: saved.draftid });
    assert.equal(mine.body.resultCode, 'success');
    const theirs = await dev('validateDraftStream', { draftid: saved.draftid, convid: mine.body.convid }, otherDeveloper);
    assert.equal(theirs.body.resultCode, 'unknownConversation');
    assert.equal(theirs.body.validationSuccess, false);
  });

  it('answers draftNotFound for a draftid nobody saved, and creates nothing', async () => {
    const draftid = randomUUID();
    for (const path of ['getDraft', 'publishDraft', 'validateDraftStream']) {
      const res = await dev(path, { draftid });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'draftNotFound', path);
    }
    const save = await dev('saveDraft', { draftid, agentName: 'ghost', source: good, validationQuery: '' });
    assert.equal(save.status, 404);
    assert.equal((await dev('getDraft', { draftid })).status, 404);
  });

  it('is for developers and admins: a user’s key gets 403 on every endpoint, no key 401', async () => {
    const { body: saved } = await dev('saveDraft', { agentName: uniqueAgentName('roles'), source: good, validationQuery: '' }, admin);
    assert.match(saved.draftid, /^[0-9a-f-]{36}$/, 'an admin may save drafts');
    const calls: [string, unknown][] = [
      ['saveDraft', { agentName: 'x', source: good, validationQuery: '' }],
      ['getDraft', { draftid: saved.draftid }],
      ['publishDraft', { draftid: saved.draftid }],
      ['listAgents', {}],
      ['validateDraftStream', { draftid: saved.draftid }],
    ];
    for (const [path, body] of calls) {
      const forbidden = await dev(path, body, user);
      assert.equal(forbidden.status, 403, path);
      assert.equal(forbidden.body.error.code, 'forbidden', path);
      const anonymous = await post(stack.url, `/api/dev/${path}`, body);
      assert.equal(anonymous.status, 401, path);
    }
  });

  it('answers bad bodies with invalidRequest naming the field', async () => {
    const badName = await dev('saveDraft', { agentName: '1bad', source: good, validationQuery: '' });
    assert.equal(badName.status, 400);
    assert.ok(badName.body.error.details.fields.agentName);
    const missing = await dev('saveDraft', { agentName: 'fine' });
    assert.ok(missing.body.error.details.fields.source);
    assert.ok(missing.body.error.details.fields.validationQuery);
    const badId = await dev('validateDraftStream', { draftid: 'nope' });
    assert.equal(badId.status, 400);
    assert.ok(badId.body.error.details.fields.draftid);
    const extra = await dev('listAgents', { all: true });
    assert.equal(extra.body.error.details.fields.all, 'is not a known field');
  });
});
