// A headline's sentiment when its writer gave none: a small finance lexicon in the spirit of
// Loughran and McDonald's word lists (2011), whose point is that general-purpose lexicons misread
// finance ("liability", "tax", "cost" are not negative news). A word counts when it starts with
// one of the stems; a negator just before it ("not", "no", "fails to") flips it.
// Score: (positive - negative) / (positive + negative), 0 when no word is in the lexicon.

const POSITIVE = [
  'beat', 'surpass', 'exceed', 'record', 'upgrade', 'outperform', 'growth', 'grew', 'gain', 'rall', 'surg', 'soar', 'jump', 'climb',
  'profit', 'strong', 'raise', 'raised', 'boost', 'expand', 'approv', 'wins', 'winning', 'won', 'partnership', 'breakthrough', 'rebound', 'improv', 'buyback',
];
const NEGATIVE = [
  'miss', 'downgrad', 'underperform', 'loss', 'lose', 'losing', 'decline', 'drop', 'fall', 'fell', 'plung', 'slump', 'tumbl', 'sink', 'sank', 'weak',
  'cut', 'lawsuit', 'sue', 'fraud', 'investigat', 'probe', 'recall', 'layoff', 'bankrupt', 'default', 'warn', 'delay', 'halt', 'fine', 'penalt', 'restat', 'resign', 'slowdown',
];
const NEGATORS = new Set(['not', 'no', 'never', 'without', 'fails', 'failed', 'fail']);

const matches = (word: string, stems: readonly string[]) => stems.some((s) => word.startsWith(s));

export function headlineSentiment(headline: string): number {
  const words = headline.toLowerCase().match(/[a-z]+/g) ?? [];
  let positive = 0;
  let negative = 0;
  words.forEach((word, i) => {
    const sign = matches(word, POSITIVE) ? 1 : matches(word, NEGATIVE) ? -1 : 0;
    if (sign === 0) return;
    const flipped = (i > 0 && NEGATORS.has(words[i - 1]!)) || (i > 1 && NEGATORS.has(words[i - 2]!) && words[i - 1] === 'to');
    if ((sign > 0) !== flipped) positive++;
    else negative++;
  });
  return positive + negative === 0 ? 0 : (positive - negative) / (positive + negative);
}
