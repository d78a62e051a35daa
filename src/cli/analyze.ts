// `luna analyze slow TRACE` — wired to src/analysis/slow.
export async function analyzeSlowCommand(dir: string, o: { json?: boolean; model: string; window?: string; compare?: boolean }): Promise<number> {
  void dir; void o;
  process.stderr.write('luna: analyze slow: not wired yet\n');
  return 1;
}
