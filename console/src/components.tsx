import type { ReactNode } from 'react';
import { ApiError } from './api.js';

/** A subject as the API names one. */
export type Subject = { kind: string; externalId: string };

/** The two fields that name a subject, inside a form of the caller's. */
export function SubjectFields({ value, onChange }: { value: Subject; onChange: (next: Subject) => void }) {
  return (
    <>
      <label>
        Kind
        <input value={value.kind} onChange={(e) => onChange({ ...value, kind: e.target.value })} required />
      </label>
      <label>
        External id
        <input value={value.externalId} onChange={(e) => onChange({ ...value, externalId: e.target.value })} required />
      </label>
    </>
  );
}

/** A failed call, in the API's own words. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.message} (${error.code}${error.statusCode ? `, ${error.statusCode}` : ''})` : String(error);
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

/** What an empty page says: how to put data in. */
export function Empty({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="empty">
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function Code({ children }: { children: string }) {
  return (
    <pre className="code">
      <code>{children}</code>
    </pre>
  );
}

export const when = (value: string | null | undefined) => (value ? new Date(value).toLocaleString() : '–');

/** A table's header row: one column header per name. */
export function TableHead({ columns }: { columns: readonly string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th scope="col" key={column}>
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}
