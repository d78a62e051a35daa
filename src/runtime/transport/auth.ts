// Mutual challenge-response on the run's secret: the secret never crosses the wire, a captured
// handshake cannot be replayed (fresh nonces), and each side proves itself to the other.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const NONCE_BYTES = 16;

/** A fresh random secret for a run (hex, 256 bits). */
export function newSecret(): string {
  return randomBytes(32).toString('hex');
}

export function newNonce(): Buffer {
  return randomBytes(NONCE_BYTES);
}

/** MAC binding the role, the peer's nonce and the claimed rank/size to the secret. */
export function proof(secret: string, role: 'connect' | 'accept', nonce: Uint8Array, rank: number, size: number): Buffer {
  return createHmac('sha256', secret)
    .update(`luna-ts/1 ${role} ${rank} ${size} `)
    .update(nonce)
    .digest();
}

export function proofMatches(expected: Buffer, got: Uint8Array): boolean {
  return got.length === expected.length && timingSafeEqual(expected, got);
}
