// The apparel retailer's purchases (bench/data/apparel_trans.csv, Apache-2.0; bench/data/README.md
// says where they come from): one row per purchase, read by the benches that score predictions on
// real behaviour (bench/predict.ts, bench/learning.ts, bench/pattern-calibration.ts), grouped by
// customer and turned into purchase observations for the service.
import { readFileSync } from 'node:fs';
import type { ObservationInput } from '../src/typed/schemas.js';
import { CUSTOMER_KIND, PURCHASE_ATTRIBUTE } from './customers.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from './support.js';

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

/** Each customer's purchases, oldest first; the customers in the order of their ids (numeric). */
export function purchasesByCustomer(purchases: readonly Purchase[]): [customer: string, purchases: Purchase[]][] {
  const byCustomer = new Map<string, Purchase[]>();
  for (const p of purchases) {
    let list = byCustomer.get(p.customer);
    if (!list) byCustomer.set(p.customer, (list = []));
    list.push(p);
  }
  for (const list of byCustomer.values()) list.sort((a, b) => a.day - b.day);
  return [...byCustomer].sort(([a], [b]) => Number(a) - Number(b) || (a < b ? -1 : 1));
}

/**
 * One customer's purchases (oldest first) as observations of the purchase attribute, moved by
 * `shiftMs` (a bench moves its calibration end to now): each at noon of its day, same-day repeats
 * +1 min each.
 */
export function purchaseObservations(customer: string, list: readonly Purchase[], shiftMs: number): ObservationInput[] {
  let sameDay = 0;
  return list.map((p, i) => {
    sameDay = i > 0 && list[i - 1]!.day === p.day ? sameDay + 1 : 0;
    return {
      attributeKey: PURCHASE_ATTRIBUTE,
      subjectKind: CUSTOMER_KIND,
      subjectExternalId: customer,
      valueNumeric: p.price,
      observedAt: new Date(p.day * DAY_MS + 12 * HOUR_MS + sameDay * MINUTE_MS + shiftMs).toISOString(),
      source: 'apparel_trans.csv',
    };
  });
}
