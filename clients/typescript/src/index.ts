export { AdminApi } from './admin.js';
export { AgentexecClient, type AgentexecClientOptions, type CallOptions, type CancelTarget } from './client.js';
export {
  AgentexecError,
  ConversationBusyError,
  ForbiddenError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
} from './errors.js';
export { assembleResponse, type RunStream } from './run-response.js';
export { createEventStreamParser, type EventStreamParser, type ServerSentEvent } from '../../../shared/server-sent-events.js';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions } from './webhooks.js';
export type * from './types.js';
export type * from './admin-types.js';
