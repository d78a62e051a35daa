// A light look at C++ ucode sources before compiling them: the names written as `name(`
// outside comments and literals. It decides which source's translation unit gets the glue of
// an import (the one that mentions it, so its declaration is visible there) and which import
// names the front end should take as implemented; the compiler then checks what really is
// declared, with which parameters.

/** The text with comments, string and character literals blanked (lengths and lines kept). */
export function blankCommentsAndLiterals(src: string): string {
  const out = src.split('');
  let i = 0;
  const n = src.length;
  const blank = (from: number, to: number): void => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  while (i < n) {
    const c = src[i];
    if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === 'R' && src[i + 1] === '"' && !/\w/.test(src[i - 1] ?? '')) {
      // raw string R"delim( … )delim"
      const open = src.indexOf('(', i + 2);
      const delim = open < 0 ? '' : src.slice(i + 2, open);
      const end = open < 0 ? -1 : src.indexOf(`)${delim}"`, open);
      const stop = end < 0 ? n : end + delim.length + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let k = i + 1;
      while (k < n && src[k] !== c && src[k] !== '\n') k += src[k] === '\\' ? 2 : 1;
      blank(i, Math.min(k + 1, n));
      i = k + 1;
    } else i++;
  }
  return out.join('');
}

/** Identifiers followed by `(` (declarations, definitions and calls alike). */
export function namesCalledOrDeclared(src: string): Set<string> {
  const names = new Set<string>();
  const re = /\b([A-Za-z_]\w*)\s*\(/g;
  const text = blankCommentsAndLiterals(src);
  for (let m = re.exec(text); m; m = re.exec(text)) names.add(m[1]!);
  return names;
}
