import assert from 'node:assert/strict';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Lines of a draft, numbered from 1 as an editor shows them. */
function lines(...source: string[]): string {
  return `${source.join('\n')}\n`;
}

// Types on purpose: the compiled code has different lines, so every position below must be mapped back.
const tracedDraft = lines(
  'interface Sys { vars: { count?: number }; conv: any; query: string; say(t: string): void; log(...a: unknown[]): void; now(): number }',
  'export default async function (sys: Sys) {',
  "  sys.log('query is', sys.query);",
  '  sys.vars.count = (sys.vars.count ?? 0) + 1;',
  "  sys.conv.items = ['a'];",
  "  sys.conv.items.push('b');",
  '  const t: number = sys.now();',
  "  sys.say(`hello ${sys.query} ${typeof t}`);",
  '  delete sys.conv.items;',
  '}',
);

const throwingDraft = lines(
  'type Maybe = { boom: number } | undefined;',
  'export default async function (sys: any) {',
  "  sys.say('before');",
  '  const x: Maybe = undefined;',
  '  return (x as any).boom;',
  '}',
);

const askingDraft = lines(
  'export default async function (sys: any) {',
  "  const answers = await sys.ask({ message: 'Log in', inputs: [{ name: 'name', type: 'str' }, { name: 'pw', type: 'password' }] });",
  "  sys.log('got', answers.name, answers.pw);",
  '  sys.vars.secret = answers.pw;',
  "  sys.say('welcome ' + answers.name);",
  '}',
);

/** The fields of a trace event that the tests compare (seq and at vary). */
function shape(event: any) {
  const { seq: _seq, at: _at, column: _column, ...rest } = event;
  return rest;
}

describe('draft validation', () => {
  let stack: Stack;
  let developer: string;
  let admin: string;

  before(async () => {
    stack = await startStack();
    developer = (await createAccount(stack.runtime.db, 'developer')).key;
    admin = (await createAccount(stack.runtime.db, 'admin')).key;
  });
  after(() => stack.close());

  const dev = (path: string, body: unknown) => post(stack.url, `/api/dev/${path}`, body, { key: developer });
  async function saveDraft(source: string, validationQuery = 'Ada', agentName = uniqueAgentName('draft')) {
    const saved = await dev('saveDraft', { agentName, source, validationQuery });
    assert.equal(saved.status, 200);
    return { draftid: saved.body.draftid as string, agentName, compileErrors: saved.body.compileErrors };
  }

  it('runs the draft on its validation query and traces every sys call, variable change and log line at its source line', async () => {
    const { draftid, agentName } = await saveDraft(tracedDraft, 'Ada');
    const res = await dev('validateDraftStream', { draftid });
    assert.equal(res.status, 200);
    const body = res.body;
    assert.equal(body.resultCode, 'success');
    assert.equal(body.agentName, agentName);
    assert.deepEqual(body.output, [{ type: 'text', text: 'hello Ada number' }]);
    assert.equal(body.validationSuccess, true);
    assert.deepEqual(body.compileErrors, []);
    assert.equal(body.runtimeError, null);

    assert.deepEqual(body.trace.map((e: any) => e.seq), body.trace.map((_: unknown, i: number) => i + 1));
    for (const event of body.trace) {
      assert.ok(!Number.isNaN(Date.parse(event.at)), 'at is a time');
      assert.ok(Number.isInteger(event.column) && event.column >= 1, 'column is placed');
    }
    const nowCall = body.trace.find((e: any) => e.kind === 'call' && e.name === 'now');
    assert.deepEqual(body.trace.map(shape), [
      { kind: 'log', text: 'query is Ada', line: 3 },
      { kind: 'var', scope: 'vars', path: ['count'], op: 'set', value: 1, line: 4 },
      { kind: 'var', scope: 'conv', path: ['items'], op: 'set', value: ['a'], line: 5 },
      { kind: 'var', scope: 'conv', path: ['items', '1'], op: 'set', value: 'b', line: 6 },
      { kind: 'call', name: 'now', args: {}, line: 7 },
      { kind: 'result', name: 'now', call: nowCall.seq, value: body.trace.find((e: any) => e.kind === 'result').value, line: 7 },
      { kind: 'call', name: 'say', args: { text: 'hello Ada number' }, line: 8 },
      { kind: 'var', scope: 'conv', path: ['items'], op: 'delete', line: 9 },
    ]);
    assert.equal(typeof body.trace[5].value, 'number');
  });

  it('uses inputs.query when the call gives one, and keeps the run’s changes in the conversation like execAgent', async () => {
    const { draftid } = await saveDraft(tracedDraft, 'Ada');
    const first = await dev('validateDraftStream', { draftid, inputs: { query: 'Grace' } });
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'hello Grace number' }]);
    const second = await dev('validateDraftStream', { draftid, convid: first.body.convid });
    assert.equal(second.body.resultCode, 'success');
    const countSet = second.body.trace.find((e: any) => e.kind === 'var' && e.path[0] === 'count');
    assert.equal(countSet.value, 2, 'the second run saw the first run’s sys.vars');
  });

  it('streams the trace events as they happen, in order, before one end event with the validation fields', async () => {
    const { draftid } = await saveDraft(tracedDraft, 'Ada');
    const stream = await openStream(stack.url, '/api/dev/validateDraftStream', { draftid, stream: true }, { key: developer });
    assert.equal(stream.status, 200);
    const events = await stream.done;
    const names = events.map((e) => e.event);
    assert.equal(names[0], 'start');
    assert.equal(names.at(-1), 'end');
    assert.equal(names.filter((n) => n === 'end').length, 1);
    const traces = events.filter((e) => e.event === 'trace').map((e) => e.data);
    assert.equal(traces.length, 8);
    assert.deepEqual(traces.map((t) => t.seq), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(traces.map((t) => t.line), [3, 4, 5, 6, 7, 7, 8, 9]);
    const sayAt = names.indexOf('part');
    assert.ok(sayAt > names.indexOf('trace'), 'the part comes after the traces before it');
    const end = events.at(-1)!.data;
    assert.equal(end.validationSuccess, true);
    assert.deepEqual(end.compileErrors, []);
    assert.equal(end.runtimeError, null);
    assert.equal(end.output, undefined);
    assert.equal(end.trace, undefined, 'a stream sends no trace array at the end');
  });

  it('answers a draft that does not compile with its compile errors and no run, streamed or not', async () => {
    const { draftid, agentName, compileErrors } = await saveDraft(lines('export default async function (sys: any) {', '  sys.say(;', '}'));
    assert.equal(compileErrors[0].line, 2);
    const res = await dev('validateDraftStream', { draftid });
    assert.equal(res.status, 200);
    assert.equal(res.body.resultCode, 'errorInAgent');
    assert.equal(res.body.agentName, agentName);
    assert.equal(res.body.validationSuccess, false);
    assert.deepEqual(res.body.compileErrors, compileErrors);
    assert.equal(res.body.runtimeError, null);
    assert.deepEqual(res.body.trace, []);

    const stream = await openStream(stack.url, '/api/dev/validateDraftStream', { draftid, stream: true }, { key: developer });
    const events = await stream.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'end']);
    assert.deepEqual(events[1]!.data.compileErrors, compileErrors);
    assert.equal(events[1]!.data.validationSuccess, false);
  });

  it('gives the runtime error at its line in the draft, with a stack that points into the draft only', async () => {
    const { draftid, agentName } = await saveDraft(throwingDraft);
    const res = await dev('validateDraftStream', { draftid });
    assert.equal(res.body.resultCode, 'errorInAgent');
    assert.equal(res.body.validationSuccess, false);
    const runtimeError = res.body.runtimeError;
    assert.match(runtimeError.message, /TypeError: Cannot read properties of undefined/);
    assert.equal(runtimeError.line, 5);
    assert.equal(runtimeError.column, 21);
    assert.match(runtimeError.stack, new RegExp(`${agentName}\\.ts:5:21`));
    assert.doesNotMatch(runtimeError.stack, /agentexec-sandbox|agent\.js/);
    assert.deepEqual(res.body.error, { message: runtimeError.message, line: 5, column: 21 }, 'the execution error carries no stack');
    assert.deepEqual(res.body.output, [{ type: 'text', text: 'before' }]);
    assert.deepEqual(res.body.trace.map(shape), [{ kind: 'call', name: 'say', args: { text: 'before' }, line: 3 }]);
  });

  it('pauses on an ask and resumes with the answers, never showing the password answer', async () => {
    const password = 'correct-horse-battery-staple';
    const { draftid } = await saveDraft(askingDraft);
    const asked = await dev('validateDraftStream', { draftid });
    assert.equal(asked.body.resultCode, 'ask');
    assert.equal(asked.body.validationSuccess, true);
    assert.deepEqual(asked.body.trace.map(shape), [
      { kind: 'call', name: 'ask', args: { spec: { message: 'Log in', inputs: [{ name: 'name', type: 'str' }, { name: 'pw', type: 'password' }] } }, line: 2 },
    ]);

    const resumed = await dev('validateDraftStream', { draftid, convid: asked.body.convid, inputs: { name: 'Ada', pw: password } });
    assert.equal(resumed.body.resultCode, 'success');
    assert.deepEqual(resumed.body.output, [{ type: 'text', text: 'welcome Ada' }]);
    assert.deepEqual(resumed.body.trace.map(shape), [
      { kind: 'result', name: 'ask', call: null, value: { name: 'Ada', pw: '********' }, line: 2 },
      { kind: 'log', text: 'got Ada ********', line: 3 },
      { kind: 'var', scope: 'vars', path: ['secret'], op: 'set', value: '********', line: 4 },
      { kind: 'call', name: 'say', args: { text: 'welcome Ada' }, line: 5 },
    ]);
    assert.ok(!JSON.stringify(resumed.body).includes(password));
  });

  it('resumes a draft’s pause only with the same draft revision, and never with the published agent', async () => {
    const { draftid, agentName } = await saveDraft(askingDraft);
    const asked = await dev('validateDraftStream', { draftid });
    const published = await dev('publishDraft', { draftid });
    assert.equal(published.status, 200);
    const byPublished = await execAgent(stack.url, developer, { agentName, convid: asked.body.convid, inputs: { name: 'x', pw: 'y' } });
    assert.equal(byPublished.body.resultCode, 'unknownConversation');

    await dev('saveDraft', { draftid, agentName, source: askingDraft.replace('welcome', 'hi'), validationQuery: '' });
    const afterSave = await dev('validateDraftStream', { draftid, convid: asked.body.convid, inputs: { name: 'x', pw: 'y' } });
    assert.equal(afterSave.body.resultCode, 'unknownConversation');
    assert.match(afterSave.body.error.message, /saved again/);
    assert.equal(afterSave.body.validationSuccess, false);
  });

  it('keeps draft runs out of the error report', async () => {
    const since = new Date().toISOString();
    const { draftid } = await saveDraft(throwingDraft);
    const failed = await dev('validateDraftStream', { draftid });
    assert.equal(failed.body.resultCode, 'errorInAgent');
    const report = await post(stack.url, '/api/admin/errorReport', { since }, { key: admin });
    assert.equal(report.status, 200);
    assert.ok(!report.body.rows.some((row: any) => row.convid === failed.body.convid));
  });
});
