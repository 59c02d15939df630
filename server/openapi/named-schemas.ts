import { z } from 'zod';
import * as api from '../../shared/api.schemas.js';
import { compileErrorSchema, validationResponse, validationStreamEnd } from '../../shared/draft-validation.js';
import { traceEvent } from '../../shared/trace.js';

/** Any JSON value: agent inputs, trace values. One name for every z.json() in the API (json-schemas.ts). */
export const jsonValue = z.json();

/**
 * The schemas the document names under components.schemas, by name: the shapes that several endpoints
 * or events share, and those a client is likely to want a type of. Everything else is written out in
 * place. Requests and responses are converted separately (as the server reads them, as it writes them),
 * so each side has its own list; a name may be on both sides only for the same shape.
 */
export const namedRequestSchemas: Readonly<Record<string, z.ZodType>> = {
  JsonValue: jsonValue,
};

export const namedResponseSchemas: Readonly<Record<string, z.ZodType>> = {
  JsonValue: jsonValue,
  ResultCode: api.resultCode,
  Role: api.role,
  Plan: api.plan,
  OutputPart: api.outputPart,
  InputDescriptor: api.inputDescriptor,
  AskInput: api.askInput,
  ExecutionError: api.executionError,
  ExecutionResponse: api.executionResponse,
  ErrorBody: api.errorBody,
  UserProfile: api.userProfile,
  ConversationSummary: api.conversationSummary,
  StreamStart: api.streamStart,
  StreamDelta: api.streamDelta,
  StreamEnd: api.streamEnd,
  ValidationStreamEnd: validationStreamEnd,
  ValidationResponse: validationResponse,
  CompileError: compileErrorSchema,
  TraceEvent: traceEvent,
};
