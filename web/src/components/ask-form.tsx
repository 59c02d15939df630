import { useEffect, useRef, useState } from 'preact/hooks';
import type { Answers, AskInput, InputDescriptor } from '../api/types';

interface AskFormProps {
  ask: AskInput;
  /** Input name → what the server found wrong with the last answer. */
  fieldErrors?: Record<string, string>;
  /** The answers the agent refused: shown again instead of the defaults, so only the wrong one needs fixing. */
  refusedAnswers?: Answers;
  disabled: boolean;
  onAnswer(answers: Answers, summary: string): void;
}

/**
 * The form of an ask: one labelled field per input (str, password masked, text, chooseOne as radio
 * buttons, chooseMany as checkboxes) with its description and default. Focus goes to the first field,
 * or to the first field the server refused.
 */
export function AskForm({ ask, fieldErrors, refusedAnswers, disabled, onAnswer }: AskFormProps) {
  const [values, setValues] = useState<Answers>(() => ({ ...initialValues(ask.inputs), ...refusedAnswers }));
  const form = useRef<HTMLFormElement>(null);
  const errors = fieldErrors ?? {};
  const firstError = ask.inputs.find((input) => errors[input.name]);

  useEffect(() => {
    const target = firstError ? `[data-input="${CSS.escape(firstError.name)}"]` : '[data-input]';
    form.current?.querySelector<HTMLElement>(target)?.focus();
  }, [ask, fieldErrors]);

  const submit = (event: Event) => {
    event.preventDefault();
    // A chooseOne left empty is sent as missing: the server answers which field needs an answer.
    const answers = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ''));
    onAnswer(answers, summarize(ask.inputs, answers));
  };
  const set = (name: string, value: string | string[]) => setValues((v) => ({ ...v, [name]: value }));

  return (
    <form class="ask" ref={form} onSubmit={submit} aria-labelledby="ask-message" noValidate>
      <h2 id="ask-message">{ask.message}</h2>
      {ask.inputs.map((input) => (
        <AskField key={input.name} input={input} value={values[input.name] ?? ''} error={errors[input.name]} onChange={(v) => set(input.name, v)} />
      ))}
      <button type="submit" disabled={disabled}>
        Send answers
      </button>
    </form>
  );
}

interface FieldProps {
  input: InputDescriptor;
  value: string | string[];
  error: string | undefined;
  onChange(value: string | string[]): void;
}

function AskField({ input, value, error, onChange }: FieldProps) {
  const id = `ask-${input.name}`;
  const label = input.label ?? input.name;
  const describedBy = [input.description ? `${id}-description` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const notes = (
    <>
      {input.description && <p class="hint" id={`${id}-description`}>{input.description}</p>}
      {error && <p class="field-error" id={`${id}-error`}>{error}</p>}
    </>
  );
  const common = { id, 'data-input': input.name, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined };
  const onInput = (event: Event) => onChange((event.currentTarget as HTMLInputElement).value);

  if (input.type === 'chooseOne' || input.type === 'chooseMany') {
    const many = input.type === 'chooseMany';
    const chosen = new Set(Array.isArray(value) ? value : value ? [value] : []);
    const toggle = (option: string, checked: boolean) => {
      if (!many) return onChange(option);
      onChange((input.options ?? []).map((o) => o.value).filter((v) => (v === option ? checked : chosen.has(v))));
    };
    return (
      <fieldset class={`field choices${error ? ' invalid' : ''}`} aria-describedby={describedBy} aria-invalid={error ? true : undefined}>
        <legend>{label}</legend>
        {(input.options ?? []).map((option, index) => (
          <label class="choice" key={option.value}>
            <input
              type={many ? 'checkbox' : 'radio'}
              name={id}
              value={option.value}
              checked={chosen.has(option.value)}
              data-input={index === 0 ? input.name : undefined}
              onChange={(event) => toggle(option.value, (event.currentTarget as HTMLInputElement).checked)}
            />
            {option.label}
          </label>
        ))}
        {notes}
      </fieldset>
    );
  }
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {input.type === 'text' && <textarea {...common} rows={4} value={value as string} onInput={onInput} />}
      {input.type === 'password' && <input {...common} type="password" autocomplete="off" value={value as string} onInput={onInput} />}
      {input.type === 'str' && <input {...common} type="text" value={value as string} onInput={onInput} />}
      {notes}
    </div>
  );
}

function initialValues(inputs: InputDescriptor[]): Answers {
  const values: Answers = {};
  for (const input of inputs) {
    if (input.type === 'chooseMany') values[input.name] = Array.isArray(input.default) ? input.default : input.default ? [input.default] : [];
    else values[input.name] = typeof input.default === 'string' ? input.default : '';
  }
  return values;
}

/** What the transcript shows of the answers: passwords masked. */
function summarize(inputs: InputDescriptor[], answers: Answers): string {
  return inputs
    .filter((input) => answers[input.name] !== undefined)
    .map((input) => {
      const answer = answers[input.name]!;
      const shown = input.type === 'password' ? '••••••' : Array.isArray(answer) ? answer.join(', ') || '(none)' : answer;
      return `${input.label ?? input.name}: ${shown}`;
    })
    .join(' · ');
}
