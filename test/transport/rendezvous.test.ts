// The rendezvous file carries the run's secret: real files and directories with real modes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, chown, lstat, mkdir, mkdtemp, open, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileRendezvous } from '../../src/runtime/transport/rendezvous.js';
import { createTcpTransport } from '../../src/runtime/transport/tcp.js';

const ADDR = { host: '127.0.0.1', port: 4321 };
const SECRET = 'the-secret-0123456789';
const isRoot = process.getuid?.() === 0;
const mode = async (p: string) => (await stat(p)).mode & 0o7777;

async function scratch(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'luna-rv-'));
}

/** Run `fn` in `dir` as the working directory with `mask` as the umask. */
async function inDir<T>(dir: string, mask: number, fn: () => Promise<T>): Promise<T> {
  const cwd = process.cwd();
  const old = process.umask(mask);
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(cwd);
    process.umask(old);
  }
}

test('the default directory is created 0700, the file 0600 whatever the umask, and cleanup removes both', async () => {
  const base = await scratch();
  try {
    await inDir(base, 0o277, async () => {
      const rv = fileRendezvous({ env: {}, jobId: 'job-1' });
      const dir = path.join(base, '.luna-rendezvous');
      assert.equal(rv.file, path.join(dir, 'job-1.json'));
      await rv.publish(ADDR, SECRET);
      assert.equal(await mode(dir), 0o700);
      assert.equal(await mode(rv.file), 0o600);
      assert.deepEqual(await readdir(dir), ['job-1.json'], 'no temporary file is left');
      const written = JSON.parse(await readFile(rv.file, 'utf8')) as Record<string, unknown>;
      assert.deepEqual([written.host, written.port, written.secret], [ADDR.host, ADDR.port, SECRET]);
      await rv.cleanup!();
      assert.deepEqual(await readdir(base), [], 'the directory luna created is removed');
    });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('concurrent jobs sharing the default directory, each removing it when it empties, all publish', async () => {
  const base = await scratch();
  try {
    await inDir(base, 0o022, async () => {
      // Each job creates the directory if missing and removes it, empty, at its end: another
      // job's mkdir, stat and write can fall between those and must make the directory again.
      const job = async (j: number) => {
        for (let round = 0; round < 20; round++) {
          const rv = fileRendezvous({ env: {}, jobId: `job-${j}-${round}` });
          await rv.publish(ADDR, SECRET);
          assert.equal(await mode(rv.file), 0o600);
          await rv.cleanup!();
        }
      };
      const ends = await Promise.allSettled(Array.from({ length: 8 }, (_, j) => job(j)));
      assert.deepEqual(ends.filter((e) => e.status === 'rejected'), []);
      assert.deepEqual(await readdir(base), [], 'the last job out removes the directory');
    });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('a directory the user names is never removed, even one luna had to create', async () => {
  const base = await scratch();
  try {
    const named = path.join(base, 'a', 'b');
    const rv = fileRendezvous({ dir: named, jobId: 'j' });
    await rv.publish(ADDR, SECRET);
    assert.equal(await mode(named), 0o700);
    await rv.cleanup!();
    assert.deepEqual(await readdir(named), []);
    const existing = await mkdtemp(path.join(base, 'mine-'));
    const fromEnv = fileRendezvous({ env: { LUNA_RENDEZVOUS_DIR: existing, LUNA_JOB_ID: 'k' } });
    await fromEnv.publish(ADDR, SECRET);
    await fromEnv.cleanup!();
    assert.deepEqual(await readdir(existing), []);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('an existing directory others can write to is refused, left as it was, and nothing is written', async () => {
  const base = await scratch();
  try {
    for (const [m, who] of [
      [0o777, 'every user'],
      [0o1777, 'every user'],
      [0o770, 'its group'],
    ] as const) {
      const dir = path.join(base, `d${m.toString(8)}`);
      await mkdir(dir);
      await chmod(dir, m);
      const rv = fileRendezvous({ dir, jobId: 'j' });
      const shown = m.toString(8).padStart(4, '0');
      const esc = dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      await assert.rejects(
        rv.publish(ADDR, SECRET),
        new RegExp(`^Error: refusing the rendezvous directory ${esc}: it is writable by ${who} \\(mode ${shown}\\).*chmod go-w ${esc}.*LUNA_RENDEZVOUS_DIR`),
      );
      assert.equal(await mode(dir), m, 'a directory luna did not create is not changed');
      assert.deepEqual(await readdir(dir), []);
      await rv.cleanup!();
      assert.equal(await mode(dir), m);
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('a directory that belongs to another user, or is not a directory, is refused', async () => {
  const base = await scratch();
  try {
    // As root a scratch directory is handed to "nobody"; otherwise / belongs to someone else.
    let foreign = '/';
    if (isRoot) {
      foreign = path.join(base, 'theirs');
      await mkdir(foreign, { mode: 0o700 });
      await chown(foreign, 65534, 65534);
    }
    const owner = (await stat(foreign)).uid;
    await assert.rejects(
      fileRendezvous({ dir: foreign, jobId: 'j' }).publish(ADDR, SECRET),
      new RegExp(`refusing the rendezvous directory ${foreign}: it belongs to uid ${owner}, not to you \\(uid ${process.getuid!()}\\).*LUNA_RENDEZVOUS_DIR`),
    );
    if (isRoot) assert.deepEqual(await readdir(foreign), []);
    const file = path.join(base, 'plain');
    await writeFile(file, '');
    await assert.rejects(fileRendezvous({ dir: file, jobId: 'j' }).publish(ADDR, SECRET), /the rendezvous path .*plain is not a directory; set LUNA_RENDEZVOUS_DIR/);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('world-writable files planted at the path or at the old predictable temporary name never see the secret', async () => {
  const dir = await scratch();
  try {
    const rv = fileRendezvous({ dir, jobId: 'j' });
    const planted = [rv.file, `${rv.file}.${process.pid}.tmp`];
    const held = [];
    for (const f of planted) {
      await writeFile(f, 'planted');
      await chmod(f, 0o666);
      held.push(await open(f, 'r')); // kept open, as whoever planted it would
    }
    const plantedIno = (await stat(rv.file)).ino;
    await rv.publish(ADDR, SECRET);
    for (const h of held) {
      const { buffer, bytesRead } = await h.read(Buffer.alloc(256), 0, 256, 0);
      await h.close();
      assert.equal(buffer.toString('utf8', 0, bytesRead), 'planted');
    }
    const now = await stat(rv.file);
    assert.notEqual(now.ino, plantedIno, 'the planted file was written to');
    assert.equal(now.mode & 0o7777, 0o600);
    assert.equal(JSON.parse(await readFile(rv.file, 'utf8')).secret, SECRET);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('symlinks at the file path or at the old predictable temporary name are not written through', async () => {
  const dir = await scratch();
  const elsewhere = await scratch();
  try {
    const rv = fileRendezvous({ dir, jobId: 'j' });
    const victims = [path.join(elsewhere, 'v1'), path.join(elsewhere, 'v2')];
    for (const v of victims) await writeFile(v, 'untouched', { mode: 0o644 });
    await symlink(victims[0]!, rv.file);
    await symlink(victims[1]!, `${rv.file}.${process.pid}.tmp`);
    await rv.publish(ADDR, SECRET);
    for (const v of victims) assert.equal(await readFile(v, 'utf8'), 'untouched');
    const st = await lstat(rv.file);
    assert.ok(st.isFile(), 'the rendezvous file is a regular file');
    assert.equal(st.mode & 0o7777, 0o600);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(elsewhere, { recursive: true, force: true });
  }
});

test('readers refuse a rendezvous file that is not 0600, not theirs, a symlink or not a regular file', async () => {
  const dir = await scratch();
  try {
    const content = JSON.stringify({ ...ADDR, secret: SECRET, pid: 1, created: 0 });
    const reader = (job: string) => fileRendezvous({ dir, jobId: job, timeoutMs: 5000, pollMs: 10 });
    const plant = async (job: string, m: number) => {
      const f = path.join(dir, `${job}.json`);
      await writeFile(f, content);
      await chmod(f, m);
      return f;
    };
    await plant('ok', 0o600);
    assert.deepEqual(await reader('ok').lookup(), { ...ADDR, secret: SECRET });

    await plant('readable', 0o644);
    await assert.rejects(reader('readable').lookup(), /^Error: refusing the rendezvous file .*readable\.json: its mode is 0644, not 0600, so others may have read the run's secret; remove it$/);
    await plant('writable', 0o666);
    await assert.rejects(reader('writable').lookup(), /its mode is 0666, not 0600/);

    if (isRoot) {
      await chown(await plant('theirs', 0o600), 65534, 65534);
      await assert.rejects(reader('theirs').lookup(), /refusing the rendezvous file .*theirs\.json: it belongs to uid 65534, not to you \(uid 0\)/);
    }

    await symlink(path.join(dir, 'ok.json'), path.join(dir, 'link.json'));
    await assert.rejects(reader('link').lookup(), /refusing the rendezvous file .*link\.json: it is a symbolic link/);

    execFileSync('mkfifo', ['-m', '600', path.join(dir, 'fifo.json')]);
    await assert.rejects(reader('fifo').lookup(), /refusing the rendezvous file .*fifo\.json: it is not a regular file/);
    await mkdir(path.join(dir, 'dir.json'), { mode: 0o700 });
    await assert.rejects(reader('dir').lookup(), /dir\.json: it is not a regular file/);

    await writeFile(path.join(dir, 'torn.json'), '{"host":', { mode: 0o600 });
    await assert.rejects(
      fileRendezvous({ dir, jobId: 'torn', timeoutMs: 100, pollMs: 10 }).lookup(),
      /^Error: no rendezvous file .*torn\.json after 0\.1 s: .*; last seen: the file is not valid JSON$/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('rank 0 removes the rendezvous file and the directory it created when the mesh does not form', async () => {
  const base = await scratch();
  try {
    await inDir(base, 0o022, async () => {
      const rendezvous = fileRendezvous({ env: {}, jobId: 'lonely' });
      await assert.rejects(createTcpTransport({ rank: 0, size: 2, rendezvous, timeoutMs: 300, log: () => {} }), /mesh not formed after 0\.3 s; no link to rank\(s\) 1/);
      assert.deepEqual(await readdir(base), []);
    });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
