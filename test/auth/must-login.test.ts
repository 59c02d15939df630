import assert from 'node:assert/strict';
import { createBrowser, type Browser } from '../helpers/browser.js';
import { createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { startStackWithMail, type MailStack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';
import { isRunActive, ticketsTaken, waitFor } from '../helpers/wait.js';

describe('mustLogin: the session ends while its run is going', function () {
  const clock = createTestClock();
  let smtp: TestSmtp;
  let stack: MailStack;
  const agentName = uniqueAgentName('counter');

  before(async () => {
    stack = await startStackWithMail({}, { clock });
    smtp = stack.smtp;
    await publishAgent(
      stack.runtime.db,
      agentName,
      `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('n=' + sys.vars.n); if (sys.inputs.wait) await sys.sleep(sys.inputs.wait); }`,
    );
  });
  after(() => stack.close());

  /** A signed-in user with a conversation whose counter is at 1, and a second tab on the same session. */
  async function signedInWithConversation() {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    const tab = createBrowser(stack.url);
    assert.equal((await tab.post('/api/auth/login', { email: user.email, password })).status, 200);
    const otherTab = createBrowser(stack.url);
    otherTab.cookie = tab.cookie;
    const first = await tab.post('/api/exec/execAgent', { agentName });
    assert.equal(first.body.resultCode, 'success');
    return { user, tab, otherTab, convid: first.body.convid as string };
  }

  /** Starts a long run in `tab` and waits until it holds its conversation; `answer` is its pending response. */
  async function startLongRun(tab: Browser, convid: string) {
    const answer = tab.post('/api/exec/execAgent', { agentName, convid, inputs: { wait: 4000 } });
    await waitFor(() => isRunActive(convid), 5000, 'the run to start');
    return { answer };
  }

  async function assertNothingKept(convid: string, userId: string) {
    const conversation = await stack.runtime.db.selectFrom('conversations').selectAll().where('id', '=', convid).executeTakeFirstOrThrow();
    assert.deepEqual(conversation.agent_vars[agentName], { n: 1 }, 'the variables are as before the run');
    assert.equal(conversation.history.length, 1);
    const ended = await stack.runtime.db.selectFrom('executions').select('result_code').where('principal_id', '=', userId).where('result_code', '=', 'mustLogin').execute();
    assert.equal(ended.length, 1, 'the run is recorded for the error report');
  }

  it('logout in another tab ends the run with mustLogin, and nothing of it is kept', async () => {
    const { user, tab, otherTab, convid } = await signedInWithConversation();
    const running = await startLongRun(tab, convid);
    const started = Date.now();
    assert.equal((await otherTab.post('/api/auth/logout', {})).status, 200);
    const answer = await running.answer;
    assert.equal(answer.status, 200);
    assert.equal(answer.body.resultCode, 'mustLogin');
    assert.ok(Date.now() - started < 3000, 'ended when the session did, not when the agent would have');
    await assertNothingKept(convid, user.id);
  });

  it('a call waiting for its turn behind the run ends with mustLogin too', async () => {
    const { user, tab, otherTab, convid } = await signedInWithConversation();
    const running = await startLongRun(tab, convid);
    const tickets = await ticketsTaken(convid);
    const waiting = tab.post('/api/exec/execAgent', { agentName, convid });
    await waitFor(async () => (await ticketsTaken(convid)) > tickets, 5000, 'the second call to wait for its turn');
    await otherTab.post('/api/auth/logout', {});
    const [first, second] = [await running.answer, await waiting];
    assert.equal(first.body.resultCode, 'mustLogin');
    assert.equal(second.body.resultCode, 'mustLogin');
    const conversation = await stack.runtime.db.selectFrom('conversations').selectAll().where('id', '=', convid).executeTakeFirstOrThrow();
    assert.deepEqual(conversation.agent_vars[agentName], { n: 1 });
    const ended = await stack.runtime.db.selectFrom('executions').select('id').where('principal_id', '=', user.id).where('result_code', '=', 'mustLogin').execute();
    assert.equal(ended.length, 2);
  });

  it('a password reset ends the run with mustLogin', async () => {
    const { user, tab, convid } = await signedInWithConversation();
    const running = await startLongRun(tab, convid);
    await createBrowser(stack.url).post('/api/auth/emailCode', { email: user.email });
    const code = await smtp.waitForCode(user.email);
    const reset = await createBrowser(stack.url).post('/api/auth/createPasswordWithEmailCode', { email: user.email, code, password: strongPassword() });
    assert.equal(reset.status, 200);
    const answer = await running.answer;
    assert.equal(answer.body.resultCode, 'mustLogin');
    await assertNothingKept(convid, user.id);
  });

  it('idle expiry during a streamed run ends it with mustLogin (the run is not activity)', async () => {
    const { user, tab, convid } = await signedInWithConversation();
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName, convid, stream: true, inputs: { wait: 4000 } }, {
      headers: { Cookie: tab.cookie!, Origin: stack.url },
    });
    await stream.next((e) => e.event === 'part');
    clock.advance(31 * 60_000);
    const end = await stream.next((e) => e.event === 'end', 3000);
    assert.equal(end.data.resultCode, 'mustLogin');
    await assertNothingKept(convid, user.id);
    assert.equal((await tab.post('/api/user/getUserProfile', {})).status, 401);
  });

  it('a run whose session lives on ends normally', async () => {
    const { tab, convid } = await signedInWithConversation();
    const answer = await tab.post('/api/exec/execAgent', { agentName, convid, inputs: { wait: 1500 } });
    assert.equal(answer.body.resultCode, 'success');
    assert.deepEqual(answer.body.output, [{ type: 'text', text: 'n=2' }]);
  });
});
