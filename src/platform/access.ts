// What routes and MCP tools declare about access: the permission a key needs (the tenancy domain
// stores permissions on keys and enforces them), and the audit event type of a call that reads or
// writes a subject's data. The vocabulary sits here because every domain uses it.
import { ValidationError } from './errors.js';

export const PERMISSIONS = ['READ_MEMORY', 'WRITE_MEMORY'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

export function parsePermissions(list: string): Permission[] {
  const items = list.split(',').map((p) => p.trim().toUpperCase()).filter((p) => p.length > 0);
  const bad = items.filter((p) => !isPermission(p));
  if (items.length === 0 || bad.length > 0) {
    throw new ValidationError(`permissions must be a comma-separated list of READ_MEMORY and WRITE_MEMORY${bad.length ? `; unknown: ${bad.join(', ')}` : ''}`);
  }
  return [...new Set(items as Permission[])];
}

/** `read.search`, `write.memory`, `subject.hard_delete` (WIRE.md's audit event types). */
export type AuditEventType = `${'read' | 'write' | 'subject'}.${string}`;

const AUDIT_EVENT_TYPE = /^(read|write|subject)\.[a-z][a-z_]*$/;

export function isAuditEventType(value: string): value is AuditEventType {
  return AUDIT_EVENT_TYPE.test(value);
}
