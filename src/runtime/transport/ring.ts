// A shared-memory ring per direction between two nodes of one machine. A message written into it
// costs its sender a copy and no system call; a receiver that polls the ring picks it up within
// microseconds, without the ~20 µs a socket write costs a sender whose receiver has to be woken
// (docs/benchmarks.md, "Where a pingpong run's time goes"). The receiver polls only while it has
// had messages lately; once it stops it says so in the ring, and the sender then rings a doorbell
// on the link's socket, so nothing waits for a poll that never comes.
//
// One writer and one reader per ring, both the system threads of their processes: the writer
// owns TAIL, the reader HEAD and STATE. An entry is [u32 length][u32 socketFrames][u32 tag]
// [u32 bodyLength][u32 payloadLength + 1, 0: none][body][payload], padded to 4 bytes;
// `socketFrames` is how many data frames the writer had sent on the socket before it, so the
// reader keeps the link's order across both paths (transport/tcp.ts). An entry that does not
// fit before the writer's wrap point is preceded by a WRAP word and starts at the data area's
// beginning. The wrap point starts low (RING_START) and moves out only when a larger message
// comes, so a ring of small messages touches a few pages of its file however long it runs: the
// memfd is sized for the largest ring, but its pages exist only once written. The reader needs
// no word of it: it follows the WRAP words.
// The file is mapped by native/shm.c (the SPMD host segment's addon): Atomics work on the mapping,
// and on x86 and ARM their sequentially consistent stores and loads order the plain byte copies.
// The file has no name: a memfd, which the peer opens through /proc/<pid>/fd/<n> of the node that
// made it while that node keeps the descriptor open (until the peer answers its offer). A node
// killed at any moment leaves nothing behind; the memory goes when the last mapping does. Only
// where memfd_create is missing is it a named file under /dev/shm, whose name both sides remove.
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, readlinkSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAddon } from '../../core/addon.js';

interface ShmAddon {
  open(path: string, bytes: number, create: boolean): number;
  /** absent in an addon built before it */
  memfd?(name: string, bytes: number): number;
  unlink(path: string): number;
  close(fd: number): number;
  map(fd: number, bytes: number): ArrayBuffer | number;
}

let addon: ShmAddon | null | undefined;
function shm(): ShmAddon | null {
  if (addon === undefined) addon = process.platform === 'linux' ? loadAddon<ShmAddon>('luna_shm') ?? null : null;
  return addon;
}

/** Whether rings can be mapped here (Linux with the shared-memory addon built). */
export function ringsAvailable(): boolean {
  return shm() !== null;
}

// Header words (Int32), each on a cache line of its own: the two sides write different ones.
const TAIL = 0;
const HEAD = 16;
const STATE = 32;
const HEADER_BYTES = 256;
/** reader states: polling; not polling (a writer must ring); rung (a doorbell is on its way) */
const AWAKE = 0, ASLEEP = 1, RUNG = 2;
const ENTRY = 20;
const WRAP = 0xffffffff;

/**
 * Bytes of one direction's data area; an entry larger than a quarter of it goes by the socket.
 * 4 MiB, so a DF of up to 1 MiB crosses as one entry: the PIC's 0.96 MB border planes came by the
 * socket in 15 reads of 64 KiB, each a turn of both event loops, with 256 KiB rings. Traced, C++
 * kernels, 2 × 1, two runs each (load 2–4): the planes' median crossing 14–24 ms (Qu, queued behind
 * Qd, 39–49) against 7–10 (14–17) with 4 MiB, the small leaving arrays 2.4–2.6 ms against 0.8–1.0
 * (docs/pic.md, "The border planes through the ring, and received values in recycled buffers").
 * The memfd is 8 MiB a pair of nodes, its pages touched as the rings fill.
 */
export const RING_CAPACITY = 4 * 1024 * 1024;

/**
 * Bytes of a direction's data area a writer uses until a message larger than a quarter of it
 * comes (then the smallest power of two at least four times that message, up to RING_CAPACITY).
 * 256 KiB: the rings' whole size before they grew to 4 MiB, with which the pingpong and the
 * small-message figures were measured (docs/cluster.md, "Rings"). A 4 MiB ring wrapped over all
 * its pages whatever the messages' size: a memfd of 8 MiB touched per pair of ranks on a machine,
 * up to 224 MiB for 8 ranks; with this, 512 KiB a pair until large messages come (docs/pic.md,
 * "Rings that grow, and sent values recycled").
 */
export const RING_START = 256 * 1024;

export function ringFileBytes(capacity = RING_CAPACITY): number {
  return 2 * (HEADER_BYTES + capacity);
}

/** One direction of a ring file: `which` 0 carries the creator's messages, 1 the other side's. */
class RingView {
  protected readonly w: Int32Array;
  protected readonly data: Uint8Array;
  protected readonly dv: DataView;
  protected readonly mask: number;
  constructor(buffer: ArrayBuffer, which: 0 | 1, readonly capacity: number) {
    const base = which * (HEADER_BYTES + capacity);
    this.w = new Int32Array(buffer, base, HEADER_BYTES / 4);
    this.data = new Uint8Array(buffer, base + HEADER_BYTES, capacity);
    this.dv = new DataView(buffer, base + HEADER_BYTES, capacity);
    this.mask = capacity - 1;
  }
}

export type RingDeliver = (tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void;

export class RingWriter extends RingView {
  private tail: number;
  readonly maxEntry: number;
  /** the writer's wrap point: the bytes of the data area it writes (and so touches) */
  private limit: number;
  constructor(buffer: ArrayBuffer, which: 0 | 1, capacity = RING_CAPACITY, start = RING_START) {
    super(buffer, which, capacity);
    this.tail = Atomics.load(this.w, TAIL);
    this.maxEntry = capacity >>> 2;
    this.limit = Math.min(capacity, start);
  }

  /** Bytes of the data area in use (they grow with the largest message written). */
  get bytes(): number {
    return this.limit;
  }

  /**
   * Write one message; false when it does not fit now (too large, or the reader is that far
   * behind): the caller sends it by the socket, counted in the `socketFrames` of later entries.
   */
  write(socketFrames: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined): boolean {
    const len = (ENTRY + body.length + (payload ? payload.length : 0) + 3) & ~3;
    if (len > this.maxEntry) return false;
    // a quarter of the area in use at most, as of the whole ring: several such messages in flight
    if (len > this.limit >>> 2) this.limit = Math.min(this.capacity, 2 ** Math.ceil(Math.log2(4 * len)));
    let t = this.tail;
    const used = (t - Atomics.load(this.w, HEAD)) | 0;
    let at = t & this.mask;
    // past the wrap point (short of it by a WRAP word: written at `at` below, within it), the
    // entry starts the next lap; the skipped bytes count as used until the reader passes them
    const skip = at + len > this.limit - 4 ? this.capacity - at : 0;
    if (used + skip + len > this.capacity) return false;
    const dv = this.dv;
    if (skip) {
      dv.setUint32(at, WRAP, true);
      t = (t + skip) | 0;
      at = 0;
    }
    dv.setUint32(at, len, true);
    dv.setUint32(at + 4, socketFrames >>> 0, true);
    dv.setUint32(at + 8, tag >>> 0, true);
    dv.setUint32(at + 12, body.length, true);
    dv.setUint32(at + 16, payload ? payload.length + 1 : 0, true);
    this.data.set(body, at + ENTRY);
    if (payload) this.data.set(payload, at + ENTRY + body.length);
    this.tail = (t + len) | 0;
    Atomics.store(this.w, TAIL, this.tail);
    return true;
  }

  /** Whether the reader has taken every entry written. */
  drained(): boolean {
    return Atomics.load(this.w, HEAD) === this.tail;
  }

  /**
   * After a write: whether the reader has stopped polling and nobody rang it yet; true at most
   * once until it polls again (the caller then rings the doorbell).
   */
  claimDoorbell(): boolean {
    return Atomics.load(this.w, STATE) === ASLEEP && Atomics.compareExchange(this.w, STATE, ASLEEP, RUNG) === ASLEEP;
  }
}

export class RingReader extends RingView {
  private head: number;
  constructor(buffer: ArrayBuffer, which: 0 | 1, capacity = RING_CAPACITY, private readonly alloc: (n: number, tag: number) => Uint8Array = (n) => Buffer.allocUnsafeSlow(n)) {
    super(buffer, which, capacity);
    this.head = Atomics.load(this.w, HEAD);
  }

  /**
   * Hand over, in order, every entry written before the reader's `socketFrames`-th socket data
   * frame (the ones after it wait for that frame). Bodies and payloads are copies. How many.
   */
  read(socketFrames: number, deliver: RingDeliver): number {
    let n = 0;
    const dv = this.dv;
    for (;;) {
      const tail = Atomics.load(this.w, TAIL);
      if (tail === this.head) return n;
      let at = this.head & this.mask;
      let len = dv.getUint32(at, true);
      if (len === WRAP) {
        this.head = (this.head + this.capacity - at) | 0;
        at = 0;
        len = dv.getUint32(0, true);
      }
      if (((dv.getUint32(at + 4, true) - socketFrames) | 0) > 0) {
        Atomics.store(this.w, HEAD, this.head);
        return n;
      }
      const tag = dv.getUint32(at + 8, true);
      const bodyLen = dv.getUint32(at + 12, true);
      const p = dv.getUint32(at + 16, true);
      const b = at + ENTRY;
      const body = this.data.slice(b, b + bodyLen);
      let payload: Uint8Array | undefined;
      if (p !== 0) {
        payload = this.alloc(p - 1, tag);
        payload.set(this.data.subarray(b + bodyLen, b + bodyLen + p - 1));
      }
      this.head = (this.head + len) | 0;
      Atomics.store(this.w, HEAD, this.head);
      n++;
      deliver(tag, body, payload);
    }
  }

  /** The reader polls again: writers need not ring. */
  awake(): void {
    Atomics.store(this.w, STATE, AWAKE);
  }

  /** The reader stops polling: a writer rings from now on (the caller reads once more after this). */
  asleep(): void {
    Atomics.store(this.w, STATE, ASLEEP);
  }
}

let loadFd: number | null | undefined;
const loadBuf = Buffer.alloc(128);

/**
 * Whether a core is free for a thread of ours to poll: fewer threads of the whole machine are
 * runnable now (the kernel's instant count in /proc/loadavg, less the caller) than it has CPUs.
 * A poll on a busy machine takes its core from a thread with work: under load 10 on 2 cores, polling
 * made a pingpong 2.7× slower (docs/cluster.md, "Rings"). True where the count cannot be read.
 */
export function machineCoreFree(cpus: number): boolean {
  if (loadFd === undefined) {
    try { loadFd = openSync('/proc/loadavg', 'r'); } catch { loadFd = null; }
  }
  if (loadFd === null) return true;
  let n = 0;
  try { n = readSync(loadFd, loadBuf, 0, loadBuf.length, 0); } catch { return true; }
  const text = loadBuf.toString('latin1', 0, n);
  const slash = text.indexOf('/');
  const running = Number(text.slice(text.lastIndexOf(' ', slash) + 1, slash));
  return !(running - 1 >= cpus);
}

/** How every ring file's name begins (the accepting side removes only such names). */
export const RING_FILE_PREFIX = 'luna-ring-';

/** A mapped ring file: both directions of one pair of nodes. */
export interface RingFile {
  buffer: ArrayBuffer;
  /** how the peer opens it: `/proc/<pid>/fd/<n>#<name>` for a memfd, else the file's path */
  path: string;
  capacity: number;
}

/** The memfds this process offered and still keeps open for their peer: path → descriptor. */
const offered = new Map<string, number>();

/** A memfd's path as offered: its descriptor in this process, and the name the peer checks. */
const MEMFD_PATH = /^\/proc\/(\d+)\/fd\/(\d+)#(.+)$/;

/**
 * Create and map a fresh ring file; its path goes to the peer, which maps it too, and comes back
 * to unlinkRingFile once the peer has answered (or is gone). An error names why not.
 */
export function createRingFile(capacity = RING_CAPACITY): RingFile | string {
  const a = shm();
  if (!a) return 'the shared-memory addon is not built';
  const name = `${RING_FILE_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
  const bytes = ringFileBytes(capacity);
  const mfd = a.memfd ? a.memfd(name, bytes) : -38; // -ENOSYS
  let path: string;
  if (mfd >= 0) {
    path = `/proc/${process.pid}/fd/${mfd}#${name}`;
    const b = a.map(mfd, bytes);
    if (typeof b === 'number') { a.close(mfd); return `cannot map a memfd of ${bytes} bytes (errno ${-b})`; }
    offered.set(path, mfd);
    return fresh(b, path, capacity);
  }
  if (mfd !== -38) return `cannot make a memfd of ${bytes} bytes (errno ${-mfd})`;
  const dir = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  path = join(dir, name);
  const fd = a.open(path, bytes, true);
  if (fd < 0) return `cannot create ${path} (errno ${-fd})`;
  const b = a.map(fd, bytes);
  a.close(fd);
  if (typeof b === 'number') {
    a.unlink(path);
    return `cannot map ${path} (errno ${-b})`;
  }
  return fresh(b, path, capacity);
}

function fresh(b: ArrayBuffer, path: string, capacity: number): RingFile {
  const w = new Int32Array(b);
  for (const which of [0, 1]) Atomics.store(w, (which * (HEADER_BYTES + capacity)) / 4 + STATE, ASLEEP);
  return { buffer: b, path, capacity };
}

/** Map a ring file another node created; an error names why not. */
export function openRingFile(path: string, capacity: number): RingFile | string {
  const a = shm();
  if (!a) return 'the shared-memory addon is not built';
  if (!(capacity >= 4096 && (capacity & (capacity - 1)) === 0)) return `bad ring capacity ${capacity}`;
  const m = MEMFD_PATH.exec(path);
  const file = m ? path.slice(0, path.indexOf('#')) : path;
  const fd = a.open(file, ringFileBytes(capacity), false);
  if (fd < 0) return `cannot open ${file} (errno ${-fd})`;
  if (m) {
    // the descriptor number may have been reused by the offering node (its link closed meanwhile):
    // map only the memfd it offered
    let target = '';
    try { target = readlinkSync(`/proc/self/fd/${fd}`); } catch { /* checked below */ }
    if (target !== `/memfd:${m[3]} (deleted)`) { a.close(fd); return `${file} is no longer the ring ${m[3]} (it is ${target || 'unreadable'})`; }
  }
  const b = a.map(fd, ringFileBytes(capacity));
  a.close(fd);
  if (typeof b === 'number') return `cannot map ${file} (errno ${-b})`;
  return { buffer: b, path, capacity };
}

/**
 * The peer has answered the offer of this ring file, or is gone: close the memfd's descriptor
 * kept for it, or remove the named file's name (either way the mappings stay).
 */
export function unlinkRingFile(path: string): void {
  const fd = offered.get(path);
  if (fd !== undefined) { offered.delete(path); shm()?.close(fd); return; }
  if (MEMFD_PATH.test(path)) return; // a peer's memfd: nothing of it is ours to remove
  shm()?.unlink(path);
}
