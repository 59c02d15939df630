/**
 * The agent the browser suites run as DEFAULT_AGENT: what it does depends on the query typed into
 * the search box, so one published agent covers every behaviour the pages must show.
 */
export const webTestAgentSource = `
const onePixelPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export default async (sys) => {
  const query = sys.query ?? '';
  if (query === 'stream') {
    sys.write('First words arrive, ');
    await sys.sleep(2500);
    sys.write('and the rest comes later.');
    return;
  }
  if (query === 'slow') {
    sys.say('Working on it');
    await sys.sleep(60000);
    return;
  }
  if (query === 'rich') {
    sys.say('Some **bold** text and a [link](https://example.com) <img src="x" onerror="window.pwned = 1">');
    sys.html('<p id="agent-html">Agent <em>markup</em></p><script>window.pwned = 2</script>' +
      '<img src="does-not-exist.png" onerror="window.pwned = 3"><a id="agent-link" href="javascript:window.pwned = 4">x</a>' +
      '<div onmouseover="window.pwned = 5">hover</div>');
    sys.image(onePixelPng, 'image/png');
    return;
  }
  if (query === 'fail') sys.fail('The widget is broken.');
  if (query === 'form') {
    const answers = await sys.ask({
      message: 'Tell us about yourself',
      inputs: [
        { name: 'name', type: 'str', label: 'Your name', description: 'What we call you', default: 'Ada' },
        { name: 'secret', type: 'password', label: 'A secret', description: 'Never shown back' },
        { name: 'bio', type: 'text', label: 'About you' },
        { name: 'color', type: 'chooseOne', label: 'Favourite colour', options: ['red', 'green', 'blue'], default: 'green' },
        { name: 'langs', type: 'chooseMany', label: 'Languages', options: [{ value: 'ts', label: 'TypeScript' }, { value: 'go', label: 'Go' }, { value: 'py', label: 'Python' }], default: ['ts'] },
      ],
    });
    sys.say('Thanks ' + answers.name + ': secret of ' + answers.secret.length + ' characters, bio "' + answers.bio + '", colour ' + answers.color + ', languages ' + answers.langs.join('+') + '.');
    return;
  }
  if (query === 'size') {
    const answers = await sys.ask({ message: 'Which size?', inputs: [{ name: 'size', type: 'chooseOne', label: 'Size', options: ['small', 'large'] }] });
    sys.say('Size ' + answers.size + ' it is.');
    return;
  }
  sys.vars.searches = (sys.vars.searches ?? 0) + 1;
  sys.say('You searched for *' + query + '* (search ' + sys.vars.searches + ' here).');
};
`;
