// The SDK's real MCP client over Streamable HTTP, connected to a project's endpoint of a test app
// (which starts listening on a loopback port the first time it is needed).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';

/** The app's base URL on loopback, listening first if it is not yet. */
export async function listeningBase(app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export async function connectMcp(app: FastifyInstance, project: { projectId: string; apiKey: string }, name = 'lattice-test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${await listeningBase(app)}/api/v1/projects/${project.projectId}/mcp-server`), {
      requestInit: { headers: { Authorization: `Bearer ${project.apiKey}` } },
    }),
  );
  return client;
}
