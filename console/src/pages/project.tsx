import { useEffect, useState } from 'react';
import type { ProjectOverview } from '../../../src/project/schemas.js';
import { call, type Session } from '../api.js';
import { ErrorNote, TableHead, when } from '../components.js';

/** While work is in flight the page reads again this often. */
const REFRESH_MS = 5000;

const count = (n: number) => n.toLocaleString();
const FEATURE_NAMES: Record<string, string> = {
  predictions: 'Predictions',
  'memory.compliance': 'Compliance (export, hard delete, audit)',
  health: 'Health estimators',
  FEATURE_MEMORY_INTELLIGENCE: 'Memory intelligence',
};

/** A meter or ceiling against its limit; an unlimited one is drawn without a bar. */
function Meter({ name, used, limit, note }: { name: string; used: number; limit: number | null; note?: string }) {
  const share = limit === null ? undefined : limit === 0 ? (used > 0 ? 1 : 0) : Math.min(1, used / limit);
  return (
    <li className="meter">
      <span className="meter-name">{name}</span>
      {share === undefined ? (
        <span className="muted">unlimited</span>
      ) : (
        <meter min={0} max={1} low={0.8} high={0.95} optimum={0} value={share} aria-label={`${name}: ${count(used)} of ${count(limit!)}`} />
      )}
      <span className="meter-figures">
        {count(used)} {limit === null ? 'used' : `of ${count(limit)}`}
        {note && <span className="muted"> · {note}</span>}
      </span>
    </li>
  );
}

/** The project: its plan, usage against the plan's limits, and the work in flight. */
export function ProjectPage({ session }: { session: Session }) {
  const [overview, setOverview] = useState<ProjectOverview>();
  const [error, setError] = useState<unknown>();
  const [readAt, setReadAt] = useState<Date>();

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      call<ProjectOverview>(session, 'GET', '/project').then(
        (found) => {
          if (!live) return;
          setOverview(found);
          setReadAt(new Date());
          setError(undefined);
          const busy = found.jobs.items.length > 0 || found.work.some((w) => w.pending > 0);
          if (busy) timer = setTimeout(read, REFRESH_MS);
        },
        (failure) => live && setError(failure),
      );
    void read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [session]);

  if (!overview) return error ? <ErrorNote error={error} /> : <p className="muted">Loading…</p>;
  const { project, entitlements, usage, work, jobs } = overview;
  return (
    <>
      <h1>Project {project.name}</h1>
      <ErrorNote error={error} />
      <p className="muted">
        {project.id} · plan <strong>{project.plan}</strong> · read {readAt?.toLocaleTimeString()}
      </p>
      <section aria-label="Usage">
        <h2>Usage this month</h2>
        <ul className="meters">
          {usage.meters.map((m) => (
            <Meter key={m.meter} name={m.meter} used={m.used} limit={m.limit} note={`resets ${when(m.resetsAt)}`} />
          ))}
          {usage.ceilings.map((c) => (
            <Meter key={c.ceiling} name={c.ceiling} used={c.used} limit={c.limit} note="in use now" />
          ))}
        </ul>
      </section>
      <section aria-label="Entitlements">
        <h2>Entitlements</h2>
        <ul className="entitlements">
          {Object.entries(entitlements.features).map(([feature, on]) => (
            <li key={feature} className={on ? 'on' : 'off'}>
              {on ? '✓' : '✗'} {FEATURE_NAMES[feature] ?? feature} <span className="muted">({on ? 'included' : 'not in this plan'})</span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-label="Work in flight">
        <h2>Work in flight</h2>
        <div className="table-wrap">
          <table aria-label="Backlogs">
            <TableHead columns={['Work', 'Progress', 'Pending', 'Waiting since', 'What it is']} />
            <tbody>
              {work.map((w) => (
                <tr key={`${w.module}.${w.name}`}>
                  <td>
                    {w.module} {w.name}
                  </td>
                  <td className="progress">
                    {w.total !== null && w.done !== null ? (
                      <>
                        <progress max={Math.max(1, w.total)} value={w.total === 0 ? 1 : w.done} aria-label={`${w.module} ${w.name}: ${w.done} of ${w.total} done`} /> {count(w.done)} / {count(w.total)}
                      </>
                    ) : (
                      '–'
                    )}
                  </td>
                  <td className="number">{count(w.pending)}</td>
                  <td>{when(w.oldestPendingAt)}</td>
                  <td className="explanation">{w.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <h3>Jobs</h3>
        {jobs.items.length === 0 ? (
          <p>No job of this project is queued or running.</p>
        ) : (
          <div className="table-wrap">
            <table aria-label="Jobs">
              <TableHead columns={['Job', 'State', 'Try', 'Enqueued', 'Started']} />
              <tbody>
                {jobs.items.map((j) => (
                  <tr key={j.id}>
                    <td>{j.name}</td>
                    <td>{j.state}</td>
                    <td className="number">{j.attempt}</td>
                    <td>{when(j.enqueuedAt)}</td>
                    <td>{when(j.startedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {jobs.truncated && <p className="hint">The queue holds more jobs than one look reads: some of this project's may be missing.</p>}
      </section>
    </>
  );
}
