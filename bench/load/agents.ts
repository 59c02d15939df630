/**
 * The load test's agents. Each one that succeeds counts its calls in its agent variables and appends
 * its query to the conversation variable `queries`, so the final state of every conversation tells
 * exactly which calls were kept, once each, in order.
 */
const keep = `
  sys.vars.n = (sys.vars.n ?? 0) + 1;
  sys.conv.queries = [...(sys.conv.queries ?? []), sys.query];`;

export const loadAgents = {
  ltCounter: `export default async (sys) => {${keep}
  sys.say('n=' + sys.vars.n + ' q=' + sys.query + ' h=' + sys.history.length);
}`,
  ltStreamer: `export default async (sys) => {${keep}
  sys.say('first ' + sys.query);
  sys.write(' and more');
  await sys.sleep(5);
  sys.say('n=' + sys.vars.n);
}`,
  ltAsker: `export default async (sys) => {${keep}
  const a = await sys.ask({ message: 'Who?', inputs: [
    { name: 'name', type: 'str' },
    { name: 'color', type: 'chooseOne', options: ['red', 'blue'] },
  ] });
  sys.say('hi ' + a.name + ' ' + a.color + ' n=' + sys.vars.n);
}`,
  ltSleeper: `export default async (sys) => {${keep}
  await sys.sleep(3000);
  sys.say('woke');
}`,
} as const;

export type LoadAgentName = keyof typeof loadAgents;
