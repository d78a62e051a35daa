// Two readings of one trace's balance profile compared column by column (the columnar reader
// against the trace model's, in test/analysis/balance-profile.test.ts and test/cli/balance.test.ts).
import assert from 'node:assert/strict';
import type { Profile } from '../../src/analysis/balance/profile.js';

const plain = (v: unknown): unknown => (ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v);

/** Every column of the two readings equal (warnings apart: the model words its own). */
export function assertSameProfile(a: Profile, b: Profile): void {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('warnings');
  for (const k of keys) assert.deepEqual(plain((a as unknown as Record<string, unknown>)[k]), plain((b as unknown as Record<string, unknown>)[k]), `profile column ${k}`);
}
