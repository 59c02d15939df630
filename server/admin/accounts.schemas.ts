import { z } from 'zod';
import * as api from '../../shared/api.schemas.js';
import { emailPattern } from '../../runs/accounts.js';

/** Bodies and answers of the console's Accounts endpoints (DESIGN §18): service accounts and users. */

const accountName = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const email = z.string().trim().max(320, 'must be at most 320 characters').regex(emailPattern, 'must be an email address');

/** A service account named by `name`. */
export const serviceAccountBody = z.strictObject({ name: accountName.describe('The service account, by name.') });

export const createServiceAccountBody = z.strictObject({
  name: accountName.describe('The new account’s name (unique).'),
  role: api.role.optional().describe('Default user.'),
  plan: api.plan.optional().describe('Default free.'),
});

export const createUserBody = z.strictObject({
  email: email.describe('The address the user signs in with (unique); the user sets a password by email code.'),
  role: api.role.optional().describe('Default user.'),
  plan: api.plan.optional().describe('Default free.'),
  callName: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional().describe('What the app calls the user (default: the address before the @).'),
});

/** Body of setRole: a service account by `name`, or a user by `email` (exactly one), and the new role. */
export const setRoleBody = z
  .strictObject({ name: accountName.optional().describe('A service account, by name.'), email: email.optional().describe('A user, by email.'), role: api.role })
  .refine((body) => (body.name === undefined) !== (body.email === undefined), { message: 'send either name (a service account) or email (a user)', path: ['name'] });

const serviceAccount = z.object({
  id: z.uuid(),
  name: z.string(),
  role: api.role,
  plan: api.plan,
  createdAt: z.iso.datetime(),
  keyRotatedAt: z.iso.datetime().describe('When its key was made: at creation or the last rotation.'),
});

const user = z.object({ id: z.uuid(), email: z.string(), callName: z.string(), role: api.role, plan: api.plan, createdAt: z.iso.datetime() });

/** What listAccounts answers: every service account by name and every user by email (never a key, hash or password). */
export const accountListAnswer = z.object({ serviceAccounts: z.array(serviceAccount), users: z.array(user) });

/** What createServiceAccount and rotateKey answer: the account and its new key, shown this once. */
export const serviceAccountKeyAnswer = serviceAccount.extend({ key: z.string().describe('The bearer key (ak_…). Only its hash is stored: it is never shown again.') });

export const createdUserAnswer = user;

export const deletedServiceAccountAnswer = z.object({ name: z.string(), deleted: z.literal(true) });

export const setRoleAnswer = z.object({ kind: api.principalKind, id: z.uuid(), name: z.string().optional(), email: z.string().optional(), role: api.role });
