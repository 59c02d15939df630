import { readFileSync } from 'node:fs';

/**
 * Password rules (NIST SP 800-63B): a length range and a few "not guessable" checks, no composition rules
 * (no "must contain a digit"). Every rule is listed in `passwordRules`, which is also what
 * `/api/auth/getPasswordHelp` shows, so users are told exactly what is checked.
 */

/** Allowed length, counted in Unicode code points after NFC normalisation; nothing is trimmed or truncated. */
export const passwordLength = { min: 15, max: 1024 } as const;

export type PasswordRuleId = 'minLength' | 'maxLength' | 'notCommon' | 'notEmailName' | 'notProductName';

export interface PasswordRule {
  id: PasswordRuleId;
  text: string;
}

const productName = 'agentexec';

/** Every rule, in the order `failedPasswordRules` reports them. */
export const passwordRules: readonly PasswordRule[] = Object.freeze(
  [
    { id: 'minLength', text: `At least ${passwordLength.min} characters.` },
    { id: 'maxLength', text: `At most ${passwordLength.max} characters.` },
    { id: 'notCommon', text: 'Not a commonly used password.' },
    { id: 'notEmailName', text: 'Does not contain the part of your email address before the @.' },
    { id: 'notProductName', text: `Does not contain the product name (${productName}).` },
  ].map((rule) => Object.freeze(rule as PasswordRule)),
);

/** The form a password is checked and hashed in (see password-hash.ts). */
export function normalizePassword(password: string): string {
  return password.normalize('NFC');
}

const codePoints = (s: string): number => [...s].length;

let common: Set<string> | undefined;

/** The common-password list (lower-cased, NFC), read once on first use. */
function commonPasswords(): Set<string> {
  // This file is compiled to dist/shared/, so ../../shared/data/ is the repository's shared/data/.
  common ??= new Set(
    readFileSync(new URL('../../shared/data/common-passwords.txt', import.meta.url), 'utf8')
      .split(/\r?\n/)
      .filter(Boolean),
  );
  return common;
}

/**
 * The ids of every rule `password` breaks, in the order of `passwordRules`; an empty array means it is acceptable.
 * `email` is the account's address. A password that is too long gets exactly `['maxLength']`, found cheaply
 * (it is refused before hashing).
 */
export function failedPasswordRules(password: string, email: string): PasswordRuleId[] {
  // A code point is at most 2 UTF-16 units, so this only catches absurd input, before spreading it.
  if (password.length > 4 * passwordLength.max || codePoints(password) > passwordLength.max) return ['maxLength'];
  const normalized = normalizePassword(password);
  const length = codePoints(normalized);
  // NFC can also lengthen a string (some characters decompose), hence the second check.
  if (length > passwordLength.max) return ['maxLength'];

  const lower = normalized.toLowerCase();
  const failed = new Set<PasswordRuleId>();
  if (length < passwordLength.min) failed.add('minLength');
  if (commonPasswords().has(lower)) failed.add('notCommon');
  // Only a local part of 3 or more code points counts: a 1-2 character one would refuse far too much.
  const address = email.normalize('NFC').toLowerCase();
  const at = address.lastIndexOf('@');
  const localPart = at < 0 ? address : address.slice(0, at);
  if (codePoints(localPart) >= 3 && lower.includes(localPart)) failed.add('notEmailName');
  if (lower.includes(productName)) failed.add('notProductName');
  return passwordRules.map((rule) => rule.id).filter((id) => failed.has(id));
}

/** The body of the `/api/auth/getPasswordHelp` response. */
export function passwordHelp(): { rules: PasswordRule[]; minLength: number; maxLength: number } {
  return {
    rules: passwordRules.map((rule) => ({ ...rule })),
    minLength: passwordLength.min,
    maxLength: passwordLength.max,
  };
}
