/** The agents the bench publishes, by name. */
export const benchAgents = {
  hello: `export default async (sys) => sys.say('Hello, ' + (sys.query ?? 'world'))`,
  askName: `export default async (sys) => {
  const a = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] });
  sys.say('Hi ' + a.name);
}`,
  ticker: `export default async (sys) => {
  for (let i = 0; i < 20; i++) {
    sys.say(String(Date.now()));
    await sys.sleep(20);
  }
}`,
  busy: `export default async (sys) => {
  sys.say('go');
  while (true) {}
}`,
  callsHello: `export default async (sys) => {
  await sys.sleep(0); // a first run's first wait confirms its agent version: not the call's cost
  const t0 = Date.now();
  const child = await sys.call('hello', { query: 'child' });
  sys.say(JSON.stringify({ waited: Date.now() - t0, runId: child.runId, resultCode: child.resultCode }));
}`,
  sleeper: `export default async (sys) => {
  await sys.sleep(8000);
  sys.say('awake');
}`,
} as const;

export type BenchAgentName = keyof typeof benchAgents;
