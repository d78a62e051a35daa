// The run's secret reaches a spawned node in its environment; the node must take it out before
// anything it starts (the esbuild service, worker threads, any child process) could inherit it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startNode } from '../../src/runtime/launch/cluster.js';
import { TAG_QUIT, TAG_REPORT, type SecretProbe } from './fixture.js';
import { cleanEnv, PEER } from './helpers.js';

test('a spawned node keeps the secret out of process.env, the esbuild service, child processes and workers', {
  skip: process.platform === 'linux' ? false : 'reads child environments from /proc',
  timeout: 60_000,
}, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'luna-secret-'));
  const ucodes = path.join(dir, 'ucodes.ts');
  await writeFile(ucodes, 'export function one(): number { return 1; }\n');
  // The marker proves the probe does read the children's environment.
  const { transport: t, children } = await startNode({
    nodes: 2,
    argv: [PEER, 'secret', path.join(dir, 'cache'), ucodes],
    env: cleanEnv({ LUNA_PROBE_MARKER: '1' }),
  });
  try {
    const probe = await new Promise<SecretProbe>((resolve) =>
      t.onMessage((_from, tag, body) => {
        if (tag === TAG_REPORT) resolve(JSON.parse(Buffer.from(body).toString()) as SecretProbe);
      }),
    );
    // The mesh formed, so the node did use the secret it was given.
    assert.equal(probe.inProcessEnv, false, 'LUNA_SECRET is still in process.env');
    const esbuild = probe.children.filter((c) => c.comm === 'esbuild');
    assert.equal(esbuild.length, 1, `no esbuild service among the children: ${JSON.stringify(probe.children)}`);
    assert.equal(esbuild[0]!.hasMarker, true, 'the probe did not see the inherited environment');
    assert.deepEqual(probe.children.filter((c) => c.hasSecret), [], 'a child process inherited LUNA_SECRET');
    assert.equal(probe.childProcessHasSecret, false, 'a spawned child process sees LUNA_SECRET');
    assert.equal(probe.workerHasSecret, false, 'a worker thread sees LUNA_SECRET');
    t.send(1, TAG_QUIT, new Uint8Array(0));
    await children!.exited();
  } finally {
    children!.killAll();
    await t.close();
    await rm(dir, { recursive: true, force: true });
  }
});
