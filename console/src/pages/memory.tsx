import { useEffect, useState } from 'react';
import type { Entity } from '../../../src/graph/schemas.js';
import { call, type Memory, type Session } from '../api.js';
import { ErrorNote, when } from '../components.js';
import { href } from '../route.js';

/** The chain is followed to its end, but never past this many links (a cycle would be a bug). */
const MAX_CHAIN = 20;

export function MemoryPage({ session, id }: { session: Session; id: string }) {
  const [memory, setMemory] = useState<Memory>();
  const [chain, setChain] = useState<Memory[]>([]);
  const [derived, setDerived] = useState<Memory[]>();
  const [entities, setEntities] = useState<Entity[]>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let live = true;
    setMemory(undefined);
    setChain([]);
    setDerived(undefined);
    setEntities(undefined);
    setError(undefined);
    (async () => {
      const [found, builtOn, mentioned] = await Promise.all([
        call<Memory>(session, 'GET', `/memory/${encodeURIComponent(id)}`),
        call<Memory[]>(session, 'GET', '/memory', { query: { derivedFrom: id, limit: 100 } }),
        call<Entity[]>(session, 'GET', '/memory/entities', { query: { memoryId: id, includeRetired: true, limit: 100 } }),
      ]);
      if (!live) return;
      setMemory(found);
      setDerived(builtOn);
      setEntities(mentioned);
      // What superseded it, and what superseded that, to the memory that holds now.
      const later: Memory[] = [];
      for (let next = found.supersededById; next && later.length < MAX_CHAIN; next = later.at(-1)!.supersededById) {
        later.push(await call<Memory>(session, 'GET', `/memory/${encodeURIComponent(next)}`));
        if (live) setChain([...later]);
      }
    })().catch((failure) => live && setError(failure));
    return () => {
      live = false;
    };
  }, [session, id]);

  return (
    <>
      <p>
        <a href={href('memories')}>← Memories</a>
      </p>
      <ErrorNote error={error} />
      {memory && (
        <article className="memory">
          <h1>{memory.content}</h1>
          <dl>
            <Field name="Id" value={memory.id} />
            <Field name="Type" value={memory.type} />
            <Field name="Status" value={memory.status} />
            <Field name="Scope" value={memory.scope} />
            <Field name="Subject" value={memory.subject ? `${memory.subject.kind}:${memory.subject.externalId}` : '–'} />
            <Field name="Importance" value={String(memory.importance)} />
            <Field name="Confidence" value={String(memory.confidence)} />
            <Field name="Source" value={memory.source ?? '–'} />
            <Field name="Valid from" value={when(memory.validFrom)} />
            <Field name="Valid to" value={when(memory.validTo)} />
            <Field name="Recorded" value={when(memory.recordedAt)} />
            <Field name="Embedded" value={memory.hasEmbedding ? 'yes' : 'not yet'} />
            {memory.reviewReason && <Field name="Review reason" value={memory.reviewReason} />}
          </dl>
          <section aria-label="Supersede chain">
            <h2>Supersede chain</h2>
            {memory.supersededById ? (
              <ol className="chain">
                {chain.map((m) => (
                  <li key={m.id}>
                    <a href={href('memories', m.id)}>{m.content}</a> <span className="muted">({m.status}, from {when(m.validFrom)})</span>
                  </li>
                ))}
              </ol>
            ) : (
              <p>Nothing has superseded this memory.</p>
            )}
          </section>
          <section aria-label="Provenance">
            <h2>Provenance</h2>
            {memory.sourceMemoryIds.length > 0 ? (
              <ul>
                {memory.sourceMemoryIds.map((source) => (
                  <li key={source}>
                    <a href={href('memories', source)}>{source}</a>
                  </li>
                ))}
              </ul>
            ) : (
              <p>Written directly, not derived from other memories.</p>
            )}
            <h3>Built on it</h3>
            {derived && derived.length > 0 ? (
              <ul aria-label="Built on it">
                {derived.map((m) => (
                  <li key={m.id}>
                    <a href={href('memories', m.id)}>{m.content}</a> <span className="muted">({m.type}, {m.status})</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p>No live insight, summary or decision cites this memory.</p>
            )}
          </section>
          <section aria-label="Graph entities">
            <h2>Graph entities</h2>
            {entities && entities.length > 0 ? (
              <ul className="entities">
                {entities.map((entity) => (
                  <li key={entity.id}>
                    <a href={href('graph', entity.id)}>{entity.canonicalName}</a> <span className="muted">{entity.type}{entity.validTo ? ', retired' : ''}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p>This memory mentions no graph entity{entities ? '' : ' yet'}.</p>
            )}
          </section>
        </article>
      )}
    </>
  );
}

function Field({ name, value }: { name: string; value: string }) {
  return (
    <>
      <dt>{name}</dt>
      <dd>{value}</dd>
    </>
  );
}
