import { SpanKind } from '@opentelemetry/api';
import { runQueueName } from '../../shared/channels.js';
import type { RunJobData } from '../../shared/jobs.js';
import { tracingEnabled } from '../../shared/tracing-enabled.js';
import { activeTraceparent, markFailed, tracer } from '../../runs/child-span.js';

/**
 * Queues a run within a producer span `send runs` (DESIGN §18, the messaging conventions), a child of
 * the call's span; the job carries that span's context (`traceparent`), which the run's own trace
 * links to. Without tracing, just queues it.
 */
export async function enqueueInSpan<T>(data: RunJobData, enqueue: () => Promise<T>): Promise<T> {
  if (!tracingEnabled) return enqueue();
  return tracer.startActiveSpan(
    `send ${runQueueName}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'bullmq',
        'messaging.operation.type': 'send',
        'messaging.destination.name': runQueueName,
        'messaging.message.id': data.runId,
        'gen_ai.agent.name': data.agentName,
        'gen_ai.conversation.id': data.convid,
      },
    },
    async (span) => {
      data.traceparent = activeTraceparent();
      try {
        return await enqueue();
      } catch (err) {
        markFailed(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

