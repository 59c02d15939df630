import type { ResultCode } from './api/types';

/** What each result code (spec §7) means to the person who ran the agent. */
export const resultMessages: Record<ResultCode, string> = {
  success: 'Done.',
  ask: 'The agent needs a few answers to go on.',
  callFailed: 'The agent could not reach a service it depends on. Try again later.',
  failCommand: 'The agent stopped with an error.',
  errorInAgent: 'The agent has a programming error. Its developer has been told through the error report.',
  unknownConversation: 'This conversation is unknown or has expired (or another agent is waiting for answers in it). Start a new conversation.',
  timedOut: 'The agent took too long and was stopped.',
  stopped: 'Stopped. Nothing of this run was kept.',
  mustLogin: 'Your session ended while the agent was running. Sign in again and repeat the request.',
  unexpected: 'Something unexpected went wrong while running the agent. Try again.',
};

/** Messages for errors outside a run (DESIGN §2), where the server's own message is not the clearest. */
const errorMessages: Record<string, string> = {
  invalidCredentials: 'That email address and password do not match. Try again, or set a new password with an emailed code.',
  rateLimited: 'Too many attempts. Wait a moment and try again.',
  agentNotFound: 'The agent is not published on this server.',
  draftNotFound: 'This draft does not exist (it may have been deleted).',
  conversationBusy: 'This conversation is busy with another request. Try again in a moment.',
  forbidden: 'You are not allowed to do that.',
  payloadTooLarge: 'That is too much text to send at once.',
  unavailable: 'The service is briefly unavailable. Try again shortly.',
  internal: 'Something went wrong on the server. Try again.',
  invalidCode: 'That code is wrong or has expired. Ask for a new one.',
  passwordRules: 'That password does not meet the password rules (marked ✗).',
};

/** The message to show for an API error: ours for the well-known codes, else the server's. */
export function errorMessage(error: { code: string; message: string }): string {
  return errorMessages[error.code] ?? error.message;
}

/** The message shown on the sign-in page when a session ended under the user. */
export const sessionEndedMessage = 'Your session has ended. Please sign in again.';
