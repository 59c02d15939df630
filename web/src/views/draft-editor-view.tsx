import { useEffect, useRef, useState } from 'preact/hooks';
import { useDocumentTitle } from '../document-title';
import { ApiError, postJson } from '../api/http';
import type { CompileError, Draft } from '../api/types';
import { CodeEditor, moveCursor } from '../components/code-editor';
import { ValidationResult } from '../components/validation-result';
import { errorMessage } from '../messages';
import { navigate } from '../router';
import { useValidationRun } from './use-validation-run';

const template = `import type { Sys } from './sys';

export default async function agent(sys: Sys) {
  sys.say(\`You asked: \${sys.query ?? '(nothing)'}\`);
}
`;

/** Edits a draft agent: its name, validation query and source; Validate runs it with its trace; Publish makes it an agent version. */
export function DraftEditorView({ draftid: routeDraftid }: { draftid?: string }) {
  const [draftid, setDraftid] = useState(routeDraftid);
  const [agentName, setAgentName] = useState('');
  const [validationQuery, setValidationQuery] = useState('');
  const [source, setSource] = useState(routeDraftid ? '' : template);
  const [compileErrors, setCompileErrors] = useState<CompileError[]>([]);
  const [message, setMessage] = useState<{ text: string; error?: boolean } | undefined>();
  const [busy, setBusy] = useState(false);
  const validation = useValidationRun();
  const errorsHeading = useRef<HTMLHeadingElement>(null);
  useDocumentTitle(...(draftid ? [agentName || undefined, 'draft'] : ['New draft']));

  useEffect(() => {
    if (!routeDraftid || (routeDraftid === draftid && agentName)) return;
    postJson<Draft>('/api/dev/getDraft', { draftid: routeDraftid }).then(
      (draft) => {
        setDraftid(draft.draftid);
        setAgentName(draft.agentName);
        setValidationQuery(draft.validationQuery);
        setSource(draft.source);
        setCompileErrors(draft.compileErrors);
      },
      (err: unknown) => setMessage({ text: err instanceof ApiError ? errorMessage(err.body) : 'The draft could not be loaded.', error: true }),
    );
  }, [routeDraftid]);

  // The validation run's end has the compile errors of what it ran.
  useEffect(() => {
    if (validation.end?.compileErrors) showCompileErrors(validation.end.compileErrors);
  }, [validation.end]);

  const showCompileErrors = (errors: CompileError[]) => {
    setCompileErrors(errors);
    if (errors.length) requestAnimationFrame(() => errorsHeading.current?.focus());
  };

  /** Saves the draft; answers its id, or undefined when saving failed (the message says why). */
  const save = async (): Promise<string | undefined> => {
    try {
      const saved = await postJson<{ draftid: string; compileErrors: CompileError[] }>('/api/dev/saveDraft', { ...(draftid ? { draftid } : {}), agentName: agentName.trim(), source, validationQuery });
      setDraftid(saved.draftid);
      navigate(`/dev/drafts/${encodeURIComponent(saved.draftid)}`, { replace: true });
      showCompileErrors(saved.compileErrors);
      return saved.draftid;
    } catch (err) {
      const fields = err instanceof ApiError ? (err.body.details?.fields as Record<string, string> | undefined) : undefined;
      const detail = fields ? ` ${Object.entries(fields).map(([field, problem]) => `${field}: ${problem}`).join('; ')}` : '';
      setMessage({ text: `${err instanceof ApiError ? errorMessage(err.body) : 'Saving failed.'}${detail}`, error: true });
      return undefined;
    }
  };
  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setMessage(undefined);
    try {
      await work();
    } finally {
      setBusy(false);
    }
  };
  const onSave = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      if (await save()) setMessage({ text: 'Saved.' });
    });
  };
  const onValidate = () =>
    void act(async () => {
      const id = await save();
      if (id) validation.start(id);
    });
  const onPublish = () =>
    void act(async () => {
      const id = await save();
      if (!id) return;
      try {
        const published = await postJson<{ agentName: string; version: number }>('/api/dev/publishDraft', { draftid: id });
        setMessage({ text: `Published ${published.agentName}, version ${published.version}.` });
      } catch (err) {
        const errors = err instanceof ApiError ? (err.body.details?.compileErrors as CompileError[] | undefined) : undefined;
        if (errors) showCompileErrors(errors);
        setMessage({ text: err instanceof ApiError ? errorMessage(err.body) : 'Publishing failed.', error: true });
      }
    });

  return (
    <section aria-labelledby="draft-heading" class="draft-editor">
      <h1 id="draft-heading">{draftid ? `Draft ${agentName}` : 'New draft'}</h1>
      <form onSubmit={onSave}>
        <div class="field">
          <label for="agent-name">Agent name</label>
          <input id="agent-name" required pattern="[A-Za-z][A-Za-z0-9_\-]{0,63}" value={agentName} onInput={(e) => setAgentName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="validation-query">Validation query</label>
          <input id="validation-query" value={validationQuery} onInput={(e) => setValidationQuery(e.currentTarget.value)} />
          <p class="hint">Validate runs the draft with this as sys.query.</p>
        </div>
        <div class="field">
          <label for="source">Source</label>
          <CodeEditor id="source" value={source} errors={compileErrors} onChange={setSource} describedBy={compileErrors.length ? 'compile-errors' : undefined} />
        </div>
        {compileErrors.length > 0 && (
          <div class="compile-errors" id="compile-errors">
            <h2 tabIndex={-1} ref={errorsHeading}>
              {compileErrors.length === 1 ? '1 compile error' : `${compileErrors.length} compile errors`}
            </h2>
            <ul>
              {compileErrors.map((error, index) => (
                <li key={index}>
                  <button type="button" class="link" onClick={() => moveCursor('source', source, error.line, error.column)}>
                    Line {error.line}, column {error.column}
                  </button>
                  : {error.message}
                </li>
              ))}
            </ul>
          </div>
        )}
        <div class="actions">
          <button type="submit" class="secondary" disabled={busy || validation.running}>
            Save
          </button>
          {validation.running ? (
            <button type="button" class="stop" onClick={validation.stop}>
              Stop
            </button>
          ) : (
            <button type="button" onClick={onValidate} disabled={busy}>
              Validate
            </button>
          )}
          <button type="button" class="secondary" onClick={onPublish} disabled={busy || validation.running}>
            Publish
          </button>
        </div>
        {message && (
          <p class={message.error ? 'field-error' : 'notice'} role={message.error ? 'alert' : 'status'}>
            {message.text}
          </p>
        )}
      </form>
      <ValidationResult run={validation} />
    </section>
  );
}
