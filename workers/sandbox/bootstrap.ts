import type { ThrownDescription } from './error-codes.js';
import type { SandboxRun } from './sandbox.types.js';

/** What one run's `sys` is built from; passed into the isolate as one JSON string per run. */
export type RunConfig = Pick<SandboxRun, 'agentName' | 'convid' | 'inputs' | 'caller' | 'history' | 'vars' | 'conv' | 'randomSeed'> & {
  /** Every sys call carries the site it was made from, and sys.vars / sys.conv report their changes. */
  trace: boolean;
};

/**
 * How a run ended inside the isolate (the JSON `start` resolves to). `reusable`: nothing of the run
 * is left pending, so no code of it can run again once the isolate has answered.
 */
export type RunResult =
  | { kind: 'returned'; vars: string; conv: string; reusable: boolean }
  | { kind: 'threw'; thrown: ThrownDescription };

/** Host calls (sleep, fetch, ask) one run may have pending at once (DESIGN §12). */
export const maxPendingCalls = 1000;

/** What the bootstrap closure returns: starts one run from its RunConfig JSON, resolves to its RunResult JSON. */
export type StartRun = (token: number, config: string) => Promise<string>;

/** File name of the bootstrap inside the isolate (stack traces). */
export const bootstrapFileName = 'agentexec-sandbox.js';

/**
 * The body of a closure evaluated once per context, before any run: `$0` is the host's sync call
 * reference, `$1` its async one, `$2` the agent's module factory (agent-isolate.ts). It installs the
 * seeded Math.random, the journaled Date and console, then locks the realm down (DESIGN §12: nothing
 * of one run is visible to a later run): every object reachable from the global object, and the
 * intrinsics reachable only through syntax, is frozen, the global object included, so no run can add
 * a global, add a property to a built-in or replace one. What could outlive a run without a host call
 * (WebAssembly's off-heap memory and background compiles, FinalizationRegistry callbacks,
 * Atomics.waitAsync) is removed. Each run builds a fresh `sys` and a fresh agent module, so one
 * context serves many runs of one agent, one at a time. The host references live only in this
 * closure, never on a global, and everything crossing the boundary is a JSON string.
 *
 * Host replies are `{ok:true, value}` or `{ok:false, error:{kind, message}}`; kind `type` becomes a
 * TypeError, `fetch` a FetchError the host classifies as callFailed when uncaught.
 */
export const bootstrapSource = String.raw`
'use strict';
const hostSync = $0;
const hostAsync = $1;
const loadAgentModule = $2;
const parseJson = JSON.parse;
const toJson = JSON.stringify;
const RealDate = Date;
const RealError = Error;
const RealTypeError = TypeError;
const builtinErrors = [TypeError, ReferenceError, SyntaxError, RangeError, URIError, EvalError];
const isArray = Array.isArray;
const apply = Reflect.apply;
const ownKeys = Reflect.ownKeys;
const regExpExec = RegExp.prototype.exec;
const emptyPattern = /(?:)/;
const fetchErrors = new WeakSet();
const RealProxy = Proxy;
const RealWeakMap = WeakMap;
const reflectGet = Reflect.get;
const reflectSet = Reflect.set;
const reflectHas = Reflect.has;
const reflectDelete = Reflect.deleteProperty;
const concat = Array.prototype.concat;

// Structured stack traces hand out the receivers of frames; keep agents from installing a hook.
Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });

// The run in progress. Every host call carries its run's token and the host answers only the
// current one, so a promise left over from an earlier run cannot act in a later one. Date and
// console are globals and speak for the current run. 'pending' counts the run's async host calls
// not yet settled in here.
let current = { token: 0, pending: 0, trace: false };

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

function callSync(run, op, payload) {
  return reply(hostSync.applySync(undefined, [run.token, op, toJson(payload)]));
}

async function callAsync(run, op, payload) {
  // The host ends the run (errorInAgent) and the reply unwinds; the call is never made.
  if (run.pending >= ${maxPendingCalls}) callSync(run, 'tooManyPending', {});
  run.pending += 1;
  try {
    return reply(await hostAsync.apply(undefined, [run.token, op, toJson(payload)], asyncOptions));
  } finally {
    run.pending -= 1;
  }
}

// Math.random: mulberry32 seeded by each run, so a replay draws the same numbers.
let seed = 0;
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
  return callSync(current, 'now', traced(current, {}));
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

// Tracing (draft validation): where in the agent a sys call was made, from a stack captured here.
// The first frame in the agent's file is the caller, at most four frames down (Error.stackTraceLimit
// is frozen at V8's 10).
const sitePattern = /\bagent\.js:(\d+):(\d+)/;
function callSite() {
  try {
    const stack = new RealError().stack;
    const match = typeof stack === 'string' ? apply(regExpExec, sitePattern, [stack]) : null;
    return match ? { line: +match[1], column: +match[2] } : null;
  } catch {
    return null;
  }
}

function traced(run, payload) {
  if (run.trace) payload.site = callSite();
  return payload;
}

// Reports one change of sys.vars or sys.conv. A value JSON cannot hold is reported by a placeholder.
function traceVar(run, scope, path, op, value) {
  const change = { scope, path, op, site: callSite() };
  if (op === 'set') change.value = value === undefined ? null : value;
  try {
    toJson(change);
  } catch {
    change.value = '[not JSON]';
  }
  callSync(run, 'trace', change);
}

// sys.vars and sys.conv of a traced run: proxies that report every set and delete, at any depth,
// with the path from the top. Values stored are the plain objects, never the proxies.
function watchVariables(run, scope, root) {
  const proxies = new RealWeakMap();
  const targets = new RealWeakMap();
  function watch(target, path) {
    if (target === null || typeof target !== 'object') return target;
    const known = proxies.get(target);
    if (known) return known;
    const proxy = new RealProxy(target, {
      get(t, key) {
        const value = reflectGet(t, key);
        return typeof key === 'string' ? watch(value, apply(concat, path, [key])) : value;
      },
      set(t, key, value) {
        const plain = value !== null && typeof value === 'object' && targets.has(value) ? targets.get(value) : value;
        const done = reflectSet(t, key, plain);
        // An array's length follows from the element changes already reported (push, splice).
        if (done && typeof key === 'string' && !(key === 'length' && isArray(t))) traceVar(run, scope, apply(concat, path, [key]), 'set', plain);
        return done;
      },
      deleteProperty(t, key) {
        const had = reflectHas(t, key);
        const done = reflectDelete(t, key);
        if (done && had && typeof key === 'string') traceVar(run, scope, apply(concat, path, [key]), 'delete');
        return done;
      },
    });
    proxies.set(target, proxy);
    targets.set(proxy, target);
    return proxy;
  }
  let top = watch(root, []);
  return {
    get() { return top; },
    set(value) {
      traceVar(run, scope, [], 'set', value);
      top = watch(value, []);
    },
  };
}

// console exists in a bare V8 context but prints nowhere; make it an alias of sys.log.
const consoleLog = (...args) => { callSync(current, 'log', traced(current, { line: formatLine(args) })); };
const agentConsole = { log: consoleLog, info: consoleLog, warn: consoleLog, error: consoleLog, debug: consoleLog };
Object.defineProperty(globalThis, 'console', { value: agentConsole, writable: true, configurable: true });

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

function makeResponse(result) {
  return {
    status: result.status,
    ok: result.status >= 200 && result.status <= 299,
    headers: result.headers,
    text: result.text,
    json() { return parseJson(result.text); },
  };
}

function makeSys(run, config) {
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
    say(markdown) { callSync(run, 'say', traced(run, { text: String(markdown) })); },
    html(html) { callSync(run, 'html', traced(run, { html: String(html) })); },
    image(source, mimeType) {
      callSync(run, 'image', traced(run, { source: String(source), mimeType: mimeType === undefined ? null : mimeType }));
    },
    write(text) { callSync(run, 'write', traced(run, { text: String(text) })); },
    log(...args) { callSync(run, 'log', traced(run, { line: formatLine(args) })); },
    fail(message) {
      callSync(run, 'fail', traced(run, { message: String(message) }));
      throw new RealError(String(message)); // the run has already ended; this only unwinds
    },
    now() { return callSync(run, 'now', traced(run, {})); },
    async sleep(ms) { await callAsync(run, 'sleep', traced(run, { ms })); },
    async fetch(url, init) {
      const options = init === undefined || init === null ? {} : init;
      const request = {
        url: String(url),
        method: options.method === undefined ? 'GET' : options.method,
        headers: options.headers === undefined ? {} : options.headers,
        body: options.body === undefined ? null : options.body,
        timeoutMs: options.timeoutMs === undefined ? null : options.timeoutMs,
      };
      return makeResponse(await callAsync(run, 'fetch', traced(run, request)));
    },
    async ask(spec) {
      const vars = jsonText(sys.vars, 'sys.vars');
      const conv = jsonText(sys.conv, 'sys.conv');
      return callAsync(run, 'ask', traced(run, { spec, vars, conv }));
    },
  };
  if (run.trace) {
    Object.defineProperty(sys, 'vars', { ...watchVariables(run, 'vars', config.vars), enumerable: true });
    Object.defineProperty(sys, 'conv', { ...watchVariables(run, 'conv', config.conv), enumerable: true });
  }
  return sys;
}

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

// The lockdown. Intrinsics reached only through syntax are added to what the global object reaches.
function syntaxIntrinsics() {
  const protoOf = Object.getPrototypeOf;
  const roots = [
    protoOf(async function () {}),
    protoOf(function* () {}),
    protoOf(async function* () {}),
    protoOf([][Symbol.iterator]()),
    protoOf(new Map()[Symbol.iterator]()),
    protoOf(new Set()[Symbol.iterator]()),
    protoOf(''[Symbol.iterator]()),
    protoOf(/(?:)/[Symbol.matchAll]('')),
    protoOf(protoOf([][Symbol.iterator]())),
    (function () { 'use strict'; return Object.getOwnPropertyDescriptor(arguments, 'callee').get; })(),
  ];
  if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
    const segments = new Intl.Segmenter().segment('');
    roots.push(protoOf(segments), protoOf(segments[Symbol.iterator]()));
  }
  return roots;
}

// Every object reachable from the roots through own properties (values, getters, setters) and
// prototypes, without recursion. It runs once per isolate, cold, so it reads as little as it can: a
// built-in function's length and name are never objects.
function reachableFrom(roots) {
  const seen = new Set();
  const pending = roots.slice();
  const descriptorOf = Reflect.getOwnPropertyDescriptor;
  const isObject = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && !seen.has(v);
  while (pending.length) {
    const value = pending.pop();
    if (seen.has(value)) continue;
    seen.add(value);
    const proto = Object.getPrototypeOf(value);
    if (isObject(proto)) pending.push(proto);
    const keys = ownKeys(value);
    const isFunction = typeof value === 'function';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (isFunction && (key === 'length' || key === 'name')) continue;
      const desc = descriptorOf(value, key);
      if ('value' in desc) {
        if (isObject(desc.value)) pending.push(desc.value);
      } else {
        if (isObject(desc.get)) pending.push(desc.get);
        if (isObject(desc.set)) pending.push(desc.set);
      }
    }
  }
  return seen;
}

// Frozen prototypes make an assignment that would shadow an inherited property fail (the "override
// mistake"): 'this.name = ...' in an Error subclass, 'Foo.prototype = {...}; Foo.prototype.constructor
// = Foo'. Those become accessors whose setter defines the property on the object assigned to, as
// SES's moderate taming does. Array and Promise prototypes are left alone: an accessor 'constructor'
// there would switch off V8's fast paths for every map, slice and await.
function overridablePlaces() {
  const errorKeys = ['constructor', 'name', 'message', 'toString'];
  const places = [
    [Object.prototype, ['constructor', 'toString', 'valueOf', 'toLocaleString', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable']],
    [Function.prototype, ['toString']],
    [Error.prototype, errorKeys],
  ];
  for (let i = 0; i < builtinErrors.length; i++) places.push([builtinErrors[i].prototype, errorKeys]);
  return places;
}
function allowOverrides() {
  for (const [object, keys] of overridablePlaces()) {
    for (const key of keys) {
      const desc = Reflect.getOwnPropertyDescriptor(object, key);
      if (!desc || !('value' in desc)) continue;
      const value = desc.value;
      Object.defineProperty(object, key, {
        get: function () { return value; },
        set: function (replacement) {
          if (this === object) throw new RealTypeError('Cannot assign to read only property ' + key + ' of a built-in');
          Object.defineProperty(this, key, { value: replacement, writable: true, enumerable: true, configurable: true });
        },
        enumerable: desc.enumerable,
        configurable: false,
      });
    }
  }
}

function lockDown() {
  delete globalThis.WebAssembly;
  delete globalThis.FinalizationRegistry;
  if (typeof Atomics === 'object') delete Atomics.waitAsync;
  allowOverrides();
  const objects = reachableFrom([globalThis, ...syntaxIntrinsics()]);
  for (const object of objects) Object.freeze(object);
}
lockDown();

const noDefaultExport = {
  kind: 'agent',
  name: '',
  message: 'the agent module has no default export function (export default async function (sys) {...})',
  stack: '',
};

// A fresh agent module per run: its top-level state starts over like in a fresh isolate.
async function runAgent(sys) {
  const agentModule = loadAgentModule();
  const main = agentModule === null || agentModule === undefined ? undefined : agentModule.default;
  if (typeof main !== 'function') return { kind: 'threw', thrown: noDefaultExport };
  await main(sys);
  return { kind: 'returned', vars: jsonText(sys.vars, 'sys.vars'), conv: jsonText(sys.conv, 'sys.conv') };
}

async function startRun(token, configText) {
  const config = parseJson(configText);
  const run = { token, pending: 0, trace: config.trace === true };
  current = run;
  seed = config.randomSeed >>> 0;
  // RegExp.$1 and friends are context-wide; clear what the previous run matched.
  apply(regExpExec, emptyPattern, ['']);
  let result;
  try {
    result = await runAgent(makeSys(run, config));
  } catch (err) {
    return toJson({ kind: 'threw', thrown: describeThrown(err) });
  }
  // Code the run left queued may still call the host before the host has this result; the host
  // counts those calls itself (agent-isolate.ts).
  if (result.kind === 'returned') result.reusable = run.pending === 0;
  return toJson(result);
}

return startRun;
`;
