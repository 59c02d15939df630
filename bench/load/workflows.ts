import { randomUUID } from 'node:crypto';
import type { ExecutionResponse } from '../../shared/api.js';
import { jsonOf, type ApiClient } from '../client.js';
import { dataOf, describeEvents } from '../exec.js';
import { delay, withTimeout } from '../stats.js';
import type { LoadAgentName } from './agents.js';
import type { Ledger } from './ledger.js';
import type { Tally } from './tally.js';

/**
 * What the load test's clients do. Each workflow makes its calls one after the other, spread over the
 * web processes, checks every answer against what the conversation's earlier calls imply, and writes
 * what must be kept into the ledger. A mismatch throws; the caller counts it.
 */

export interface LoadContext {
  /** One client per web process. */
  clients: ApiClient[];
  ledger: Ledger;
  tally: Tally;
  random: () => number;
  callTimeoutMs: number;
}

export type Workflow = (context: LoadContext) => Promise<void>;

const execPath = '/api/exec/execAgent';

function client(context: LoadContext): ApiClient {
  return context.clients[Math.floor(context.random() * context.clients.length)]!;
}

function query(): string {
  return `q${randomUUID().slice(0, 8)}`;
}

async function exec(context: LoadContext, kind: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<ExecutionResponse> {
  const sent = context.tally.time(kind, () => withTimeout(client(context).post(execPath, body, headers), context.callTimeoutMs, `${kind} call`));
  const answer = await sent.catch((err: unknown) => {
    if (typeof body.convid === 'string') context.ledger.uncertain(body.convid);
    throw err;
  });
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
  return jsonOf<ExecutionResponse>(answer);
}

function expect(condition: boolean, message: () => string): void {
  if (!condition) throw new Error(message());
}

function expectText(response: ExecutionResponse, expected: string[]): void {
  const texts = (response.output ?? []).map((part) => (part.type === 'text' ? part.text : `[${part.type}]`));
  expect(JSON.stringify(texts) === JSON.stringify(expected), () => `output ${JSON.stringify(texts)}, expected ${JSON.stringify(expected)}`);
}

/** One counter call on `convid` (or a new conversation): n and the history length must follow from the ledger. */
async function counterCall(context: LoadContext, kind: string, convid?: string): Promise<string> {
  const q = query();
  const response = await exec(context, kind, { agentName: 'ltCounter', inputs: { query: q }, ...(convid ? { convid } : {}) });
  expect(response.resultCode === 'success', () => `resultCode ${response.resultCode}: ${JSON.stringify(response.error)}`);
  expect(!convid || response.convid === convid, () => `answered for ${response.convid}, asked for ${convid}`);
  const before = context.ledger.current(response.convid);
  expectText(response, [`n=${(before.counts.ltCounter ?? 0) + 1} q=${q} h=${before.history.length}`]);
  context.ledger.kept(response.convid, 'ltCounter', q, 'success');
  return response.convid;
}

/** One call in a new conversation. */
const plain: Workflow = async (context) => {
  await counterCall(context, 'plain');
};

/** A conversation of 3 to 5 calls, each continuing the last, on any web process. */
const conversation: Workflow = async (context) => {
  const convid = await counterCall(context, 'plain');
  const more = 2 + Math.floor(context.random() * 3);
  for (let i = 0; i < more; i++) await counterCall(context, 'continued', convid);
};

/** A streamed call: start, the parts as they come, exactly one end as the last event. */
const streamed: Workflow = async (context) => {
  const q = query();
  const call = client(context).stream(execPath, { agentName: 'ltStreamer', inputs: { query: q }, stream: true });
  const events = await context.tally.time('streamed', () => withTimeout(call.done, context.callTimeoutMs, 'streamed call'));
  const names = events.map((e) => e.event);
  expect(names[0] === 'start' && names.at(-1) === 'end' && names.filter((n) => n === 'end').length === 1, () => describeEvents(events));
  const ids = events.map((e) => Number(e.id));
  expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!), () => `event ids out of order: ${ids.join(',')}`);
  const start = dataOf<{ convid: string }>(events[0]!);
  const end = dataOf<ExecutionResponse>(events.at(-1)!);
  expect(end.resultCode === 'success' && end.convid === start.convid, () => `end ${JSON.stringify(end).slice(0, 200)}`);
  let text = '';
  for (const event of events) {
    if (event.event === 'part') text += `|${dataOf<{ text: string }>(event).text}`;
    else if (event.event === 'delta') text += dataOf<{ text: string }>(event).text;
  }
  expect(text === `|first ${q} and more|n=1`, () => `streamed text ${JSON.stringify(text)}`);
  context.ledger.kept(start.convid, 'ltStreamer', q, 'success');
};

/** An ask answered in a second call (maybe through the other web process). */
const askAnswer: Workflow = async (context) => {
  const q = query();
  const asked = await exec(context, 'ask', { agentName: 'ltAsker', inputs: { query: q } });
  expect(asked.resultCode === 'ask' && asked.askInput?.inputs.length === 2, () => `ask answered ${JSON.stringify(asked).slice(0, 200)}`);
  context.ledger.kept(asked.convid, 'ltAsker', q, 'ask');
  const color = context.random() < 0.5 ? 'red' : 'blue';
  const answered = await exec(context, 'answer', { agentName: 'ltAsker', convid: asked.convid, inputs: { name: 'Ada', color } });
  expect(answered.resultCode === 'success', () => `answer ended ${answered.resultCode}: ${JSON.stringify(answered.error)}`);
  expectText(answered, [`hi Ada ${color} n=1`]);
  context.ledger.resumed(asked.convid, 'ltAsker');
};

/**
 * A cancel the server acknowledged this long before the run ended must have stopped it: the run only
 * sleeps, and a stop reaches its worker in milliseconds (a loaded machine's seconds are allowed for).
 */
const cancelReachesRunMs = 1_000;

/**
 * A call cancelled by its request id while it sleeps: it ends stopped and the conversation keeps nothing
 * of it. On an overloaded machine every cancel can come after the 3 s run ended (each waits its turn
 * like any request): the call then ends success and is kept, and is counted as a late cancel, not a
 * failure. A cancel acknowledged well before the run ended that did not stop it is a failure.
 */
const cancelled: Workflow = async (context) => {
  const convid = await counterCall(context, 'plain');
  const requestId = `lt-${randomUUID()}`;
  const q = query();
  const running = exec(context, 'cancelled', { agentName: 'ltSleeper', convid, inputs: { query: q } }, { 'X-Request-Id': requestId });
  let endedAt: number | undefined;
  void running.finally(() => (endedAt = performance.now())).catch(() => undefined);
  await delay(100 + context.random() * 200);
  let acknowledgedAt: number | undefined;
  // The call may not be registered yet when the first cancel arrives (cancelled: false): try again.
  for (let tries = 0; endedAt === undefined && tries < 40; tries++) {
    const cancel = await context.tally.time('cancel', () => client(context).post('/api/exec/cancel', { requestId }));
    expect(cancel.status === 200, () => `cancel answered HTTP ${cancel.status}`);
    if (jsonOf<{ cancelled: boolean }>(cancel).cancelled) {
      acknowledgedAt = performance.now();
      break;
    }
    await delay(50);
  }
  const response = await running;
  const stopMissed = acknowledgedAt !== undefined && endedAt! - acknowledgedAt > cancelReachesRunMs;
  if (response.resultCode === 'success' && !stopMissed) {
    expectText(response, ['woke']);
    context.tally.lateCancel();
    context.ledger.kept(convid, 'ltSleeper', q, 'success');
  } else {
    expect(response.resultCode === 'stopped', () => `the cancelled call ended ${response.resultCode}${stopMissed ? `, ${Math.round(endedAt! - acknowledgedAt!)} ms after its cancel was acknowledged` : ''}`);
    context.ledger.discarded(convid);
  }
  await counterCall(context, 'continued', convid);
};

/** The mix: weights add up to 100. */
export const workflowMix: { name: string; weight: number; calls: number; run: Workflow }[] = [
  { name: 'plain', weight: 30, calls: 1, run: plain },
  { name: 'conversation', weight: 25, calls: 4, run: conversation },
  { name: 'streamed', weight: 20, calls: 1, run: streamed },
  { name: 'askAnswer', weight: 15, calls: 2, run: askAnswer },
  { name: 'cancelled', weight: 10, calls: 4, run: cancelled },
];

export function pickWorkflow(random: () => number): (typeof workflowMix)[number] {
  let roll = random() * 100;
  for (const workflow of workflowMix) {
    roll -= workflow.weight;
    if (roll < 0) return workflow;
  }
  return workflowMix[0]!;
}

export const agentNames: LoadAgentName[] = ['ltCounter', 'ltStreamer', 'ltAsker', 'ltSleeper'];
