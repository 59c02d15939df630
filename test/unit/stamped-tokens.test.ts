import assert from 'node:assert/strict';
import { stampedTokens } from '../../bench/io/llm-server.js';

/** How `bench:io -- --stream` reads the tokens its LLM-like server stamped (bench/io/llm-server.ts). */
describe('stamped tokens', () => {
  it('gives each token its place in the answer and its stamp, several in one text too', () => {
    assert.deepEqual(stampedTokens('token1@12.345 '), [{ position: 1, stamp: 12.345 }]);
    assert.deepEqual(stampedTokens('token9@100.000 token10@101.250 '), [
      { position: 9, stamp: 100 },
      { position: 10, stamp: 101.25 },
    ]);
  });

  it('finds none in text the server did not stamp', () => {
    assert.deepEqual(stampedTokens('You said: hello'), []);
    assert.deepEqual(stampedTokens('token1 token2 '), []);
  });
});
