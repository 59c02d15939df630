import type { Sys } from './sys';

/** Asks for one input of every type, then shows what it got (the password only by its length). */
export default async function askAll(sys: Sys) {
  sys.say('Let us fill in a short form.');
  const answers = await sys.ask({
    message: 'Tell me about yourself',
    inputs: [
      { name: 'name', type: 'str', label: 'Name', description: 'What we call you' },
      { name: 'secret', type: 'password', label: 'A secret', description: 'Never shown back' },
      { name: 'bio', type: 'text', label: 'About you', default: '' },
      { name: 'color', type: 'chooseOne', label: 'Favourite colour', options: ['red', 'green', 'blue'], default: 'green' },
      {
        name: 'langs',
        type: 'chooseMany',
        label: 'Languages',
        options: [
          { value: 'ts', label: 'TypeScript' },
          { value: 'py', label: 'Python' },
          { value: 'go', label: 'Go' },
        ],
      },
    ],
  });
  const langs = answers.langs as string[];
  sys.vars.lastName = answers.name as string;
  sys.say(
    `Thanks ${answers.name}: ${answers.color} is a fine colour, you know ${langs.join(', ') || 'no languages'}, ` +
      `and your secret has ${(answers.secret as string).length} characters.`,
  );
}
