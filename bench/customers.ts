// The synthetic customers of the behaviour benches (predict.ts's speed part, the suite's behaviour
// rows): 50 purchases each over the last year, on weekly, biweekly, monthly or irregular habits,
// deterministic per customer.
import type { ObservationInput } from '../src/typed/schemas.js';
import { mulberry32 } from './support.js';

export const PURCHASE_ATTRIBUTE = 'purchase';
export const CUSTOMER_KIND = 'customer';
export const PURCHASES = 50;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

export type Habit = 'weekly' | 'biweekly' | 'monthly' | 'irregular';
/** Share of customers, days between visits, items bought per visit (minutes apart), sd of a visit's day. */
export const HABITS: { habit: Habit; share: number; periodDays: number; perVisit: number; jitterDays: number }[] = [
  { habit: 'weekly', share: 0.35, periodDays: 7, perVisit: 1, jitterDays: 0.5 },
  { habit: 'biweekly', share: 0.25, periodDays: 14, perVisit: 2, jitterDays: 1 },
  { habit: 'monthly', share: 0.2, periodDays: 30, perVisit: 5, jitterDays: 2 },
  { habit: 'irregular', share: 0.2, periodDays: 0, perVisit: 1, jitterDays: 0 },
];

export const subjectId = (i: number) => `c-${String(i).padStart(6, '0')}`;

/** Customer i's 50 purchases, ending before `now`; the same i gives the same purchases. */
export function syntheticPurchases(i: number, now: number): ObservationInput[] {
  const random = mulberry32(0x9e3779b1 ^ (i * 2654435761));
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  let pick = random();
  const habit = HABITS.find((h) => (pick -= h.share) < 0) ?? HABITS.at(-1)!;
  const hour = 8 + random() * 12;
  const times: number[] = [];
  if (habit.habit === 'irregular') {
    for (let k = 0; k < PURCHASES; k++) times.push(now - HOUR_MS - random() * 365 * DAY_MS);
  } else {
    const visits = Math.ceil(PURCHASES / habit.perVisit);
    const phase = random() * habit.periodDays;
    for (let v = 0; v < visits; v++) {
      const dayAt = now - (phase + (visits - 1 - v) * habit.periodDays + normal() * habit.jitterDays) * DAY_MS;
      let at = Math.floor(dayAt / DAY_MS) * DAY_MS + (hour + 0.75 * normal()) * HOUR_MS;
      while (at > now - HOUR_MS) at -= DAY_MS;
      const items = Math.min(habit.perVisit, PURCHASES - v * habit.perVisit);
      for (let k = 0; k < items; k++) times.push(at + k * 2 * MINUTE_MS);
    }
  }
  times.sort((a, b) => a - b);
  return times.map((at) => ({
    attributeKey: PURCHASE_ATTRIBUTE,
    subjectKind: CUSTOMER_KIND,
    subjectExternalId: subjectId(i),
    valueNumeric: Math.round((10 + random() * 190) * 100) / 100,
    observedAt: new Date(Math.round(at)).toISOString(),
    source: 'bench-synthetic',
  }));
}
