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
  sleeper: `export default async (sys) => {
  await sys.sleep(8000);
  sys.say('awake');
}`,
} as const;

export type BenchAgentName = keyof typeof benchAgents;
