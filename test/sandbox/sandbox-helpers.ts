import http from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import type { JsonObject, OutputPart } from '../../shared/api.js';
import { compileAgent } from '../../shared/compile-agent.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxEnding } from '../../workers/sandbox/sandbox-endings.js';
import type { SandboxRun } from '../../workers/sandbox/sandbox.types.js';

/** Compiles an agent source; a compile error fails the test that wrote it. */
export async function compile(source: string): Promise<string> {
  const result = await compileAgent(source);
  if (!result.ok) throw new Error(`agent does not compile: ${JSON.stringify(result.errors)}`);
  return result.code;
}

export function makeRun(code: string, overrides: Partial<SandboxRun> = {}): SandboxRun {
  return {
    code,
    agentName: 'probe',
    convid: 'conv-1',
    inputs: { query: 'hello' },
    caller: { kind: 'user', id: 'user-1', role: 'developer' },
    history: [],
    vars: {},
    conv: {},
    randomSeed: 12345,
    journal: [],
    memoryMb: 32,
    maxRuntimeMs: 5000,
    httpAllow: [],
    ...overrides,
  };
}

export async function runAgent(source: string, overrides: Partial<SandboxRun> = {}): Promise<SandboxEnding> {
  return runSandbox(makeRun(await compile(source), overrides));
}

/** The text of the text parts, in order. */
export function texts(outcome: { output: OutputPart[] }): string[] {
  return outcome.output.flatMap((part) => (part.type === 'text' ? [part.text] : []));
}

/** The vars of a success outcome; any other outcome fails the test. */
export function varsOf(outcome: SandboxEnding): JsonObject {
  assert.equal(outcome.resultCode, 'success', JSON.stringify(outcome));
  return outcome.resultCode === 'success' ? outcome.vars : {};
}

export function errorOf(outcome: SandboxEnding): { message: string; line?: number; column?: number } {
  if (!('error' in outcome)) throw new Error(`expected a failed outcome, got ${outcome.resultCode}`);
  return outcome.error;
}

/** Waits for a condition with a deadline (no bare sleeps in tests). */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export interface TestServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  hits: () => number;
  /** Requests still open (the handler did not answer yet). */
  open: () => number;
  close: () => Promise<void>;
}

/** A local HTTP server on 127.0.0.1, port 0. */
export async function startServer(handler: http.RequestListener): Promise<TestServer> {
  let hits = 0;
  let open = 0;
  const server = http.createServer((req, res) => {
    hits += 1;
    open += 1;
    res.on('close', () => (open -= 1));
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits: () => hits,
    open: () => open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
