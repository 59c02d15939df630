import type { Sys } from './sys';

/**
 * Calls an HTTP JSON API and reports on the answer. The URL comes from inputs.url (the destination
 * must be allowed by AGENT_HTTP_ALLOW when it is a private address).
 */
export default async function httpApi(sys: Sys) {
  const url = typeof sys.inputs.url === 'string' ? sys.inputs.url : 'https://api.github.com/zen';
  const response = await sys.fetch(url, { headers: { accept: 'application/json' }, timeoutMs: 5000 });
  if (!response.ok) sys.fail(`The API answered ${response.status}`);
  let body: unknown;
  try {
    body = response.json();
  } catch {
    body = response.text;
  }
  sys.conv.lastApiStatus = response.status;
  sys.say(`The API answered ${response.status}:\n\n\`\`\`json\n${JSON.stringify(body, null, 2)}\n\`\`\``);
}
