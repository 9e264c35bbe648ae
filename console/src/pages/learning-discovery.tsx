import { useState, type FormEvent } from 'react';
import type { Static } from 'typebox';
import type { Behavior, CohortMember, CohortResponseSchema, DiscoverResponse } from '../../../src/discovery/schemas.js';
import { call, type Session } from '../api.js';
import { ErrorNote, percent, type Subject, SubjectFields, TableHead } from '../components.js';
import { href } from '../route.js';

/** The answer, its members typed (the schema refers to CohortMember by $ref). */
type Cohort = Omit<Static<typeof CohortResponseSchema>, 'members'> & { members: CohortMember[] };
/** The answer, its behaviors typed (the schema refers to Behavior by $ref). */
type Discovered = Omit<DiscoverResponse, 'behaviors'> & { behaviors: Behavior[] };

/** Members listed per behavior. */
const MEMBERS_SHOWN = 8;

function SubjectLink({ subject }: { subject: Subject }) {
  return <a href={href('subjects', subject.kind, subject.externalId)}>{`${subject.kind}:${subject.externalId}`}</a>;
}

/** Behaviors discovered over the subjects' features, on request: each run clusters the project. */
export function DiscoverySection({ session }: { session: Session }) {
  const [found, setFound] = useState<Discovered>();
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>();
  const discover = () => {
    setRunning(true);
    setError(undefined);
    call<Discovered>(session, 'POST', '/lattice/discover', { body: { maxMembers: MEMBERS_SHOWN } })
      .then(setFound, setError)
      .finally(() => setRunning(false));
  };
  return (
    <section aria-label="Discovery">
      <h2>Discovered behaviors</h2>
      <p className="hint">Clusters of subjects who behave alike, by their RFM scores, patterns, cadence and the entities they name. Labels are rule-based.</p>
      <button type="button" onClick={discover} disabled={running}>
        {running ? 'Discovering…' : found ? 'Discover again' : 'Discover behaviors'}
      </button>
      <ErrorNote error={error} />
      {found && found.behaviors.length === 0 && (
        <p>
          No behavior stood out among {found.subjectsAnalyzed} subjects (abstained). Behaviors need subjects with mined activity: events, typed observations or memories about them over a
          few weeks.
        </p>
      )}
      {found && found.behaviors.length > 0 && (
        <>
          <p className="muted">
            {found.behaviors.length} behaviors over {found.subjectsAnalyzed} subjects{found.sampled ? ' (clustered on a sample)' : ''}, in {Math.round(found.durationMs)} ms.
          </p>
          <div className="table-wrap">
            <table aria-label="Behaviors">
              <TableHead columns={['Behavior', 'Subjects', 'Prevalence', 'Stability', 'Members (medoid first)', 'Evidence']} />
              <tbody>
                {found.behaviors.map((b) => (
                  <tr key={b.label}>
                    <td>{b.label}</td>
                    <td className="number">{b.size}</td>
                    <td className="number">{percent(b.prevalence)}</td>
                    <td className="number">{b.stability.toFixed(2)}</td>
                    <td>
                      {b.memberSubjects.map((s, i) => (
                        <span key={`${s.kind}:${s.externalId}`}>
                          {i > 0 && ', '}
                          <SubjectLink subject={s} />
                        </span>
                      ))}
                      {b.size > b.memberSubjects.length && <span className="muted"> and {b.size - b.memberSubjects.length} more</span>}
                    </td>
                    <td className="explanation">{b.exemplarEvidence.join('; ')}</td>
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

/** The subjects most like one subject. */
export function CohortSection({ session }: { session: Session }) {
  const [draft, setDraft] = useState<Subject>({ kind: 'customer', externalId: '' });
  const [cohort, setCohort] = useState<Cohort>();
  const [error, setError] = useState<unknown>();
  const find = (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    call<Cohort>(session, 'POST', '/lattice/cohort', { body: { subject: { kind: draft.kind.trim(), externalId: draft.externalId.trim() }, k: 10 } }).then(setCohort, setError);
  };
  return (
    <section aria-label="Cohort">
      <h2>Cohort</h2>
      <form className="filters" aria-label="Find a cohort" onSubmit={find}>
        <SubjectFields value={draft} onChange={setDraft} />
        <button type="submit">Find similar subjects</button>
      </form>
      <ErrorNote error={error} />
      {cohort && cohort.members.length === 0 && (
        <p>
          No cohort for <SubjectLink subject={cohort.target} />: it has no activity yet, so it is unknown (not unlike everyone). {cohort.candidateCount} subjects were compared.
        </p>
      )}
      {cohort && cohort.members.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Cohort members">
            <TableHead columns={['Subject', 'Similarity', 'Segment', 'Pattern kinds']} />
            <tbody>
              {cohort.members.map((m) => (
                <tr key={`${m.subject.kind}:${m.subject.externalId}`}>
                  <td>
                    <SubjectLink subject={m.subject} />
                  </td>
                  <td className="number">{m.similarity.toFixed(3)}</td>
                  <td>{m.rfmSegment?.replaceAll('_', ' ') ?? '–'}</td>
                  <td>{m.patternKinds.join(', ') || '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
