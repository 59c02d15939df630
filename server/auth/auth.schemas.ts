import { z } from 'zod';

/** Addresses are compared trimmed and lower-cased. */
const email = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .pipe(z.email('must be an email address'))
  .transform((v) => v.toLowerCase());

/** Any string; length rules are the password rules' (a login with an over-long one is refused unhashed). */
const password = z.string().min(1, 'must not be empty');

export const loginBody = z.strictObject({ email, password });

export const emailCodeBody = z.strictObject({ email });

export const createPasswordBody = z.strictObject({
  email,
  code: z.string().regex(/^\d{6}$/, 'must be the 6-digit code from the mail'),
  password,
});

export const emptyBody = z.strictObject({});
