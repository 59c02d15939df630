import { maskedValue } from '../../shared/agent-secrets.js';
import { tracedCalls, type TracedCall } from '../../shared/trace.js';
import type { Answers, AskInput } from '../../shared/api.js';
import { normaliseAskSpec } from './ask-spec.js';
import { isReplaying } from './journal.js';
import type { FetchResult } from '../outbound-http/http-fetch.js';
import type { CodeSite, SandboxTrace } from './sandbox.types.js';
import { hasEnded, type Session } from './session.js';

/**
 * The host side of tracing (draft validation, SandboxRun.onTrace): turns the sys calls the isolate
 * makes into trace events. Nothing is traced while a resumed run replays, except the answers its ask
 * gets; nothing after the run has ended.
 */

type Payload = Record<string, unknown>;

const credentialHeaders = /^(authorization|proxy-authorization|cookie|x-api-key)$/i;

export function isTracing(session: Session): boolean {
  return session.run.onTrace !== undefined;
}

/** Traces a sync sys call around its handler (`now` also gets its result). */
export function traceSyncCall(session: Session, op: string, payload: Payload, handle: () => unknown): unknown {
  if (op === 'log') {
    if (typeof payload.line === 'string') emit(session, { kind: 'log', text: payload.line, site: readSite(payload.site) });
    return handle();
  }
  if (!isTracedCall(op)) return handle();
  const call = emitCall(session, op, payload);
  const value = handle();
  if (op === 'now') emitResult(session, op, call, readSite(payload.site), { value });
  return value;
}

/** Traces an async sys call: its call event now, its result (or error) when it settles. */
export async function traceAsyncCall(session: Session, op: string, payload: Payload, handle: () => Promise<unknown>): Promise<unknown> {
  if (!isTracedCall(op)) return handle();
  const call = emitCall(session, op, payload);
  const site = readSite(payload.site);
  try {
    const value = await handle();
    emitResult(session, op, call, site, { value: resultValue(op, payload, value) });
    return value;
  } catch (err) {
    emitResult(session, op, call, site, { error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
}

/** The `trace` op: a change of sys.vars or sys.conv reported by the isolate's proxies. */
export function traceVariableChange(session: Session, payload: Payload): void {
  const { scope, path, op } = payload;
  if (scope !== 'vars' && scope !== 'conv') return;
  if (op !== 'set' && op !== 'delete') return;
  if (!Array.isArray(path) || !path.every((key) => typeof key === 'string')) return;
  const change: SandboxTrace = { kind: 'var', scope, path, op, site: readSite(payload.site) };
  if (op === 'set') change.value = payload.value ?? null;
  emit(session, change);
}

function isTracedCall(op: string): op is TracedCall {
  return (tracedCalls as readonly string[]).includes(op);
}

/** The call event's number; null when the call replays an earlier one; undefined when not kept. */
function emitCall(session: Session, op: TracedCall, payload: Payload): number | null | undefined {
  if (isReplaying(session.journal)) return null;
  return emit(session, { kind: 'call', name: op, args: callArgs(op, payload), site: readSite(payload.site) });
}

function emitResult(session: Session, op: TracedCall, call: number | null | undefined, site: CodeSite | null, outcome: { value?: unknown; error?: string }): void {
  if (call === undefined) return;
  emit(session, { kind: 'result', name: op, call, site, ...outcome });
}

function emit(session: Session, event: SandboxTrace): number | undefined {
  if (hasEnded(session) || isReplaying(session.journal)) return undefined;
  return session.run.onTrace?.(event);
}

/** What the agent passed, without the bookkeeping the bootstrap adds (the site, ask's variable snapshots). */
function callArgs(op: TracedCall, payload: Payload): unknown {
  const { site: _site, ...args } = payload;
  if (op === 'ask') return { spec: payload.spec };
  // sys.call's inputs cross as the JSON text the isolate made of them.
  if (op === 'call' && typeof args.inputs === 'string') return { ...args, inputs: JSON.parse(args.inputs) as unknown };
  if (op === 'fetch' && isRecord(args.headers)) {
    const headers = Object.fromEntries(Object.entries(args.headers).map(([name, value]) => [name, credentialHeaders.test(name) ? maskedValue : value]));
    return { ...args, headers };
  }
  return args;
}

/** A fetch's result without its headers; an ask's answers with password answers masked. */
function resultValue(op: TracedCall, payload: Payload, value: unknown): unknown {
  if (op === 'fetch' && isRecord(value)) {
    if ('stream' in value) return { status: value.status, stream: true };
    const result = value as unknown as FetchResult;
    return { status: result.status, text: result.text };
  }
  if (op === 'ask' && isRecord(value)) return maskPasswords(askOf(payload), value as Answers);
  return value;
}

function askOf(payload: Payload): AskInput | undefined {
  try {
    return normaliseAskSpec(payload.spec);
  } catch {
    return undefined;
  }
}

function maskPasswords(ask: AskInput | undefined, answers: Answers): Answers {
  const secret = new Set(ask ? ask.inputs.filter((input) => input.type === 'password').map((input) => input.name) : Object.keys(answers));
  return Object.fromEntries(Object.entries(answers).map(([name, value]) => [name, secret.has(name) ? maskedValue : value]));
}

function readSite(site: unknown): CodeSite | null {
  if (!isRecord(site)) return null;
  const { line, column } = site;
  return Number.isInteger(line) && Number.isInteger(column) ? { line: line as number, column: column as number } : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
