import type { SecretBox } from './secret-box.js';

/**
 * Agent secrets (DESIGN §13): values an admin grants to an agent name (an API key, a base URL), read
 * by its runs as `sys.secrets`. Names are like environment variables; a value is sealed with
 * SECRETS_KEY together with the agent name and key it belongs to, so a sealed value copied to
 * another row does not open there.
 */
export const secretKeyPattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const secretKeyRule = 'must be a letter or _, then up to 63 letters, digits or _ (like an environment variable)';
/** Longest value, in characters. */
export const maxSecretLength = 8192;
/** Secrets one agent name may hold. */
export const maxSecretsPerAgent = 100;

export function sealSecret(box: SecretBox, agentName: string, key: string, value: string): string {
  return box.seal(JSON.stringify([agentName, key, value]));
}

/** The value, or an error when the sealed text belongs to another agent name or key (or does not open). */
export function openSecret(box: SecretBox, agentName: string, key: string, sealed: string): string {
  const [forAgent, forKey, value] = JSON.parse(box.open(sealed)) as [string, string, string];
  if (forAgent !== agentName || forKey !== key) throw new Error(`the sealed secret ${agentName}.${key} belongs to another agent or key`);
  return value;
}

/** Values this short are not masked in traces and errors: "1" or "true" would mask half a trace. */
export const minMaskedLength = 4;

/** Replaces every occurrence of a secret value in `text` with `********` (longest first, so one containing another goes whole). */
export function maskSecrets(text: string, values: readonly string[]): string {
  let masked = text;
  for (const value of values) if (masked.includes(value)) masked = masked.replaceAll(value, '********');
  return masked;
}

/** The values worth masking, longest first. */
export function maskableValues(secrets: Readonly<Record<string, string>>): string[] {
  return Object.values(secrets)
    .filter((value) => value.length >= minMaskedLength)
    .sort((a, b) => b.length - a.length);
}
