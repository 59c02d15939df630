import type { JsonObject } from '../../shared/api.js';
import { findUnacceptableJson, maxJsonDepth } from '../../shared/storable-text.js';
import { AgentFault } from './error-codes.js';

/** Combined JSON size of sys.vars and sys.conv a run may leave behind. */
export const maxVariableBytes = 1024 * 1024;

export interface Variables {
  vars: JsonObject;
  conv: JsonObject;
}

/**
 * Reads the variables as the isolate serialised them (bootstrap/sys.ts refuses functions and symbols
 * there, so what arrives is JSON text) and enforces the size cap.
 */
export function readVariables(varsText: unknown, convText: unknown): Variables {
  if (typeof varsText !== 'string' || typeof convText !== 'string') throw new AgentFault('sys.vars and sys.conv must be plain objects');
  const size = Buffer.byteLength(varsText) + Buffer.byteLength(convText);
  if (size > maxVariableBytes) {
    throw new AgentFault(`variables too large: sys.vars and sys.conv take ${size} bytes as JSON, at most ${maxVariableBytes} are kept`);
  }
  const variables = { vars: JSON.parse(varsText) as JsonObject, conv: JSON.parse(convText) as JsonObject };
  for (const scope of ['vars', 'conv'] as const) {
    const found = findUnacceptableJson(variables[scope], maxJsonDepth);
    if (found?.problem === 'depth') {
      throw new AgentFault(`sys.${scope} is nested deeper than ${maxJsonDepth} levels (at sys.${[scope, ...found.path.slice(0, 3)].join('.')}…)`);
    }
    if (found) {
      const what = found.problem === 'fieldName' ? 'has a field name with' : 'holds';
      throw new AgentFault(`sys.${[scope, ...found.path].join('.')} ${what} U+0000 or an unpaired surrogate, which cannot be stored`);
    }
  }
  return variables;
}
