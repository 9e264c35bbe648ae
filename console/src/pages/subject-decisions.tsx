import { useEffect, useState } from 'react';
import type { OutcomeRow } from '../../../src/learning/schemas.js';
import { call, type Memory, type Session } from '../api.js';
import { Code, ErrorNote, type Subject, TableHead, when } from '../components.js';
import { href } from '../route.js';


/** Decisions and outcomes read for a subject: the newest this many of each. */
const READ_LIMIT = 200;

/**
 * The decisions taken about the subject (each stored as a memory of type decision, whose metadata
 * names the decision) with the outcomes recorded for them, newest first.
 */
export function DecisionsSection({ session, subject }: { session: Session; subject: Subject }) {
  const [decisions, setDecisions] = useState<Memory[]>();
  const [outcomes, setOutcomes] = useState<OutcomeRow[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    const bySubject = { subjectKind: subject.kind, subjectExternalId: subject.externalId };
    Promise.all([
      call<Memory[]>(session, 'GET', '/memory', { query: { ...bySubject, type: 'decision', limit: READ_LIMIT } }),
      call<{ outcomes: OutcomeRow[] }>(session, 'GET', '/lattice/outcomes', { query: { ...bySubject, limit: READ_LIMIT } }),
    ]).then(([found, recorded]) => {
      setDecisions(found);
      setOutcomes(recorded.outcomes);
    }, setError);
  }, [session, subject]);

  const outcomesOf = (decisionId: unknown) => (outcomes ?? []).filter((o) => o.decisionId === decisionId);
  return (
    <section aria-label="Decisions and outcomes">
      <h2>Decisions and outcomes</h2>
      <ErrorNote error={error} />
      {decisions && decisions.length === 0 && (
        <>
          <p>No decision about this subject has been recorded. An agent records what it decided, and later what followed:</p>
          <Code>{`curl -X POST ${window.location.origin}/api/v1/projects/${session.projectId}/lattice/decisions \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"subject": {"kind": "${subject.kind}", "externalId": "${subject.externalId}"}, "decisionType": "retention", "actionType": "send_offer"}'`}</Code>
        </>
      )}
      {decisions && decisions.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Decisions">
            <TableHead columns={['Decided', 'Decision', 'Action', 'Policy', 'Status', 'Outcomes', 'Evidence']} />
            <tbody>
              {decisions.map((d) => {
                const meta = (d.metadata ?? {}) as { decisionId?: string; decisionType?: string; actionType?: string; policy?: string; status?: string };
                const followed = outcomesOf(meta.decisionId);
                return (
                  <tr key={d.id}>
                    <td>{when(d.validFrom)}</td>
                    <td>
                      <a href={href('memories', d.id)}>{meta.decisionType ?? meta.decisionId ?? d.id}</a>
                    </td>
                    <td>{meta.actionType ?? '–'}</td>
                    <td>{meta.policy ?? '–'}</td>
                    <td>{meta.status ?? '–'}</td>
                    <td>
                      {followed.length === 0
                        ? 'none yet'
                        : followed.map((o) => (
                            <div key={o.outcomeId} className={`result-${o.result}`}>
                              {o.result}
                              {o.reward !== null && ` (reward ${o.reward})`}, {when(o.realizedAt)}
                              {!o.attributed && <span className="muted"> · not attributed</span>}
                            </div>
                          ))}
                    </td>
                    <td>{d.sourceMemoryIds.length === 0 ? '–' : d.sourceMemoryIds.map((id) => <a key={id} href={href('memories', id)}>{id} </a>)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
