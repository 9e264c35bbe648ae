// `lattice <command>`: serve, worker, migrate, and the admin commands for projects and keys.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { tenancyAdmin } from './modules.js';
import { parsePermissions } from './platform/access.js';
import type { Db } from './platform/db.js';
import { AppError, DataDirLockedError } from './platform/errors.js';
import { distribute } from './platform/citus.js';
import { migrate } from './platform/migrations.js';
import { openDatabase } from './platform/runtime.js';
import { serve, worker } from './server.js';

const USAGE = `Usage: lattice <command>

  serve                                   start the API (port PORT, default 8080)
  worker                                  consume queued jobs (needs REDIS_URL)
  migrate                                 apply database migrations
  citus distribute [--json]               distribute every table by project over a Citus cluster
                                          (DATABASE_URL is the coordinator; idempotent)
  project create <id> [--plan free|growth|enterprise] [--name NAME] [--json]
  project list [--json]
  project plan <id> <plan>                change a project's plan
  key create --project <id> --permissions READ_MEMORY,WRITE_MEMORY [--name NAME] [--json]
  key list --project <id> [--json]
  key revoke <prefix-or-id>

Configuration comes from the environment (see docs/operations.md). Without DATABASE_URL the commands use
the embedded database under DATA_DIR, which one process may open at a time: run admin commands
while the server is stopped, or use Postgres.`;

class UsageError extends Error {}

async function withDb<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDatabase(config);
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      project: { type: 'string' },
      permissions: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, sub, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined && !values.help ? 1 : 0;
  }
  const config = loadConfig();
  const json = values.json ?? false;

  switch (command) {
    case 'serve':
      await serve(config);
      return -1; // keeps running
    case 'worker':
      await worker(config);
      return -1;
    case 'migrate': {
      const db = await openDatabase(config);
      try {
        const { applied, current } = await migrate(db);
        print(json, { applied, current }, applied.length ? `applied ${applied.join(', ')}; at version ${current}` : `up to date at version ${current}`);
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'project':
      return withDb(config, async (db) => {
        const tenancy = tenancyAdmin(db);
        if (sub === 'create') {
          const id = rest[0];
          if (!id) throw new UsageError('project create needs an id');
          const project = await tenancy.createProject(id, { plan: values.plan, name: values.name });
          print(json, project, `created project ${project.id} (plan ${project.plan})`);
          return 0;
        }
        if (sub === 'list') {
          const projects = await tenancy.listProjects();
          print(json, projects, projects.map((p) => `${p.id}\t${p.plan}\t${p.name}`).join('\n') || '(no projects)');
          return 0;
        }
        if (sub === 'plan') {
          const [id, plan] = rest;
          if (!id || !plan) throw new UsageError('project plan needs an id and a plan');
          await tenancy.setPlan(id, plan);
          print(json, { id, plan }, `project ${id} is now on plan ${plan}`);
          return 0;
        }
        throw new UsageError(`unknown command: project ${sub ?? ''}`);
      });
    case 'key':
      return withDb(config, async (db) => {
        const tenancy = tenancyAdmin(db);
        if (sub === 'create') {
          if (!values.project) throw new UsageError('key create needs --project <id>');
          if (!values.permissions) throw new UsageError('key create needs --permissions READ_MEMORY,WRITE_MEMORY');
          const key = await tenancy.createKey(values.project, parsePermissions(values.permissions), values.name ?? null);
          print(
            json,
            { id: key.id, projectId: key.projectId, prefix: key.prefix, permissions: key.permissions, apiKey: key.apiKey },
            `API key for project ${key.projectId} (${key.permissions.join(', ')}), shown this once:\n\n  ${key.apiKey}\n`,
          );
          return 0;
        }
        if (sub === 'list') {
          if (!values.project) throw new UsageError('key list needs --project <id>');
          const keys = await tenancy.listKeys(values.project);
          print(
            json,
            keys,
            keys.map((k) => `${k.prefix}…\t${k.id}\t${k.permissions.join(',')}\t${k.revokedAt ? 'revoked' : 'active'}`).join('\n') || '(no keys)',
          );
          return 0;
        }
        if (sub === 'revoke') {
          const prefix = rest[0];
          if (!prefix) throw new UsageError('key revoke needs the key prefix (or id)');
          const key = await tenancy.revokeKey(prefix);
          print(json, key, `revoked key ${key.prefix}… (${key.id}) of project ${key.projectId}`);
          return 0;
        }
        throw new UsageError(`unknown command: key ${sub ?? ''}`);
      });
    case 'citus':
      if (sub !== 'distribute') throw new UsageError(`unknown command: citus ${sub ?? ''}`);
      if (!config.databaseUrl) throw new UsageError('citus distribute needs DATABASE_URL (the coordinator)');
      return withDb(config, async (db) => {
        const report = await distribute(db);
        const changed = report.referenceTables.length + report.distributed.length;
        print(
          json,
          report,
          (changed === 0
            ? `already distributed (${report.unchanged.length} tables)`
            : `reference tables: ${report.referenceTables.join(', ') || 'none'}; distributed by project_id: ${report.distributed.join(', ')}; foreign keys restored: ${report.foreignKeys.length}`) +
            `; on every node: ${report.settings.join(', ')}`,
        );
        return 0;
      });
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`lattice: ${error.message}\n\n${USAGE}\n`);
      process.exitCode = 1;
    } else if (error instanceof ConfigError || error instanceof DataDirLockedError || error instanceof AppError) {
      process.stderr.write(`lattice: ${error.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`lattice: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
