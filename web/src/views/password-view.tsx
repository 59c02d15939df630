import { useEffect, useRef, useState } from 'preact/hooks';
import { useDocumentTitle } from '../document-title';
import { ApiError, postJson } from '../api/http';
import type { PasswordHelp } from '../api/types';
import { PasswordRules, ruleStates } from '../components/password-rules';
import { errorMessage } from '../messages';
import { followLink } from '../router';

/**
 * First password or reset (the same two calls, spec §5): an emailed code, then the code and the new
 * password, with the server's rules shown and checked as the user types. Signs in once it is set.
 */
export function PasswordView({ onSignedIn }: { onSignedIn(): Promise<void> }) {
  const [help, setHelp] = useState<PasswordHelp | undefined>();
  const [email, setEmail] = useState('');
  const [codeSent, setCodeSent] = useState(false);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [refused, setRefused] = useState<string[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  /** When no new code was sent because one was, less than a minute ago: until when to wait (ms since the epoch). */
  const [codeWaitUntil, setCodeWaitUntil] = useState<number | undefined>();
  const secondsLeft = useSecondsUntil(codeWaitUntil);
  const codeInput = useRef<HTMLInputElement>(null);
  useDocumentTitle('Set your password');

  useEffect(() => {
    postJson<PasswordHelp>('/api/auth/getPasswordHelp', {}, { signedIn: false }).then(setHelp, () => setError('The password rules could not be loaded. Reload the page.'));
  }, []);
  useEffect(() => {
    if (codeSent) codeInput.current?.focus();
  }, [codeSent]);

  const attempt = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'passwordRules') setRefused((err.body.details?.rules as string[] | undefined) ?? []);
      setError(err instanceof ApiError ? errorMessage(err.body) : 'That did not work. Try again.');
    } finally {
      setBusy(false);
    }
  };
  const sendCode = (event: Event) => {
    event.preventDefault();
    void attempt(async () => {
      try {
        await postJson('/api/auth/emailCode', { email: email.trim() }, { signedIn: false });
        setCodeWaitUntil(undefined);
      } catch (err) {
        // One code a minute per address: the one sent less than a minute ago still works.
        if (!(err instanceof ApiError && err.code === 'rateLimited')) throw err;
        const seconds = Number(err.body.details?.retryAfterSeconds) || 60;
        setCodeWaitUntil(Date.now() + seconds * 1000);
      }
      setCodeSent(true);
    });
  };
  const setNewPassword = (event: Event) => {
    event.preventDefault();
    void attempt(async () => {
      await postJson('/api/auth/createPasswordWithEmailCode', { email: email.trim(), code: code.trim(), password }, { signedIn: false });
      await postJson('/api/auth/login', { email: email.trim(), password }, { signedIn: false });
      await onSignedIn();
    });
  };

  const states = help ? ruleStates(help, password, email, password ? refused : []) : {};
  const errorLine = error && (
    <p class="field-error" role="alert" id="password-error">
      {error}
    </p>
  );
  return (
    <main class="narrow" id="main">
      <h1>Set your password</h1>
      <form onSubmit={sendCode}>
        <p class="hint">We email you a one-time code. It works for a first password and to replace a forgotten one.</p>
        <div class="field">
          <label for="code-email">Email address</label>
          <input id="code-email" type="email" autocomplete="username" required value={email} readOnly={codeSent} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        {!codeSent && errorLine}
        <button type="submit" class={codeSent ? 'secondary' : ''} disabled={busy || !email.trim() || secondsLeft > 0}>
          {codeSent ? (secondsLeft > 0 ? `Send another code (in ${secondsLeft} s)` : 'Send another code') : 'Email me a code'}
        </button>
      </form>
      {codeSent && (
        <form onSubmit={setNewPassword}>
          <p class="notice" role="status">
            {codeWaitUntil !== undefined
              ? 'No new code was sent: one was asked for this address less than a minute ago, and codes go out at most once a minute. Use the code from that email.'
              : 'If the address belongs to an account, a code is on its way. It is valid for a few minutes.'}
          </p>
          {codeWaitUntil !== undefined && (
            // Outside the live region: a countdown announced every second would drown the page.
            <p class="hint" id="code-wait">
              {secondsLeft > 0 ? `You can ask for another code in ${secondsLeft} s.` : 'You can ask for another code now.'}
            </p>
          )}
          <div class="field">
            <label for="code">Code from the email</label>
            <input id="code" ref={codeInput} inputMode="numeric" autocomplete="one-time-code" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="new-password">New password</label>
            <input
              id="new-password"
              type="password"
              autocomplete="new-password"
              required
              aria-describedby="password-rules"
              value={password}
              onInput={(e) => {
                setPassword(e.currentTarget.value);
                setRefused([]);
              }}
            />
            {help && <PasswordRules help={help} states={states} id="password-rules" />}
          </div>
          {errorLine}
          <button type="submit" disabled={busy}>
            Set password and sign in
          </button>
        </form>
      )}
      <p>
        <a href="/" onClick={followLink}>
          Back to sign in
        </a>
      </p>
    </main>
  );
}

/** The whole seconds left until `until` (ms since the epoch), counting down once a second; 0 once passed or when there is none. */
function useSecondsUntil(until: number | undefined): number {
  const left = () => (until === undefined ? 0 : Math.max(0, Math.ceil((until - Date.now()) / 1000)));
  const [seconds, setSeconds] = useState(left);
  useEffect(() => {
    setSeconds(left());
    if (until === undefined) return;
    const timer = setInterval(() => {
      const now = left();
      setSeconds(now);
      if (now === 0) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [until]);
  return seconds;
}
