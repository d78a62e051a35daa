// Writing an export's bytes to a file descriptor, all of them. Standard output may be a pipe that
// node made non-blocking (it does once anything touches process.stdout, in this process or in the
// one that handed the descriptor down): there a write takes only what fits (a partial count) or
// nothing (EAGAIN) while the reader lags, and ignoring that would cut the output silently.
import { writeSync } from 'node:fs';

const nap = new Int32Array(new SharedArrayBuffer(4));

/** Bytes [off, off + len) of buf to fd, waiting (1 ms naps) while a non-blocking pipe is full. */
export function writeAll(fd: number, buf: Uint8Array, off = 0, len = buf.length - off): void {
  while (len > 0) {
    let n: number;
    try {
      n = writeSync(fd, buf, off, len);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(nap, 0, 0, 1);
      continue;
    }
    off += n;
    len -= n;
  }
}

/** A string as UTF-8 to fd, all of it (the common whole write makes no Buffer). */
export function writeAllText(fd: number, s: string): void {
  let n: number;
  try {
    n = writeSync(fd, s);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    n = 0;
  }
  if (n < Buffer.byteLength(s)) writeAll(fd, Buffer.from(s), n);
}
