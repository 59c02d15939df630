import type { Answers, AskInput, InputDescriptor, JsonObject } from '../../shared/api.js';

export type AnswerCheck = { ok: true; answers: Answers } | { ok: false; fields: Record<string, string> };

/** Longest accepted answer to one input, in characters. */
export const maxAnswerLength = 65_536;

/**
 * Checks the inputs of a call that answers an ask against the ask's descriptors. A missing answer
 * takes the input's default when it has one. Keys that name no input are ignored.
 */
export function validateAnswers(ask: AskInput, inputs: JsonObject): AnswerCheck {
  const answers: Answers = {};
  const fields: Record<string, string> = {};
  for (const input of ask.inputs) {
    const given = Object.hasOwn(inputs, input.name) ? inputs[input.name] : undefined;
    const value = given === undefined || given === null ? input.default : given;
    const problem = value === null || value === undefined ? 'An answer is required.' : checkAnswer(input, value);
    if (problem) fields[input.name] = problem;
    else answers[input.name] = value as string | string[];
  }
  return Object.keys(fields).length ? { ok: false, fields } : { ok: true, answers };
}

function checkAnswer(input: InputDescriptor, value: unknown): string | undefined {
  const allowed = new Set((input.options ?? []).map((o) => o.value));
  switch (input.type) {
    case 'str':
    case 'password':
    case 'text':
      if (typeof value !== 'string') return 'Must be a string.';
      if (value.length > maxAnswerLength) return `Must be at most ${maxAnswerLength} characters.`;
      if (input.type === 'str' && /[\r\n]/.test(value)) return 'Must be a single line.';
      return undefined;
    case 'chooseOne':
      if (typeof value !== 'string') return 'Must be one of the options.';
      return allowed.has(value) ? undefined : 'Must be one of the options.';
    case 'chooseMany': {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return 'Must be a list of options.';
      if (new Set(value).size !== value.length) return 'Each option may be chosen once.';
      return value.every((v) => allowed.has(v as string)) ? undefined : 'Must contain only the options.';
    }
  }
}
