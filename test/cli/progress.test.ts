// The progress bar shows only to a person: on a terminal, not in CI, never into a pipe or file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressBar } from '../../src/cli/progress.js';

/** A stand-in for stderr that records what is written; `tty` says whether it is a terminal. */
function fakeStream(tty: boolean): NodeJS.WriteStream & { text: string } {
  const s = {
    text: '', isTTY: tty, columns: 100,
    write(b: string | Uint8Array) { s.text += String(b); return true; },
    cursorTo() { return true; }, clearLine() { return true; }, moveCursor() { return true; },
    on() { return s; }, removeListener() { return s; },
  };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

function drive(stream: NodeJS.WriteStream): void {
  const p = progressBar(stream);
  p.phase('reading', 100);
  p.update(50, 100);
  p.phase('writing', 1);
  p.stop();
}

test('progress: drawn on a terminal outside CI, silent into a pipe or in CI', () => {
  const saved = process.env.CI;
  try {
    delete process.env.CI;
    const tty = fakeStream(true);
    drive(tty);
    assert.match(tty.text, /reading/);
    const pipe = fakeStream(false);
    drive(pipe);
    assert.equal(pipe.text, '');
    process.env.CI = 'true';
    const ci = fakeStream(true);
    drive(ci);
    assert.equal(ci.text, '');
  } finally {
    if (saved === undefined) delete process.env.CI; else process.env.CI = saved;
  }
});
