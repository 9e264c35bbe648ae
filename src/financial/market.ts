// The financial memories the public clients write (POST /admin/memory, category financial,
// SDK-WIRE.md 4.11), read back into market data and positions: metadata.price (a daily close),
// metadata.fundamental (latest wins), metadata.newsEvent (one ticker or many) and metadata.holding
// (a subject's position, restated not summed: the latest record of a ticker wins, zero shares close
// it). Market data is pooled across the project; holdings belong to the memory's subject.
// A memory whose metadata does not parse is left out and reported, never guessed at.
import type { Subject } from '../platform/common-schemas.js';
import { headlineSentiment } from './sentiment.js';

/** The slice of a memory this reads. */
export interface FinancialMemory {
  id: string;
  metadata: Record<string, unknown> | null;
  subject: Subject | null;
  validFrom: string;
  created: string;
}

export interface Bar {
  /** The UTC day of the bar: one close per ticker per day (the latest written wins). */
  day: string;
  at: number;
  close: number;
  memoryId: string;
}

export interface Fundamental {
  ticker: string;
  peRatio: number | null;
  marketCap: number | null;
  dividendYield: number | null;
  eps: number | null;
  debtToEquity: number | null;
  beta: number | null;
  at: number;
  memoryId: string;
}

export interface Holding {
  ticker: string;
  shares: number;
  costBasis: number | null;
  assetClass: string;
  at: number;
  memoryId: string;
}

export interface News {
  tickers: string[];
  headline: string;
  sentiment: number;
  /** Whether the writer scored it (else the lexicon did). */
  scored: boolean;
  at: number;
  memoryId: string;
}

export interface Market {
  /** Per ticker, oldest first. */
  prices: Map<string, Bar[]>;
  fundamentals: Map<string, Fundamental>;
  news: News[];
  /** Per subject key (`kind\0externalId`), the open positions by ticker. */
  holdings: Map<string, Map<string, Holding>>;
  /** Memories of category financial that carried none of the four shapes in a usable form. */
  ignored: { memoryId: string; reason: string }[];
}

export const normaliseTicker = (t: string): string => t.trim().toUpperCase();
export const subjectKey = (s: Subject): string => `${s.kind}\0${s.externalId}`;

const record = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);
const ticker = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' && v.trim().length <= 32 ? normaliseTicker(v) : null);

/** The instant a record speaks of: its own timestamp when it parses, else the memory's event time. */
function instant(own: unknown, m: FinancialMemory): number {
  const t = typeof own === 'string' ? Date.parse(own) : NaN;
  return Number.isFinite(t) ? t : Date.parse(m.validFrom);
}

/** Later wins; on the same instant the later-written memory does. */
const later = (a: { at: number; created: number }, b: { at: number; created: number }) => a.at > b.at || (a.at === b.at && a.created >= b.created);

export function readMarket(memories: readonly FinancialMemory[]): Market {
  const bars = new Map<string, Map<string, Bar & { created: number }>>();
  const fundamentals = new Map<string, Fundamental & { created: number }>();
  const holdings = new Map<string, Map<string, Holding & { created: number }>>();
  const news: News[] = [];
  const ignored: Market['ignored'] = [];
  const keep = <T extends { at: number; created: number }>(map: Map<string, T>, key: string, value: T) => {
    const current = map.get(key);
    if (!current || later(value, current)) map.set(key, value);
  };

  for (const m of memories) {
    const meta = m.metadata ?? {};
    const created = Date.parse(m.created);
    const price = record(meta.price);
    const fundamental = record(meta.fundamental);
    const holding = record(meta.holding);
    const event = record(meta.newsEvent);
    if (price) {
      const t = ticker(price.ticker);
      const close = finite(price.close);
      if (!t || close === null || close <= 0) ignored.push({ memoryId: m.id, reason: 'metadata.price needs a ticker and a positive close' });
      else {
        const at = instant(price.asOf, m);
        const day = new Date(at).toISOString().slice(0, 10);
        const series = bars.get(t) ?? new Map();
        bars.set(t, series);
        keep(series, day, { day, at, close, memoryId: m.id, created });
      }
    } else if (fundamental) {
      const t = ticker(fundamental.ticker);
      if (!t) ignored.push({ memoryId: m.id, reason: 'metadata.fundamental needs a ticker' });
      else
        keep(fundamentals, t, {
          ticker: t,
          peRatio: finite(fundamental.peRatio),
          marketCap: finite(fundamental.marketCap),
          dividendYield: finite(fundamental.dividendYield),
          eps: finite(fundamental.eps),
          debtToEquity: finite(fundamental.debtToEquity),
          beta: finite(fundamental.beta),
          at: instant(fundamental.asOf, m),
          memoryId: m.id,
          created,
        });
    } else if (holding) {
      const t = ticker(holding.ticker);
      const shares = finite(holding.shares);
      if (!t || shares === null || !m.subject) ignored.push({ memoryId: m.id, reason: 'metadata.holding needs a ticker, shares and a subject' });
      else {
        const positions = holdings.get(subjectKey(m.subject)) ?? new Map();
        holdings.set(subjectKey(m.subject), positions);
        const assetClass = typeof holding.assetClass === 'string' && holding.assetClass.trim() !== '' ? holding.assetClass.trim().toLowerCase() : 'equity';
        keep(positions, t, { ticker: t, shares, costBasis: finite(holding.costBasis), assetClass, at: Date.parse(m.validFrom), memoryId: m.id, created });
      }
    } else if (event) {
      const tickers = [...new Set([event.ticker, ...(Array.isArray(event.tickers) ? event.tickers : [])].map(ticker).filter((t): t is string => t !== null))];
      const headline = typeof event.headline === 'string' ? event.headline : '';
      if (tickers.length === 0 || headline.trim() === '') ignored.push({ memoryId: m.id, reason: 'metadata.newsEvent needs a ticker (or tickers) and a headline' });
      else {
        const given = finite(event.sentiment);
        news.push({
          tickers,
          headline,
          sentiment: given === null ? headlineSentiment(headline) : Math.max(-1, Math.min(1, given)),
          scored: given !== null,
          at: instant(event.publishedAt, m),
          memoryId: m.id,
        });
      }
    } else ignored.push({ memoryId: m.id, reason: 'no metadata.price, fundamental, holding or newsEvent' });
  }

  const strip = <T extends { created: number }>({ created: _, ...rest }: T) => rest;
  return {
    prices: new Map([...bars].map(([t, series]) => [t, [...series.values()].map(strip).sort((a, b) => a.at - b.at)])),
    fundamentals: new Map([...fundamentals].map(([t, f]) => [t, strip(f)])),
    news: news.sort((a, b) => a.at - b.at),
    // A restated position of zero shares (or fewer) is closed.
    holdings: new Map([...holdings].map(([s, positions]) => [s, new Map([...positions].filter(([, h]) => h.shares > 0).map(([t, h]) => [t, strip(h)]))])),
    ignored,
  };
}
