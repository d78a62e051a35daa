export function c_say(s: string, n: number): void { console.log(`${s} ${n}`); }
