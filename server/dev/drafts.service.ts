import { randomUUID } from 'node:crypto';
import type { Principal } from '../../shared/api.js';
import { compileAgent, type CompileError } from '../../shared/compile-agent.js';
import { AppError } from '../../shared/errors.js';
import { insertAgentVersion, listPublishedAgents } from '../../db/agents.repository.js';
import { findDraft, insertDraft, listDrafts, updateDraft, type DraftContent } from '../../db/drafts.repository.js';
import type { Draft } from '../../db/schema.js';
import type { WebDeps } from '../deps.js';
import type { SaveDraftBody } from './dev.schemas.js';

/**
 * Drafts (DESIGN §5): shared by the developers and admins, like the agents they become; each remembers
 * who saved it last. The command line saves them too (drafts:save).
 */

type DraftDeps = Pick<WebDeps, 'db' | 'clock'>;

/** How many drafts listAgents returns (the newest). */
const listedDrafts = 200;

/** Compiles the source and stores it: a new draft without draftid, else a new revision of that draft. */
export async function saveDraft(deps: DraftDeps, savedBy: Principal | null, body: SaveDraftBody): Promise<{ draftid: string; compileErrors: CompileError[] }> {
  const compiled = await compileAgent(body.source, `${body.agentName}.ts`);
  const content: DraftContent = {
    agentName: body.agentName,
    source: body.source,
    validationQuery: body.validationQuery,
    code: compiled.ok ? compiled.code : null,
    sourceMap: compiled.ok ? compiled.sourceMap : null,
    compileErrors: compiled.ok ? [] : compiled.errors,
  };
  const now = deps.clock.now();
  const draftid = body.draftid ?? randomUUID();
  const saver = savedBy && { kind: savedBy.kind, id: savedBy.id };
  if (body.draftid === undefined) await insertDraft(deps.db, draftid, saver, content, now);
  else if (!(await updateDraft(deps.db, draftid, saver, content, now))) throw draftNotFound();
  return { draftid, compileErrors: content.compileErrors };
}

/** The draft, or a 404 draftNotFound. */
export async function loadDraft(deps: DraftDeps, draftid: string): Promise<Draft> {
  const draft = await findDraft(deps.db, draftid);
  if (!draft) throw draftNotFound();
  return draft;
}

export function describeDraft(draft: Draft) {
  return {
    draftid: draft.id,
    agentName: draft.agent_name,
    source: draft.source,
    validationQuery: draft.validation_query,
    compileErrors: draft.compile_errors,
    revision: draft.revision,
    updatedAt: draft.updated_at.toISOString(),
  };
}

/** Publishes the draft's latest save as the agent's next version; a draft that does not compile is refused. */
export async function publishDraft(deps: DraftDeps, draftid: string): Promise<{ agentName: string; version: number }> {
  const draft = await loadDraft(deps, draftid);
  if (draft.code === null) {
    throw new AppError('invalidRequest', 'The draft does not compile; fix its compile errors and save it first.', {
      fields: { draftid: 'names a draft that does not compile' },
      compileErrors: draft.compile_errors,
    });
  }
  const version = await insertAgentVersion(deps.db, draft.agent_name, { source: draft.source, code: draft.code, sourceMap: draft.source_map ?? '' });
  return { agentName: draft.agent_name, version };
}

/** The published agents, and the newest drafts. */
export async function listAgentsAndDrafts(deps: DraftDeps) {
  const [agents, drafts] = await Promise.all([listPublishedAgents(deps.db), listDrafts(deps.db, listedDrafts)]);
  return {
    agents: agents.map((agent) => ({ agentName: agent.name, version: agent.latest_version, publishedAt: agent.updated_at.toISOString() })),
    drafts: drafts.map((draft) => ({ draftid: draft.id, agentName: draft.agent_name, compiles: draft.compiles, updatedAt: draft.updated_at.toISOString() })),
  };
}

function draftNotFound(): AppError {
  return new AppError('draftNotFound', 'No draft has this draftid.');
}
