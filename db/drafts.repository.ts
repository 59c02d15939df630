import { sql } from 'kysely';
import type { PrincipalKind } from '../shared/api.js';
import type { CompileError } from '../shared/compile-agent.js';
import type { Db } from './database.js';
import type { Draft } from './schema.js';

/** Who saves a draft: a principal, or null for the command line. */
export type DraftSaver = { kind: PrincipalKind; id: string } | null;

/** What a save stores: the source as given and what compiling it produced. */
export interface DraftContent {
  agentName: string;
  source: string;
  validationQuery: string;
  code: string | null;
  sourceMap: string | null;
  compileErrors: CompileError[];
}

/** Creates a draft at revision 1. */
export async function insertDraft(db: Db, id: string, savedBy: DraftSaver, content: DraftContent, now: Date): Promise<void> {
  await db
    .insertInto('drafts')
    .values({ id, revision: 1, created_at: now, updated_at: now, ...savedByColumns(savedBy), ...contentColumns(content) })
    .execute();
}

/** Replaces the draft's content and counts a new revision; false when no draft has that id. */
export async function updateDraft(db: Db, id: string, savedBy: DraftSaver, content: DraftContent, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('drafts')
    .set({ ...savedByColumns(savedBy), ...contentColumns(content), revision: sql<number>`revision + 1`, updated_at: now })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function findDraft(db: Db, id: string): Promise<Draft | undefined> {
  return db.selectFrom('drafts').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface DraftSummary {
  id: string;
  agent_name: string;
  updated_at: Date;
  compiles: boolean;
}

/** The most recently saved drafts first. */
export async function listDrafts(db: Db, limit: number): Promise<DraftSummary[]> {
  return db
    .selectFrom('drafts')
    .select(['id', 'agent_name', 'updated_at', sql<boolean>`code is not null`.as('compiles')])
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
}

function savedByColumns(savedBy: DraftSaver) {
  return { saved_by_kind: savedBy?.kind ?? null, saved_by_id: savedBy?.id ?? null };
}

function contentColumns(content: DraftContent) {
  return {
    agent_name: content.agentName,
    source: content.source,
    validation_query: content.validationQuery,
    code: content.code,
    source_map: content.sourceMap,
    compile_errors: JSON.stringify(content.compileErrors),
  };
}
