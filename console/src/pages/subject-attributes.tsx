import { useEffect, useMemo, useState } from 'react';
import type uPlot from 'uplot';
import type { Accumulator, ObservationSchema } from '../../../src/typed/schemas.js';
import type { Static } from 'typebox';
import { call, type Session } from '../api.js';
import { Chart } from '../chart.js';
import { ErrorNote, Figure, rounded, type Subject } from '../components.js';

type Observation = Static<typeof ObservationSchema>;

/** Observations read for the charts: the newest this many, across the subject's attributes. */
const OBSERVATIONS = 1000;

/**
 * The subject's numeric typed attributes, each charted over time beside its accumulator as the API
 * keeps it (GET /memory-typed/accumulator): the mean, the band of two standard deviations around
 * it, and the EWMA now.
 */
export function AttributesSection({ session, subject }: { session: Session; subject: Subject }) {
  const [series, setSeries] = useState<Map<string, Observation[]>>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<Observation[]>(session, 'GET', '/memory-typed/observations', { query: { subjectKind: subject.kind, subjectExternalId: subject.externalId, limit: OBSERVATIONS } }).then(
      (rows) => {
        const byKey = new Map<string, Observation[]>();
        for (const row of rows) {
          if (row.valueNumeric === null || row.observedAt === null || row.attributeKey === null) continue;
          byKey.set(row.attributeKey, [...(byKey.get(row.attributeKey) ?? []), row]);
        }
        for (const rows of byKey.values()) rows.sort((a, b) => Date.parse(a.observedAt!) - Date.parse(b.observedAt!));
        setSeries(byKey);
      },
      setError,
    );
  }, [session, subject]);

  return (
    <section aria-label="Typed attributes">
      <h2>Typed attributes</h2>
      <ErrorNote error={error} />
      {series && series.size === 0 && <p>No numeric observation of this subject (POST /memory-typed/observations records them).</p>}
      {series && [...series].map(([key, rows]) => <Attribute key={key} session={session} subject={subject} attributeKey={key} rows={rows} />)}
    </section>
  );
}

function Attribute({ session, subject, attributeKey, rows }: { session: Session; subject: Subject; attributeKey: string; rows: Observation[] }) {
  const [acc, setAcc] = useState<Accumulator>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<Accumulator>(session, 'GET', '/memory-typed/accumulator', { query: { subjectKind: subject.kind, subjectExternalId: subject.externalId, attributeKey } }).then(setAcc, setError);
  }, [session, subject, attributeKey]);

  const plot = useMemo(() => {
    const xs = rows.map((r) => Date.parse(r.observedAt!) / 1000);
    const flat = (value: number | null | undefined) => xs.map(() => value ?? null);
    const sd = acc?.stddev ?? null;
    const mean = acc?.mean ?? null;
    const options: Omit<uPlot.Options, 'width'> = {
      height: 220,
      scales: { x: { time: true } },
      series: [
        {},
        { label: attributeKey, stroke: '#2952cc', width: 2, points: { show: true, size: 6, fill: '#2952cc' } },
        { label: 'mean', stroke: '#1d2330', dash: [4, 3], points: { show: false } },
        { label: 'mean + 2σ', stroke: '#9aa3b5', dash: [2, 3], points: { show: false } },
        { label: 'mean − 2σ', stroke: '#9aa3b5', dash: [2, 3], points: { show: false } },
        { label: 'EWMA now', stroke: '#c77700', dash: [6, 3], points: { show: false } },
      ],
    };
    const data: uPlot.AlignedData = [
      xs,
      rows.map((r) => r.valueNumeric),
      flat(mean),
      flat(mean !== null && sd !== null ? mean + 2 * sd : null),
      flat(mean !== null && sd !== null ? mean - 2 * sd : null),
      flat(acc?.ewma),
    ];
    return { options, data };
  }, [rows, acc, attributeKey]);

  return (
    <article className="attribute" aria-label={`Attribute ${attributeKey}`}>
      <h3>{attributeKey}</h3>
      <ErrorNote error={error} />
      <Chart label={`${attributeKey} over time, with its mean, a band of two standard deviations and the EWMA`} options={plot.options} data={plot.data} />
      {acc && (
        <p className="figures">
          <Figure name="count">{acc.count}</Figure>
          <Figure name="mean">{rounded(acc.mean)}</Figure>
          <Figure name="σ">{rounded(acc.stddev)}</Figure>
          <Figure name="EWMA">{rounded(acc.ewma)}</Figure>
          <Figure name="min / max">
            {rounded(acc.min)} / {rounded(acc.max)}
          </Figure>
          <Figure name="last">{rounded(acc.last)}</Figure>
        </p>
      )}
    </article>
  );
}
