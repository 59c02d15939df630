import type { Answers, AskInput } from '../../shared/api.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { JournalEntry } from '../sandbox/sandbox.types.js';

/** A password answer as stored while the conversation is paused. */
interface SealedAnswer {
  sealed: string;
}

/** The journal as stored: password-type answers replaced by their sealed form. */
export function sealJournal(box: SecretBox, journal: JournalEntry[]): unknown[] {
  return journal.map((entry) =>
    entry.op === 'ask' && entry.answers ? { ...entry, answers: mapPasswordAnswers(entry.ask, entry.answers, (v) => ({ sealed: box.seal(JSON.stringify(v)) })) } : entry,
  );
}

/** The stored journal with its password answers opened again. */
export function openJournal(box: SecretBox, stored: unknown[]): JournalEntry[] {
  return (stored as JournalEntry[]).map((entry) =>
    entry.op === 'ask' && entry.answers
      ? { ...entry, answers: mapPasswordAnswers(entry.ask, entry.answers, (v) => JSON.parse(box.open((v as unknown as SealedAnswer).sealed))) }
      : entry,
  );
}

function mapPasswordAnswers(ask: AskInput, answers: Answers, map: (value: Answers[string]) => unknown): Answers {
  const passwords = new Set(ask.inputs.filter((i) => i.type === 'password').map((i) => i.name));
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(answers)) result[name] = passwords.has(name) ? map(value) : value;
  return result as Answers;
}
