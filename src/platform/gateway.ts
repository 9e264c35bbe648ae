// The model gateway: one OpenAI-compatible HTTP endpoint (MODEL_GATEWAY_URL) for everything that
// needs a language, vision or speech model: chat completions (structured output by JSON schema where
// the gateway supports it, tolerant JSON parsing where it does not), transcription, and the
// embeddings the gateway provider asks for. Every call has a time limit and is tried again, with
// backoff, on 429, on 5xx and when the connection fails (Retry-After honoured, capped); the tokens
// each call used are reported to the meter, per project. Unset, every call refuses with
// NOT_CONFIGURED naming what to set.
import { DependencyUnavailableError, NotConfiguredError } from './errors.js';

export interface GatewayOptions {
  url: string | undefined;
  apiKey: string | undefined;
  timeoutMs: number;
  models: { chat: string; vision: string; transcription: string };
  /** Tries of one call in all, the first included. */
  maxAttempts: number;
  /** The pause before the second try; doubled for each later one, with jitter, at most MAX_PAUSE_MS. */
  retryBaseMs: number;
}

export type ChatContent =
  | string
  | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } } | { type: 'file'; file: { filename: string; file_data: string } })[];
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: ChatContent;
}

export interface ChatRequest {
  /** The project the tokens are metered to. */
  projectId: string;
  messages: ChatMessage[];
  /** Structured output: the answer must be JSON matching this schema. */
  schema?: { name: string; schema: Record<string, unknown> };
  /** Default: the vision model when a message carries an image, the chat model otherwise. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatResult {
  text: string;
  /** The answer parsed as JSON, when a schema was asked for. */
  json?: unknown;
  model: string;
  usage: Usage;
}

export type UsageListener = (projectId: string, usage: Usage & { model: string; operation: 'chat' | 'transcription' | 'embeddings' }) => void;

/** The gateway refused the request itself (4xx other than 429): trying again would not help. */
export class GatewayRequestError extends DependencyUnavailableError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_PAUSE_MS = 10_000;
const RETRYABLE_STATUS = (status: number) => status === 429 || status >= 500;

/** The first JSON object or array in a text: the whole of it, or inside a code fence, or the first balanced {...} / [...]. */
export function parseJsonLoosely(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    // not bare JSON
  }
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(trimmed);
  if (fenced) {
    try {
      return JSON.parse(fenced[1]!.trim());
    } catch {
      // fall through to the first balanced value
    }
  }
  for (let start = 0; start < trimmed.length; start++) {
    const open = trimmed[start];
    if (open !== '{' && open !== '[') continue;
    const close = open === '{' ? '}' : ']';
    let depth = 0;
    let inString = false;
    for (let i = start; i < trimmed.length; i++) {
      const c = trimmed[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === open) depth++;
      else if (c === close && --depth === 0) {
        try {
          return JSON.parse(trimmed.slice(start, i + 1));
        } catch {
          break;
        }
      }
    }
  }
  throw new DependencyUnavailableError('the model gateway answered text that holds no JSON');
}

const usageOf = (body: { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown } }): Usage => {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  const prompt = n(body.usage?.prompt_tokens);
  const completion = n(body.usage?.completion_tokens);
  return { promptTokens: prompt, completionTokens: completion, totalTokens: n(body.usage?.total_tokens) || prompt + completion };
};

export class ModelGateway {
  private listener: UsageListener | undefined;
  private guard: ((projectId: string) => Promise<void>) | undefined;

  constructor(
    private readonly options: GatewayOptions,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  get configured(): boolean {
    return this.options.url !== undefined;
  }

  get models(): GatewayOptions['models'] {
    return this.options.models;
  }

  /** The meter: told the tokens of every successful call. */
  onUsage(listener: UsageListener): void {
    this.listener = listener;
  }

  /** Checked before every call: may refuse it (a project over its token quota). */
  beforeCall(guard: (projectId: string) => Promise<void>): void {
    this.guard = guard;
  }

  /** Refuses with NOT_CONFIGURED, naming the feature, when no gateway is set. */
  requireConfigured(feature: string): void {
    if (!this.configured) throw new NotConfiguredError(`${feature} needs a model gateway: set MODEL_GATEWAY_URL to an OpenAI-compatible API (and MODEL_GATEWAY_API_KEY if it needs one)`);
  }

  private pauseBefore(attempt: number, retryAfter: string | null): number {
    const seconds = retryAfter === null ? NaN : Number(retryAfter);
    const asked = Number.isFinite(seconds) ? seconds * 1000 : retryAfter !== null && !Number.isNaN(Date.parse(retryAfter)) ? Date.parse(retryAfter) - Date.now() : NaN;
    const backoff = this.options.retryBaseMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
    return Math.min(MAX_PAUSE_MS, Math.max(0, Number.isFinite(asked) ? asked : backoff));
  }

  /** POSTs to the gateway, trying again on 429, 5xx and connection failures; answers the JSON body. */
  private async post(feature: string, projectId: string | undefined, path: string, body: string | FormData): Promise<Record<string, unknown>> {
    this.requireConfigured(feature);
    if (projectId !== undefined) await this.guard?.(projectId);
    const url = `${this.options.url!.replace(/\/+$/, '')}${path}`;
    let last = '';
    for (let attempt = 1; attempt <= this.options.maxAttempts; attempt++) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}), ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs),
          redirect: 'error',
        });
      } catch (error) {
        last = (error as Error).name === 'TimeoutError' ? `did not answer within ${this.options.timeoutMs} ms` : 'could not be reached';
        if (attempt < this.options.maxAttempts) await this.sleep(this.pauseBefore(attempt, null));
        continue;
      }
      if (response.ok) {
        const parsed = await response.json().catch(() => undefined);
        if (parsed === null || typeof parsed !== 'object') throw new DependencyUnavailableError(`the model gateway answered ${path} with a body that is not JSON`);
        return parsed as Record<string, unknown>;
      }
      const detail = (await response.text().catch(() => '')).slice(0, 300);
      last = `answered ${response.status}${detail ? `: ${detail}` : ''}`;
      if (!RETRYABLE_STATUS(response.status)) throw new GatewayRequestError(response.status, `the model gateway ${last} (${feature}, ${path})`);
      if (attempt < this.options.maxAttempts) await this.sleep(this.pauseBefore(attempt, response.headers.get('retry-after')));
    }
    throw new DependencyUnavailableError(`the model gateway ${last} (${feature}, ${path}; tried ${this.options.maxAttempts} times)`);
  }

  /**
   * A chat completion. With a schema, the gateway is asked for structured output; a gateway that
   * refuses response_format (4xx) is asked again without it, told to answer JSON only, and its text
   * parsed loosely.
   */
  async chat(feature: string, request: ChatRequest): Promise<ChatResult> {
    const hasImage = request.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type !== 'text'));
    const model = request.model ?? (hasImage ? this.options.models.vision : this.options.models.chat);
    const base = { model, messages: request.messages, temperature: request.temperature ?? 0, ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}) };
    let body: Record<string, unknown>;
    if (request.schema) {
      try {
        body = await this.post(feature, request.projectId, '/chat/completions', JSON.stringify({ ...base, response_format: { type: 'json_schema', json_schema: { name: request.schema.name, schema: request.schema.schema, strict: true } } }));
      } catch (error) {
        if (!(error instanceof GatewayRequestError) || error.status === 401 || error.status === 403) throw error;
        const hint: ChatMessage = { role: 'system', content: `Answer with JSON only, matching this JSON schema: ${JSON.stringify(request.schema.schema)}` };
        body = await this.post(feature, request.projectId, '/chat/completions', JSON.stringify({ ...base, messages: [...request.messages, hint] }));
      }
    } else {
      body = await this.post(feature, request.projectId, '/chat/completions', JSON.stringify(base));
    }
    const choice = (body.choices as { message?: { content?: unknown } }[] | undefined)?.[0];
    const text = typeof choice?.message?.content === 'string' ? choice.message.content : '';
    const usage = usageOf(body);
    this.listener?.(request.projectId, { ...usage, model, operation: 'chat' });
    return { text, model, usage, ...(request.schema ? { json: parseJsonLoosely(text) } : {}) };
  }

  /**
   * Embeddings (POST /embeddings), with the same time limit and retries. The rows as answered; the
   * caller checks their order and dimension. Not metered per project (embedding runs behind
   * writes, for the deployment).
   */
  async embeddings(texts: readonly string[], model: string): Promise<{ index?: number; embedding?: unknown }[]> {
    const body = await this.post('Gateway embeddings (EMBEDDING_PROVIDER=gateway)', undefined, '/embeddings', JSON.stringify({ model, input: texts }));
    return Array.isArray(body.data) ? (body.data as { index?: number; embedding?: unknown }[]) : [];
  }

  /** Speech to text (POST /audio/transcriptions, multipart). */
  async transcribe(feature: string, request: { projectId: string; audio: Uint8Array<ArrayBuffer>; mimeType: string; filename?: string }): Promise<{ text: string; model: string; usage: Usage }> {
    const form = new FormData();
    form.append('file', new Blob([request.audio], { type: request.mimeType }), request.filename ?? 'audio');
    form.append('model', this.options.models.transcription);
    const body = await this.post(feature, request.projectId, '/audio/transcriptions', form);
    const text = typeof body.text === 'string' ? body.text : '';
    const usage = usageOf(body);
    this.listener?.(request.projectId, { ...usage, model: this.options.models.transcription, operation: 'transcription' });
    return { text, model: this.options.models.transcription, usage };
  }
}
