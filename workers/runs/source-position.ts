import { SourceMapConsumer } from 'source-map-js';
import type { SandboxError } from '../sandbox/sandbox.types.js';

/**
 * The error with its line and column moved from the compiled code to the agent's own source
 * (1-based both). A position the source map cannot place is dropped: none is better than a wrong one.
 */
export function mapErrorToSource(error: SandboxError, sourceMap: string): SandboxError {
  const { line, column, ...rest } = error;
  if (line === undefined || column === undefined || !sourceMap) return rest;
  try {
    const consumer = new SourceMapConsumer(JSON.parse(sourceMap));
    const original = consumer.originalPositionFor({ line, column: column - 1, bias: SourceMapConsumer.GREATEST_LOWER_BOUND });
    if (original.line == null || original.column == null) return rest;
    return { ...rest, line: original.line, column: original.column + 1 };
  } catch {
    return rest;
  }
}
