import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Link } from '@opentelemetry/api';
import type { RunJobData } from '../../shared/jobs.js';
import { tracingEnabled } from '../../shared/tracing-enabled.js';
import { markFailed, tracer } from '../../runs/child-span.js';
import type { RunEnding } from '../../runs/run-endings.js';

/**
 * Runs `run` as a trace of its own (DESIGN §18): a span `invoke_agent {agentName}` (the GenAI
 * conventions' agent invocation) linked to the span that enqueued it (the job's `traceparent`, or the
 * call's span for a run the web process answers itself), never its child: a run's trace ends with the
 * run. Everything the run does within `run` (its sys calls, its commit, its PostgreSQL and Redis
 * calls, its log lines) belongs to it. Without tracing, just runs `run`.
 *
 * `handedOn`, when given, tells from `run`'s result that the run was not run here after all (a web
 * process's inline attempt that left it to the queue): its span is then dropped, never ended and so
 * never exported, as the worker that runs it makes the run's one span.
 */
export async function traceRun<T>(data: RunJobData, run: () => Promise<T>, handedOn?: (result: T) => boolean): Promise<T> {
  if (!tracingEnabled) return run();
  const span = tracer.startSpan(`invoke_agent ${data.agentName}`, {
    kind: SpanKind.INTERNAL,
    root: true,
    links: linksOf(data),
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': data.agentName,
      'gen_ai.conversation.id': data.convid,
      'agentexec.run.id': data.runId,
      ...(data.draft ? { 'agentexec.run.draft': true } : {}),
      ...(data.background ? { 'agentexec.run.background': true } : {}),
    },
  });
  let result: T;
  try {
    result = await context.with(trace.setSpan(ROOT_CONTEXT, span), run);
  } catch (err) {
    markFailed(span, err);
    span.end();
    throw err;
  }
  if (!handedOn?.(result)) span.end();
  return result;
}

/** Records how the run in the active run span ended: its result code, or the refusal's error code. */
export function recordRunEnd(result: RunEnding | undefined | { queue: string } | { withdrawn: true }): void {
  if (!tracingEnabled || !result || 'queue' in result) return;
  const span = trace.getSpan(context.active());
  if (!span) return;
  if ('withdrawn' in result) span.setAttribute('agentexec.run.withdrawn', true);
  else if (result.kind === 'response') span.setAttribute('agentexec.run.result_code', result.response.resultCode);
  else span.setAttribute('agentexec.run.refused', result.code);
}

function linksOf(data: RunJobData): Link[] {
  const from = data.traceparent ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent: data.traceparent })) : trace.getSpanContext(context.active());
  return from ? [{ context: from }] : [];
}
