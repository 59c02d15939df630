import type { OutputPart } from '../../shared/api.js';
import { AgentFault, AgentTypeError } from './error-codes.js';

/**
 * Total output an agent may make in one run, in UTF-8 bytes. A run's output is copied whole some eight
 * times on its way (the isolate, the execution record, the end event, Redis, the web process, the
 * answer): at 8 MiB one answer held a process's event loop for 150-280 ms on the development VM, which
 * DESIGN §12 does not allow (/healthz within 100 ms while an agent floods its output).
 */
export const maxOutputBytes = 1024 * 1024;
/** Empty parts cost no bytes; this bounds them too. */
export const maxOutputParts = 100_000;

/** The output parts of one run, as collected on the host. */
export interface Output {
  parts: OutputPart[];
  bytes: number;
  limit: number;
}

/** A change to the output, for reporting live (onPart / onDelta). */
export type OutputChange = { kind: 'part'; part: OutputPart } | { kind: 'delta'; text: string };

export class OutputTooLargeError extends AgentFault {
  override name = 'OutputTooLargeError';
  constructor(detail: string) {
    super(`output too large: ${detail}`);
  }
}

export function createOutput(limit = maxOutputBytes): Output {
  return { parts: [], bytes: 0, limit };
}

/** Adds a part; throws OutputTooLargeError (nothing added) when it would pass the limit. */
export function addPart(output: Output, part: OutputPart): OutputChange {
  if (output.parts.length >= maxOutputParts) throw new OutputTooLargeError(`at most ${maxOutputParts} output parts`);
  charge(output, partBytes(part));
  output.parts.push(part);
  return { kind: 'part', part: { ...part } };
}

/** sys.write: appends to the last part when it is text, else starts a new text part. */
export function writeText(output: Output, text: string): OutputChange {
  const last = output.parts[output.parts.length - 1];
  if (last?.type !== 'text') return addPart(output, { type: 'text', text });
  charge(output, Buffer.byteLength(text));
  last.text += text;
  return { kind: 'delta', text };
}

/** An image part: a URL for http(s) sources, else base64 data (a data: URL is unwrapped). */
export function imagePart(source: string, mimeType: string | null): OutputPart {
  if (/^https?:\/\//i.test(source)) return { type: 'image', mimeType: mimeType ?? guessMimeType(source), url: source };
  if (/^data:/i.test(source)) {
    const dataUrl = /^data:([^;,]*);base64,(.*)$/is.exec(source);
    if (!dataUrl) throw new AgentTypeError('sys.image: a data: URL must be base64 encoded');
    return { type: 'image', mimeType: mimeType ?? (dataUrl[1] || 'application/octet-stream'), data: dataUrl[2] ?? '' };
  }
  return { type: 'image', mimeType: mimeType ?? 'application/octet-stream', data: source };
}

function guessMimeType(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  const known: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml' };
  return (ext && known[ext]) ?? 'application/octet-stream';
}

function charge(output: Output, bytes: number): void {
  if (output.bytes + bytes > output.limit) throw new OutputTooLargeError(`at most ${output.limit} bytes of output`);
  output.bytes += bytes;
}

function partBytes(part: OutputPart): number {
  switch (part.type) {
    case 'text':
      return Buffer.byteLength(part.text);
    case 'html':
      return Buffer.byteLength(part.html);
    case 'image':
      return 'url' in part ? Buffer.byteLength(part.url) : Buffer.byteLength(part.data);
  }
}
