import type { ExecutionResponse } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { executionResponse } from '../../runs/execution-response.js';
import { maxPriority } from '../../runs/fair-priority.js';
import { maskableValues } from '../../shared/agent-secrets.js';
import { runSandbox, runSandboxInline } from '../sandbox/run-sandbox.js';
import type { SandboxEnding } from '../sandbox/sandbox-endings.js';
import type { InlineDeclined, InlineEntry, SandboxError, SandboxRun } from '../sandbox/sandbox.types.js';
import { agentCallsOf } from './agent-calls.js';
import { draftRunResponse, secretSetOf } from './draft-runs.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import type { RunStart } from './run-start.js';
import { createSourceMapper, mapErrorToSource, type SourceMapper } from './source-position.js';
import { createTraceRecorder, passwordAnswers, type TraceRecorder } from './trace-recorder.js';
import { createTimelineRecorder, type TimelineRecorder } from './timeline-recorder.js';

/** An agent's run in the sandbox: how it ended, where its positions are in the source, and for a draft what it traced. */
export interface AgentRun {
  ending: SandboxEnding;
  toSource: SourceMapper;
  trace?: TraceRecorder;
  /** What it fetched, asked and logged (shared/run-timeline.ts). */
  timeline: TimelineRecorder;
}

/**
 * Runs the agent in the sandbox from `start`, with no database connection held. A logged run sends its
 * parts (and a draft's trace events) to `sink` as they are made. `hold`: see SandboxRun.
 */
export async function runAgent(
  deps: RunDeps,
  data: RunJobData,
  start: RunStart,
  sink: RunEventSink,
  signal: AbortSignal,
  { hold }: Pick<SandboxRun, 'hold'> = {},
): Promise<AgentRun> {
  // Its start waits its fair turn among the runs this worker holds, until it first waits on the host.
  const started = deps.startGate ? await deps.startGate.enter(data.priority ?? maxPriority) : undefined;
  try {
    const { run, toSource, trace, timeline } = await sandboxRunOf(deps, data, start, sink, signal, hold, started);
    return { ending: await runSandbox(run, deps.isolates), toSource, trace, timeline };
  } finally {
    started?.();
  }
}

/** An inline run (run-sandbox.ts runSandboxInline): run as runAgent runs one, or declined. */
export async function runAgentInline(
  deps: RunDeps,
  data: RunJobData,
  start: RunStart,
  sink: RunEventSink,
  signal: AbortSignal,
  { hold, inline }: { hold: PromiseLike<unknown>; inline: InlineEntry },
): Promise<AgentRun | InlineDeclined> {
  const { run, toSource, trace, timeline } = await sandboxRunOf(deps, data, start, sink, signal, hold);
  const ending = await runSandboxInline(run, inline, deps.isolates);
  return 'declined' in ending ? ending : { ending, toSource, trace, timeline };
}

/**
 * The sandbox run of `start`, with its source mapper, its timeline and (for a draft) its trace recorder.
 * `onWait` is set here, not spread in after: a spread copy of this object is a hidden class of its own
 * each time, held by the run while it waits.
 */
async function sandboxRunOf(
  deps: RunDeps,
  data: RunJobData,
  start: RunStart,
  sink: RunEventSink,
  signal: AbortSignal,
  hold: PromiseLike<unknown> | undefined,
  onWait?: SandboxRun['onWait'],
): Promise<{ run: SandboxRun; toSource: SourceMapper; trace: TraceRecorder | undefined; timeline: TimelineRecorder }> {
  const toSource = createSourceMapper(start.agent.sourceMap);
  const secrets = await deps.secrets.get(deps.db, data.agentName, secretSetOf(data));
  const unshown = [...maskableValues(secrets), ...passwordAnswers(start.journal)];
  // A streamed validation sends each trace event as it happens; a non-streamed one answers with them all.
  const trace = data.draft ? createTraceRecorder({ toSource, secrets: unshown, emit: data.events.kind === 'log' ? sink.trace : undefined }) : undefined;
  const timeline = createTimelineRecorder(unshown);
  const run: SandboxRun = {
    code: start.agent.code,
    agentName: data.agentName,
    convid: data.convid,
    inputs: start.state.inputs,
    caller: { kind: data.caller.kind, id: data.caller.id, role: data.caller.role },
    history: start.state.history,
    vars: start.state.vars,
    conv: start.state.conv,
    randomSeed: start.state.randomSeed,
    journal: start.journal,
    memoryMb: deps.config.agentMemoryMb,
    maxRuntimeMs: deps.config.maxAgentRuntimeMs,
    cpuMs: deps.config.agentCpuMs,
    fresh: data.draft !== undefined,
    signal,
    hold,
    httpAllow: deps.config.agentHttpAllow,
    agentCalls: deps.childRuns && agentCallsOf(deps.childRuns, deps.config, data),
    secrets,
    onPart: data.events.kind === 'log' ? sink.part : undefined,
    onDelta: data.events.kind === 'log' ? sink.delta : undefined,
    onTrace: trace?.onTrace,
    onTimeline: timeline.onTimeline,
    onWait,
  };
  return { run, toSource, trace, timeline };
}

/**
 * The execution response of a run (with `ending` in place of the sandbox's when the session check
 * before the commit ended it): its error at its place in the agent's source, without the stack; for a
 * draft, the validation fields with the stack and trace.
 */
export function responseOfRun(data: RunJobData, ran: AgentRun, ending: SandboxEnding): ExecutionResponse {
  const error = 'error' in ending ? ending.error : undefined;
  const response = executionResponse(data, ending.resultCode, {
    output: ending.output,
    error: error && publicError(mapErrorToSource(error, ran.toSource)),
    askInput: ending.resultCode === 'ask' ? ending.askInput : undefined,
  });
  if (!data.draft) return response;
  return draftRunResponse(data, response, { error, toSource: ran.toSource, trace: ran.trace?.events ?? [] });
}

/** The error as a response carries it: no stack (a draft validation shows it as runtimeError). */
function publicError({ stack: _stack, ...error }: SandboxError): ExecutionResponse['error'] {
  return error;
}
