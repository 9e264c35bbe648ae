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

/** A number to `digits` decimals, trailing zeros kept (figures read side by side: 0.050, 0.123). */
export const fixed = (value: number | null | undefined, digits = 3) => (value === null || value === undefined ? '–' : value.toFixed(digits));
/** A number to at most `digits` decimals, trailing zeros dropped (a measured value: 79.9, 80). */
export const rounded = (value: number | null | undefined, digits = 3) => (value === null || value === undefined ? '–' : String(Number(value.toFixed(digits))));
/** A share in [0, 1] as a percentage with one decimal. */
export const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** One headline figure of a row of them (`<p className="figures">`): its name, then its value in bold. */
export function Figure({ name, children }: { name: string; children: ReactNode }) {
  return (
    <span>
      {name} <strong>{children}</strong>
    </span>
  );
}

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
