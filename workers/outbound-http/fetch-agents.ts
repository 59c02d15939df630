import http from 'node:http';
import https from 'node:https';

/**
 * Keep-alive connections for sys.fetch. An LLM agent calls the same API run after run; a new TCP (and
 * TLS) connection each time costs more CPU than the rest of the call. Connections are pooled per
 * caller and per destination rules: a socket was opened through the guarded lookup of those rules
 * (http-fetch.ts), and the pool it goes back to serves only requests under the same rules, so reusing
 * it skips no check; and no caller's request ever travels on a connection another caller's agent
 * opened or framed. Node gives a socket back only after a complete response, and destroys one a
 * request failed on.
 */

/** Pools kept at once, least recently used closed first. */
const maxPools = 512;
/**
 * Idle connections kept per pool and destination: Node's default. A caller's runs that fetched
 * together end together; with 16, a thousand concurrent streams to one API opened a new connection
 * for half their runs.
 */
const maxFreeSockets = 256;
/** An idle connection is closed after this long. */
const idleSocketMs = 15_000;

const pools = new Map<string, http.Agent>();

/** The pool for requests of this scheme, caller and rules (`key` names the caller and the rules). */
export function fetchAgent(protocol: 'http:' | 'https:', key: string): http.Agent {
  const name = `${protocol}\0${key}`;
  const pool = pools.get(name);
  if (pool) {
    // Most recently used last.
    pools.delete(name);
    pools.set(name, pool);
    return pool;
  }
  const options = { keepAlive: true, maxFreeSockets, timeout: idleSocketMs, scheduling: 'lifo' as const };
  const created = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  pools.set(name, created);
  for (const [oldest, agent] of pools) {
    if (pools.size <= maxPools) break;
    pools.delete(oldest);
    agent.destroy();
  }
  return created;
}

/** The pool key of a run: its caller, and its destination rules as configured. */
export function fetchPoolKey(caller: { kind: string; id: string }, httpAllow: readonly string[]): string {
  return `${caller.kind}:${caller.id}\0${httpAllow.join(' ')}`;
}
