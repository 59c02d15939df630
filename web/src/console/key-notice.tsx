import { useEffect, useRef } from 'preact/hooks';

/**
 * A service account's new key, shown once: it is in the answer that made it and nowhere else, so the
 * notice says to copy it now; Done forgets it.
 */
export function KeyNotice({ name, keyText, onDone }: { name: string; keyText: string; onDone(): void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [keyText]);
  return (
    <section class="notice key-notice" aria-labelledby="key-notice-heading">
      <h2 id="key-notice-heading" tabIndex={-1} ref={heading}>
        New key of {name}
      </h2>
      <p>Copy it now: it is shown only this once. Only its hash is stored.</p>
      <p>
        <code class="secret-key">{keyText}</code>
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        Done
      </button>
    </section>
  );
}
