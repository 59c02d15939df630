import { inputTypes, type AskInput, type InputDescriptor, type InputOption, type InputType } from '../../shared/api.js';
import { AgentTypeError } from './error-codes.js';

/** A spec passed to sys.ask that cannot be asked; raised in the agent as a TypeError. */
export class AskSpecError extends AgentTypeError {
  override name = 'AskSpecError';
}

/** What one ask may hold (DESIGN §12), text counted in code points: an ask is stored with the pause and shown to a person. */
export const askLimits = {
  inputs: 50,
  messageChars: 4000,
  /** Each label and description, of an input or an option; names and option values too. */
  textChars: 1000,
  optionsPerInput: 200,
} as const;

const specKeys = new Set(['message', 'inputs']);
const inputKeys = new Set(['name', 'type', 'label', 'description', 'options', 'default']);
const chooseTypes: readonly InputType[] = ['chooseOne', 'chooseMany'];

/**
 * Validates the object an agent passed to sys.ask and normalises it to an AskInput: every descriptor
 * carries all six fields (null where not given) and options given as strings become {value, label}.
 * Unknown fields are refused so a typo (`lable`) is not silently dropped.
 */
export function normaliseAskSpec(spec: unknown): AskInput {
  if (!isRecord(spec)) throw new AskSpecError('sys.ask expects an object {message, inputs}');
  refuseUnknownKeys(spec, specKeys, 'sys.ask');
  if (typeof spec.message !== 'string') throw new AskSpecError('sys.ask: message must be a string');
  refuseLongText(spec.message, askLimits.messageChars, 'sys.ask: message');
  const inputs = spec.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) {
    throw new AskSpecError('sys.ask: inputs must be a non-empty array');
  }
  if (inputs.length > askLimits.inputs) throw new AskSpecError(`sys.ask: at most ${askLimits.inputs} inputs, not ${inputs.length}`);
  const descriptors = inputs.map((input: unknown, i) => normaliseInput(input, `sys.ask: inputs[${i}]`));
  const names = new Set<string>();
  for (const { name } of descriptors) {
    if (names.has(name)) throw new AskSpecError(`sys.ask: input name "${name}" is used twice`);
    names.add(name);
  }
  return { message: spec.message, inputs: descriptors };
}

function normaliseInput(input: unknown, where: string): InputDescriptor {
  if (!isRecord(input)) throw new AskSpecError(`${where} must be an object`);
  refuseUnknownKeys(input, inputKeys, where);
  const { name, type } = input;
  if (typeof name !== 'string' || name === '') throw new AskSpecError(`${where}.name must be a non-empty string`);
  refuseLongText(name, askLimits.textChars, `${where}.name`);
  if (typeof type !== 'string' || !inputTypes.includes(type as InputType)) {
    throw new AskSpecError(`${where}.type must be one of ${inputTypes.join(', ')}`);
  }
  const options = normaliseOptions(input.options, type as InputType, where);
  return {
    name,
    type: type as InputType,
    label: optionalString(input.label, `${where}.label`),
    description: optionalString(input.description, `${where}.description`),
    options,
    default: normaliseDefault(input.default, type as InputType, options, where),
  };
}

function normaliseOptions(value: unknown, type: InputType, where: string): InputOption[] | null {
  const choose = chooseTypes.includes(type);
  if (value === undefined || value === null) {
    if (choose) throw new AskSpecError(`${where}.options is required for ${type}`);
    return null;
  }
  if (!choose) throw new AskSpecError(`${where}.options is only for chooseOne and chooseMany`);
  if (!Array.isArray(value) || value.length === 0) throw new AskSpecError(`${where}.options must be a non-empty array`);
  if (value.length > askLimits.optionsPerInput) {
    throw new AskSpecError(`${where}.options: at most ${askLimits.optionsPerInput} options, not ${value.length}`);
  }
  const options = value.map((option: unknown, i) => normaliseOption(option, `${where}.options[${i}]`));
  const values = new Set(options.map((o) => o.value));
  if (values.size !== options.length) throw new AskSpecError(`${where}.options has the same value twice`);
  return options;
}

function normaliseOption(option: unknown, where: string): InputOption {
  if (typeof option === 'string') {
    refuseLongText(option, askLimits.textChars, where);
    return { value: option, label: option };
  }
  if (!isRecord(option) || typeof option.value !== 'string') {
    throw new AskSpecError(`${where} must be a string or {value, label}`);
  }
  refuseUnknownKeys(option, new Set(['value', 'label']), where);
  refuseLongText(option.value, askLimits.textChars, `${where}.value`);
  const label = optionalString(option.label, `${where}.label`);
  return { value: option.value, label: label ?? option.value };
}

function normaliseDefault(
  value: unknown,
  type: InputType,
  options: InputOption[] | null,
  where: string,
): string | string[] | null {
  if (value === undefined || value === null) return null;
  const known = (v: string) => !options || options.some((o) => o.value === v);
  if (type === 'chooseMany') {
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && known(v))) {
      throw new AskSpecError(`${where}.default must be an array of option values`);
    }
    return value as string[];
  }
  if (typeof value !== 'string' || !known(value)) {
    throw new AskSpecError(`${where}.default must be ${options ? 'one of the option values' : 'a string'}`);
  }
  return value;
}

/** A label or description: a string of at most askLimits.textChars code points, or null. */
function optionalString(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new AskSpecError(`${where} must be a string`);
  refuseLongText(value, askLimits.textChars, where);
  return value;
}

function refuseLongText(text: string, max: number, where: string): void {
  // Code units bound code points from above: most texts need no count.
  if (text.length <= max) return;
  let points = 0;
  for (const _ of text) if (++points > max) throw new AskSpecError(`${where}: at most ${max} characters`);
}

function refuseUnknownKeys(value: Record<string, unknown>, allowed: Set<string>, where: string): void {
  const unknown = Object.keys(value).find((key) => !allowed.has(key));
  if (unknown !== undefined) throw new AskSpecError(`${where}: unknown field "${unknown}"`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
