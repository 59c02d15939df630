import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { post } from '../helpers/api.js';
import { createAccount, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('command line: drafts:save', () => {
  let stack: Stack;
  let developer: string;
  let dir: string;

  before(async () => {
    stack = await startStack();
    developer = (await createAccount(stack.runtime.db, 'developer')).key;
    dir = await mkdtemp(join(tmpdir(), 'agentexec-drafts-'));
  });
  after(async () => {
    await stack.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('saves a file as a draft that developers can then validate, and a new revision with --draftid', async () => {
    const agentName = uniqueAgentName('cli');
    const file = join(dir, 'draft.ts');
    await writeFile(file, `export default async function (sys: any) {\n  sys.say('cli ' + sys.query);\n}\n`);
    const saved = await runCli(['drafts:save', '--agent', agentName, '--file', file, '--validation-query', 'Ada', '--json']);
    assert.equal(saved.code, 0, saved.output);
    assert.deepEqual(saved.json.compileErrors, []);

    const run = await post(stack.url, '/api/dev/validateDraftStream', { draftid: saved.json.draftid }, { key: developer });
    assert.deepEqual(run.body.output, [{ type: 'text', text: 'cli Ada' }]);

    await writeFile(file, `export default async function (sys: any) {\n  sys.say(;\n}\n`);
    const broken = await runCli(['drafts:save', '--agent', agentName, '--file', file, '--draftid', saved.json.draftid, '--json']);
    assert.equal(broken.code, 0, broken.output);
    assert.equal(broken.json.draftid, saved.json.draftid);
    assert.equal(broken.json.compileErrors[0].line, 2);
    const got = await post(stack.url, '/api/dev/getDraft', { draftid: saved.json.draftid }, { key: developer });
    assert.equal(got.body.revision, 2);
    assert.equal(got.body.validationQuery, 'Ada', 'a new revision keeps the validation query');
  });

  it('refuses a bad agent name or a missing file with a message naming the option, saving nothing', async () => {
    const file = join(dir, 'ok.ts');
    await writeFile(file, 'export default async () => {};\n');
    const badName = await runCli(['drafts:save', '--agent', '9lives', '--file', file]);
    assert.notEqual(badName.code, 0);
    assert.match(badName.output, /--agent: must start with a letter/);
    const missing = await runCli(['drafts:save', '--agent', 'fine', '--file', join(dir, 'nope.ts')]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.output, /nope\.ts: cannot read the file/);
  });
});
