// A request whose params break its method's schema (say, tools/call with `arguments` that is not an
// object) is the caller's error: JSON-RPC's -32602 Invalid params. The SDK answers it with -32603
// Internal error, which tells the client the server broke (modelcontextprotocol/typescript-sdk#2284).
// Until the SDK answers -32602 itself, each request is checked against the SDK's own schema for its
// method before the server sees it, and refused with -32602.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, isJSONRPCRequest, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** The methods this server answers, with the schemas the SDK parses their requests with. */
const REQUEST_SCHEMAS = new Map<string, { safeParse(value: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/** Wraps a connected transport's message handler so that such requests get -32602. */
export function refuseInvalidParams(transport: Transport): void {
  const dispatch = transport.onmessage;
  if (!dispatch) throw new Error('connect the server to the transport first');
  transport.onmessage = (message, extra) => {
    const parsed = isJSONRPCRequest(message) ? REQUEST_SCHEMAS.get(message.method)?.safeParse(message) : undefined;
    if (!parsed || parsed.success || !isJSONRPCRequest(message)) return dispatch(message, extra);
    const issue = parsed.error?.issues[0];
    const where = issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'params do not match the method';
    void transport
      .send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${where}` } })
      .catch(() => {});
  };
}
