import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { systemClock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { findDraft } from '../db/drafts.repository.js';
import { saveDraftBody } from '../server/dev/dev.schemas.js';
import { saveDraft as saveDraftFile } from '../server/dev/drafts.service.js';
import { CommandError, required, type Command, type CommandContext } from './command.js';

/** Saves a file as a draft (a new one, or a new revision of --draftid), as /api/dev/saveDraft does. */
export const saveDraft: Command = {
  description: 'saves a file as a draft, or as a new revision of --draftid; prints {draftid, compileErrors}',
  options: {
    agent: { type: 'string', value: 'NAME', description: 'the agent name the draft is of (required)' },
    file: { type: 'string', value: 'FILE', description: 'the TypeScript file to save (required)' },
    'validation-query': { type: 'string', value: 'QUERY', description: 'the query the draft is validated with (default: the draft\'s, or none)' },
    draftid: { type: 'string', value: 'ID', description: 'the draft to save a new revision of' },
  },
  async run(context) {
    const file = required(context, 'file');
    const source = await readFile(file, 'utf8').catch(() => {
      throw new CommandError(`${file}: cannot read the file`);
    });
    const draftid = context.values.draftid;
    const parsed = saveDraftBody.safeParse({
      agentName: required(context, 'agent'),
      source,
      validationQuery: await validationQueryOf(context),
      ...(typeof draftid === 'string' ? { draftid } : {}),
    });
    if (!parsed.success) {
      const option: Record<string, string> = { agentName: '--agent', source: '--file', validationQuery: '--validation-query', draftid: '--draftid' };
      throw new CommandError(parsed.error.issues.map((i) => `${option[String(i.path[0])] ?? i.path.join('.')}: ${i.message}`).join('\n'));
    }
    const saved = await saveDraftFile({ db: context.db, clock: systemClock }, null, parsed.data).catch((err: unknown) => {
      throw err instanceof AppError ? new CommandError(err.message) : err;
    });
    const errors = saved.compileErrors.map((e) => `${file}:${e.line}:${e.column}: ${e.message}`);
    return { text: [`saved draft ${saved.draftid}`, ...errors].join('\n'), json: saved };
  },
};

/** --validation-query; without it a new revision keeps the draft's, and a new draft gets none. */
async function validationQueryOf(context: CommandContext): Promise<string> {
  const given = context.values['validation-query'];
  if (typeof given === 'string') return given;
  const draftid = context.values.draftid;
  const draft = typeof draftid === 'string' && z.uuid().safeParse(draftid).success ? await findDraft(context.db, draftid) : undefined;
  return draft?.validation_query ?? '';
}

