import type { Config } from '../../shared/config.js';
import type { RunJobData } from '../../shared/jobs.js';
import { shardsOf, uuidFrom } from '../../shared/shards.js';
import type { AgentCalls } from '../sandbox/sandbox.types.js';
import type { ChildRuns } from './child-runs.js';

/**
 * sys.call's way out of one run (SandboxRun.agentCalls). A child's ids are a hash of the run's id and
 * the call's place in the run's journal: a run tried again with the same id (a run started over, a
 * speculation run again) makes the same calls in the same places, so it names the same children. A
 * child with no conversation named gets a new one whose id is fixed the same way.
 */
export function agentCallsOf(childRuns: ChildRuns, config: Pick<Config, 'queuePrefix' | 'redisShards'>, data: RunJobData): AgentCalls {
  // One per job, whichever try of its run asks (the job's data is the same object in each).
  let calls = ofJob.get(data);
  if (!calls) ofJob.set(data, (calls = makeAgentCalls(childRuns, config, data)));
  return calls;
}

const ofJob = new WeakMap<RunJobData, AgentCalls>();

function makeAgentCalls(childRuns: ChildRuns, config: Pick<Config, 'queuePrefix' | 'redisShards'>, data: RunJobData): AgentCalls {
  // While it waits on children the run lends its place in the worker to them (fetch-window.ts), once however many it waits on.
  let waitingOn = 0;
  let giveBack: (() => void) | undefined;
  // The children the job's run has started: a try of it run again from the top (an entry interrupted,
  // a commit on a version replaced meanwhile) calls them live again. A live call not in here names a
  // child no run started: its job and record need no look (jobs are never retried, DESIGN §4).
  const started = new Set<string>();
  const run: AgentCalls['run'] = async (child, signal) => {
    const fresh = child.live && !started.has(child.runId);
    started.add(child.runId);
    // Lent once the child waits in the queue (or runs elsewhere): a child run here needs no place.
    let lent = false;
    const waits = () => {
      if (lent) return;
      lent = true;
      if (waitingOn++ === 0) giveBack = childRuns.lendPlace();
    };
    try {
      return await childRuns.run(data, { ...child, live: fresh }, signal, waits);
    } finally {
      if (lent && --waitingOn === 0) giveBack?.();
    }
  };
  return {
    depth: data.parent?.depth ?? 0,
    childOf(callNumber, convid) {
      const seed = `${data.runId}/call/${callNumber}`;
      const childConvid = convid ?? uuidFrom(`${seed}/conversation`);
      return { runId: shardsOf(config).runIdFrom(seed, childConvid), convid: childConvid };
    },
    run,
  };
}
