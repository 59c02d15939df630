import type { ApiClient } from './client.js';
import type { Profile } from './options.js';
import { callHello } from './scenarios/hello.js';
import { runConcurrent } from './stats.js';

/**
 * `profile.stackWarmupCalls` hello calls at the profile's concurrency, made once the stack is up and
 * before anything is measured (options.ts says why); a line for the notes: how many, and how fast.
 */
export async function warmUpStack(client: ApiClient, profile: Profile): Promise<string> {
  const load = await runConcurrent(profile.stackWarmupCalls, profile.concurrency, (i) => callHello(client, `stack-warm${i}`));
  return `the stack was warmed with ${load.count} hello calls, ${profile.concurrency} in flight, before anything was measured (${Math.round(load.callsPerSecond)} calls/s, p50 ${load.p50.toFixed(1)} ms)`;
}
