import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The client as a user gets it: the tarball `npm run build` packs, installed into a folder of its
 * own with npm, imported by its package name from plain JavaScript, and type-checked from TypeScript.
 */
describe('the packed TypeScript client, installed as a user would', function () {
  this.timeout(120_000);
  let stack: Stack;
  let scratch: string;
  let key: string;
  const hello = uniqueAgentName('hello');

  before(async () => {
    const { version } = JSON.parse(await readFile(join(root, 'clients/typescript/package.json'), 'utf8')) as { version: string };
    const tarball = join(root, `dist/agentexec-client-${version}.tgz`);
    assert.ok(existsSync(tarball), `${tarball} is missing: npm run build packs it`);
    scratch = await mkdtemp(join(tmpdir(), 'agentexec-client-user-'));
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'a-user', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: scratch });
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, hello, `export default async (sys) => { sys.write('Hel'); sys.write('lo ' + sys.query); }`);
  });
  after(async () => {
    await stack?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('runs and streams from plain JavaScript, by package name', async () => {
    await writeFile(
      join(scratch, 'use.mjs'),
      `import { AgentexecClient, NotFoundError } from 'agentexec-client';
      const client = new AgentexecClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
      const answer = await client.run(process.env.AGENT, { query: 'world' });
      const events = [];
      const stream = client.stream(process.env.AGENT, { query: 'stream' });
      for await (const event of stream) events.push(event.event);
      const final = await stream.finalResponse();
      let missing = '';
      try { await client.run('no-such-agent'); } catch (err) { missing = err instanceof NotFoundError ? err.code : String(err); }
      let streamedMissing = '';
      try { for await (const event of client.stream('no-such-agent')) events.push(event.event); } catch (err) { streamedMissing = err instanceof NotFoundError ? err.code : String(err); }
      console.log(JSON.stringify({ output: answer.output, events, final: final.output, missing, streamedMissing }));`,
    );
    const { stdout } = await run(process.execPath, ['use.mjs'], { cwd: scratch, env: { ...process.env, BASE_URL: stack.url, API_KEY: key, AGENT: hello } });
    assert.deepEqual(JSON.parse(stdout), {
      output: [{ type: 'text', text: 'Hello world' }],
      events: ['start', 'part', 'delta', 'end'],
      final: [{ type: 'text', text: 'Hello stream' }],
      missing: 'agentNotFound',
      streamedMissing: 'agentNotFound',
    });
  });

  it('type-checks a TypeScript program against its declarations, and catches a wrong use', async () => {
    const program = `import { AgentexecClient, type ConversationRead, type ExecutionResponse, type RunEvent } from 'agentexec-client';
      const client = new AgentexecClient({ baseUrl: 'http://localhost:8080', apiKey: 'ak_x_y' });
      export async function main(): Promise<string> {
        const answer: ExecutionResponse = await client.run('hello', { query: 'x' });
        await client.answer('hello', { name: 'Ada' }, { convid: answer.convid });
        const read: ConversationRead = await client.getConversation(answer.convid);
        const pinned: boolean = (await client.pinConversation(read.convid)).pinned;
        const titles = (await client.listConversations()).conversations.map((c) => c.title ?? c.convid);
        const final: ExecutionResponse = await client.stream('hello').finalResponse();
        for await (const event of client.stream('hello')) {
          const e: RunEvent = event;
          if (e.event === 'error') return e.data.error.code;
          if (e.event === 'end') return e.data.resultCode + pinned + titles.length + final.output.length;
        }
        return answer.resultCode;
      }`;
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom'];
    await writeFile(join(scratch, 'use.ts'), program);
    await run(process.execPath, [tsc, ...options, 'use.ts'], { cwd: scratch });

    await writeFile(join(scratch, 'wrong.ts'), `${program}\nexport const n: number = (await client.run('hello')).resultCode;\n`);
    const wrong = await run(process.execPath, [tsc, ...options, 'wrong.ts'], { cwd: scratch }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    assert.match(wrong, /wrong\.ts.*error TS2322: Type '(ResultCode|string)' is not assignable to type 'number'/);
  });
});
