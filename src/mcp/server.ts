// The MCP server bound to one caller: every module's tools, each behind its permission, with the
// compatibility `projectId` checked against the key and failures returned as tool results that
// carry our error body (never as transport failures).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { asAppError } from '../platform/db.js';
import { AppError, ValidationError } from '../platform/errors.js';
import { ToolTexts, type ToolDefinition } from '../platform/module.js';
import type { Principal, TenancyApi } from '../tenancy/index.js';

/** Accepted on every tool for compatibility with the public clients. */
const COMPATIBILITY = {
  platformId: z.string().optional().describe('Accepted for compatibility; the project is the one of the API key'),
  projectId: z.string().optional().describe('Accepted for compatibility; must match the API key if given'),
};

function ok(value: unknown): CallToolResult {
  if (value instanceof ToolTexts) return { content: value.texts.map((text) => ({ type: 'text', text })) };
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

function failure(error: unknown): CallToolResult {
  const body =
    error instanceof AppError
      ? { code: error.code, statusCode: error.statusCode, message: error.message, ...(error.params ? { params: error.params } : {}) }
      : { code: 'INTERNAL_ERROR', statusCode: 500, message: 'internal error' };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

export interface McpCaller {
  principal: Principal;
  requestId: string;
  log: FastifyBaseLogger;
}

export function buildMcpServer(tools: readonly ToolDefinition[], access: Pick<TenancyApi, 'assertPermission' | 'audit'>, caller: McpCaller): McpServer {
  const server = new McpServer({ name: 'lattice', version: '1.0.0' }, { capabilities: { tools: {} } });
  const { principal, log } = caller;
  const projectId = principal.projectId;

  for (const tool of tools) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: { ...COMPATIBILITY, ...tool.inputSchema } }, async (args: Record<string, unknown>) => {
      let statusCode = 200;
      let result: unknown;
      // Begun as the tool starts (written while it works), durable before it answers, like a route's.
      const ticket = tool.audit
        ? access.audit(
            { projectId, keyId: principal.keyId, keyName: principal.keyName, eventType: tool.audit, method: 'MCP', route: tool.name, requestId: caller.requestId, at: new Date(), input: { body: args } },
            log,
          )
        : undefined;
      try {
        access.assertPermission(principal, tool.permission);
        const claimed = args.projectId;
        if (claimed !== undefined && claimed !== projectId) throw new ValidationError(`projectId ${String(claimed)} does not match the API key's project`);
        result = await tool.run(args, { projectId, log });
      } catch (thrown) {
        const error = asAppError(thrown) ?? thrown;
        statusCode = error instanceof AppError ? error.statusCode : 500;
        if (statusCode >= 500) log.error({ err: thrown, tool: tool.name }, 'MCP tool failed');
        return failure(error);
      } finally {
        if (ticket) {
          await ticket.durable;
          ticket.end({ statusCode, result: result instanceof ToolTexts ? undefined : result });
        }
      }
      return ok(result);
    });
  }
  return server;
}
