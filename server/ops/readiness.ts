import { sql } from 'kysely';
import { readinessKey } from '../../shared/channels.js';
import type { WebDeps } from '../deps.js';

export type CheckState = 'ok' | 'unavailable';

/** The answer of GET /readyz: each dependency by name, no error details. */
export interface Readiness {
  ok: boolean;
  checks: { postgres: CheckState; redis: CheckState };
}

const checkTimeoutMs = 1000;

/**
 * Checks PostgreSQL (`select 1`) and Redis in parallel, each given about a second. Redis is asked about
 * a key of this installation's (EXISTS), not PINGed: on a cluster a PING goes to any node, while a key
 * goes to the master that holds this installation's keys, which is what the calls need.
 */
export async function checkReadiness(deps: Pick<WebDeps, 'db' | 'redis' | 'logger' | 'config'>): Promise<Readiness> {
  const [postgres, redis] = await Promise.all([
    check(deps, 'postgres', () => sql`select 1`.execute(deps.db)),
    check(deps, 'redis', () => deps.redis.exists(readinessKey(deps.config.queuePrefix))),
  ]);
  return { ok: postgres === 'ok' && redis === 'ok', checks: { postgres, redis } };
}

async function check(deps: Pick<WebDeps, 'logger'>, dependency: string, probe: () => Promise<unknown>): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${checkTimeoutMs} ms`)), checkTimeoutMs);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch (err) {
    deps.logger.warn({ dependency, err: String(err) }, 'readiness check failed');
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}
