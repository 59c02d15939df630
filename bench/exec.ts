import type { ExecutionResponse, JsonObject, ResultCode } from '../shared/api.js';
import { jsonOf, type ApiClient, type SseCall } from './client.js';

/** The execution endpoints as a caller sees them (DESIGN §4). */

export interface ExecBody {
  agentName: string;
  inputs?: JsonObject;
  convid?: string;
}

const execAgentPath = '/api/exec/execAgent';
const cancelPath = '/api/exec/cancel';

/** One non-streamed execAgent call; an HTTP error or another resultCode than `expected` throws. */
export async function execAgent(client: ApiClient, body: ExecBody, expected: ResultCode = 'success', headers?: Record<string, string>): Promise<ExecutionResponse> {
  const answer = await client.post(execAgentPath, body, headers);
  if (answer.status !== 200) throw new Error(`execAgent ${body.agentName} answered HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
  const response = jsonOf<ExecutionResponse>(answer);
  if (response.resultCode !== expected) {
    throw new Error(`execAgent ${body.agentName} ended ${response.resultCode}, expected ${expected}: ${answer.text.slice(0, 300)}`);
  }
  return response;
}

/** A streamed execAgent call (`stream: true`). */
export function streamAgent(client: ApiClient, body: ExecBody): SseCall {
  return client.stream(execAgentPath, { ...body, stream: true });
}

/** Cancels the conversation's running or queued call; whether there was one to cancel. */
export async function cancelConversation(client: ApiClient, convid: string): Promise<boolean> {
  const answer = await client.post(cancelPath, { convid });
  if (answer.status !== 200) throw new Error(`cancel answered HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
  const { cancelled } = jsonOf<{ cancelled?: unknown }>(answer);
  if (typeof cancelled !== 'boolean') throw new Error(`cancel answered without a boolean cancelled: ${answer.text.slice(0, 300)}`);
  return cancelled;
}

/** The JSON data of an SSE event. */
export function dataOf<T>(event: { event: string; data: string }): T {
  try {
    return JSON.parse(event.data) as T;
  } catch {
    throw new Error(`the ${event.event} event's data is not JSON: ${event.data.slice(0, 200)}`);
  }
}

/** A short account of a stream's events, for error messages. */
export function describeEvents(events: readonly { event: string; data: string }[]): string {
  const last = events.at(-1);
  return `events [${events.map((e) => e.event).join(', ')}]${last ? `, last data ${last.data.slice(0, 200)}` : ''}`;
}
