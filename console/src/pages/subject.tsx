import { useEffect, useMemo, useState, type FormEvent } from 'react';
import type { Static } from 'typebox';
import type { PatternRecord } from '../../../src/behavior/patterns/schemas.js';
import type { PredictedEvent, ProjectResponseSchema } from '../../../src/behavior/predict/schemas.js';
import type { ProfileSchema } from '../../../src/behavior/profile/schemas.js';
import type { LoggedEvent } from '../../../src/events/schemas.js';
import { call, type Session } from '../api.js';
import { Code, Empty, ErrorNote, percent, type Subject, SubjectFields, TableHead, when } from '../components.js';
import { href } from '../route.js';
import { AttributesSection } from './subject-attributes.js';
import { DecisionsSection } from './subject-decisions.js';

type Profile = Static<typeof ProfileSchema>;
/** The answer, its predictions typed (the schema refers to PredictedEvent by $ref). */
type Projection = Omit<Static<typeof ProjectResponseSchema>, 'predictions'> & { predictions: PredictedEvent[] };

const HORIZON_DAYS = 30;
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** #/subjects asks for a subject; #/subjects/<kind>/<externalId> shows everything about it. */
export function SubjectPage({ session, kind, externalId }: { session: Session; kind?: string; externalId?: string }) {
  const [draft, setDraft] = useState<Subject>({ kind: kind ?? 'customer', externalId: externalId ?? '' });
  const open = (event: FormEvent) => {
    event.preventDefault();
    window.location.hash = href('subjects', draft.kind.trim(), draft.externalId.trim());
  };
  // One object per subject, not per render: the sections fetch when it changes, not at every keystroke in the form.
  const subject = useMemo(() => (kind && externalId ? { kind, externalId } : undefined), [kind, externalId]);
  return (
    <>
      <h1>{subject ? `Subject ${subject.kind}:${subject.externalId}` : 'Subject'}</h1>
      <form className="filters" aria-label="Open a subject" onSubmit={open}>
        <SubjectFields value={draft} onChange={setDraft} />
        <button type="submit">Open</button>
      </form>
      {subject && <SubjectView key={`${subject.kind}:${subject.externalId}`} session={session} subject={subject} />}
    </>
  );
}

function SubjectView({ session, subject }: { session: Session; subject: Subject }) {
  return (
    <>
      <ProfileSection session={session} subject={subject} />
      <PatternsSection session={session} subject={subject} />
      <PredictionsSection session={session} subject={subject} />
      <AttributesSection session={session} subject={subject} />
      <DecisionsSection session={session} subject={subject} />
      <TimelineSection session={session} subject={subject} />
    </>
  );
}

function ProfileSection({ session, subject }: { session: Session; subject: Subject }) {
  const [profile, setProfile] = useState<Profile>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<Profile>(session, 'POST', '/lattice/profile', { body: { subject } }).then(setProfile, setError);
  }, [session, subject]);
  return (
    <section aria-label="Profile">
      <h2>Profile</h2>
      <ErrorNote error={error} />
      {profile && profile.activityCount === 0 && (
        <Empty title="No activity in the last year">
          <p>A subject's profile comes from its activity: memories about it, events and typed observations. For instance:</p>
          <Code>{`curl -X POST ${window.location.origin}/api/v1/projects/${session.projectId}/lattice/events/emit \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"eventType": "order.placed", "subject": {"kind": "${subject.kind}", "externalId": "${subject.externalId}"}, "payload": {"amount": 42}}'`}</Code>
        </Empty>
      )}
      {profile && profile.activityCount > 0 && (
        <dl className="facts">
          <dt>Segment</dt>
          <dd>{profile.rfmSegment?.replaceAll('_', ' ') ?? '–'}</dd>
          <dt>RFM scores</dt>
          <dd>
            recency {profile.recencyScore ?? '–'} · frequency {profile.frequencyScore ?? '–'} · monetary {profile.monetaryScore ?? '–'} (1 to 5)
          </dd>
          <dt>Cadence</dt>
          <dd>{profile.cadenceSummary ?? '–'}</dd>
          <dt>Activity in the last year</dt>
          <dd>
            {profile.activityCount}, the last {when(profile.lastActivityAt)}
          </dd>
          <dt>Risks</dt>
          <dd>{profile.risks.length === 0 ? 'none' : profile.risks.map((r) => `${r.description} (${r.severity.toFixed(2)})`).join('; ')}</dd>
        </dl>
      )}
    </section>
  );
}

function cadenceOf(p: PatternRecord): string {
  const c = p.metadata.cadence;
  if (!c) return '–';
  const parts = [c.periodDays ? `every ${Number(c.periodDays.toFixed(1))} days` : '', c.dayOfWeek !== undefined ? `on ${DAY_NAMES[c.dayOfWeek]}` : '', c.timeOfDayLocal ? `at ${c.timeOfDayLocal}${c.timezone ? ` ${c.timezone}` : ''}` : ''];
  return parts.filter(Boolean).join(' ') || '–';
}

function PatternsSection({ session, subject }: { session: Session; subject: Subject }) {
  const [patterns, setPatterns] = useState<PatternRecord[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<{ data: PatternRecord[] }>(session, 'GET', `/lattice/contacts/${encodeURIComponent(subject.externalId)}/patterns`, { query: { subjectKind: subject.kind, limit: 100 } }).then(
      (page) => setPatterns(page.data),
      setError,
    );
  }, [session, subject]);
  return (
    <section aria-label="Patterns">
      <h2>Patterns</h2>
      <ErrorNote error={error} />
      {patterns && patterns.length === 0 && <p>No active pattern. Patterns are mined from the subject's activity once it repeats (a few weeks of it).</p>}
      {patterns && patterns.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Patterns">
            <TableHead columns={['Pattern', 'Kind', 'Cadence', 'Confidence', 'Held / missed', 'Next expected']} />
            <tbody>
              {patterns.map((p) => (
                <tr key={p.id}>
                  <td>
                    <a href={href('memories', p.id)}>{p.summary}</a>
                  </td>
                  <td>{p.metadata.patternKind.replaceAll('_', ' ')}</td>
                  <td>{cadenceOf(p)}</td>
                  <td className="number">{p.confidence.toFixed(2)}</td>
                  <td className="number">
                    {p.metadata.hits} / {p.metadata.misses}
                  </td>
                  <td>{when(p.metadata.nextExpectedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * The patterns projected forward (POST /lattice/predict): asked for on request, since each call is
 * metered (one memory.predictions unit). Each prediction's confidence is drawn inside its 95% interval.
 */
function PredictionsSection({ session, subject }: { session: Session; subject: Subject }) {
  const [projection, setProjection] = useState<Projection>();
  const [error, setError] = useState<unknown>();
  const project = async () => {
    setError(undefined);
    try {
      setProjection(await call<Projection>(session, 'POST', '/lattice/predict', { body: { subject, horizonDays: HORIZON_DAYS, occurrencesPerPattern: 3, minConfidence: 0 } }));
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section aria-label="Predictions">
      <h2>Predictions</h2>
      <button type="button" onClick={project}>
        Project the next {HORIZON_DAYS} days
      </button>{' '}
      <span className="muted">(one metered prediction call)</span>
      <ErrorNote error={error} />
      {projection?.abstained && <p>No prediction: {projection.abstentionReason}</p>}
      {projection && projection.predictions.length > 0 && (
        <ul className="predictions" aria-label="Predicted events">
          {projection.predictions.map((p, i) => (
            <Prediction key={`${p.patternId}-${i}`} prediction={p} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Prediction({ prediction: p }: { prediction: PredictedEvent }) {
  return (
    <li>
      <div>
        <strong>{when(p.expectedAt)}</strong> ± {Math.round(p.windowMinutes)} min · {p.description}
      </div>
      <div className="interval" role="img" aria-label={`confidence ${p.confidence.toFixed(2)}, 95% interval ${p.confidenceLower.toFixed(2)} to ${p.confidenceUpper.toFixed(2)}`}>
        <span className="band" style={{ left: percent(p.confidenceLower), width: percent(Math.max(0.002, p.confidenceUpper - p.confidenceLower)) }} />
        <span className="point" style={{ left: percent(p.confidence) }} />
      </div>
      <div className="muted">
        confidence {p.confidence.toFixed(2)} (95% interval {p.confidenceLower.toFixed(2)} to {p.confidenceUpper.toFixed(2)})
      </div>
    </li>
  );
}

function TimelineSection({ session, subject }: { session: Session; subject: Subject }) {
  const [events, setEvents] = useState<LoggedEvent[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<LoggedEvent[]>(session, 'GET', '/memory-events', { query: { subjectKind: subject.kind, subjectExternalId: subject.externalId, limit: 1000 } }).then(setEvents, setError);
  }, [session, subject]);
  return (
    <section aria-label="Event timeline">
      <h2>Event timeline</h2>
      <ErrorNote error={error} />
      {events && events.length === 0 && <p>No event about this subject.</p>}
      {events && events.length > 0 && (
        <ol className="timeline">
          {[...events].reverse().map((e) => (
            <li key={e.id}>
              <span className="muted">{when(e.occurredAt)}</span> {e.eventType} <code className="payload">{JSON.stringify(e.payload)}</code>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
