import type { Db } from '../db/database.js';
import { readConversations, type ConversationRead, type ConversationReadRequest } from '../db/conversations.repository.js';
import { batchPerTurn } from './per-turn-batch.js';

/**
 * Reads the conversations runs start on, those asked for in the same turn of the event loop in one
 * statement (a statement a run was a round trip and a wake-up of a PostgreSQL backend each). A failed
 * statement fails every read of its batch, as it would have failed each alone.
 */
export interface ConversationReader {
  read(request: ConversationReadRequest): Promise<ConversationRead | undefined>;
}

interface Pending {
  request: ConversationReadRequest;
  resolve: (read: ConversationRead | undefined) => void;
  reject: (err: unknown) => void;
}

/** Conversations read in one statement at most: a bound on its size. */
const maxBatch = 100;

export function createConversationReader(db: Db): ConversationReader {
  const readBatch = async (batch: Pending[]) => {
    try {
      const read = await readConversations(db, batch.map((each) => each.request));
      batch.forEach((each, i) => each.resolve(read[i]));
    } catch (err) {
      for (const each of batch) each.reject(err);
    }
  };

  const enqueue = batchPerTurn<Pending>((batch) => {
    for (let i = 0; i < batch.length; i += maxBatch) void readBatch(batch.slice(i, i + maxBatch));
  });

  return {
    read: (request) => new Promise((resolve, reject) => enqueue({ request, resolve, reject })),
  };
}
