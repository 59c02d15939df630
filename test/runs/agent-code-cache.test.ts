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
