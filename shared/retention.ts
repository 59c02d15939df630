import type { Plan } from './api.js';

/** Days of no use after which a conversation expires (spec §8), by plan; a pinned one never does. */
export const retentionDays: Record<Plan, number> = { free: 7, paid: 90 };
