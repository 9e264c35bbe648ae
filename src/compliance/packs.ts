// The packs of the deployment and their setting per project (SDK-WIRE.md 4.10; the Python client's
// /memory-compliance-packs). GET /memory-compliance/packs lists the manifests of the loaded packs as
// a bare array; /memory-compliance-packs lists, sets and forgets a project's own setting for one
// (tenancy keeps the rows and refuses a pack's routes where the project turned it off). A pack the
// deployment does not load cannot be set: LATTICE_PACKS loads it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, Timestamp } from '../platform/common-schemas.js';
import { NotFoundError } from '../platform/errors.js';
import type { PackManifest } from '../platform/module.js';
import { ProjectParamsSchema } from '../platform/project-id.js';
import type { TenancyApi } from '../tenancy/index.js';

const tags = ['compliance'];
/** A pack's id or alias: letters, digits and @ / . _ - (a package name such as @thinkfleet/pack-healthcare). */
const PackId = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9@/._-]+$' });

const ManifestSchema = Type.Object(
  {
    id: Type.String(),
    version: Type.String(),
    description: Type.String(),
    ownsClasses: Type.Array(Type.String(), { description: 'The memory categories the pack claims' }),
    regulatoryTags: Type.Array(Type.String()),
  },
  { additionalProperties: true },
);

const SettingSchema = Type.Object({
  id: Type.String(),
  packId: Type.String(),
  enabled: Type.Boolean(),
  config: Type.Object({}, { additionalProperties: true, description: "The pack's own settings, kept as given" }),
  enabledByUserId: Nullable(Type.String({ description: 'The API key that last set it' })),
  created: Timestamp(),
  updated: Timestamp(),
});

type SettingRow = Awaited<ReturnType<TenancyApi['listPacks']>>[number];
const toSetting = (row: SettingRow) => ({
  id: row.id,
  packId: row.packId,
  enabled: row.enabled,
  config: row.config,
  enabledByUserId: row.setByKey,
  created: row.created.toISOString(),
  updated: row.updated.toISOString(),
});

export const packRoutes: FastifyPluginAsyncTypebox<{ packs: readonly PackManifest[]; tenancy: Pick<TenancyApi, 'listPacks' | 'setPack' | 'removePack'> }> = async (
  app,
  { packs, tenancy },
) => {
  /** The loaded pack a client names, by id or alias; 404 naming the loaded ones otherwise. */
  const packNamed = (name: string): PackManifest => {
    const pack = packs.find((p) => p.id === name || p.aliases?.includes(name));
    if (pack) return pack;
    const loaded = packs.map((p) => p.id);
    throw new NotFoundError(`no pack ${JSON.stringify(name)} is loaded in this deployment (loaded: ${loaded.length === 0 ? 'none' : loaded.join(', ')}; LATTICE_PACKS loads them)`, { packId: name, loaded });
  };

  app.get(
    '/memory-compliance/packs',
    {
      config: { permission: 'READ_MEMORY' },
      schema: {
        tags,
        summary: 'Manifests of the packs this deployment loads',
        description: 'A bare array, one manifest per pack LATTICE_PACKS loads (default healthcare): id, version, description, ownsClasses, regulatoryTags, and what else the pack says of itself (its routes, rules and sources). Needs no entitlement.',
        response: { 200: Type.Array(ManifestSchema) },
      },
    },
    async () => packs.map((p) => ({ ...p, ownsClasses: [...p.ownsClasses], regulatoryTags: [...p.regulatoryTags] })),
  );

  app.get(
    '/memory-compliance-packs',
    {
      config: { permission: 'READ_MEMORY' },
      schema: {
        tags,
        // The path differs from GET /memory-compliance/packs by a dash only: the generated ids would collide.
        operationId: 'getMemoryCompliancePackSettings',
        summary: "The project's own pack settings",
        description: 'One row per pack the project has turned on or off; a pack without a row is as the deployment loads it (on).',
        response: { 200: Type.Array(SettingSchema) },
      },
    },
    async (request) => (await tenancy.listPacks(request.principal.projectId)).map(toSetting),
  );

  app.post(
    '/memory-compliance-packs',
    {
      config: { permission: 'WRITE_MEMORY' },
      schema: {
        tags,
        operationId: 'postMemoryCompliancePackSettings',
        summary: 'Turn a pack on or off for the project',
        description:
          "Idempotent per pack: a second call updates the project's row in place (config kept when not given). packId is a loaded pack's id or one of its aliases (the clients' package names, such as @thinkfleet/pack-healthcare); the row keeps the id. " +
          "Turned off, the pack's routes answer 403 FEATURE_DISABLED in this project at once. 404 for a pack this deployment does not load.",
        body: Type.Object(
          {
            packId: PackId,
            enabled: Type.Boolean(),
            config: Type.Optional(Type.Object({}, { additionalProperties: true })),
          },
          { additionalProperties: false },
        ),
        response: { 200: SettingSchema },
      },
    },
    async (request) => {
      const pack = packNamed(request.body.packId);
      const row = await tenancy.setPack(request.principal.projectId, { packId: pack.id, enabled: request.body.enabled, config: request.body.config as Record<string, unknown> | undefined, setByKey: request.principal.keyId });
      return toSetting(row);
    },
  );

  app.delete(
    '/memory-compliance-packs/:packId',
    {
      config: { permission: 'WRITE_MEMORY' },
      schema: {
        tags,
        operationId: 'deleteMemoryCompliancePackSettingsByPackId',
        summary: "Forget the project's setting for a pack",
        description: 'The deployment default (on) applies again. 204 whether or not the project had a row; 404 for a pack this deployment does not load.',
        params: Type.Object({ projectId: ProjectParamsSchema.properties.projectId, packId: PackId }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await tenancy.removePack(request.principal.projectId, packNamed(request.params.packId).id);
      return reply.code(204).send(null);
    },
  );
};
