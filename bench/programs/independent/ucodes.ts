// Ucodes of bench/programs/independent/*.fa (also called directly by the baselines).

/** Busy-wait for us microseconds (0: return at once). */
export function spin(us: number): void {
  if (us <= 0) return;
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

export function c_work(_i: number, us: number): void {
  spin(us);
}
