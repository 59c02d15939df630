import { SourceMapConsumer } from 'source-map-js';
import { agentFileName } from '../sandbox/error-codes.js';
import type { CodeSite, SandboxError } from '../sandbox/sandbox.types.js';

/** Moves a position in the compiled code to the agent's own source (1-based both); null when the map cannot place it. */
export type SourceMapper = (site: CodeSite) => CodeSite | null;

/** A mapper for one compiled agent; parses the map on first use. */
export function createSourceMapper(sourceMap: string): SourceMapper {
  let consumer: SourceMapConsumer | null | undefined;
  return ({ line, column }) => {
    if (consumer === undefined) consumer = parseSourceMap(sourceMap);
    if (!consumer) return null;
    const original = consumer.originalPositionFor({ line, column: column - 1, bias: SourceMapConsumer.GREATEST_LOWER_BOUND });
    if (original.line == null || original.column == null) return null;
    return { line: original.line, column: original.column + 1 };
  };
}

function parseSourceMap(sourceMap: string): SourceMapConsumer | null {
  if (!sourceMap) return null;
  try {
    return new SourceMapConsumer(JSON.parse(sourceMap));
  } catch {
    return null;
  }
}

/**
 * The error with its line and column moved from the compiled code to the agent's own source.
 * A position the source map cannot place is dropped: none is better than a wrong one.
 */
export function mapErrorToSource(error: SandboxError, toSource: SourceMapper): SandboxError {
  const { line, column, ...rest } = error;
  if (line === undefined || column === undefined) return rest;
  const original = toSource({ line, column });
  return original ? { ...rest, ...original } : rest;
}

const compiledFramePattern = `\\b${agentFileName.replace('.', '\\.')}:(\\d+):(\\d+)`;

/**
 * A stack with every frame in the compiled code pointing at `fileName` in the agent's own source, and
 * the sandbox's own frames left out (they say nothing about the agent).
 */
export function mapStackToSource(stack: string, toSource: SourceMapper, fileName: string): string {
  const inAgent = new RegExp(compiledFramePattern);
  const frames = new RegExp(compiledFramePattern, 'g');
  return stack
    .split('\n')
    .filter((line) => !/^\s+at\s/.test(line) || inAgent.test(line))
    .map((line) =>
      line.replace(frames, (_match, l: string, c: string) => {
        const original = toSource({ line: Number(l), column: Number(c) });
        return original ? `${fileName}:${original.line}:${original.column}` : fileName;
      }),
    )
    .join('\n');
}
