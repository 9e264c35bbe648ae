import { useEffect, useMemo, useState } from 'react';
import type uPlot from 'uplot';
import { GROUP_BY, type GroupBy } from '../../../src/learning/enums.js';
import type { CalibrationSchema, EffectivenessRowSchema } from '../../../src/learning/schemas.js';
import type { Static } from 'typebox';
import { call, type Session } from '../api.js';
import { Chart } from '../chart.js';
import { Code, Empty, ErrorNote, Figure, fixed, TableHead } from '../components.js';
import { CohortSection, DiscoverySection } from './learning-discovery.js';

type Calibration = Static<typeof CalibrationSchema>;
type EffectivenessRow = Static<typeof EffectivenessRowSchema>;

const BUCKETS = 10;

export function LearningPage({ session }: { session: Session }) {
  return (
    <>
      <h1>Learning</h1>
      <CalibrationSection session={session} />
      <EffectivenessSection session={session} />
      <DiscoverySection session={session} />
      <CohortSection session={session} />
    </>
  );
}

/** The reliability diagram: each bucket's mean stated probability against how often it came true. */
function CalibrationSection({ session }: { session: Session }) {
  const [report, setReport] = useState<Calibration>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<Calibration>(session, 'GET', '/lattice/calibration', { query: { bucketCount: BUCKETS } }).then(setReport, setError);
  }, [session]);

  const plot = useMemo(() => {
    if (!report) return undefined;
    const middle = report.buckets.map((b) => (b.lower + b.upper) / 2);
    const observed = report.buckets.map((b) => (b.hasData ? b.realizedHitRate : null));
    const options: Omit<uPlot.Options, 'width'> = {
      height: 320,
      scales: { x: { time: false, range: [0, 1] }, y: { range: [0, 1] } },
      axes: [{ label: 'stated probability' }, { label: 'share that came true' }],
      series: [
        { label: 'bucket' },
        { label: 'perfect calibration', stroke: '#9aa3b5', dash: [6, 4], points: { show: false } },
        { label: 'observed', stroke: '#2952cc', width: 2, points: { show: true, size: 9, fill: '#2952cc' }, spanGaps: true },
      ],
    };
    return { options, data: [middle, middle, observed] as uPlot.AlignedData };
  }, [report]);

  const scored = report?.scoredPredictions ?? 0;
  return (
    <section aria-label="Calibration">
      <h2>Calibration</h2>
      <ErrorNote error={error} />
      {report && scored === 0 && (
        <Empty title="No prediction has been scored yet">
          <p>
            Predictions are scored once their horizon has passed ({report.totalPredictions} recorded so far). Ask for one that states a probability:
          </p>
          <Code>{`curl -X POST ${window.location.origin}/api/v1/projects/${session.projectId}/memory-intelligence/predict \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"subject": {"kind": "customer", "externalId": "c-42"}, "target": {"kind": "event_occurrence", "eventType": "order.placed"}, "horizonDays": 30}'`}</Code>
        </Empty>
      )}
      {report && scored > 0 && plot && (
        <>
          <p className="figures">
            <Figure name="ECE">{fixed(report.expectedCalibrationError)}</Figure>
            <Figure name="Brier">{fixed(report.brierScore)}</Figure>
            <span>{scored} scored predictions</span>
          </p>
          <Chart label="Reliability diagram: observed share against stated probability, per bucket" options={plot.options} data={plot.data} />
          <div className="table-wrap">
            <table aria-label="Calibration buckets">
              <TableHead columns={['Stated probability', 'Predictions', 'Scored', 'Came true', 'Mean stated', 'Observed', 'Patterns']} />
              <tbody>
                {report.buckets.map((b) => (
                  <tr key={b.lower}>
                    <td>
                      {b.lower.toFixed(1)}–{b.upper.toFixed(1)}
                    </td>
                    <td className="number">{b.predictions}</td>
                    <td className="number">{b.hits + b.misses}</td>
                    <td className="number">{b.hits}</td>
                    <td className="number">{fixed(b.meanPredicted, 2)}</td>
                    <td className="number">{b.hasData ? fixed(b.realizedHitRate, 2) : '–'}</td>
                    <td className="number">{b.patterns}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function EffectivenessSection({ session }: { session: Session }) {
  const [groupBy, setGroupBy] = useState<GroupBy>('action_type');
  const [rows, setRows] = useState<EffectivenessRow[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setError(undefined);
    call<{ rows: EffectivenessRow[] }>(session, 'GET', '/lattice/effectiveness', { query: { groupBy } }).then(
      (report) => setRows(report.rows),
      (failure) => (setRows(undefined), setError(failure)),
    );
  }, [session, groupBy]);

  return (
    <section aria-label="Effectiveness">
      <h2>Effectiveness</h2>
      <label className="inline">
        By
        <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
          {GROUP_BY.map((g) => (
            <option key={g} value={g}>
              {g.replace('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      <ErrorNote error={error} />
      {rows && rows.length === 0 && (
        <Empty title="No outcomes yet">
          <p>
            Record a decision (<code>POST /lattice/decisions</code>) and, when you know how it went, its outcome (<code>POST /lattice/outcomes</code>).
          </p>
        </Empty>
      )}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Effectiveness by group">
            <TableHead columns={[groupBy.replace('_', ' '), 'Outcomes', 'Success rate', 'Posterior mean', 'Successes / partials / failures', 'Mean reward']} />
            <tbody>
              {rows.map((row) => (
                <tr key={row.groupKey}>
                  <td>{row.groupKey}</td>
                  <td className="number">{row.n}</td>
                  <td className="number">{fixed(row.successRate, 2)}</td>
                  <td className="number">{fixed(row.confidence, 2)}</td>
                  <td className="number">
                    {row.successes} / {row.partials} / {row.failures}
                  </td>
                  <td className="number">{fixed(row.avgReward, 2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
