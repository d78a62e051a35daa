// The environment's numeric settings (runtime/tuning.ts): every declared one is read when well
// formed and reported by name when not, and `luna run` refuses a malformed one before anything
// runs, where its reader alone would have fallen back to its default without a word.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TUNING, tuned, tuningErrors, type TuningName } from '../../src/runtime/tuning.js';
import { inTempDir, luna } from './helpers.js';

const names = Object.keys(TUNING) as TuningName[];

test('each setting: unset and blank read as unset, its least value is read, malformed values are named', () => {
  for (const name of names) {
    const s = TUNING[name] as { min: number; max?: number; integer?: boolean };
    assert.equal(tuned(name, {}), undefined, name);
    assert.equal(tuned(name, { [name]: ' ' }), undefined, name);
    assert.deepEqual(tuningErrors({ [name]: '' }), [], name);
    const least = s.min === Number.MIN_VALUE ? 1 : s.min;
    assert.equal(tuned(name, { [name]: String(least) }), least, name);
    assert.deepEqual(tuningErrors({ [name]: String(least) }), [], name);
    const bad = ['abc', '-1', 'Infinity', ...(s.integer ? ['8.5'] : []), ...(s.max !== undefined ? [String(s.max + 1)] : []), ...(s.min > 0 ? [String(s.min - 1)] : [])];
    if (s.min === Number.MIN_VALUE) bad.push('0');
    for (const v of bad) {
      assert.equal(tuned(name, { [name]: v }), undefined, `${name}=${v}`);
      const e = tuningErrors({ [name]: v });
      assert.equal(e.length, 1, `${name}=${v}`);
      assert.ok(e[0]!.startsWith(`${name} must be a `) && e[0]!.endsWith(`got ${JSON.stringify(v)}`), e[0]);
    }
  }
});

test('several malformed settings are all reported, each once', () => {
  const e = tuningErrors({ LUNA_SPIN_US: 'x', LUNA_FED_RUN_MS: '0', LUNA_CHAIN_AHEAD_MS: '2' });
  assert.deepEqual(e.map((m) => m.split(' ')[0]), ['LUNA_SPIN_US', 'LUNA_FED_RUN_MS']);
});

test('luna run refuses a malformed comparison setting by name, exit 2, before the program runs', async () => {
  await inTempDir('luna-tuning-', async (dir) => {
    writeFileSync(join(dir, 'p.fa'), 'import c_say(int `v) as say;\nsub main() { say(1); }\n');
    writeFileSync(join(dir, 'ucodes.ts'), 'export function c_say(v: number): void { console.log("ran " + v); }\n');
    const r = await luna(['run', 'p.fa'], dir, 60_000, { ...process.env, LUNA_CHAIN_AHEAD_MS: 'fast', LUNA_FED_SPIN_US: '-5' });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^luna: error: LUNA_FED_SPIN_US must be a number of at least 0 \(.*\), got "-5"$/m);
    assert.match(r.stderr, /^luna: error: LUNA_CHAIN_AHEAD_MS must be a number of at least 0 \(.*\), got "fast"$/m);
    const ok = await luna(['run', 'p.fa'], dir, 60_000, { ...process.env, LUNA_CHAIN_AHEAD_MS: '0', LUNA_FED_SPIN_US: '5' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, 'ran 1\n');
  });
});
