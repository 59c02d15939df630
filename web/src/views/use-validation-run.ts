import { useState } from 'preact/hooks';
import type { ApiErrorBody } from '../api/http';
import { startStreamedRun, type RunningCall } from '../api/run-stream';
import type { OutputPart, RunEndData, TraceEvent } from '../api/types';
import { appendDelta } from '../conversation-store';

export interface ValidationRun {
  running: boolean;
  parts: OutputPart[];
  trace: TraceEvent[];
  end?: RunEndData;
  error?: ApiErrorBody;
  start(draftid: string): void;
  stop(): void;
}

/** A draft's validation run (validateDraftStream, streamed): its output, its trace and its end. */
export function useValidationRun(): ValidationRun {
  const [call, setCall] = useState<RunningCall | undefined>();
  const [parts, setParts] = useState<OutputPart[]>([]);
  const [trace, setTrace] = useState<TraceEvent[]>([]);
  const [end, setEnd] = useState<RunEndData | undefined>();
  const [error, setError] = useState<ApiErrorBody | undefined>();

  return {
    running: Boolean(call),
    parts,
    trace,
    end,
    error,
    start(draftid) {
      setParts([]);
      setTrace([]);
      setEnd(undefined);
      setError(undefined);
      const running = startStreamedRun('/api/dev/validateDraftStream', { draftid }, {
        onStart: () => undefined,
        onPart: (part) => setParts((p) => [...p, part]),
        onDelta: (text) => setParts((p) => appendDelta(p, text)),
        onTrace: (event) => setTrace((t) => [...t, event]),
      });
      setCall(running);
      void running.finished.then((outcome) => {
        setCall(undefined);
        if (outcome.kind === 'end') setEnd(outcome.data);
        else setError(outcome.error);
      });
    },
    stop() {
      void call?.stop().catch(() => undefined);
    },
  };
}
