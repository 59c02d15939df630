import { useRef } from 'preact/hooks';
import type { CompileError } from '../api/types';

interface CodeEditorProps {
  id: string;
  value: string;
  errors: CompileError[];
  onChange(value: string): void;
  describedBy?: string;
}

/**
 * A plain textarea for source code, with line numbers beside it; lines with a compile error are
 * marked in the gutter. Tab inserts two spaces (Escape, then Tab, leaves the editor).
 */
export function CodeEditor({ id, value, errors, onChange, describedBy }: CodeEditorProps) {
  const gutter = useRef<HTMLDivElement>(null);
  const escaped = useRef(false);
  const lineCount = value.split('\n').length;
  const errorLines = new Set(errors.map((e) => e.line));

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') escaped.current = true;
    if (event.key !== 'Tab' || event.shiftKey || escaped.current) {
      if (event.key !== 'Escape') escaped.current = false;
      return;
    }
    event.preventDefault();
    const area = event.currentTarget as HTMLTextAreaElement;
    const { selectionStart: start, selectionEnd: end } = area;
    onChange(`${value.slice(0, start)}  ${value.slice(end)}`);
    requestAnimationFrame(() => area.setSelectionRange(start + 2, start + 2));
  };

  return (
    <div class="code-editor">
      <div class="gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: lineCount }, (_, index) => (
          <div key={index} class={errorLines.has(index + 1) ? 'gutter-line has-error' : 'gutter-line'} data-line={index + 1}>
            {index + 1}
          </div>
        ))}
      </div>
      <textarea
        id={id}
        class="code"
        spellcheck={false}
        autocapitalize="off"
        wrap="off"
        rows={Math.max(12, lineCount + 1)}
        value={value}
        aria-describedby={describedBy}
        aria-invalid={errors.length ? true : undefined}
        onInput={(event) => onChange(event.currentTarget.value)}
        onKeyDown={onKeyDown}
        onScroll={(event) => {
          if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
        }}
      />
    </div>
  );
}

/** Puts the cursor of the editor `id` at `line`:`column` (1-based) and focuses it. */
export function moveCursor(id: string, source: string, line: number, column: number): void {
  const area = document.getElementById(id) as HTMLTextAreaElement | null;
  if (!area) return;
  const lines = source.split('\n');
  const offset = lines.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0) + Math.max(0, column - 1);
  area.focus();
  area.setSelectionRange(offset, offset);
}
