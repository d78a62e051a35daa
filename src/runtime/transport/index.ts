export type { Transport, PeerAddress, Rendezvous } from './types.js';
export { Encoder, Decoder, DecodeError } from './codec.js';
export { createTcpTransport, type TcpTransport, type TcpTransportOptions } from './tcp.js';
export { envRendezvous, launcherRendezvous, fileRendezvous, jobIdFromEnv, parseHostPort, formatHostPort } from './rendezvous.js';
export { newSecret } from './auth.js';
