// The Router over an in-memory mesh: each channel's messages reach its handler with the sender,
// tag, body and payload; only the messages a channel counts are counted, in both directions and
// over all channels; tags and ids out of range, a second channel of one id, and a message for a
// channel nobody registered are errors that say which.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { Router } from '../../src/runtime/transport/router.js';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

function routers(n: number): Router[] {
  return new MemoryMesh(n).endpoints.map((tp) => new Router(tp));
}

test('messages reach the handler of their channel with sender, tag, body and payload; rank and size are the transport\'s', async () => {
  const [a, b] = routers(2);
  assert.deepEqual([a!.rank, a!.size, b!.rank, b!.size], [0, 2, 1, 2]);
  const got: string[] = [];
  b!.channel(1, 'one', (from, tag, body, payload) => got.push(`one ${from} ${tag} [${body.join()}] ${payload ? `[${payload.join()}]` : '-'}`));
  b!.channel(2, 'two', (from, tag, body) => got.push(`two ${from} ${tag} [${body.join()}]`));
  const one = a!.channel(1, 'one', () => {});
  const two = a!.channel(2, 'two', () => {});
  assert.deepEqual([one.id, one.name, two.id, two.name], [1, 'one', 2, 'two']);
  one.send(1, 7, bytes(1, 2), bytes(9));
  two.send(1, 7, bytes(3));
  one.send(1, 65535, bytes());
  await turn();
  assert.deepEqual(got, ['one 0 7 [1,2] [9]', 'two 0 7 [3]', 'one 0 65535 [] -']);
});

test('only the messages a channel counts are counted, sent and received, over all channels', async () => {
  const [a, b] = routers(2);
  const open = (r: Router) => ({
    work: r.channel(1, 'work', () => {}, { counted: (tag) => tag === 1 }),
    quiet: r.channel(2, 'quiet', () => {}),
    all: r.channel(3, 'all work', () => {}, { counted: () => true }),
  });
  const x = open(a!);
  open(b!);
  x.work.send(1, 1, bytes()); // counted
  x.work.send(1, 2, bytes()); // not this tag
  x.quiet.send(1, 1, bytes()); // a channel that counts nothing
  x.all.send(1, 9, bytes()); // counted
  x.all.send(0, 9, bytes()); // counted, to itself
  assert.deepEqual([a!.sent, a!.received, b!.sent, b!.received], [3, 0, 0, 0]);
  await turn();
  assert.deepEqual([a!.sent, a!.received, b!.sent, b!.received], [3, 1, 0, 2]);
});

test('a tag or a channel id out of range is refused, naming it', () => {
  const [a] = routers(1);
  const ch = a!.channel(1, 'data', () => {});
  assert.throws(() => ch.send(0, -1, bytes()), /bad tag -1 on channel data/);
  assert.throws(() => ch.send(0, 65536, bytes()), /bad tag 65536 on channel data/);
  for (const id of [0, -1, 1.5, 65536]) assert.throws(() => a!.channel(id, 'x', () => {}), new RegExp(`bad channel id ${id}`));
  assert.doesNotThrow(() => a!.channel(65535, 'last', () => {}));
});

test('a second channel of one id is refused, naming the first', () => {
  const [a] = routers(1);
  a!.channel(3, 'work stealing', () => {});
  assert.throws(() => a!.channel(3, 'array', () => {}), /channel 3 is taken by work stealing/);
});

test('a message for a channel nobody registered goes to onUnknown (by default an error naming channel, tag and node)', async () => {
  const [a, b] = routers(2);
  const unknown: number[][] = [];
  b!.onUnknown = (from, ch, tag) => unknown.push([from, ch, tag]);
  a!.channel(6, 'only on node 0', () => {}).send(1, 4, bytes());
  await turn();
  assert.deepEqual(unknown, [[0, 6, 4]]);
  assert.throws(() => a!.onUnknown(1, 6, 4), /message for unknown channel 6 \(tag 4\) from node 1/);
});

test('onArrived runs after each group of messages that arrived together', async () => {
  const [a, b] = routers(2);
  const log: string[] = [];
  b!.channel(1, 'c', (from, tag) => log.push(`${from}:${tag}`));
  b!.onArrived(() => log.push('arrived'));
  const ch = a!.channel(1, 'c', () => {});
  ch.send(1, 1, bytes());
  ch.send(1, 2, bytes());
  await turn();
  ch.send(1, 3, bytes());
  await turn();
  assert.deepEqual(log, ['0:1', '0:2', 'arrived', '0:3', 'arrived']);
});
