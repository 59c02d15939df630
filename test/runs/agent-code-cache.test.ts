import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../../db/database.js';
import { insertAgentVersion } from '../../db/agents.repository.js';
import { createAgentCodeCache } from '../../workers/runs/agent-code-cache.js';
import { testEnv } from '../helpers/test-env.js';

/** The worker's agent code cache: the latest version read per call (in groups), the code kept. */
describe('agent code cache', () => {
  let db: Db;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
  });
  after(() => db.destroy());

  const publish = (name: string, text: string) => insertAgentVersion(db, name, { source: text, code: `/* ${text} */`, sourceMap: '{}' });

  it('answers calls asking together for several agents, and undefined for an agent that does not exist', async () => {
    const [one, two, missing] = [`one${randomUUID().slice(0, 8)}`, `two${randomUUID().slice(0, 8)}`, `none${randomUUID().slice(0, 8)}`];
    await publish(one, 'one v1');
    await publish(two, 'two v1');
    await publish(two, 'two v2');
    const agents = createAgentCodeCache();
    const answers = await Promise.all([one, two, missing, one].map((name) => agents.latest(db, name)));
    assert.deepEqual(
      answers.map((agent) => agent && [agent.name, agent.version, agent.code]),
      [[one, 1, '/* one v1 */'], [two, 2, '/* two v2 */'], undefined, [one, 1, '/* one v1 */']],
    );
  });

  it('reads the code of a version once for the calls asking for it together, and again after a read that failed', async () => {
    const name = `burst${randomUUID().slice(0, 8)}`;
    await publish(name, 'v1');
    let codeReads = 0;
    // Counts the statements that read a whole version, its code (the latest-version reads select numbers only).
    const counted = db.withPlugin({
      transformQuery(args) {
        const node = args.node as { kind: string; selections?: { selection: { kind: string } }[] };
        if (node.kind === 'SelectQueryNode' && node.selections?.some((s) => s.selection.kind === 'SelectAllNode')) codeReads += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const agents = createAgentCodeCache();
    const answers = await Promise.all(Array.from({ length: 20 }, () => agents.version(counted, name, 1)));
    assert.deepEqual(new Set(answers.map((agent) => agent?.code)), new Set(['/* v1 */']));
    assert.equal(codeReads, 1);
    const broken = db.withPlugin({
      transformQuery: () => {
        throw new Error('PostgreSQL unreachable');
      },
      transformResult: async (args) => args.result,
    });
    const other = createAgentCodeCache();
    await assert.rejects(Promise.all([other.version(broken, name, 1), other.version(broken, name, 1)]), /unreachable/);
    assert.equal((await other.version(counted, name, 1))?.code, '/* v1 */');
    assert.equal(codeReads, 2);
  });

  it('runs a version published before the call at once', async () => {
    const name = `fresh${randomUUID().slice(0, 8)}`;
    const agents = createAgentCodeCache();
    await publish(name, 'v1');
    assert.equal((await agents.latest(db, name))?.version, 1);
    await publish(name, 'v2');
    const [first, second] = await Promise.all([agents.latest(db, name), agents.latest(db, name)]);
    assert.deepEqual([first?.code, second?.code], ['/* v2 */', '/* v2 */']);
  });

  it('remembers the latest version it last read of each agent, and forgets an agent the read no longer finds', async () => {
    const name = `remembered${randomUUID().slice(0, 8)}`;
    const agents = createAgentCodeCache();
    assert.equal(agents.lastRead(name), undefined);
    await publish(name, 'v1');
    await agents.latestVersion(db, name);
    assert.equal(agents.lastRead(name), 1);
    await publish(name, 'v2');
    assert.equal(agents.lastRead(name), 1, 'a publish is seen by the next read, not before');
    await agents.latest(db, name);
    assert.equal(agents.lastRead(name), 2);
    await db.deleteFrom('agent_versions').where('agent_name', '=', name).execute();
    await db.deleteFrom('agents').where('name', '=', name).execute();
    await agents.latestVersion(db, name);
    assert.equal(agents.lastRead(name), undefined);
  });
});
