/** The shapes of the admin endpoints the console uses (DESIGN §18), as `client.admin` answers them. */
import type { ResultCode } from './types.js';

export type Role = 'user' | 'developer' | 'admin';
export type Plan = 'free' | 'paid';
export type AccountKind = 'user' | 'serviceAccount';

export interface ServiceAccountInfo {
  id: string;
  name: string;
  role: Role;
  plan: Plan;
  createdAt: string;
  /** When its key was made: at creation or the last rotation. */
  keyRotatedAt: string;
}

export interface UserInfo {
  id: string;
  email: string;
  callName: string;
  role: Role;
  plan: Plan;
  createdAt: string;
}

export interface AccountList {
  serviceAccounts: ServiceAccountInfo[];
  users: UserInfo[];
}

/** A service account with its bearer key: answered once, at creation or rotation, and never again. */
export interface ServiceAccountWithKey extends ServiceAccountInfo {
  key: string;
}

/** A service account by name, or a user by email. */
export type AccountRef = { name: string } | { email: string };

export interface RoleChange {
  kind: AccountKind;
  id: string;
  name?: string;
  email?: string;
  role: Role;
}

/** The limits per caller that hold for an account (DESIGN §16); `defaults` names those that come from config. */
export interface CallerLimits {
  account: { kind: AccountKind; id: string; name?: string; email?: string };
  limits: { runsPerMinute: number; runsInFlight: number; weight: number };
  defaults: ('runsPerMinute' | 'runsInFlight' | 'weight')[];
}

/** A limit to change: a number (0 = none for the two counts), or null for the default from config. */
export type LimitsChange = Partial<Record<'runsPerMinute' | 'runsInFlight' | 'weight', number | null>>;

/** One secret's name (never its value): of an agent name's production set, or (`forDrafts`) of its set for drafts. */
export interface SecretName {
  agentName: string;
  forDrafts: boolean;
  key: string;
  updatedAt: string;
}

export interface WebhookEndpoint {
  /** The service account. */
  name: string;
  accountId: string;
  url: string;
  createdAt: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  url: string;
  /** The receiver's HTTP status; null when no answer came. */
  status: number | null;
  /** Why it did not deliver; null when it did. */
  error: string | null;
}

export interface WebhookDelivery {
  /** The `webhook-id` header of every attempt. */
  webhookId: string;
  runId: string;
  agentName: string | null;
  account: { id: string; name?: string };
  status: DeliveryStatus;
  createdAt: string;
  deliveredAt: string | null;
  requeuedAt: string | null;
  /** About when the next retry goes; null when none is due. */
  nextAttemptAt: string | null;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
}

export interface DeliveryPage {
  deliveries: WebhookDelivery[];
  nextCursor: string | null;
}

/** Calls with bearer keys per account, role and UTC day. */
export interface UsageTotal {
  serviceAccountId: string;
  name: string;
  role: Role;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  calls: number;
  failed: number;
}

export interface UsageReport {
  since: string;
  until: string;
  totals: UsageTotal[];
  rows: { serviceAccountId: string; name: string; role: Role; endpoint: string; agentName: string | null; resultCode: ResultCode | null; httpStatus: number; durationMs: number; at: string }[];
  truncated: boolean;
}

export interface ErrorReport {
  since: string;
  until: string;
  /** Every failed run of the range per UTC day and resultCode. */
  totals: { day: string; resultCode: ResultCode; count: number }[];
  rows: { executionId: string; convid: string; agentName: string; resultCode: ResultCode; message: string | null; principalKind: AccountKind; principalId: string; at: string; durationMs: number }[];
  truncated: boolean;
}

/** A report's range (ISO 8601): until now and since 30 days before `until` when left out. */
export interface ReportRange {
  since?: string;
  until?: string;
}
