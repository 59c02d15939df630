import type { ExecutionResponse, OutputPart, RunEvent } from './types.js';

/**
 * A streamed run's events folded into the execution response a non-streamed call answers: the `end`
 * event's fields (`resultCode`, `convid`, `agentName`, `askInput`, `error`, and for a draft's
 * validation its fields) with `output` made of the `part` events, each `delta` appended to the text
 * part before it (or starting one), as the server does. `trace` events are not part of it.
 */
export interface ResponseAssembler {
  add(event: RunEvent): void;
  /** The response, once the `end` event was added; undefined before. */
  response(): ExecutionResponse | undefined;
}

export function createResponseAssembler(): ResponseAssembler {
  const output: OutputPart[] = [];
  let end: Omit<ExecutionResponse, 'output'> | undefined;
  return {
    add(event) {
      if (event.event === 'part') output.push(event.data);
      else if (event.event === 'delta') appendDelta(output, event.data.text);
      else if (event.event === 'end') end = event.data;
    },
    response() {
      if (!end) return undefined;
      const { resultCode, convid, agentName, ...rest } = end;
      return { resultCode, convid, agentName, output: [...output], ...rest };
    },
  };
}

/** The execution response of a streamed run's events (all of them, `end` included). */
export function assembleResponse(events: Iterable<RunEvent>): ExecutionResponse {
  const assembler = createResponseAssembler();
  for (const event of events) assembler.add(event);
  const response = assembler.response();
  if (!response) throw new TypeError('assembleResponse needs the events of a whole run: no end event among them');
  return response;
}

function appendDelta(output: OutputPart[], text: string): void {
  const last = output[output.length - 1];
  if (last?.type === 'text') output[output.length - 1] = { type: 'text', text: last.text + text };
  else output.push({ type: 'text', text });
}

/**
 * A streamed call's events (an async generator, as before) that can also answer the whole run:
 * `finalResponse()` reads the events not read yet and resolves with the execution response a
 * non-streamed call would have answered; it rejects with the stream's error (an AgentexecError), or
 * when the loop over the events was left before the end.
 */
export interface RunStream extends AsyncGenerator<RunEvent, void, undefined> {
  finalResponse(): Promise<ExecutionResponse>;
}

export function withFinalResponse(events: AsyncGenerator<RunEvent, void, undefined>): RunStream {
  const assembler = createResponseAssembler();
  let failure: { error: unknown } | undefined;
  const recorded = (async function* () {
    try {
      for await (const event of events) {
        assembler.add(event);
        yield event;
      }
    } catch (err) {
      failure = { error: err };
      throw err;
    }
  })();
  return Object.assign(recorded, {
    async finalResponse(): Promise<ExecutionResponse> {
      if (!failure && !assembler.response()) while (!(await recorded.next()).done);
      if (failure) throw failure.error;
      const response = assembler.response();
      if (!response) throw new Error('The loop over the stream was left before its end event: the run goes on, but its response was not read.');
      return response;
    },
  });
}
