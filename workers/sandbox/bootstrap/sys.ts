import { maxJsonDepth } from '../../../shared/storable-text.js';
import type { RunConfig } from '../sandbox-protocol.js';
import { traced } from './call-site.js';
import { formatLine } from './describe.js';
import { callAsync, callSync, queueOutput, type Run } from './host.js';
import { isArray, parseJson, RealError, RealTypeError, toJson } from './intrinsics.js';
import { makeStreamedResponse, type StreamHead } from './streamed-response.js';
import { watchVariables } from './watch-variables.js';

/** What the agent passes as sys.fetch's second argument; anything else reads as no options. */
interface FetchInit {
  method?: unknown;
  headers?: unknown;
  body?: unknown;
  timeoutMs?: unknown;
  stream?: unknown;
}

/** What the host's fetch answers (FetchResult in sandbox.types.ts). */
interface FetchReply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/**
 * The JSON text of sys.vars or sys.conv, refusing what would not come back the same: anything but a
 * plain object at the top, functions and symbols anywhere.
 */
export function jsonText(value: unknown, what: string): string {
  if (value === null || typeof value !== 'object' || isArray(value)) {
    throw new RealTypeError(what + ' must be a plain object');
  }
  try {
    return toJson(value, function (key, v: unknown) {
      const type = typeof v;
      if (type === 'function' || type === 'symbol') {
        throw new RealTypeError(what + ' must stay JSON: ' + (key === '' ? 'it' : '"' + key + '"') + ' is a ' + type);
      }
      return v;
    });
  } catch (err) {
    // Nested deep enough to overflow the stack: the same refusal the host gives past maxJsonDepth
    // (variables.ts), not the overflow.
    const path = tooDeep(value, maxJsonDepth);
    if (path === undefined) throw err;
    const refusal = new RealTypeError(what + ' is nested deeper than ' + maxJsonDepth + ' levels (at ' + [what, ...path].join('.') + '…)');
    // Named '' so the message stands alone (sandbox-endings.ts endingForThrown), word for word the host's.
    refusal.name = '';
    throw refusal;
  }
}

/** The first three keys down to an object nested deeper than `maxDepth`, or undefined. Walks without recursion. */
function tooDeep(value: object, maxDepth: number): string[] | undefined {
  type Step = { value: unknown; depth: number; key: string; parent: Step | undefined };
  const pending: Step[] = [{ value, depth: 0, key: '', parent: undefined }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    if (step.value === null || typeof step.value !== 'object') continue;
    if (step.depth >= maxDepth) {
      const path: string[] = [];
      for (let at: Step | undefined = step; at !== undefined && at.parent !== undefined; at = at.parent) path.push(at.key);
      return path.reverse().slice(0, 3);
    }
    const keys = Object.keys(step.value);
    for (let i = 0; i < keys.length; i++) {
      pending.push({ value: (step.value as Record<string, unknown>)[keys[i]!], depth: step.depth + 1, key: keys[i]!, parent: step });
    }
  }
  return undefined;
}

function makeResponse(result: FetchReply) {
  return {
    status: result.status,
    ok: result.status >= 200 && result.status <= 299,
    headers: result.headers,
    text: result.text,
    json(): unknown {
      return parseJson(result.text);
    },
  };
}

/**
 * A fresh `sys` for one run (agents/sys.d.ts is what agents see). Every function calls the host for
 * `run` only, so one kept by the agent past its run speaks for a run that has ended.
 */
export function makeSys(run: Run, config: RunConfig) {
  const inputs = config.inputs;
  let history: unknown;
  const sys = {
    agentName: config.agentName,
    convid: config.convid,
    inputs,
    query: typeof inputs.query === 'string' ? inputs.query : undefined,
    caller: config.caller,
    vars: config.vars as unknown,
    conv: config.conv as unknown,
    /**
     * Asked of the host when the agent first reads it: a long conversation's history (up to 500
     * entries) crosses into the isolate only for the agents that use it.
     */
    get history(): unknown {
      return (history ??= callSync(run, 'history', {}));
    },
    secrets: freezeSecrets(config.secrets),
    say(markdown: unknown): void {
      callSync(run, 'say', traced(run, { text: String(markdown) }));
    },
    html(html: unknown): void {
      callSync(run, 'html', traced(run, { html: String(html) }));
    },
    image(source: unknown, mimeType: unknown): void {
      callSync(run, 'image', traced(run, { source: String(source), mimeType: mimeType === undefined ? null : mimeType }));
    },
    write(text: unknown): void {
      queueOutput(run, 'write', traced(run, { text: String(text) }));
    },
    log(...args: unknown[]): void {
      callSync(run, 'log', traced(run, { line: formatLine(args) }));
    },
    fail(message: unknown): never {
      callSync(run, 'fail', traced(run, { message: String(message) }));
      throw new RealError(String(message)); // the run has already ended; this only unwinds
    },
    now(): unknown {
      return callSync(run, 'now', traced(run, {}));
    },
    async sleep(ms: unknown): Promise<void> {
      await callAsync(run, 'sleep', traced(run, { ms }));
    },
    async fetch(url: unknown, init?: FetchInit | null) {
      const options: FetchInit = init === undefined || init === null ? {} : init;
      const request = {
        url: String(url),
        method: options.method === undefined ? 'GET' : options.method,
        headers: options.headers === undefined ? {} : options.headers,
        body: options.body === undefined ? null : options.body,
        timeoutMs: options.timeoutMs === undefined ? null : options.timeoutMs,
      };
      if (options.stream !== true) return makeResponse((await callAsync(run, 'fetch', traced(run, request))) as FetchReply);
      return makeStreamedResponse(run, (await callAsync(run, 'fetch', traced(run, { ...request, stream: true }))) as StreamHead);
    },
    async ask(spec: unknown): Promise<unknown> {
      const vars = jsonText(sys.vars, 'sys.vars');
      const conv = jsonText(sys.conv, 'sys.conv');
      return callAsync(run, 'ask', traced(run, { spec, vars, conv }));
    },
    async call(agentName: unknown, inputs?: unknown, options?: { convid?: unknown } | null): Promise<unknown> {
      // Refused here, as a TypeError the agent can catch: inputs that would not reach the child as they are.
      const text = jsonText(inputs === undefined ? {} : inputs, 'sys.call inputs');
      const convid = options === undefined || options === null || options.convid === undefined ? null : options.convid;
      return callAsync(run, 'call', traced(run, { agentName, inputs: text, convid }));
    },
  };
  if (run.trace) {
    Object.defineProperty(sys, 'vars', { ...watchVariables(run, 'vars', config.vars), enumerable: true });
    Object.defineProperty(sys, 'conv', { ...watchVariables(run, 'conv', config.conv), enumerable: true });
  }
  return sys;
}

/** sys.secrets: a frozen copy per run, so nothing an agent does to it reaches another run. */
function freezeSecrets(secrets: { [key: string]: string } | undefined): Readonly<Record<string, string>> {
  const copy: Record<string, string> = {};
  if (secrets) for (const key of Object.keys(secrets)) copy[key] = secrets[key]!;
  return Object.freeze(copy);
}
