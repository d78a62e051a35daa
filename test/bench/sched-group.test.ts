// The benchmark's timed commands run in sessions of their own (bench/sched.ts): under autogroup
// scheduling each is a new group, at nice 0 unless the benchmark gives it its own group's nice.
// Checked with the kernel itself: a real process in a group at nice 5 (no privilege needed to
// raise a nice), a real detached child, and what /proc says of the child's group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { groupNice } from '../../bench/sched.js';

const SCHED = join(import.meta.dirname, '..', '..', 'bench', 'sched.js');

function childGroupNice(follow: boolean): { parent: number; child: number; line: string } {
  const script = `
    const { spawn } = require('node:child_process');
    const { readFileSync } = require('node:fs');
    import(${JSON.stringify(SCHED)}).then((s) => {
      const c = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
      ${follow ? 's.followGroup(c.pid);' : ''}
      const nice = (f) => Number(/nice\\s+(-?\\d+)/.exec(readFileSync(f, 'utf8'))[1]);
      console.log(JSON.stringify({ parent: nice('/proc/self/autogroup'), child: nice('/proc/' + c.pid + '/autogroup'), line: s.schedLine() }));
      process.kill(-c.pid, 'SIGKILL');
    });`;
  const r = spawnSync('setsid', ['sh', '-c', `echo 5 > /proc/self/autogroup && exec "${process.execPath}" -e "$0"`, script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim()) as { parent: number; child: number; line: string };
}

test('a timed command\'s group takes the benchmark\'s group nice; without it, a new group starts at 0', { skip: existsSync('/proc/self/autogroup') ? false : 'no autogroup scheduling on this kernel' }, () => {
  const followed = childGroupNice(true);
  assert.deepEqual([followed.parent, followed.child], [5, 5]);
  assert.match(followed.line, /autogroup nice 5, and each timed command's group follows it/);
  const left = childGroupNice(false);
  assert.deepEqual([left.parent, left.child], [5, 0], 'a detached child starts a group at nice 0 (what the helper exists for)');
});

// The file can exist and be empty: a task outside any autogroup (in a cgroup of its own, as under
// a CI runner's container) reads nothing there.
test('groupNice reads /proc\'s autogroup line, and says nothing where there is none', () => {
  const line = existsSync('/proc/self/autogroup') ? readFileSync('/proc/self/autogroup', 'utf8') : '';
  assert.equal(groupNice(), /nice\s+(-?\d+)/.test(line) ? Number(/nice\s+(-?\d+)/.exec(line)![1]) : undefined);
  assert.equal(groupNice('/nonexistent/autogroup'), undefined);
  const dir = mkdtempSync(join(tmpdir(), 'autogroup-'));
  writeFileSync(join(dir, 'empty'), '');
  writeFileSync(join(dir, 'line'), '/autogroup-7 nice -3\n');
  assert.equal(groupNice(join(dir, 'empty')), undefined, 'an empty file (a task outside any autogroup) says nothing');
  assert.equal(groupNice(join(dir, 'line')), -3);
});
