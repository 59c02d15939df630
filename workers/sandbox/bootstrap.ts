import type { SandboxRun } from './sandbox.types.js';

/** What the bootstrap needs to build `sys`; passed into the isolate as one JSON string. */
export type BootstrapConfig = Pick<SandboxRun, 'agentName' | 'convid' | 'inputs' | 'caller' | 'history' | 'vars' | 'conv' | 'randomSeed'> & {
  /** The global the compiled agent module assigns itself to (compile-agent.ts). */
  moduleGlobal: string;
};

/** File name of the bootstrap inside the isolate (stack traces). */
export const bootstrapFileName = 'agentexec-sandbox.js';

/**
 * The body of a closure evaluated inside the isolate before the agent's code: `$0` is the host's
 * sync call reference, `$1` its async one, `$2` the BootstrapConfig JSON. It installs the seeded
 * Math.random and the journaled Date, builds `sys`, and returns the `start` function the host calls
 * after the agent module ran. The host references live only in this closure, never on a global, and
 * everything crossing the boundary is a JSON string. Intrinsics are captured first so an agent that
 * replaces JSON or Error does not break its own bookkeeping.
 *
 * Host replies are `{ok:true, value}` or `{ok:false, error:{kind, message}}`; kind `type` becomes a
 * TypeError, `fetch` a FetchError the host classifies as callFailed when uncaught.
 */
export const bootstrapSource = String.raw`
'use strict';
const hostSync = $0;
const hostAsync = $1;
const parseJson = JSON.parse;
const toJson = JSON.stringify;
const RealDate = Date;
const RealError = Error;
const RealTypeError = TypeError;
const builtinErrors = [TypeError, ReferenceError, SyntaxError, RangeError, URIError, EvalError];
const isArray = Array.isArray;
const fetchErrors = new WeakSet();
const config = parseJson($2);

// Structured stack traces hand out the receivers of frames; keep agents from installing a hook.
Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });

function reply(text) {
  const answer = parseJson(text);
  if (answer.ok) return answer.value;
  const error = answer.error;
  if (error.kind === 'type') throw new RealTypeError(error.message);
  if (error.kind === 'fetch') {
    const err = new RealError(error.message);
    err.name = 'FetchError';
    fetchErrors.add(err);
    throw err;
  }
  throw new RealError(error.message);
}

// Null-prototype options: isolated-vm reads them, and must not find an agent's Object.prototype getters.
const asyncOptions = { __proto__: null, result: { __proto__: null, promise: true } };

function callSync(op, payload) {
  return reply(hostSync.applySync(undefined, [op, toJson(payload)]));
}

async function callAsync(op, payload) {
  return reply(await hostAsync.apply(undefined, [op, toJson(payload)], asyncOptions));
}

// Math.random: mulberry32 seeded by the run, so a replay draws the same numbers.
let seed = config.randomSeed >>> 0;
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
Object.defineProperty(Math, 'random', { value: random, writable: true, configurable: true });

// Date.now(), new Date() and Date() read the journaled clock; other forms are pure.
function clock() {
  return callSync('now', {});
}
function JournaledDate(...args) {
  if (new.target === undefined) return new RealDate(clock()).toString();
  return Reflect.construct(RealDate, args.length === 0 ? [clock()] : args, new.target);
}
JournaledDate.prototype = RealDate.prototype;
JournaledDate.now = function now() { return clock(); };
JournaledDate.parse = RealDate.parse;
JournaledDate.UTC = RealDate.UTC;
Object.defineProperty(RealDate.prototype, 'constructor', { value: JournaledDate, writable: true, configurable: true });
Object.defineProperty(globalThis, 'Date', { value: JournaledDate, writable: true, configurable: true });

function describeValue(value) {
  try {
    if (typeof value === 'string') return value;
    if (value instanceof RealError) return typeof value.stack === 'string' ? value.stack : String(value);
    const text = toJson(value);
    return text === undefined ? String(value) : text;
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function formatLine(args) {
  return args.map(describeValue).join(' ');
}

// console exists in a bare V8 context but prints nowhere; make it an alias of sys.log.
const log = (...args) => { callSync('log', { line: formatLine(args) }); };
Object.defineProperty(globalThis, 'console', {
  value: { log, info: log, warn: log, error: log, debug: log },
  writable: true,
  configurable: true,
});

function jsonText(value, what) {
  if (value === null || typeof value !== 'object' || isArray(value)) {
    throw new RealTypeError(what + ' must be a plain object');
  }
  return toJson(value, function (key, v) {
    const type = typeof v;
    if (type === 'function' || type === 'symbol') {
      throw new RealTypeError(what + ' must stay JSON: ' + (key === '' ? 'it' : '"' + key + '"') + ' is a ' + type);
    }
    return v;
  });
}

function snapshotState() {
  return { vars: jsonText(sys.vars, 'sys.vars'), conv: jsonText(sys.conv, 'sys.conv') };
}

function makeResponse(result) {
  return {
    status: result.status,
    ok: result.status >= 200 && result.status <= 299,
    headers: result.headers,
    text: result.text,
    json() { return parseJson(result.text); },
  };
}

const inputs = config.inputs;
const sys = {
  agentName: config.agentName,
  convid: config.convid,
  inputs,
  query: typeof inputs.query === 'string' ? inputs.query : undefined,
  caller: config.caller,
  vars: config.vars,
  conv: config.conv,
  history: config.history,
  say(markdown) { callSync('say', { text: String(markdown) }); },
  html(html) { callSync('html', { html: String(html) }); },
  image(source, mimeType) {
    callSync('image', { source: String(source), mimeType: mimeType === undefined ? null : mimeType });
  },
  write(text) { callSync('write', { text: String(text) }); },
  log,
  fail(message) {
    callSync('fail', { message: String(message) });
    throw new RealError(String(message)); // the run has already ended; this only unwinds
  },
  now() { return clock(); },
  async sleep(ms) { await callAsync('sleep', { ms }); },
  async fetch(url, init) {
    const options = init === undefined || init === null ? {} : init;
    const request = {
      url: String(url),
      method: options.method === undefined ? 'GET' : options.method,
      headers: options.headers === undefined ? {} : options.headers,
      body: options.body === undefined ? null : options.body,
      timeoutMs: options.timeoutMs === undefined ? null : options.timeoutMs,
    };
    return makeResponse(await callAsync('fetch', request));
  },
  async ask(spec) {
    const state = snapshotState();
    return callAsync('ask', { spec, vars: state.vars, conv: state.conv });
  },
};

function describeThrown(err) {
  try {
    if (err !== null && typeof err === 'object' && fetchErrors.has(err)) {
      return { kind: 'fetch', name: 'FetchError', message: String(err.message), stack: String(err.stack) };
    }
    if (err instanceof RealError) {
      const stack = typeof err.stack === 'string' ? err.stack : '';
      // isolated-vm rejects import() with a plain Error('Not supported'); that is the agent's mistake.
      if (Object.getPrototypeOf(err) === RealError.prototype && err.message === 'Not supported') {
        return { kind: 'agent', name: '', message: 'import() is not available in agents', stack };
      }
      const builtin = builtinErrors.some((type) => err instanceof type);
      return { kind: builtin ? 'builtin' : 'other', name: String(err.name), message: String(err.message), stack };
    }
    return { kind: 'other', name: '', message: describeValue(err), stack: '' };
  } catch {
    return { kind: 'other', name: '', message: 'the agent threw a value that cannot be described', stack: '' };
  }
}

function readDefaultExport() {
  const mod = globalThis[config.moduleGlobal];
  globalThis[config.moduleGlobal] = undefined;
  return mod === null || mod === undefined ? undefined : mod.default;
}

return async function start() {
  try {
    const main = readDefaultExport();
    if (typeof main !== 'function') {
      const message = 'the agent module has no default export function (export default async function (sys) {...})';
      return toJson({ ok: false, thrown: { kind: 'agent', name: '', message, stack: '' } });
    }
    await main(sys);
    return toJson({ ok: true, vars: jsonText(sys.vars, 'sys.vars'), conv: jsonText(sys.conv, 'sys.conv') });
  } catch (err) {
    return toJson({ ok: false, thrown: describeThrown(err) });
  }
};
`;
