import type { Context } from 'koa';
import type { ResultCode } from '../../shared/api.js';

/**
 * What a route tells the usage report about its call, where the recorder cannot read it from the
 * request body or a JSON response body (usage-recorder.ts).
 */
export interface CallUsage {
  /** The agent the call ran, when the body does not name it (a draft validation names its draft's agent). */
  agentName?: string;
  /** How the call ended, when no JSON body carries it (a stream, at its `end` event). */
  resultCode?: ResultCode;
}

/** The one entry of `ctx.state` the usage hand-off uses; only this module reads or writes it. */
interface UsageState {
  usage?: CallUsage;
}

/** Tells the usage report what the call ran and how it ended (what is given replaces what was told before). */
export function recordUsageOf(ctx: Context, usage: CallUsage): void {
  const state = ctx.state as UsageState;
  state.usage = { ...state.usage, ...usage };
}

/** What the call's route told the usage report (nothing, for most calls). */
export function usageOf(ctx: Context): CallUsage {
  return (ctx.state as UsageState).usage ?? {};
}
