import { useCallback, useEffect, useState } from 'react';
import { MEMORY_SCOPES, type MemoryScope } from '../../../src/memory/enums.js';
import { call, type Memory, type Session } from '../api.js';
import { Code, Empty, ErrorNote, when } from '../components.js';
import { href } from '../route.js';

const PAGE_SIZE = 50;

/**
 * The review queue (GET /memory/review: pending and flagged, each with its reason) and, with
 * WRITE_MEMORY, the moves (confirm, reject, promote). A READ_MEMORY key sees the queue and no buttons.
 */
export function ReviewPage({ session }: { session: Session }) {
  const [items, setItems] = useState<Memory[]>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();

  const load = useCallback(async () => {
    setError(undefined);
    try {
      setItems(await call<Memory[]>(session, 'GET', '/memory/review', { query: { limit: PAGE_SIZE } }));
    } catch (failure) {
      setError(failure);
    }
  }, [session]);
  useEffect(() => void load(), [load]);

  const act = async (memory: Memory, what: string, path: string, body: unknown) => {
    setError(undefined);
    try {
      await call(session, 'POST', `/admin/memory/${encodeURIComponent(memory.id)}/${path}`, { body });
      setDone(`${what}: “${memory.content}”`);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <>
      <h1>Review queue</h1>
      {!session.canWrite && <p className="hint">This key may only read: it sees the queue, without the buttons to confirm, reject or promote.</p>}
      {done && (
        <p className="done" role="status">
          {done}
        </p>
      )}
      <ErrorNote error={error} />
      {items && items.length === 0 && (
        <Empty title="Nothing to review">
          <p>Memories arrive here when they are saved as pending, or flagged (low confidence, stale, rated down). For instance:</p>
          <Code>{`curl -X POST ${window.location.origin}/api/v1/projects/${session.projectId}/admin/memory \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"content": "Might prefer morning calls", "status": "pending"}'`}</Code>
        </Empty>
      )}
      {items && items.length > 0 && (
        <ul className="queue">
          {items.map((m) => (
            <li key={m.id}>
              <div>
                <a href={href('memories', m.id)}>{m.content}</a>
                <div className="muted">
                  {m.reviewReason ? `reason: ${m.reviewReason.replaceAll('_', ' ')}` : `status: ${m.status}`} · {m.type} · {m.scope}
                  {m.subject ? ` · ${m.subject.kind}:${m.subject.externalId}` : ''} · confidence {m.confidence} · recorded {when(m.recordedAt)}
                </div>
              </div>
              {session.canWrite && (
                <div className="actions">
                  <button type="button" onClick={() => act(m, 'Confirmed', 'confirm', { status: 'confirmed' })} aria-label={`Confirm “${m.content}”`}>
                    Confirm
                  </button>
                  <button type="button" onClick={() => act(m, 'Rejected', 'confirm', { status: 'rejected' })} aria-label={`Reject “${m.content}”`}>
                    Reject
                  </button>
                  <Promote memory={m} onPromote={(scope) => act(m, `Promoted to ${scope}`, 'promote', { targetScope: scope })} />
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Promote({ memory, onPromote }: { memory: Memory; onPromote: (scope: MemoryScope) => void }) {
  const [scope, setScope] = useState<MemoryScope | ''>('');
  const others = MEMORY_SCOPES.filter((s) => s !== memory.scope);
  return (
    <span className="promote">
      <select aria-label={`Scope to promote “${memory.content}” to`} value={scope} onChange={(e) => setScope(e.target.value as MemoryScope)}>
        <option value="">scope…</option>
        {others.map((s) => (
          <option key={s}>{s}</option>
        ))}
      </select>
      <button type="button" disabled={!scope} onClick={() => scope && onPromote(scope)}>
        Promote
      </button>
    </span>
  );
}
