import type { PasswordHelp } from '../api/types';

export type RuleState = 'met' | 'unmet' | 'unknown';

/**
 * Which of the server's rules (getPasswordHelp) `password` meets, as far as the page can tell while
 * the user types: the lengths (in code points after NFC, as the server counts) and the address's
 * local part. The others are 'unknown' until the server checks them, or 'unmet' when it refused them.
 */
export function ruleStates(help: PasswordHelp, password: string, email: string, refused: readonly string[]): Record<string, RuleState> {
  const normalized = password.normalize('NFC');
  const length = [...normalized].length;
  const localPart = email.trim().toLowerCase().split('@')[0] ?? '';
  const states: Record<string, RuleState> = {};
  for (const rule of help.rules) {
    if (refused.includes(rule.id)) states[rule.id] = 'unmet';
    else if (rule.id === 'minLength') states[rule.id] = length >= help.minLength ? 'met' : 'unmet';
    else if (rule.id === 'maxLength') states[rule.id] = length <= help.maxLength ? 'met' : 'unmet';
    else if (rule.id === 'notEmailName') states[rule.id] = [...localPart].length >= 3 && normalized.toLowerCase().includes(localPart) ? 'unmet' : 'met';
    else states[rule.id] = 'unknown';
  }
  return states;
}

const marks: Record<RuleState, string> = { met: '✓', unmet: '✗', unknown: '•' };
const spoken: Record<RuleState, string> = { met: 'met', unmet: 'not met', unknown: 'checked when you save' };

/** The password rules as a list, each marked met, not met, or to be checked by the server. */
export function PasswordRules({ help, states, id }: { help: PasswordHelp; states: Record<string, RuleState>; id: string }) {
  return (
    <ul class="password-rules" id={id} aria-label="Password rules">
      {help.rules.map((rule) => {
        const state = states[rule.id] ?? 'unknown';
        return (
          <li key={rule.id} class={`rule rule-${state}`} data-rule={rule.id} data-state={state}>
            <span aria-hidden="true">{marks[state]}</span> {rule.text}
            <span class="visually-hidden"> ({spoken[state]})</span>
          </li>
        );
      })}
    </ul>
  );
}
