import cytoscape from 'cytoscape';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { Entity, TraversalEdge } from '../../../src/graph/schemas.js';
import { call, type Session } from '../api.js';
import { Code, Empty, ErrorNote, TableHead, when } from '../components.js';
import { href } from '../route.js';

type EntityPage = { entity: Entity | null; edges: TraversalEdge[]; retiredEdges?: TraversalEdge[] };
interface View {
  hops: number;
  /** datetime-local text; empty for now. */
  asOf: string;
  retired: boolean;
}
/** An edge as drawn: a traversal edge, or one that had ended by the instant shown. */
type Drawn = TraversalEdge & { retired: boolean };

const TRAVERSE_LIMIT = 200;

/** #/graph searches entities; #/graph/<entityId> draws its neighbourhood. */
export function GraphPage({ session, entityId }: { session: Session; entityId?: string }) {
  const [view, setView] = useState<View>({ hops: 2, asOf: '', retired: false });
  return (
    <>
      <h1>Graph</h1>
      <EntitySearch session={session} />
      {entityId && (
        <>
          <fieldset className="filters" aria-label="What to draw">
            <label>
              Hops
              <select value={view.hops} onChange={(e) => setView({ ...view, hops: Number(e.target.value) })}>
                {[1, 2, 3].map((n) => (
                  <option key={n}>{n}</option>
                ))}
              </select>
            </label>
            <label>
              As of
              <input type="datetime-local" name="asOf" value={view.asOf} onChange={(e) => setView({ ...view, asOf: e.target.value })} />
            </label>
            <label className="inline">
              <input type="checkbox" checked={view.retired} onChange={(e) => setView({ ...view, retired: e.target.checked })} />
              Show retired edges
            </label>
          </fieldset>
          <Neighbourhood session={session} entityId={entityId} view={view} />
        </>
      )}
    </>
  );
}

function EntitySearch({ session }: { session: Session }) {
  const [text, setText] = useState('');
  const [found, setFound] = useState<Entity[]>();
  const [error, setError] = useState<unknown>();
  const [anyEntity, setAnyEntity] = useState<boolean>();

  useEffect(() => {
    call<Entity[]>(session, 'GET', '/memory/entities', { query: { limit: 1 } })
      .then((list) => setAnyEntity(list.length > 0))
      .catch(setError);
  }, [session]);

  const search = (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    call<Entity[]>(session, 'GET', '/memory/entities', { query: { search: text.trim(), limit: 20 } })
      .then(setFound)
      .catch(setError);
  };

  if (anyEntity === false) {
    const base = `${window.location.origin}/api/v1/projects/${session.projectId}`;
    return (
      <Empty title="No entities yet">
        <p>Entities and their relations are extracted from memories once the project opts in, or written directly, with a key that may write:</p>
        <Code>{`curl -X POST ${base}/admin/memory/graph/extraction/toggle \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" -d '{"enabled": true}'
curl -X POST ${base}/admin/memory/entities \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"type": "person", "canonicalName": "Ana Silva"}'`}</Code>
        <p>An agent can extract them with its own model through MCP: the tools memory_extract_pending and memory_commit_extraction at {base}/mcp-server.</p>
      </Empty>
    );
  }
  return (
    <>
      <form className="search" role="search" aria-label="Find an entity" onSubmit={search}>
        <input type="search" aria-label="Entity name or alias" placeholder="Name or alias" value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit">Find</button>
      </form>
      <ErrorNote error={error} />
      {found &&
        (found.length === 0 ? (
          <p className="hint">No current entity has that name or alias.</p>
        ) : (
          <ul className="entities" aria-label="Entities found">
            {found.map((entity) => (
              <li key={entity.id}>
                <a href={href('graph', entity.id)}>{entity.canonicalName}</a> <span className="muted">{entity.type}</span>
              </li>
            ))}
          </ul>
        ))}
    </>
  );
}

function Neighbourhood({ session, entityId, view }: { session: Session; entityId: string; view: View }) {
  const [page, setPage] = useState<EntityPage>();
  const [edges, setEdges] = useState<Drawn[]>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let live = true;
    setError(undefined);
    const asOf = view.asOf ? new Date(view.asOf).toISOString() : undefined;
    Promise.all([
      call<EntityPage>(session, 'GET', `/memory/entities/${encodeURIComponent(entityId)}`, { query: { asOf, includeRetired: view.retired || undefined } }),
      call<TraversalEdge[]>(session, 'POST', '/memory/graph/traverse', { body: { entityId, hops: view.hops, asOf, direction: 'both', limit: TRAVERSE_LIMIT } }),
    ])
      .then(([found, traversed]) => {
        if (!live) return;
        setPage(found);
        setEdges([...traversed.map((e) => ({ ...e, retired: false })), ...(found.retiredEdges ?? []).map((e) => ({ ...e, retired: true }))]);
      })
      .catch((failure) => live && setError(failure));
    return () => {
      live = false;
    };
  }, [session, entityId, view]);

  if (error) return <ErrorNote error={error} />;
  if (!page || !edges) return <p className="muted">Loading…</p>;
  return (
    <section aria-label="Neighbourhood">
      <h2>{page.entity ? page.entity.canonicalName : 'This entity was not valid then'}</h2>
      {page.entity && (
        <p className="muted">
          {page.entity.type}
          {page.entity.aliases.length > 0 && ` · also ${page.entity.aliases.join(', ')}`} · from {when(page.entity.validFrom)}
          {page.entity.validTo && ` to ${when(page.entity.validTo)}`}
        </p>
      )}
      {edges.length === 0 ? (
        <p className="hint">No edges {view.asOf ? 'were valid then' : 'are valid now'} within {view.hops} hop{view.hops > 1 ? 's' : ''}.</p>
      ) : (
        <>
          <Drawing seed={entityId} edges={edges} />
          <EdgeTable edges={edges} />
        </>
      )}
    </section>
  );
}

/** The neighbourhood drawn with Cytoscape: the seed in the middle, retired edges dashed. */
function Drawing({ seed, edges }: { seed: string; edges: Drawn[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const nodes = new Map<string, { id: string; label: string; kind: string }>();
    const elements: cytoscape.ElementDefinition[] = [];
    for (const edge of edges) {
      nodes.set(edge.subject.id, { id: edge.subject.id, label: edge.subject.canonicalName, kind: edge.subject.id === seed ? 'seed' : 'entity' });
      const target = edge.object ? edge.object.id : `literal:${edge.id}`;
      nodes.set(target, { id: target, label: edge.object ? edge.object.canonicalName : (edge.objectLiteral ?? ''), kind: edge.object ? (target === seed ? 'seed' : 'entity') : 'literal' });
      elements.push({
        data: { id: edge.id, source: edge.subject.id, target, label: `${edge.predicate} ${edge.weight.toFixed(2)}` },
        classes: edge.retired ? 'retired' : '',
      });
    }
    elements.unshift(...[...nodes.values()].map((n) => ({ data: { id: n.id, label: n.label }, classes: n.kind })));
    const cy = cytoscape({
      container: box.current,
      elements,
      layout: { name: 'breadthfirst', roots: [seed], directed: false, spacingFactor: 1.1, padding: 20 },
      userZoomingEnabled: false,
      style: [
        { selector: 'node', style: { label: 'data(label)', 'background-color': '#7f93c9', color: '#1d2330', 'font-size': 11, 'text-valign': 'bottom', 'text-margin-y': 4, width: 18, height: 18 } },
        { selector: 'node.seed', style: { 'background-color': '#2952cc', width: 26, height: 26, 'font-weight': 'bold' } },
        { selector: 'node.literal', style: { shape: 'round-rectangle', 'background-color': '#e3e7ef', width: 12, height: 12 } },
        { selector: 'edge', style: { label: 'data(label)', width: 1.5, 'line-color': '#8b95a8', 'target-arrow-color': '#8b95a8', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', 'font-size': 9, color: '#4b5466', 'text-background-color': '#ffffff', 'text-background-opacity': 0.85 } },
        { selector: 'edge.retired', style: { 'line-style': 'dashed', 'line-color': '#c27c7c', 'target-arrow-color': '#c27c7c', color: '#a11a1a' } },
      ],
    });
    return () => cy.destroy();
  }, [seed, edges]);
  return <div ref={box} className="graph" role="img" aria-label={`A drawing of ${edges.length} edges; the table below lists them`} />;
}

function EdgeTable({ edges }: { edges: Drawn[] }) {
  return (
    <div className="table-wrap">
      <table aria-label="Edges">
        <TableHead columns={['Hop', 'Subject', 'Predicate', 'Object', 'Weight', 'Valid from', 'Valid to']} />
        <tbody>
          {edges.map((edge) => (
            <tr key={edge.id} className={edge.retired ? 'retired' : undefined}>
              <td className="number">{edge.hop}</td>
              <td>
                <a href={href('graph', edge.subject.id)}>{edge.subject.canonicalName}</a>
              </td>
              <td>{edge.predicate}</td>
              <td>{edge.object ? <a href={href('graph', edge.object.id)}>{edge.object.canonicalName}</a> : <q>{edge.objectLiteral}</q>}</td>
              <td className="number">{edge.weight.toFixed(2)}</td>
              <td>{when(edge.validFrom)}</td>
              <td>{edge.retired ? `ended ${when(edge.validTo)}` : when(edge.validTo)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
