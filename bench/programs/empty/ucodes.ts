// Ucodes of bench/programs/empty/empty.fa.
export function c_nothing(): void {}
