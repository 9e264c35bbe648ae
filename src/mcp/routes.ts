// The MCP endpoint (Streamable HTTP, stateless): each POST gets a fresh server bound to the
// caller's key, so any API process can answer any request. Bearer auth and permissions are the
// REST ones; each tool checks the permission it needs.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ToolDefinition } from '../platform/module.js';
import type { TenancyApi } from '../tenancy/index.js';
import { refuseInvalidParams } from './invalid-params.js';
import { buildMcpServer } from './server.js';

export interface McpRouteOptions {
  tools: readonly ToolDefinition[];
  access: Pick<TenancyApi, 'assertPermission' | 'audit'>;
}

export const mcpRoutes: FastifyPluginAsyncTypebox<McpRouteOptions> = async (app, { tools, access }) => {
  const description =
    `Model Context Protocol over Streamable HTTP (stateless; JSON responses). Tools: ${tools.map((t) => t.name).join(', ')}. ` +
    'Send JSON-RPC 2.0 with `Accept: application/json, text/event-stream`. Tool failures are tool results with `isError: true` whose text is our error body.';

  app.post(
    '/mcp-server',
    {
      config: { permission: 'READ_MEMORY' },
      schema: {
        tags: ['mcp'],
        summary: 'MCP endpoint (JSON-RPC)',
        description,
        body: Type.Unknown(),
        response: { 200: Type.Unknown({ description: 'The JSON-RPC response (or responses, for a batch)' }) },
      },
    },
    async (request, reply) => {
      const server = buildMcpServer(tools, access, { principal: request.principal, requestId: request.id, log: request.log });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      refuseInvalidParams(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp-server',
      config: { permission: 'READ_MEMORY' },
      // Not an operation a client calls (the transport answers 405 to say the server is stateless),
      // so it stays out of the OpenAPI document.
      schema: { hide: true, summary: `MCP ${method}: not used (stateless server, no sessions or server-initiated streams)`, response: { 405: Type.Ref('ErrorBody') } },
      handler: async (_request, reply) =>
        reply.code(405).header('allow', 'POST').send({ statusCode: 405, code: 'METHOD_NOT_ALLOWED', message: 'this MCP endpoint is stateless: POST JSON-RPC requests' }),
    });
  }
};
