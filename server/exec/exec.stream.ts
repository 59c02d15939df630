import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { ExecutionResponse } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import type { WebDeps } from '../deps.js';
import { executeAgent, planRun, type ExecCall } from './exec.service.js';

const keepAliveMs = 15_000;

/**
 * Answers a streamed call as `text/event-stream` (DESIGN §4 Streaming): `start`, then `part` and
 * `delta` as the agent makes them, then one `end` without `output`. A call refused before it ran
 * (unknown agent, busy conversation) ends with an `error` event carrying the error body instead.
 */
export async function streamExecution(deps: WebDeps, ctx: Context, call: ExecCall): Promise<void> {
  const ids = planRun(call);
  const stream = new PassThrough();
  let seq = 0;
  const send = (event: string, data: unknown) => {
    seq += 1;
    stream.write(`id: ${seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  ctx.set('Content-Type', 'text/event-stream');
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.set('X-Run-Id', ids.runId);
  ctx.status = 200;
  ctx.body = stream;
  send('start', { convid: ids.convid, agentName: call.body.agentName, runId: ids.runId });
  const keepAlive = setInterval(() => stream.write(': keep-alive\n\n'), keepAliveMs);
  void executeAgent(deps, call, (event) => send(event.event, event.data), ids)
    .then((response) => send('end', withoutOutput(response)))
    .catch((err) => {
      const error = err instanceof AppError ? err : new AppError('internal', 'An internal error occurred.');
      if (error.code === 'internal') deps.logger.error({ err, requestId: call.requestId }, 'streamed run failed');
      send('error', { error: { code: error.code, message: error.message } });
    })
    .finally(() => {
      clearInterval(keepAlive);
      stream.end();
    });
}

function withoutOutput(response: ExecutionResponse): Omit<ExecutionResponse, 'output'> {
  const { output: _output, ...rest } = response;
  return rest;
}
