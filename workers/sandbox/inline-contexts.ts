import { loadAgentContext, type AgentContext } from './agent-context.js';
import type { ContextPool } from './context-pool.js';
import { turnToLoad } from './load-turns.js';
import type { TenancyKey } from './sandbox-isolate.js';
import type { InlineEntry } from './sandbox.types.js';

/** How long an inline run waits for a context of its key that is being loaded or used, before it goes elsewhere. */
const inlineWaitMs = 250;

/**
 * How often a waiting run asks whether it is still to be tried here (InlineEntry `stillTried`): a
 * burst of a caller's calls of an agent known short all wait for the one context the first of them
 * loads (of an agent not known short, only a probe or two are tried: inline-admission.ts), and once
 * that one turned out to wait on the host, the others go to the queue within this, not after inlineWaitMs.
 */
const retryCheckMs = 20;

/**
 * A context for an inline run (run-sandbox.ts runSandboxInline). Inline runs are over before the next one starts,
 * so one warm context per caller and agent serves them all: a run that finds none while one is loaded
 * or used for its key waits for it (up to inlineWaitMs, then 'busy'); one that finds none at all has
 * one loaded (`load`), if its caller lets it. The successor of a context about to retire is loaded
 * before it does, or the runs meanwhile would have none. 'stopped' when the run ended while it waited.
 */
export async function inlineContext<Loaded>(
  pool: ContextPool,
  key: TenancyKey,
  inline: InlineEntry,
  { load, stopped }: { load(): Promise<Loaded>; stopped(): boolean },
): Promise<{ agent: AgentContext } | Loaded | 'busy' | 'stopped'> {
  const deadline = Date.now() + inlineWaitMs;
  for (let warm = takeEnterable(pool, key); ; warm = takeEnterable(pool, key)) {
    if (warm) {
      if (pool.lastBeforeRetiring(warm) && !succeeded.has(warm) && inline.mayLoad()) {
        succeeded.add(warm);
        void preload(pool, key);
      }
      return { agent: warm };
    }
    if (!pool.busy(key)) break;
    if (Date.now() >= deadline || inline.stillTried?.() === false) return 'busy';
    await pool.nextGiven(key, Math.min(retryCheckMs, deadline - Date.now()));
    if (stopped()) return 'stopped';
  }
  if (inline.stillTried?.() === false) return 'busy';
  if (!inline.mayLoad()) return 'busy';
  const over = pool.expectLoad(key);
  try {
    return await load();
  } finally {
    over();
  }
}

/**
 * A warm context for an inline run, from an isolate that may still be entered synchronously: one with
 * a context discarded never is again (sandbox-isolate.ts `restless`), so it is retired, and a new
 * context goes into another.
 */
function takeEnterable(pool: ContextPool, key: TenancyKey): AgentContext | undefined {
  for (let agent = pool.take(key); agent; agent = pool.take(key)) {
    if (!agent.sandbox.restless) return agent;
    pool.retire(agent.sandbox);
    pool.discard(agent);
  }
  return undefined;
}

/** Contexts about to retire whose successor was asked for. */
const succeeded = new WeakSet<AgentContext>();

/**
 * Loads a context for `key` into the pool for the inline runs to come (a cold start like any, taking
 * its turn), in an isolate of its own as their loads are (run-sandbox.ts loadContext).
 */
async function preload(pool: ContextPool, key: TenancyKey): Promise<void> {
  const over = pool.expectLoad(key);
  try {
    const { sandbox, loading } = await turnToLoad(() => {
      const made = pool.isolateFor(key, { alone: true });
      return { sandbox: made, loading: loadAgentContext(made) };
    });
    const loaded = await loading.catch(() => undefined);
    if (loaded?.ok) pool.give(loaded.agent);
    else pool.vacate(sandbox);
  } finally {
    over();
  }
}
