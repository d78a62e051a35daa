// The scheduler's account of a worker lane's span (bench/taskbench/sched.ts), on a hand-made
// `perf script` of two CPUs: a luna process (system thread 100, worker threads 101 and 102, a
// helper 103) beside another process (200). Each state lands in its term, and the terms add up
// to the span.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { laneSched, parsePerfScript, tasksOf } from '../../bench/taskbench/sched.js';

const sw = (us: number, cpu: number, cur: string, prev: number, state: string, next: number): string =>
  `            ${cur} [00${cpu}] ${(us / 1e6).toFixed(6)}: sched:sched_switch: prev_comm=node prev_pid=${prev} prev_prio=120 prev_state=${state} ==> next_comm=node next_pid=${next} next_prio=120`;
const wake = (us: number, cpu: number, cur: string, woken: number, target: number): string =>
  `            ${cur} [00${cpu}] ${(us / 1e6).toFixed(6)}: sched:sched_wakeup: comm=node pid=${woken} prio=120 target_cpu=00${target}`;

// the luna process shows first under its launcher's name, as `bin/luna` does before it runs node
// the launcher's line, then lane 1's thread (101) put on CPU 0 at 0 µs
const START = [
  '            luna 100/100 [001] 0.000000: sched:sched_wakeup: comm=node pid=103 prio=120 target_cpu=001',
  sw(0, 0, 'swapper 0/0', 0, 'R', 101),
];
const PERF = [
  ...START,
  sw(0, 1, 'luna 100/100', 100, 'S', 200),
  // lane 1's thread preempted by the system thread for 5 µs …
  sw(10, 0, 'node 100/101', 101, 'R', 100),
  sw(15, 0, 'node 100/100', 100, 'S', 101),
  // … asleep 10 µs (lane 2's thread runs on its CPU) …
  sw(20, 0, 'node 100/101', 101, 'S', 102),
  // … woken onto the CPU lane 2's thread holds, where it waits 5 µs
  wake(30, 1, 'node 200/200', 101, 0),
  sw(35, 0, 'node 100/102', 102, 'S', 101),
  // a wake-up of a running thread changes nothing
  wake(40, 1, 'node 200/200', 101, 0),
  sw(45, 1, 'node 200/200', 200, 'R', 103),
  sw(50, 1, 'node 100/103', 103, 'S', 200),
].join('\n');

const CSV = [
  'gid,name,label,indices,code,node,lane,site,created,ready,start,finish,wall_ns,cpu_ns,inputs',
  '0,init[0],init,[0],task0,0,1,/p/t.fa:9:5,0,0,0,8000,8000,8000,0',
  '1,init[1],init,[1],task0,0,2,/p/t.fa:10:5,0,0,21000,29000,8000,8000,0',
  '2,"task[1,0]",task,"[1,0]",task2,0,1,/p/t.fa:12:9,0,0,35000,50000,15000,15000,2',
].join('\n');

test('each lane\'s span by state: on its CPU, asleep, and kept off it by whom', () => {
  const r = laneSched(parsePerfScript(PERF), tasksOf(CSV), 0);
  assert.equal(r.spanMs, 0.05);
  assert.deepEqual(r.lanes.map((l) => [l.lane, l.tid]), [['1', 101], ['2', 102]]);
  const one = r.lanes[0]!.pct;
  assert.deepEqual(Object.fromEntries(Object.entries(one).map(([k, v]) => [k, Math.round(v * 10) / 10])),
    { running: 60, 'lost to system': 10, sleeping: 20, 'lost to other worker': 10 });
  assert.equal(Math.round(Object.values(one).reduce((a, b) => a + b, 0)), 100);
  // lane 2's thread: asleep until 20 µs, on its CPU until 35 µs, asleep after
  const two = r.lanes[1]!.pct;
  assert.equal(Math.round(two.running!), 30);
  assert.equal(Math.round(two.sleeping!), 70);
  // the system thread held a CPU 10–15 µs of the 50
  assert.equal(Math.round(r.systemCpuPct), 10);
  // on the other CPU: process 200 until 45 µs, the helper 45–50 µs
  assert.equal(Math.round(r.othersCpuPct), 90);
  assert.equal(Math.round(r.helpersCpuPct), 10);
});

test('a preemption is counted to the thread that took the CPU: another process, a helper', () => {
  const perf = [
    ...START,
    // the CPU taken by another process for 10 µs, then by a helper for 5 (each counted to who took it)
    sw(10, 0, 'node 100/101', 101, 'R', 200),
    sw(20, 0, 'node 200/200', 200, 'S', 101),
    sw(25, 0, 'node 100/101', 101, 'R', 103),
    sw(30, 0, 'node 100/103', 103, 'S', 101),
  ].join('\n');
  const csv = CSV.split('\n').slice(0, 2).join('\n') + '\n0,x,task,"[1,0]",task2,0,1,s,0,0,30000,40000,0,0,0';
  const r = laneSched(parsePerfScript(perf), tasksOf(csv), 0);
  const p = r.lanes[0]!.pct;
  assert.equal(p['lost to other process'], 25);
  assert.equal(p['lost to helper'], 12.5);
  assert.equal(p.running, 62.5);
});

test('without its launcher\'s name in the script, the luna process is the one running the tasks; with none, a clear error', () => {
  // the same script with the launcher's line left out
  const r = laneSched(parsePerfScript(PERF.split('\n').slice(1).join('\n')), tasksOf(CSV), 0);
  assert.deepEqual(r.lanes.map((l) => [l.lane, l.tid]), [['1', 101], ['2', 102]]);
  assert.equal(Math.round(r.lanes[0]!.pct['lost to system']!), 10);
  assert.throws(() => laneSched(parsePerfScript(sw(0, 0, 'node 5/5', 5, 'S', 0)), tasksOf(CSV), 0), /no thread named luna, and no process on a CPU/);
});
