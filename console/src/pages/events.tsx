import { useEffect, useRef, useState } from 'react';
import type { Fire, Rule } from '../../../src/alerts/schemas.js';
import type { LoggedEvent } from '../../../src/events/schemas.js';
import { call, type Session } from '../api.js';
import { Code, Empty, ErrorNote, TableHead, when } from '../components.js';

const PAGE = 200;
const TAIL_EVERY_MS = 3000;
const DAY_MS = 86_400_000;

/** datetime-local text for an instant, in the browser's zone. */
const localInput = (at: Date) => new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export function EventsPage({ session }: { session: Session }) {
  return (
    <>
      <h1>Events and alerts</h1>
      <EventLog session={session} />
      <AlertRules session={session} />
    </>
  );
}

/**
 * The event log (GET /memory-events): it answers oldest first, strictly after `since`, so the page
 * reads forward from the chosen instant, shows the newest on top, and with live tail on asks every
 * few seconds for what came after the last one.
 */
function EventLog({ session }: { session: Session }) {
  const [from, setFrom] = useState(() => localInput(new Date(Date.now() - 7 * DAY_MS)));
  const [eventTypes, setEventTypes] = useState('');
  const [subjectKind, setSubjectKind] = useState('');
  const [subjectExternalId, setSubjectExternalId] = useState('');
  const [events, setEvents] = useState<LoggedEvent[]>([]);
  const [more, setMore] = useState(false);
  const [tail, setTail] = useState(false);
  const [error, setError] = useState<unknown>();
  const last = useRef<string | undefined>(undefined);
  /** Moves on at each new start or filter: a read begun before answers nothing. */
  const generation = useRef(0);
  const filters = { eventTypes: eventTypes.trim(), subjectKind: subjectKind.trim(), subjectExternalId: subjectExternalId.trim() };
  const key = JSON.stringify([from, filters]);

  /** The page after `since`, or undefined when the start or filters changed meanwhile. */
  const fetchAfter = async (since: string | undefined) => {
    const asked = generation.current;
    const page = await call<LoggedEvent[]>(session, 'GET', '/memory-events', { query: { since, limit: PAGE, ...filters } });
    if (asked !== generation.current) return undefined;
    const newest = page.at(-1)?.occurredAt;
    if (newest && (!last.current || newest > last.current)) last.current = newest;
    return page;
  };
  /** The live tail and "load later" may read the same page at once: each event is shown once. */
  const append = (page: LoggedEvent[] | undefined) =>
    page &&
    page.length > 0 &&
    setEvents((current) => {
      const shown = new Set(current.map((e) => e.id));
      return [...current, ...page.filter((e) => !shown.has(e.id))];
    });

  // A new start or new filters: read the first page again.
  useEffect(() => {
    generation.current += 1;
    const asked = generation.current;
    last.current = undefined;
    setError(undefined);
    fetchAfter(from ? new Date(from).toISOString() : undefined).then(
      (page) => page && (setEvents(page), setMore(page.length === PAGE)),
      (failure) => asked === generation.current && (setEvents([]), setError(failure)),
    );
  }, [session, key]);

  useEffect(() => {
    if (!tail) return;
    const timer = setInterval(() => {
      fetchAfter(last.current ?? (from ? new Date(from).toISOString() : undefined)).then(append, (failure) => setError(failure));
    }, TAIL_EVERY_MS);
    return () => clearInterval(timer);
  }, [tail, session, key]);

  const loadMore = async () => {
    try {
      const page = await fetchAfter(last.current);
      append(page);
      if (page) setMore(page.length === PAGE);
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-label="Event log">
      <h2>Event log</h2>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          Event types (comma-separated)
          <input value={eventTypes} onChange={(e) => setEventTypes(e.target.value)} placeholder="order.placed, churn.*" />
        </label>
        <label>
          Subject kind
          <input value={subjectKind} onChange={(e) => setSubjectKind(e.target.value)} />
        </label>
        <label>
          Subject id
          <input value={subjectExternalId} onChange={(e) => setSubjectExternalId(e.target.value)} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={tail} onChange={(e) => setTail(e.target.checked)} /> Live tail
        </label>
      </form>
      <ErrorNote error={error} />
      {events.length === 0 && !error && (
        <Empty title="No events since then">
          <p>Events come from the engine (predictions, segment changes, new patterns) and from your own calls:</p>
          <Code>{`curl -X POST ${window.location.origin}/api/v1/projects/${session.projectId}/lattice/events/emit \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"eventType": "order.placed", "subject": {"kind": "customer", "externalId": "c-42"}}'`}</Code>
        </Empty>
      )}
      {events.length > 0 && (
        <div className="table-wrap">
          <table>
            <TableHead columns={['When', 'Event type', 'Severity', 'Subject', 'Payload']} />
            <tbody>
              {[...events].reverse().map((event) => (
                <tr key={event.id}>
                  <td>{when(event.occurredAt)}</td>
                  <td>{event.eventType}</td>
                  <td className={`severity-${event.severity}`}>{event.severity}</td>
                  <td>{event.subject ? `${event.subject.kind}:${event.subject.externalId}` : '–'}</td>
                  <td>
                    <code className="payload">{JSON.stringify(event.payload)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more && (
        <button type="button" onClick={loadMore}>
          Load later events
        </button>
      )}
    </section>
  );
}

function AlertRules({ session }: { session: Session }) {
  const [rules, setRules] = useState<Rule[]>();
  const [open, setOpen] = useState<string>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    call<Rule[]>(session, 'GET', '/memory-alerts').then(setRules, setError);
  }, [session]);

  return (
    <section aria-label="Alert rules">
      <h2>Alert rules</h2>
      <ErrorNote error={error} />
      {rules && rules.length === 0 && (
        <Empty title="No alert rules">
          <p>A rule fires on events and notifies a webhook or writes a memory:</p>
          <Code>{`curl -X POST ${window.location.origin}/api/v1/projects/${session.projectId}/memory-alerts \\
  -H "authorization: Bearer $LATTICE_KEY" -H "content-type: application/json" \\
  -d '{"name": "orders", "trigger": {"kind": "engine-event", "eventTypes": ["order.*"]},
       "notify": [{"kind": "webhook", "url": "https://example.com/hook"}]}'`}</Code>
        </Empty>
      )}
      {rules && rules.length > 0 && (
        <ul className="queue">
          {rules.map((rule) => (
            <li key={rule.id} className="rule">
              <div>
                <strong>{rule.name}</strong> {rule.enabled ? '' : <span className="muted">(disabled)</span>}
                <div className="muted">
                  {describeTrigger(rule.trigger)} → {rule.notify.map((channel) => channel.kind).join(', ')}
                </div>
              </div>
              <button type="button" aria-expanded={open === rule.id} onClick={() => setOpen(open === rule.id ? undefined : rule.id)}>
                {open === rule.id ? 'Hide fires' : 'Fires'}
              </button>
              {open === rule.id && <Fires session={session} rule={rule} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function describeTrigger(trigger: Rule['trigger']): string {
  if (trigger.kind === 'engine-event') return `on ${trigger.eventTypes.length > 0 ? trigger.eventTypes.join(', ') : 'every event'}`;
  if (trigger.kind === 'segment-change') return `on a segment change ${trigger.from ? `from ${trigger.from} ` : ''}to ${trigger.to}`;
  return `on a new pattern${trigger.patternKind ? ` of kind ${trigger.patternKind}` : ''}`;
}

function Fires({ session, rule }: { session: Session; rule: Rule }) {
  const [fires, setFires] = useState<Fire[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    call<Fire[]>(session, 'GET', `/memory-alerts/${encodeURIComponent(rule.id)}/fires`).then(setFires, setError);
  }, [session, rule.id]);

  return (
    <div className="fires" aria-label={`Fires of ${rule.name}`} role="region">
      <ErrorNote error={error} />
      {fires && fires.length === 0 && <p>It has not fired yet.</p>}
      {fires && fires.length > 0 && (
        <table>
          <TableHead columns={['Fired', 'Delivery', 'Status', 'Attempts']} />
          <tbody>
            {fires.flatMap((fire) =>
              fire.deliveryResults.map((delivery, i) => (
                <tr key={`${fire.id}-${i}`}>
                  <td>{i === 0 ? when(fire.firedAt) : ''}</td>
                  <td>{delivery.channel === 'webhook' ? `webhook ${delivery.url ?? ''}` : `memory ${delivery.memoryId ?? ''}`}</td>
                  <td>
                    {delivery.ok ? `delivered${delivery.statusCode ? ` (${delivery.statusCode})` : ''}` : delivery.pending ? `retrying${delivery.nextAttemptAt ? ` at ${when(delivery.nextAttemptAt)}` : ''}` : 'failed'}
                    {delivery.error && <div className="muted">{delivery.error}</div>}
                  </td>
                  <td className="number">{delivery.attempts}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </div>
  );
}
