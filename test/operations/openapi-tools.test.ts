import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { spawn } from 'node:child_process';

const run = promisify(execFile);

/**
 * How openapi-fetch (0.17) types the \`data\` of a call: its FetchResponse's data is
 * \`SuccessResponse<ResponseObjectMap<operation>, MediaType>\`, which is every 2xx body of every media
 * type. These lines are those types, as openapi-typescript-helpers 0.1.0 (MIT) declares them, so the
 * check needs no client library installed.
 */
const openapiFetchData = `
type OkStatus = 200 | 201 | 202 | 203 | 204 | 206 | 207 | '2XX';
type MediaType = \`\${string}/\${string}\`;
type FilterKeys<Obj, Matchers> = Obj[keyof Obj & Matchers];
type GetResponseContent<T extends Record<string | number, any>, Media extends MediaType = MediaType, ResponseCode extends keyof T = keyof T> = ResponseCode extends keyof T
  ? { [K in ResponseCode]: T[K]['content'] extends Record<string, any> ? (FilterKeys<T[K]['content'], Media> extends never ? T[K]['content'] : FilterKeys<T[K]['content'], Media>) : K extends keyof T ? T[K]['content'] : never }[ResponseCode]
  : never;
type SuccessResponse<T extends Record<string | number, any>, Media extends MediaType = MediaType> = GetResponseContent<T, Media, OkStatus>;
// ResponseObjectMap<operation> there: the operation's responses.
type Data<Operation extends { responses: Record<string | number, any> }> = SuccessResponse<Operation['responses']>;
`;
const modules = fileURLToPath(new URL('../../../node_modules/', import.meta.url));

/**
 * The OpenAPI document as standard tools read it (we did not write them): @apidevtools/swagger-parser
 * validates it, @redocly/cli lints it with its recommended rules (warnings allowed, no errors), and
 * openapi-typescript generates types that compile, for every endpoint, used as a client would (the
 * execution response typed as openapi-fetch types it, without narrowing); and
 * Prism, as a validating proxy in front of the server, passes its answers, streamed ones included.
 */
describe('the OpenAPI document in standard tools', function () {
  this.timeout(120_000);
  let stack: Stack;
  let dir: string;
  let file: string;
  let document: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }>; requestBody?: unknown }>> };
  type Document = typeof document;

  before(async () => {
    stack = await startStack();
    document = (await (await fetch(`${stack.url}/api/openapi.json`)).json()) as Document;
    dir = await mkdtemp(join(tmpdir(), 'agentexec-openapi-'));
    file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
  });
  after(async () => {
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Starts Prism as a validating proxy for `documentFile` in front of the server, runs `calls` through it, answers what Prism logged. */
  async function throughPrism(documentFile: string, calls: (prismUrl: string) => Promise<void>, awaitOutput?: RegExp): Promise<string> {
    const port = await freePort();
    const prism = spawn(process.execPath, [join(modules, '@stoplight/prism-cli/dist/index.js'), 'proxy', documentFile, stack.url, '--port', String(port), '--errors'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    prism.stdout.on('data', (chunk) => (output += chunk));
    prism.stderr.on('data', (chunk) => (output += chunk));
    try {
      for (let i = 0; i < 150 && !/Prism is listening/.test(output); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.match(output, /Prism is listening/);
      await calls(`http://127.0.0.1:${port}`);
      for (let i = 0; awaitOutput && i < 50 && !awaitOutput.test(output); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      return output;
    } finally {
      prism.kill();
    }
  }

  it('passes Prism’s validating proxy, a JSON answer, a streamed one and an error', async () => {
    const { key } = await createAccount(stack.runtime.db);
    const agentName = uniqueAgentName('writer');
    await publishAgent(stack.runtime.db, agentName, `export default async (sys) => { sys.write('Hel'); sys.write('lo'); }`);
    const call = (prismUrl: string, body: unknown, path = '/api/exec/execAgent') =>
      fetch(`${prismUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    const output = await throughPrism(file, async (prismUrl) => {
      const json = await call(prismUrl, { agentName });
      assert.equal(json.status, 200, await json.clone().text());
      assert.deepEqual(((await json.json()) as { output: unknown }).output, [{ type: 'text', text: 'Hello' }]);
      const streamed = await call(prismUrl, { agentName }, '/api/exec/execAgentStream');
      assert.equal(streamed.status, 200, await streamed.clone().text());
      assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(await streamed.text(), /event: end/);
      const refused = await call(prismUrl, { agentName: uniqueAgentName('missing') });
      assert.equal(refused.status, 404);
      // Prism logs what it found after each answer: the last call's log line comes after the others'.
    }, /returned 404[\s\S]*Received forward response/);
    assert.match(output, /returned 404[\s\S]*Received forward response/);
    assert.doesNotMatch(output, /violation/i, output);

    // The check can fail: with the stream's events as the body's schema (as 3.2 would mean them), Prism objects.
    const wrong = structuredClone(document) as any;
    wrong.paths['/api/exec/execAgentStream'].post.responses['200'].content['text/event-stream'] = { schema: { $ref: '#/components/schemas/StreamEvent' } };
    const wrongFile = join(dir, 'wrong.json');
    await writeFile(wrongFile, JSON.stringify(wrong));
    const objected = await throughPrism(wrongFile, async (prismUrl) => void (await (await call(prismUrl, { agentName }, '/api/exec/execAgentStream')).text()), /violation/i);
    assert.match(objected, /violation/i);
  });

  it('validates with swagger-parser', async () => {
    await SwaggerParser.validate(structuredClone(document) as never);
  });

  it('lints with redocly’s recommended rules without an error', async () => {
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const result = await run(process.execPath, [join(modules, '@redocly/cli/bin/cli.js'), 'lint', file, '--format=summary'], { env, cwd: dir }).then(
      (ok) => ({ code: 0, output: ok.stdout + ok.stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, output: err.stdout + err.stderr }),
    );
    assert.equal(result.code, 0, result.output);
    assert.doesNotMatch(result.output, /^error /m);
  });

  it('generates types with openapi-typescript that compile, and type every JSON answer and body as a client uses them', async () => {
    const types = join(dir, 'api.d.ts');
    await run(process.execPath, [join(modules, 'openapi-typescript/bin/cli.js'), file, '-o', types], { cwd: dir });
    const uses: string[] = [];
    let n = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!/^2\d\d$/.test(status) || !response.content?.['application/json']) continue;
          uses.push(`export type Answer${n++} = paths[${JSON.stringify(path)}][${JSON.stringify(method)}]['responses'][${status}]['content']['application/json'];`);
        }
        if (operation.requestBody) uses.push(`export type Body${n++} = NonNullable<paths[${JSON.stringify(path)}][${JSON.stringify(method)}]['requestBody']>['content']['application/json'];`);
      }
    }
    const usage = `import type { paths } from './api';
${uses.join('\n')}
type Exec = paths['/api/exec/execAgent']['post'];
declare const answer: Exec['responses'][200]['content']['application/json'];
export const code: string = answer.resultCode;
export const texts: string[] = answer.output.flatMap((part) => (part.type === 'text' ? [part.text] : []));
export const body: NonNullable<Exec['requestBody']>['content']['application/json'] = { agentName: 'hello', inputs: { query: 'x', nested: [1, { deep: null }] } };
declare const run: paths['/api/exec/getRun']['post']['responses'][200]['content']['application/json'];
export const status: 'queued' | 'running' | 'ended' = run.status;
${openapiFetchData}
// As openapi-fetch types \`const { data } = await client.POST('/api/exec/execAgent', …)\`: the JSON answer, no narrowing.
declare const data: Data<paths['/api/exec/execAgent']['post']>;
export const resultCode: string = data.resultCode;
export const convid: string = data.convid;
// The streamed call has a path of its own, whose 200 is the event stream (text).
declare const streamed: Data<paths['/api/exec/execAgentStream']['post']>;
export const text: string = streamed;
`;
    await writeFile(join(dir, 'usage.ts'), usage);
    const tsc = join(modules, 'typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022', 'usage.ts'], { cwd: dir }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    assert.equal(compiled, '', compiled);
    assert.ok(uses.length > 30, `every endpoint is used (${uses.length})`);

    // The check can fail: with the stream on execAgent's own 200 (as before execAgentStream), `data` is `ExecutionResponse | string`.
    const both = structuredClone(document) as any;
    both.paths['/api/exec/execAgent'].post.responses['200'].content['text/event-stream'] = document.paths['/api/exec/execAgentStream']!.post!.responses['200']!.content!['text/event-stream'];
    await writeFile(join(dir, 'both.json'), JSON.stringify(both));
    await run(process.execPath, [join(modules, 'openapi-typescript/bin/cli.js'), join(dir, 'both.json'), '-o', join(dir, 'api.d.ts')], { cwd: dir });
    const narrowing = await run(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022', 'usage.ts'], { cwd: dir }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    assert.match(narrowing, /Property 'resultCode' does not exist on type 'string'/);
  });
});
