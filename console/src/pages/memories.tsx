import { useEffect, useState, type FormEvent } from 'react';
import { MEMORY_SCOPES, MEMORY_STATUSES, MEMORY_TYPES } from '../../../src/memory/enums.js';
import { call, type Memory, type SearchHit, type Session } from '../api.js';
import { Code, Empty, ErrorNote, TableHead, when } from '../components.js';
import { href } from '../route.js';

const PAGE_SIZE = 25;

interface Filters {
  type: string;
  status: string;
  scope: string;
  subjectKind: string;
  subjectExternalId: string;
  /** datetime-local text; empty for now. */
  asOf: string;
}

const NO_FILTERS: Filters = { type: '', status: '', scope: '', subjectKind: '', subjectExternalId: '', asOf: '' };

export function MemoriesPage({ session }: { session: Session }) {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const [rows, setRows] = useState<Memory[]>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let live = true;
    setError(undefined);
    call<Memory[]>(session, 'GET', '/memory', {
      query: {
        type: filters.type,
        status: filters.status,
        scope: filters.scope,
        subjectKind: filters.subjectKind,
        subjectExternalId: filters.subjectExternalId,
        asOf: filters.asOf ? new Date(filters.asOf).toISOString() : undefined,
        limit: PAGE_SIZE,
        offset,
      },
    }).then(
      (found) => live && setRows(found),
      (failure) => live && (setRows(undefined), setError(failure)),
    );
    return () => {
      live = false;
    };
  }, [session, filters, offset]);

  const set = (name: keyof Filters) => (value: string) => {
    setOffset(0);
    setFilters((current) => ({ ...current, [name]: value }));
  };
  const filtered = Object.values(filters).some(Boolean);

  return (
    <>
      <h1>Memories</h1>
      <Search session={session} />
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Type" value={filters.type} options={MEMORY_TYPES} onChange={set('type')} />
        <Choice label="Status" value={filters.status} options={MEMORY_STATUSES} onChange={set('status')} />
        <Choice label="Scope" value={filters.scope} options={MEMORY_SCOPES} onChange={set('scope')} />
        <label>
          Subject kind
          <input value={filters.subjectKind} onChange={(e) => set('subjectKind')(e.target.value)} />
        </label>
        <label>
          Subject id
          <input value={filters.subjectExternalId} onChange={(e) => set('subjectExternalId')(e.target.value)} />
        </label>
        <label>
          As of
          <input type="datetime-local" name="asOf" value={filters.asOf} onChange={(e) => set('asOf')(e.target.value)} />
        </label>
        {filtered && (
          <button type="button" onClick={() => (setOffset(0), setFilters(NO_FILTERS))}>
            Clear
          </button>
        )}
      </form>
      {filters.asOf && <p className="hint">The project as it was at {new Date(filters.asOf).toLocaleString()}: what was valid then, superseded memories included.</p>}
      <ErrorNote error={error} />
      {rows && rows.length === 0 && offset === 0 && !filtered && <EmptyProject session={session} />}
      {rows && (rows.length > 0 || offset > 0 || filtered) && (
        <>
          <div className="table-wrap">
            <table>
              <TableHead columns={['Content', 'Type (kind)', 'Subject', 'Status', 'Scope', 'Importance', 'Valid from', 'Valid to']} />
              <tbody>
                {rows.map((m) => (
                  <tr key={m.id}>
                    <td>
                      <a href={href('memories', m.id)}>{m.content}</a>
                    </td>
                    <td>{m.type}</td>
                    <td>{m.subject ? <a href={href('subjects', m.subject.kind, m.subject.externalId)}>{`${m.subject.kind}:${m.subject.externalId}`}</a> : '–'}</td>
                    <td>{m.status}</td>
                    <td>{m.scope}</td>
                    <td className="number">{m.importance}</td>
                    <td>{when(m.validFrom)}</td>
                    <td>{when(m.validTo)}</td>
                  </tr>
                ))}
                {rows.length === 0 && (
                  <tr>
                    <td colSpan={8}>No memory matches these filters.</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of memories">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
              Previous
            </button>
            <span>
              {rows.length === 0 ? 'none' : `${offset + 1}–${offset + rows.length}`}
            </span>
            <button type="button" disabled={rows.length < PAGE_SIZE} onClick={() => setOffset(offset + PAGE_SIZE)}>
              Next
            </button>
          </nav>
        </>
      )}
    </>
  );
}

function Choice({ label, value, options, onChange }: { label: string; value: string; options: readonly string[]; onChange: (value: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </label>
  );
}

/** Hybrid search (POST /memory/search): each hit with its score parts and the API's explanation. */
function Search({ session }: { session: Session }) {
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<SearchHit[]>();
  const [error, setError] = useState<unknown>();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      setHits(await call<SearchHit[]>(session, 'POST', '/memory/search', { body: { query, limit: 10 } }));
    } catch (failure) {
      setHits(undefined);
      setError(failure);
    }
  };

  return (
    <section aria-label="Search">
      <form className="search" role="search" onSubmit={submit}>
        <input type="search" name="query" aria-label="Search memories" placeholder="Search by meaning and by words" value={query} onChange={(e) => setQuery(e.target.value)} required />
        <button type="submit">Search</button>
        {hits && (
          <button type="button" onClick={() => setHits(undefined)}>
            Close results
          </button>
        )}
      </form>
      <ErrorNote error={error} />
      {hits && hits.length === 0 && <p>Nothing found for “{query}”.</p>}
      {hits && hits.length > 0 && (
        <ol className="hits">
          {hits.map((hit) => (
            <li key={hit.id}>
              <a href={href('memories', hit.id)}>{hit.content}</a>
              <div className="score">
                score {hit.score.toFixed(3)} · relevance {hit.scoreParts.relevance.toFixed(3)} (semantic{' '}
                {hit.scoreParts.semantic === null ? 'not embedded' : hit.scoreParts.semantic.toFixed(3)}, lexical {hit.scoreParts.lexical.toFixed(3)}) · recency{' '}
                {hit.scoreParts.recency.toFixed(3)} · importance {hit.scoreParts.importance.toFixed(2)}
              </div>
              <div className="explanation">{hit.explanation}</div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function EmptyProject({ session }: { session: Session }) {
  const base = `${window.location.origin}/api/v1/projects/${session.projectId}`;
  return (
    <Empty title="No memories yet">
      <p>Save one with a key that may write:</p>
      <Code>{`curl -X POST ${base}/admin/memory \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"content": "Prefers email over phone calls", "type": "preference"}'`}</Code>
      <p>or let an agent do it through MCP (the tool memory_save at {window.location.origin}/api/v1/projects/{session.projectId}/mcp-server).</p>
    </Empty>
  );
}
