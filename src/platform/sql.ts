// A tiny builder for parameterised WHERE clauses with optional filters; the SQL stays plain.
export class Conditions {
  readonly params: unknown[] = [];
  private readonly clauses: string[] = [];

  constructor(initial: unknown[] = []) {
    this.params.push(...initial);
  }

  /** Adds a parameter and answers its placeholder ($n). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** Adds `clause`, in which `?` stands for the placeholder of `value`; skipped when value is undefined. */
  add(clause: string, value?: unknown): this {
    if (arguments.length === 1) {
      this.clauses.push(clause);
      return this;
    }
    if (value === undefined) return this;
    this.clauses.push(clause.replaceAll('?', this.param(value)));
    return this;
  }

  get sql(): string {
    return this.clauses.length === 0 ? 'TRUE' : this.clauses.join(' AND ');
  }
}

/** A timestamp column as ISO 8601 (UTC, milliseconds); null stays null. */
export function iso(value: Date | string): string;
export function iso(value: Date | string | null): string | null;
export function iso(value: Date | string | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}
