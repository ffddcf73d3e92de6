/** Word agreement between an OCR text and the true text: 2·LCS / (|a| + |b|) over lower-cased words, so it
 * counts reading order too (a word found in the wrong place does not match). Hyphenated line ends are joined first. */
export function words(text: string): string[] {
  return text
    .replace(/(\p{Ll})-\s*\n\s*(\p{Ll})/gu, "$1$2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

export function lcs(a: string[], b: string[]): number {
  let previous = new Uint32Array(b.length + 1);
  let current = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      current[j] = a[i - 1] === b[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

export function agreement(ocr: string, truth: string): { matched: number; ocrWords: number; truthWords: number } {
  const a = words(ocr);
  const b = words(truth);
  return { matched: lcs(a, b), ocrWords: a.length, truthWords: b.length };
}

/** The agreement as one figure, 0–1. */
export function agreementScore(ocr: string, truth: string): number {
  const a = agreement(ocr, truth);
  return (2 * a.matched) / (a.ocrWords + a.truthWords || 1);
}
