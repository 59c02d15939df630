import { useEffect, useRef, useState } from 'preact/hooks';
import type { AccountRef, CallerLimits, LimitsChange } from '../../../clients/typescript/src/index';
import { failureText, useAdmin, useLoaded } from './use-admin';

type LimitName = keyof CallerLimits['limits'];

const limitFields: { name: LimitName; label: string; hint: string }[] = [
  { name: 'runsPerMinute', label: 'Runs per minute', hint: 'Runs started per minute; 0: no limit' },
  { name: 'runsInFlight', label: 'Runs in flight', hint: 'Runs queued or running at once; 0: no limit' },
  { name: 'weight', label: 'Weight', hint: 'Share of the workers when others wait too; 1 or more' },
];

/**
 * An account's limits per caller (DESIGN §16): each as it holds now, marked when it is the default from
 * config. A field left empty goes back to the default; web processes apply a change within seconds.
 */
export function LimitsEditor({ account, label, onClose }: { account: AccountRef; label: string; onClose(): void }) {
  const admin = useAdmin();
  const key = 'name' in account ? account.name : account.email;
  const loaded = useLoaded(() => admin.getLimits(account), [key], 'The limits could not be loaded. Try again.');
  const [inputs, setInputs] = useState<Partial<Record<LimitName, string>>>({});
  const [status, setStatus] = useState<{ text: string; failed: boolean } | undefined>();
  const current = loaded.value;
  // Opened from a row far above: the keyboard and the screen go to it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const inputValue = (name: LimitName) => inputs[name] ?? (current && !current.defaults.includes(name) ? String(current.limits[name]) : '');

  const save = async (event: Event) => {
    event.preventDefault();
    const change: LimitsChange = {};
    for (const { name, label: fieldLabel } of limitFields) {
      const text = inputValue(name).trim();
      if (text !== '' && !/^\d+$/.test(text)) return setStatus({ text: `${fieldLabel} must be a whole number (or empty for the default).`, failed: true });
      change[name] = text === '' ? null : Number(text);
    }
    setStatus(undefined);
    try {
      await admin.setLimits(account, change);
      setInputs({});
      loaded.reload();
      setStatus({ text: `Limits of ${label} saved.`, failed: false });
    } catch (err) {
      setStatus({ text: failureText(err, 'The limits could not be saved. Try again.'), failed: true });
    }
  };

  return (
    <section class="panel" aria-labelledby="limits-heading">
      <h2 id="limits-heading" tabIndex={-1} ref={heading}>
        Limits of {label}
      </h2>
      {loaded.error && (
        <p class="field-error" role="alert">
          {loaded.error}
        </p>
      )}
      {current && (
        <form onSubmit={save}>
          <p class="hint">Leave a field empty for the default from config.</p>
          <div class="field-row">
            {limitFields.map(({ name, label: fieldLabel, hint }) => (
              <div class="field" key={name}>
                <label for={`limit-${name}`}>{fieldLabel}</label>
                <input id={`limit-${name}`} inputMode="numeric" value={inputValue(name)} onInput={(e) => setInputs({ ...inputs, [name]: e.currentTarget.value })} placeholder={`default: ${current.limits[name]}`} aria-describedby={`limit-${name}-hint`} />
                <p class="hint" id={`limit-${name}-hint`}>
                  {hint}. Now {current.limits[name]}
                  {current.defaults.includes(name) ? ' (default)' : ''}
                </p>
              </div>
            ))}
          </div>
          <div class="actions">
            <button type="submit">Save limits</button>
            <button type="button" class="secondary" onClick={onClose}>
              Close
            </button>
          </div>
        </form>
      )}
      {status && (
        <p class={status.failed ? 'field-error' : 'hint'} role={status.failed ? 'alert' : 'status'}>
          {status.text}
        </p>
      )}
    </section>
  );
}
