import { sql } from 'kysely';
import type { PrincipalKind } from '../shared/api.js';
import type { CompileError } from '../shared/compile-agent.js';
import type { Db } from './database.js';
import type { Draft } from './schema.js';

export interface DraftOwner {
  kind: PrincipalKind;
  id: string;
}

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
export async function insertDraft(db: Db, id: string, owner: DraftOwner, content: DraftContent, now: Date): Promise<void> {
  await db
    .insertInto('drafts')
    .values({ id, owner_kind: owner.kind, owner_id: owner.id, revision: 1, created_at: now, updated_at: now, ...contentColumns(content) })
    .execute();
}

/** Replaces the owner's draft and counts a new revision; false when the owner has no draft with that id. */
export async function updateDraft(db: Db, id: string, owner: DraftOwner, content: DraftContent, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('drafts')
    .set({ ...contentColumns(content), revision: sql<number>`revision + 1`, updated_at: now })
    .where('id', '=', id)
    .where('owner_kind', '=', owner.kind)
    .where('owner_id', '=', owner.id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The owner's draft, or undefined (another principal's draft is not found, like a missing one). */
export async function findDraft(db: Db, id: string, owner: DraftOwner): Promise<Draft | undefined> {
  return db
    .selectFrom('drafts')
    .selectAll()
    .where('id', '=', id)
    .where('owner_kind', '=', owner.kind)
    .where('owner_id', '=', owner.id)
    .executeTakeFirst();
}

/** A draft by id alone, for the worker that runs it (the web process checked the owner). */
export async function findDraftById(db: Db, id: string): Promise<Draft | undefined> {
  return db.selectFrom('drafts').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface DraftSummary {
  id: string;
  agent_name: string;
  updated_at: Date;
  compiles: boolean;
}

/** The owner's drafts, most recently saved first. */
export async function listDrafts(db: Db, owner: DraftOwner, limit: number): Promise<DraftSummary[]> {
  return db
    .selectFrom('drafts')
    .select(['id', 'agent_name', 'updated_at', sql<boolean>`code is not null`.as('compiles')])
    .where('owner_kind', '=', owner.kind)
    .where('owner_id', '=', owner.id)
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
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
