// The apparel retailer's purchases (bench/data/apparel_trans.csv, Apache-2.0; bench/data/README.md
// says where they come from): one row per purchase, read by the benches that score predictions on
// real behaviour (bench/predict.ts, bench/pattern-calibration.ts).
import { readFileSync } from 'node:fs';

const DAY_MS = 86_400_000;

export interface Purchase {
  customer: string;
  /** Days since the epoch (UTC). */
  day: number;
  price: number;
}

export function loadPurchases(): Purchase[] {
  const text = readFileSync(new URL('./data/apparel_trans.csv', import.meta.url), 'utf8');
  const unquote = (s: string | undefined) => (s ?? '').replace(/"/g, '');
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((line, i) => {
      const [, id, date, price] = line.split(',').map(unquote);
      const day = Date.parse(`${date}T00:00:00Z`) / DAY_MS;
      const value = Number(price);
      if (!id || !Number.isInteger(day) || !Number.isFinite(value)) throw new Error(`apparel_trans.csv line ${i + 2}: ${JSON.stringify(line)}`);
      return { customer: id, day, price: value };
    });
}

/** A calendar date (YYYY-MM-DD) as days since the epoch. */
export const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
