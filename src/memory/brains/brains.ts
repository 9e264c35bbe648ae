// Brains: a project's named, versioned memory collections (a memory belongs to one by
// metadata.brainId), with a card, kept as drafts until published. Publishing needs the rights
// attested (the table's check says so too). The registry's pages walk newest first with opaque
// cursors, as the clients' SeekPage expects ({ data, next, previous }).
import type { Db } from '../../platform/db.js';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { BRAIN_INTERFACE, BRAIN_PAGE, type Brain, type CatalogueBrain, type CreateBrain, type UpdateBrain } from './schemas.js';
import * as store from './store.js';

const encode = (cursor: { after?: string; before?: string }) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decode(cursor: string): { after?: string; before?: string } {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown; before?: unknown };
    if (typeof parsed.after === 'string' && parsed.before === undefined) return { after: parsed.after };
    if (typeof parsed.before === 'string' && parsed.after === undefined) return { before: parsed.before };
  } catch {
    // answered below
  }
  throw new ValidationError('cursor is not one this API gave: pass the next or previous of an earlier page', { errors: [{ path: 'querystring.cursor', message: 'unknown cursor' }] });
}

function publishable(b: Pick<Brain, 'status' | 'rightsAttested'>): void {
  if (b.status === 'PUBLISHED' && !b.rightsAttested) {
    throw new ValidationError('a brain is published only with rightsAttested true: attest that the project has the rights to share its facts', {
      errors: [{ path: 'body.rightsAttested', message: 'must be true to publish' }],
    });
  }
}

export class Brains {
  constructor(private readonly db: Db) {}

  async create(projectId: string, body: CreateBrain): Promise<Brain> {
    const brain = await store.insertBrain(this.db, {
      id: newId('brn'),
      projectId,
      externalId: body.externalId,
      name: body.name,
      domain: body.domain ?? null,
      brainInterface: BRAIN_INTERFACE,
      version: body.version ?? '1.0.0',
      visibility: body.visibility ?? 'PRIVATE',
      status: 'DRAFT',
      rightsAttested: body.rightsAttested ?? false,
      card: body.card ?? null,
    });
    if (!brain) throw new ConflictError(`this project already has a brain with externalId ${body.externalId}`, { externalId: body.externalId });
    return brain;
  }

  async get(projectId: string, id: string): Promise<Brain> {
    const brain = await store.getBrain(this.db, projectId, id);
    if (!brain) throw new NotFoundError(`brain ${id} not found`);
    return brain;
  }

  async update(projectId: string, id: string, body: UpdateBrain): Promise<Brain> {
    const current = await this.get(projectId, id);
    const next: Brain = {
      ...current,
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.domain === undefined ? {} : { domain: body.domain }),
      ...(body.version === undefined ? {} : { version: body.version }),
      ...(body.visibility === undefined ? {} : { visibility: body.visibility }),
      ...(body.status === undefined ? {} : { status: body.status }),
      ...(body.rightsAttested === undefined ? {} : { rightsAttested: body.rightsAttested }),
      ...(body.card === undefined ? {} : { card: body.card }),
    };
    publishable(next);
    const written = await store.updateBrain(this.db, next);
    if (!written) throw new NotFoundError(`brain ${id} not found`);
    return written;
  }

  /**
   * The brain a project may read: its own (in any status), or another project's that is PUBLISHED
   * and PUBLIC or UNLISTED (an unlisted brain is read by whoever has its id, and listed nowhere).
   * Anything else, a private or unpublished brain of another project included, is a 404 that
   * says no more than that.
   */
  async readable(projectId: string, id: string): Promise<Brain> {
    const brain = await store.findBrain(this.db, id);
    if (brain && (brain.projectId === projectId || (brain.status === 'PUBLISHED' && brain.visibility !== 'PRIVATE'))) return brain;
    throw new NotFoundError(`brain ${id} not found, or not published for other projects to read`, { brainId: id });
  }

  async delete(projectId: string, id: string): Promise<void> {
    if (!(await store.deleteBrain(this.db, projectId, id))) throw new NotFoundError(`brain ${id} not found`);
  }

  async page(projectId: string, query: { limit?: number; cursor?: string }): Promise<BrainPage<Brain>> {
    return this.walk({ projectId }, query);
  }

  /**
   * The catalogue: every project's brains published PUBLIC (never UNLISTED or PRIVATE ones, nor
   * drafts), newest first, as a reader sees them: the card, not the owner.
   */
  async catalogue(query: { limit?: number; cursor?: string; domain?: string }): Promise<BrainPage<CatalogueBrain>> {
    const page = await this.walk({ catalogue: true, domain: query.domain }, query);
    return { ...page, data: page.data.map(catalogueEntry) };
  }

  private async walk(shelf: store.BrainShelf, query: { limit?: number; cursor?: string }): Promise<BrainPage<Brain>> {
    const at = query.cursor === undefined ? {} : decode(query.cursor);
    const { brains, older, newer } = await store.brainPage(this.db, shelf, query.limit ?? BRAIN_PAGE.default, at);
    return {
      data: brains,
      next: older ? encode({ after: brains.at(-1)!.id }) : null,
      previous: newer ? encode({ before: brains[0]!.id }) : null,
    };
  }
}

export interface BrainPage<T> {
  data: T[];
  next: string | null;
  previous: string | null;
}

/** What a reader is shown of another project's brain: its card, not its owner's bookkeeping. */
export const catalogueEntry = (b: Brain): CatalogueBrain => ({
  id: b.id,
  externalId: b.externalId,
  name: b.name,
  domain: b.domain,
  version: b.version,
  brainInterface: b.brainInterface,
  visibility: b.visibility,
  status: b.status,
  card: b.card,
  updated: b.updated,
});
