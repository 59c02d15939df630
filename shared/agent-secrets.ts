import type { SecretBox } from './secret-box.js';

/**
 * Agent secrets (DESIGN §13): values an admin grants to an agent name (an API key, a base URL), read
 * by its runs as `sys.secrets`. Names are like environment variables; a value is sealed with
 * SECRETS_KEY together with the agent name, key and set it belongs to, so a sealed value copied to
 * another row does not open there.
 */
export const secretKeyPattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const secretKeyRule = 'must be a letter or _, then up to 63 letters, digits or _ (like an environment variable)';
/** Longest value, in characters. */
export const maxSecretLength = 8192;
/** Secrets one agent name may hold in each set. */
export const maxSecretsPerAgent = 100;

/**
 * Which of an agent name's two sets of secrets: `production` for its published versions, `drafts` for
 * the validation runs of its drafts. A draft never sees the production set: a developer must not read
 * what only admins may (DESIGN §13).
 */
export type SecretSet = 'production' | 'drafts';

/** The set the admin endpoints' `forDrafts` (and the command line's `--drafts`) names. */
export function secretSetFor(forDrafts: boolean | undefined): SecretSet {
  return forDrafts ? 'drafts' : 'production';
}

/**
 * Seals `value` bound to its agent name, key and set. A production value is sealed as it was before
 * there were two sets (no fourth element), so the values stored then still open.
 */
export function sealSecret(box: SecretBox, agentName: string, key: string, value: string, set: SecretSet): string {
  return box.seal(JSON.stringify(set === 'drafts' ? [agentName, key, value, set] : [agentName, key, value]));
}

/** The value, or an error when the sealed text belongs to another agent name, key or set (or does not open). */
export function openSecret(box: SecretBox, agentName: string, key: string, set: SecretSet, sealed: string): string {
  const [forAgent, forKey, value, forSet = 'production'] = JSON.parse(box.open(sealed)) as [string, string, string, SecretSet?];
  if (forAgent !== agentName || forKey !== key || forSet !== set) {
    throw new Error(`the sealed secret ${agentName}.${key} (${set}) belongs to another agent, key or set`);
  }
  return value;
}

/** Values this short are not masked in traces and errors: "1" or "true" would mask half a trace. */
export const minMaskedLength = 4;

/** What a masked value reads as, wherever a run's secrets or password answers would show. */
export const maskedValue = '********';

/** Replaces every occurrence of each of `values` in `text` with maskedValue, in order (longest first, so one containing another goes whole). */
export function maskSecrets(text: string, values: readonly string[]): string {
  let masked = text;
  for (const value of values) if (masked.includes(value)) masked = masked.replaceAll(value, maskedValue);
  return masked;
}

/**
 * The masker of a run's secrets (DESIGN §13): `text` with each value worth masking replaced. The one
 * the sandbox applies to what a run records of its requests (the journal's URLs and errors) and to the
 * error it ends with (a fetch error names the URL, an agent may throw what it read).
 */
export function secretMasker(secrets: Readonly<Record<string, string>> | undefined): (text: string) => string {
  const values = secrets ? maskableValues(secrets) : [];
  return values.length ? (text) => maskSecrets(text, values) : (text) => text;
}

/** The values worth masking, longest first. */
export function maskableValues(secrets: Readonly<Record<string, string>>): string[] {
  return Object.values(secrets)
    .filter((value) => value.length >= minMaskedLength)
    .sort((a, b) => b.length - a.length);
}
