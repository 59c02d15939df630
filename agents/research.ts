import type { CallResult, Sys } from './sys';

/**
 * Fans a question out to three researcher runs at once (sys.call, each a run of its own in a
 * conversation of its own) and combines what they found. `inputs.researcher` names the agent to ask
 * (hello by default); a researcher that fails or asks is reported, not fatal.
 */
export default async function research(sys: Sys) {
  const question = sys.query ?? 'agents that call agents';
  const researcher = typeof sys.inputs.researcher === 'string' ? sys.inputs.researcher : 'hello';
  const angles = ['history', 'state of the art', 'open problems'];
  const found = await Promise.all(angles.map((angle) => sys.call(researcher, { query: `${question} (${angle})` })));
  sys.vars.children = found.map((result) => result.runId);
  const sections = found.map((result, i) => `### ${angles[i]}\n\n${summary(result)}`);
  sys.say(`## ${question}\n\n${sections.join('\n\n')}`);
}

function summary(result: CallResult): string {
  if (result.resultCode !== 'success') return `(no answer: ${result.resultCode}${result.error ? `, ${result.error.message}` : ''})`;
  return result.output.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
}
