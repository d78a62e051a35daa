// The raw baselines' sockets (transport, raw-pingpong, raw-exchange): the kind luna's links
// between ranks of one machine use — a Unix socket, or TCP loopback with LUNA_LOCAL_SOCKETS=0
// (src/runtime/transport/local.ts) — so a ratio against them compares like with like.
import * as net from 'node:net';
import { localSocketPath, localSocketsEnabled } from '../src/runtime/transport/local.js';

/** A listening raw baseline: a socket path, or a TCP port on 127.0.0.1. */
export type RawAddress = string | number;

/** What the baselines run over, for the suites' notes. */
export function rawSocketKind(): string {
  return localSocketsEnabled() ? 'a Unix socket' : 'TCP loopback';
}

export function rawListen(server: net.Server): Promise<RawAddress> {
  return new Promise((res, rej) => {
    server.once('error', rej);
    if (localSocketsEnabled()) {
      const path = localSocketPath();
      server.listen(path, () => res(path));
    } else server.listen(0, '127.0.0.1', () => res((server.address() as net.AddressInfo).port));
  });
}

export function rawConnect(addr: RawAddress): net.Socket {
  const s = typeof addr === 'string' ? net.connect(addr) : net.connect(addr, '127.0.0.1');
  s.setNoDelay(true);
  return s;
}
