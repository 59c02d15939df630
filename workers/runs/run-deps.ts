import type { OutputPart } from '../../shared/api.js';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../shared/config.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { TraceEvent } from '../../shared/trace.js';
import type { Db } from '../../db/database.js';
import type { ConversationCommits } from '../../runs/conversation-commits.js';
import type { ConversationReader } from '../../runs/conversation-reader.js';
import type { FirstRunWriter } from '../../runs/first-run-writer.js';
import type { ConversationTurns } from '../../runs/turns.js';
import type { HeldConversation } from './held-conversation.js';
import type { ContextPool } from '../sandbox/context-pool.js';
import type { AgentCodeCache } from './agent-code-cache.js';
import type { AgentSecretsCache } from './agent-secrets-cache.js';
import type { StartGate } from './start-gate.js';
import type { ChildRuns } from './child-runs.js';

/** What a worker's run of an agent needs (built once per worker, run-worker.ts). */
export interface RunDeps {
  config: Config;
  db: Db;
  box: SecretBox;
  clock: Clock;
  agents: AgentCodeCache;
  secrets: AgentSecretsCache;
  turns: ConversationTurns<HeldConversation>;
  isolates: ContextPool;
  conversations: ConversationReader;
  firstRuns: FirstRunWriter;
  commits: ConversationCommits;
  /** Orders the starts of the runs this worker holds by their fair priority (absent in the web process's short runs). */
  startGate?: StartGate;
  /** Starts and awaits the child runs of sys.call (absent in the web process's short runs, which never make one). */
  childRuns?: ChildRuns;
}

/** Where the parts of a logged run (streamed, or joinable) go as they are made. */
export interface RunEventSink {
  part(part: OutputPart): void;
  delta(text: string): void;
  trace(event: TraceEvent): void;
}
