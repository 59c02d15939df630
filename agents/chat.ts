import type { Sys } from './sys';

/**
 * A chat with an OpenAI-compatible model: each call sends the conversation so far and the new query
 * to `{LLM_BASE_URL}/chat/completions` with `stream: true`, relays each token as it arrives, and keeps
 * the messages in sys.conv, so the next call (the web app's search box, the same convid) goes on
 * from there.
 *
 * Secrets of the agent name (npm run cli -- secrets:set --agent chat --key NAME):
 *   LLM_BASE_URL   e.g. https://api.openai.com/v1 (its host must pass AGENT_HTTP_ALLOW when private)
 *   LLM_API_KEY    sent as the bearer token
 *   LLM_MODEL      optional, default gpt-4o-mini
 * A draft of it sees none of those: it reads the secrets set for drafts of the name, set the same way
 * with --drafts (npm run cli -- secrets:set --agent chat --key NAME --drafts), e.g. a key to a test
 * model, so developers validating it never hold the production key.
 */

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** Messages kept in the conversation: the oldest go first, so a long chat stays within the model's context. */
const keptMessages = 40;

export default async function chat(sys: Sys) {
  const { LLM_BASE_URL: baseUrl, LLM_API_KEY: apiKey, LLM_MODEL: model = 'gpt-4o-mini' } = sys.secrets;
  if (!baseUrl || !apiKey) {
    sys.fail(
      'The chat agent needs the secrets LLM_BASE_URL and LLM_API_KEY (an admin sets them with secrets:set --agent ' +
        sys.agentName +
        ', adding --drafts for its drafts).',
    );
  }
  const query = sys.query?.trim();
  if (!query) sys.fail('Write a message to start the chat.');

  const earlier = Array.isArray(sys.conv.chat) ? (sys.conv.chat as unknown as Message[]) : [];
  const messages: Message[] = [...earlier, { role: 'user', content: query }];
  const response = await sys.fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'system', content: 'You are a helpful assistant. Answer in Markdown.' }, ...messages] }),
    stream: true,
    timeoutMs: 30_000,
  });
  if (!response.ok) sys.fail(`The model answered ${response.status}: ${(await response.text()).slice(0, 500)}`);

  // Each token goes to the caller as it arrives, written by the worker: this code does not run per token.
  const answer = await response.relay({ field: 'choices.0.delta.content' });
  if (answer === '') sys.say('(The model sent no answer.)');
  const kept: Message[] = [...messages, { role: 'assistant', content: answer }];
  sys.conv.chat = kept.slice(-keptMessages);
}
