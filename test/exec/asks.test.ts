import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { findConversation } from '../../db/conversations.repository.js';
import { findPause } from '../../db/paused-asks.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('asks and resuming by replay', () => {
  let stack: Stack;
  let key: string;
  let apiServer: Server;
  let apiUrl: string;
  let apiHits = 0;
  const agents: Record<string, string> = {};

  const sources: Record<string, string> = {
    form: `export default async function (sys) {
      sys.vars.before = 'set before the ask';
      sys.say('intro');
      const answers = await sys.ask({
        message: 'Fill this in',
        inputs: [
          { name: 'name', type: 'str', label: 'Name' },
          { name: 'secret', type: 'password' },
          { name: 'bio', type: 'text', description: 'About you', default: 'none' },
          { name: 'color', type: 'chooseOne', options: ['red', 'green'] },
          { name: 'langs', type: 'chooseMany', options: [{ value: 'ts', label: 'TypeScript' }, { value: 'go', label: 'Go' }] },
        ],
      });
      sys.vars.after = answers.name;
      sys.say('got ' + JSON.stringify({ ...answers, secret: answers.secret.length }));
    }`,
    twice: `export default async function (sys) {
      const a = await sys.ask({ message: 'first', inputs: [{ name: 'a', type: 'str' }] });
      sys.say('after first: ' + a.a);
      const b = await sys.ask({ message: 'second', inputs: [{ name: 'b', type: 'password' }] });
      sys.say('after second: ' + a.a + ' / ' + b.b.length);
    }`,
    deterministic: `export default async function (sys) {
      const seen = { random: Math.random(), date: Date.now(), dateObj: new Date().toISOString(), now: sys.now() };
      const response = await sys.fetch(sys.inputs.url);
      seen.fetched = response.text;
      sys.say('before: ' + JSON.stringify(seen));
      await sys.sleep(5);
      await sys.ask({ message: 'go on?', inputs: [{ name: 'ok', type: 'chooseOne', options: ['yes'] }] });
      sys.say('after: ' + JSON.stringify(seen));
    }`,
    other: `export default async (sys) => { sys.conv.otherRan = true; sys.say('other ran'); }`,
  };

  before(async () => {
    apiServer = createServer((_req, res) => {
      apiHits += 1;
      res.end(`hit ${apiHits} at ${Math.random()}`);
    });
    await new Promise<void>((resolve) => apiServer.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}/`;
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    for (const [base, source] of Object.entries(sources)) {
      agents[base] = uniqueAgentName(base);
      await publishAgent(stack.runtime.db, agents[base]!, source);
    }
  });
  after(async () => {
    await stack.close();
    apiServer.close();
  });

  const fullAnswers = { name: 'Ada', secret: 'correct horse battery staple', color: 'green', langs: ['ts', 'go'] };

  it('pauses with askInput carrying all six fields of every descriptor and commits the variables set before the ask', async () => {
    const res = await execAgent(stack.url, key, { agentName: agents.form });
    assert.equal(res.body.resultCode, 'ask');
    assert.deepEqual(res.body.output, [{ type: 'text', text: 'intro' }]);
    assert.equal(res.body.askInput.message, 'Fill this in');
    assert.deepEqual(res.body.askInput.inputs, [
      { name: 'name', type: 'str', label: 'Name', description: null, options: null, default: null },
      { name: 'secret', type: 'password', label: null, description: null, options: null, default: null },
      { name: 'bio', type: 'text', label: null, description: 'About you', options: null, default: 'none' },
      { name: 'color', type: 'chooseOne', label: null, description: null, options: [{ value: 'red', label: 'red' }, { value: 'green', label: 'green' }], default: null },
      { name: 'langs', type: 'chooseMany', label: null, description: null, options: [{ value: 'ts', label: 'TypeScript' }, { value: 'go', label: 'Go' }], default: null },
    ]);
    const conversation = await findConversation(stack.runtime.db, res.body.convid);
    assert.deepEqual(conversation?.agent_vars[agents.form!], { before: 'set before the ask' });
  });

  it('resumes at the ask with the answers, without sending the output made before it again', async () => {
    const asked = await execAgent(stack.url, key, { agentName: agents.form });
    const done = await execAgent(stack.url, key, { agentName: agents.form, convid: asked.body.convid, inputs: fullAnswers });
    assert.equal(done.body.resultCode, 'success');
    assert.deepEqual(done.body.output, [
      { type: 'text', text: 'got {"name":"Ada","secret":28,"bio":"none","color":"green","langs":["ts","go"]}' },
    ]);
    const conversation = await findConversation(stack.runtime.db, asked.body.convid);
    assert.deepEqual(conversation?.agent_vars[agents.form!], { before: 'set before the ask', after: 'Ada' });
    assert.equal(await findPause(stack.runtime.db, asked.body.convid), undefined, 'the pause is gone once the run completed');
  });

  it('asks again with error.fields for a chooseOne answer outside the options, keeping the pause', async () => {
    const asked = await execAgent(stack.url, key, { agentName: agents.form });
    const wrong = await execAgent(stack.url, key, {
      agentName: agents.form,
      convid: asked.body.convid,
      inputs: { ...fullAnswers, color: 'purple', langs: ['ts', 'cobol'], name: undefined },
    });
    assert.equal(wrong.body.resultCode, 'ask');
    assert.deepEqual(wrong.body.askInput, asked.body.askInput);
    assert.deepEqual(Object.keys(wrong.body.error.fields).sort(), ['color', 'langs', 'name']);
    assert.deepEqual(wrong.body.output, []);
    const right = await execAgent(stack.url, key, { agentName: agents.form, convid: asked.body.convid, inputs: fullAnswers });
    assert.equal(right.body.resultCode, 'success');
  });

  it('handles two asks in a row, and keeps the password answer sealed while paused', async () => {
    const first = await execAgent(stack.url, key, { agentName: agents.twice });
    assert.equal(first.body.askInput.message, 'first');
    const second = await execAgent(stack.url, key, { agentName: agents.twice, convid: first.body.convid, inputs: { a: 'alpha' } });
    assert.equal(second.body.resultCode, 'ask');
    assert.equal(second.body.askInput.message, 'second');
    assert.deepEqual(second.body.output, [{ type: 'text', text: 'after first: alpha' }]);
    const done = await execAgent(stack.url, key, { agentName: agents.twice, convid: first.body.convid, inputs: { b: 'hunter2-but-longer' } });
    assert.equal(done.body.resultCode, 'success');
    assert.deepEqual(done.body.output, [{ type: 'text', text: 'after second: alpha / 18' }]);
  });

  it('stores a password answer encrypted while a later ask keeps the conversation paused', async () => {
    const name = uniqueAgentName('pw-then-ask');
    await publishAgent(
      stack.runtime.db,
      name,
      `export default async (sys) => {
        const p = await sys.ask({ message: 'pw', inputs: [{ name: 'pw', type: 'password' }] });
        await sys.ask({ message: 'more', inputs: [{ name: 'x', type: 'str' }] });
        sys.say('length ' + p.pw.length);
      }`,
    );
    const secret = 'sentinel-password-4b1d9e';
    const first = await execAgent(stack.url, key, { agentName: name });
    await execAgent(stack.url, key, { agentName: name, convid: first.body.convid, inputs: { pw: secret } });
    const stored = await sql<{ row: string }>`select row_to_json(p)::text as row from paused_asks p where convid = ${first.body.convid}`.execute(stack.runtime.db);
    assert.equal(stored.rows.length, 1);
    assert.ok(!stored.rows[0]!.row.includes(secret), 'the password answer is not stored in clear');
    const done = await execAgent(stack.url, key, { agentName: name, convid: first.body.convid, inputs: { x: 'y' } });
    assert.deepEqual(done.body.output, [{ type: 'text', text: `length ${secret.length}` }]);
    assert.ok(!stack.logLines.some((line) => line.includes(secret)), 'the password never reaches a log line');
  });

  it('replays Math.random, Date, now, fetch and sleep identically, without calling the API again', async () => {
    const asked = await execAgent(stack.url, key, { agentName: agents.deterministic, inputs: { url: apiUrl } });
    assert.equal(asked.body.resultCode, 'ask');
    const hitsAfterAsk = apiHits;
    const before = JSON.parse(asked.body.output[0].text.replace('before: ', ''));
    const done = await execAgent(stack.url, key, { agentName: agents.deterministic, convid: asked.body.convid, inputs: { ok: 'yes' } });
    assert.equal(done.body.resultCode, 'success');
    assert.equal(done.body.output.length, 1, 'output before the ask is not sent again');
    const after = JSON.parse(done.body.output[0].text.replace('after: ', ''));
    assert.deepEqual(after, before);
    assert.equal(apiHits, hitsAfterAsk, 'the fetch was replayed from the journal');
  });

  it('resumes with the version that paused, even after a newer one was published', async () => {
    const name = uniqueAgentName('pinned-version');
    await publishAgent(stack.runtime.db, name, `export default async (sys) => { await sys.ask({ message: 'm', inputs: [{ name: 'a', type: 'str' }] }); sys.say('old version'); }`);
    const asked = await execAgent(stack.url, key, { agentName: name });
    await publishAgent(stack.runtime.db, name, `export default async (sys) => { sys.say('new version'); }`);
    const done = await execAgent(stack.url, key, { agentName: name, convid: asked.body.convid, inputs: { a: 'x' } });
    assert.deepEqual(done.body.output, [{ type: 'text', text: 'old version' }]);
    const fresh = await execAgent(stack.url, key, { agentName: name, convid: asked.body.convid });
    assert.deepEqual(fresh.body.output, [{ type: 'text', text: 'new version' }]);
  });

  it('answers unknownConversation to another agent on a paused conversation, then resumes with the right one', async () => {
    const asked = await execAgent(stack.url, key, { agentName: agents.form });
    const other = await execAgent(stack.url, key, { agentName: agents.other, convid: asked.body.convid });
    assert.equal(other.body.resultCode, 'unknownConversation');
    const conversation = await findConversation(stack.runtime.db, asked.body.convid);
    assert.equal(conversation?.conv_vars.otherRan, undefined, 'the other agent did not run');
    assert.ok(await findPause(stack.runtime.db, asked.body.convid), 'still paused');
    const right = await execAgent(stack.url, key, { agentName: agents.form, convid: asked.body.convid, inputs: fullAnswers });
    assert.equal(right.body.resultCode, 'success');
  });

  it('ends errorInAgent when the replay diverges from the journal, keeping the pause', async () => {
    const asked = await execAgent(stack.url, key, { agentName: agents.deterministic, inputs: { url: apiUrl } });
    // Make the journal disagree with what the agent does: its recorded fetch went elsewhere.
    const journal = (await findPause(stack.runtime.db, asked.body.convid))!.journal as { op: string; url?: string }[];
    const fetchEntry = journal.find((entry) => entry.op === 'fetch');
    assert.ok(fetchEntry, 'the journal recorded the fetch');
    fetchEntry.url = 'http://127.0.0.1:1/elsewhere';
    await stack.runtime.db.updateTable('paused_asks').set({ journal: JSON.stringify(journal) }).where('convid', '=', asked.body.convid).execute();
    const res = await execAgent(stack.url, key, { agentName: agents.deterministic, convid: asked.body.convid, inputs: { ok: 'yes' } });
    assert.equal(res.body.resultCode, 'errorInAgent');
    assert.match(res.body.error.message, /replay diverged/);
    assert.ok(await findPause(stack.runtime.db, asked.body.convid));
  });
});
