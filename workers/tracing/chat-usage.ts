import type { Attributes } from '@opentelemetry/api';

/**
 * What a span of a call to an OpenAI-compatible `/chat/completions` (DESIGN §13, §18) says of it: the
 * GenAI conventions' `chat {model}`, with the model asked for and, once the response reports it, the
 * token usage. Never the messages or the answer.
 */
export interface ChatCall {
  model: string | undefined;
}

/** The chat call `request` makes, or null when it is not a POST to a `/chat/completions` path. */
export function chatCallOf(request: { method: string; url: string; body: string | null }): ChatCall | null {
  if (request.method !== 'POST' || !new URL(request.url).pathname.endsWith('/chat/completions')) return null;
  let model: unknown;
  try {
    model = (JSON.parse(request.body ?? '') as { model?: unknown }).model;
  } catch {
    model = undefined;
  }
  return { model: typeof model === 'string' && model.length <= 200 ? model : undefined };
}

export function chatAttributes(call: ChatCall): Attributes {
  return { 'gen_ai.operation.name': 'chat', ...(call.model ? { 'gen_ai.request.model': call.model } : {}) };
}

export function chatSpanName(call: ChatCall): string {
  return call.model ? `chat ${call.model}` : 'chat';
}

/** The token usage a whole JSON response reports (`usage.prompt_tokens`, `usage.completion_tokens`). */
export function usageOfResponse(text: string): Attributes {
  try {
    return usageAttributes(JSON.parse(text));
  } catch {
    return {};
  }
}

/** The token usage the last event of a streamed response reports (with `stream_options.include_usage`); its last chunks suffice. */
export function usageOfStream(chunks: readonly string[]): Attributes {
  const lines = chunks.slice(-4).join('').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.startsWith('data:') || !line.includes('"usage"')) continue;
    const usage = usageOfResponse(line.slice(5).trim());
    if (Object.keys(usage).length > 0) return usage;
  }
  return {};
}

function usageAttributes(body: unknown): Attributes {
  const usage = typeof body === 'object' && body !== null ? (body as { usage?: unknown }).usage : undefined;
  if (typeof usage !== 'object' || usage === null) return {};
  const { prompt_tokens: input, completion_tokens: output } = usage as Record<string, unknown>;
  return {
    ...(typeof input === 'number' ? { 'gen_ai.usage.input_tokens': input } : {}),
    ...(typeof output === 'number' ? { 'gen_ai.usage.output_tokens': output } : {}),
  };
}
