import { useEffect, useRef, useState } from 'preact/hooks';
import { useDocumentTitle } from '../document-title';
import { ApiError, postJson } from '../api/http';
import { errorMessage } from '../messages';
import { followLink } from '../router';

/** Sign-in by email and password; `notice` says why the user is here (a session that ended). */
export function SignInView({ notice, onSignedIn }: { notice?: string; onSignedIn(): Promise<void> }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  useDocumentTitle('Sign in');

  useEffect(() => (notice ? heading.current : emailInput.current)?.focus(), [notice]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await postJson('/api/auth/login', { email: email.trim(), password }, { signedIn: false });
      await onSignedIn();
    } catch (err) {
      setError(err instanceof ApiError ? errorMessage(err.body) : 'Signing in failed. Try again.');
      setBusy(false);
      emailInput.current?.focus();
    }
  };

  return (
    <main class="narrow" id="main">
      <h1 tabIndex={-1} ref={heading}>
        Sign in
      </h1>
      {notice && (
        <p class="notice" role="alert">
          {notice}
        </p>
      )}
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <div class="field">
          <label for="email">Email address</label>
          <input id="email" ref={emailInput} type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </div>
        {error && (
          <p class="field-error" id="sign-in-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p>
        New here, or forgot your password?{' '}
        <a href="/password" onClick={followLink}>
          Set a password with an emailed code
        </a>
      </p>
    </main>
  );
}
