// The MCP endpoints (Streamable HTTP, stateless): each POST gets a fresh server bound to the
// caller's key, so any API process can answer any request. Bearer auth and permissions are the
// REST ones; each tool checks the permission it needs. /mcp-server serves every module's tools;
// a module's scoped endpoint (a brain's, say) serves the tools its path gives.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ScopedMcpEndpoint, ToolDefinition } from '../platform/module.js';
import type { TenancyApi } from '../tenancy/index.js';
import { refuseInvalidParams } from './invalid-params.js';
import { buildMcpServer } from './server.js';

export interface McpRouteOptions {
  tools: readonly ToolDefinition[];
  endpoints: readonly ScopedMcpEndpoint[];
  access: Pick<TenancyApi, 'assertPermission' | 'audit'>;
}

const PROTOCOL =
  'Send JSON-RPC 2.0 with `Accept: application/json, text/event-stream`. Tool failures are tool results with `isError: true` whose text is our error body.';

export const mcpRoutes: FastifyPluginAsyncTypebox<McpRouteOptions> = async (app, { tools, endpoints, access }) => {
  const serve = async (request: FastifyRequest, reply: FastifyReply, served: readonly ToolDefinition[]) => {
    const server = buildMcpServer(served, access, { principal: request.principal, requestId: request.id, log: request.log });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    refuseInvalidParams(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  };
  const response = { 200: Type.Unknown({ description: 'The JSON-RPC response (or responses, for a batch)' }) };
  const stateless = (url: string, params?: ScopedMcpEndpoint['params']) => {
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url,
        config: { permission: 'READ_MEMORY' },
        // Not an operation a client calls (the transport answers 405 to say the server is stateless),
        // so it stays out of the OpenAPI document.
        schema: { hide: true, ...(params ? { params } : {}), summary: `MCP ${method}: not used (stateless server, no sessions or server-initiated streams)`, response: { 405: Type.Ref('ErrorBody') } },
        handler: async (_request, reply) =>
          reply.code(405).header('allow', 'POST').send({ statusCode: 405, code: 'METHOD_NOT_ALLOWED', message: 'this MCP endpoint is stateless: POST JSON-RPC requests' }),
      });
    }
  };

  app.post(
    '/mcp-server',
    {
      config: { permission: 'READ_MEMORY' },
      schema: {
        tags: ['mcp'],
        summary: 'MCP endpoint (JSON-RPC)',
        description: `Model Context Protocol over Streamable HTTP (stateless; JSON responses). Tools: ${tools.map((t) => t.name).join(', ')}. ${PROTOCOL}`,
        body: Type.Unknown(),
        response,
      },
    },
    (request, reply) => serve(request, reply, tools),
  );
  stateless('/mcp-server');

  for (const endpoint of endpoints) {
    app.post(
      endpoint.url,
      {
        config: { permission: 'READ_MEMORY' },
        schema: { tags: ['mcp'], summary: endpoint.summary, description: `${endpoint.description} ${PROTOCOL}`, params: endpoint.params, body: Type.Unknown(), response },
      },
      // The tools are settled before the transport takes the reply, so a path that names nothing
      // readable is an ordinary error answer.
      async (request, reply) => serve(request, reply, await endpoint.tools(request.principal.projectId, request.params as Record<string, string>)),
    );
    stateless(endpoint.url, endpoint.params);
  }
};
