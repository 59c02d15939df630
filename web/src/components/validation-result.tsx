import type { ValidationRun } from '../views/use-validation-run';
import { OutputParts } from './output-parts';
import { ResultMessage } from './result-message';
import { TraceList } from './trace-list';

/** What a validation run made: its output as users would see it, its end, the runtime error and the trace. */
export function ValidationResult({ run }: { run: ValidationRun }) {
  const { end, error } = run;
  if (!run.running && !end && !error && !run.parts.length) return null;
  return (
    <section class="validation" aria-labelledby="validation-heading">
      <h2 id="validation-heading">Validation run</h2>
      <div role="status" class="validation-status">
        {run.running && 'Running…'}
        {end && (end.validationSuccess ? `Validation passed (${end.resultCode}).` : `Validation failed (${end.resultCode}).`)}
      </div>
      <div class="transcript" role="log" aria-live="polite" aria-label="Draft output">
        <OutputParts parts={run.parts} />
      </div>
      {/* A failed validation is explained to its developer below (compile errors, runtime error), not as users see it. */}
      <ResultMessage end={end?.runtimeError || end?.compileErrors?.length ? undefined : end} error={error} />
      {end?.compileErrors && end.compileErrors.length > 0 && <p class="field-error">The draft does not compile: see the compile errors above.</p>}
      {end?.runtimeError && (
        <p class="field-error">
          Runtime error{end.runtimeError.line ? ` at line ${end.runtimeError.line}${end.runtimeError.column ? `, column ${end.runtimeError.column}` : ''}` : ''}: {end.runtimeError.message}
        </p>
      )}
      {run.trace.length > 0 && <h3>Trace</h3>}
      <TraceList events={run.trace} />
    </section>
  );
}
