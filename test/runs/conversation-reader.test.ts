import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../../db/database.js';
import { recordFirstRuns } from '../../db/run-commit.repository.js';
import { createConversationReader } from '../../runs/conversation-reader.js';
import { publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { testEnv } from '../helpers/test-env.js';

/** The reads of runs starting together share a statement (runs/conversation-reader.ts), each answered as asked. */
describe('conversation reader', () => {
  let db: Db;
  /** Statements sent through `counted`. */
  let statements: number;
  let counted: Db;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
    counted = db.withPlugin({
      transformQuery: (args) => {
        statements += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
  });
  after(() => db.destroy());
  beforeEach(() => {
    statements = 0;
  });

  const owner = randomUUID();

  /** A new conversation whose first run left `n`, paused on an ask when `asks`. */
  const conversation = async (n: number, asks = false) => {
    const convid = randomUUID();
    const now = new Date();
    const runId = randomUUID();
    const added = { agentName: 'reader', query: `call ${n}`, resultCode: asks ? ('ask' as const) : ('success' as const), at: now.toISOString() };
    await recordFirstRuns(db, [
      {
        conversation: { id: convid, ownerKind: 'serviceAccount', ownerId: owner, plan: 'free', now },
        state: { agentVars: { reader: { n } }, convVars: {}, history: [added], added },
        ...(asks ? { pause: { convid, now, agentName: 'reader', agentVersion: 1, ask: { message: 'more?', inputs: [] }, journal: [], startState: { inputs: {}, vars: {}, conv: {}, history: [], randomSeed: 1 } } } : {}),
        execution: { id: runId, convid, agent_name: 'reader', agent_version: 1, draft_id: null, principal_kind: 'serviceAccount', principal_id: owner, request_id: runId, result_code: asks ? 'ask' : 'success', error_message: null, response: '{}', started_at: now, finished_at: now, duration_ms: 0 },
      },
    ]);
    return convid;
  };

  it('reads the conversations asked for in one turn in one statement, each answer where it was asked', async () => {
    const agentName = uniqueAgentName('reader');
    await publishAgent(db, agentName, `export default async (sys) => sys.say('v1')`);
    const latest = await publishAgent(db, agentName, `export default async (sys) => sys.say('v2')`);
    const [plain, paused] = [await conversation(1), await conversation(2, true)];
    const reader = createConversationReader(counted);
    const missing = randomUUID();
    const reads = await Promise.all([
      reader.read({ id: paused, latestOf: agentName }),
      reader.read({ id: missing, latestOf: agentName }),
      reader.read({ id: plain }),
      reader.read({ id: plain, latestOf: agentName }),
    ]);
    assert.equal(statements, 1);
    assert.equal(reads[0]?.conversation.id, paused);
    assert.deepEqual(reads[0]?.conversation.agent_vars, { reader: { n: 2 } });
    assert.equal(reads[0]?.pause?.ask.message, 'more?');
    assert.equal(reads[0]?.latestVersion, latest);
    assert.equal(reads[1], undefined, 'a conversation that does not exist');
    assert.equal(reads[2]?.conversation.id, plain);
    assert.equal(reads[2]?.pause, undefined);
    assert.equal(reads[2]?.latestVersion, undefined, 'no agent asked for (a draft)');
    assert.equal(reads[3]?.latestVersion, latest);
    assert.deepEqual(reads[3]?.conversation, reads[2]?.conversation);
  });

  it('reads again in the next turn with a statement of its own', async () => {
    const convid = await conversation(3);
    const reader = createConversationReader(counted);
    const first = await reader.read({ id: convid });
    const second = await reader.read({ id: convid });
    assert.equal(statements, 2);
    assert.deepEqual(first, second);
  });
});
