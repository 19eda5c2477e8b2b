/**
 * A small OpenAI-compatible chat-completions server on 127.0.0.1, backed by a real GGUF model
 * in-process (models/llama/llama.ts), so the OpenAI-compatible adapter meets real model output in tests
 * and benchmarks. Like llama.cpp's own server it honours `response_format: {type: "json_schema"}`
 * by decoding with a grammar of the schema; `json_object` and other types are rejected with a 400
 * naming `response_format` unless `acceptJsonObject` is set (then decoded unconstrained), and with
 * `rejectResponseFormat` every `response_format` is rejected (an older server), so the adapter's
 * fallback can be tested. Without `response_format` the model generates freely up to `max_tokens`.
 *
 * Routes: `POST /v1/chat/completions` (non-streaming) and `GET /v1/models`.
 *
 * Also a command: `npx tsx test/support/llama-openai-server.ts <model.gguf> [port]` prints the base
 * URL and serves until interrupted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LlamaChatModel } from '../../models/llama/llama';
import type { ChatRequest } from '../../shared/ports';
import type { JsonSchema } from '../../shared/llm/schemas';

/** Options of {@link startLlamaOpenAiServer}. */
export interface LlamaOpenAiServerOptions {
  /** Path of the GGUF model. */
  modelPath: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** Reject every `response_format` with a 400 (an older server). */
  rejectResponseFormat?: boolean;
  /** Accept `json_object` (decoded unconstrained) instead of rejecting it. */
  acceptJsonObject?: boolean;
  /** Parallel sequences of the model's context; default 2. */
  sequences?: number;
}

/** A running server. */
export interface LlamaOpenAiServer {
  /** API root, e.g. `http://127.0.0.1:40123/v1`. */
  baseUrl: string;
  /** Requests received, with their `response_format` type (or "none") and `max_tokens`. */
  requests: Array<{ responseFormat: string; maxTokens: number }>;
  stop(): Promise<void>;
}

interface ChatBody {
  model?: string;
  messages?: Array<{ role: string; content: string }>;
  max_tokens?: number;
  temperature?: number;
  response_format?: { type?: string; json_schema?: { name?: string; schema?: JsonSchema } };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * Start the server.
 * @throws the errors of `LlamaChatModel.load` for a bad model file.
 */
export async function startLlamaOpenAiServer(options: LlamaOpenAiServerOptions): Promise<LlamaOpenAiServer> {
  const model = await LlamaChatModel.load(options.modelPath, { sequences: options.sequences ?? 2 });
  const requests: LlamaOpenAiServer['requests'] = [];
  const handle = async (body: ChatBody, res: http.ServerResponse): Promise<void> => {
    const format = body.response_format?.type ?? 'none';
    requests.push({ responseFormat: format, maxTokens: body.max_tokens ?? 0 });
    if (format !== 'none' && (options.rejectResponseFormat || (format !== 'json_schema' && !(format === 'json_object' && options.acceptJsonObject)))) {
      send(res, 400, { error: { message: `Unsupported response_format type: ${format}`, type: 'invalid_request_error' } });
      return;
    }
    const messages = body.messages ?? [];
    const system = messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n');
    const turns = messages
      .filter((m) => m.role !== 'system')
      .map((m) => ({ role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const), text: m.content }));
    const schema = format === 'json_schema' ? body.response_format?.json_schema : undefined;
    const request: ChatRequest = {
      role: 'seeker',
      system,
      messages: turns,
      maxTokens: body.max_tokens ?? 512,
      temperature: body.temperature ?? 0,
      ...(schema?.schema ? { schema: { name: schema.name ?? 'reply', description: '', schema: schema.schema } } : {}),
    };
    try {
      const reply = await model.complete(request);
      send(res, 200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        model: body.model ?? model.modelId,
        choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: reply.stopReason === 'max_tokens' ? 'length' : 'stop' }],
        usage: { prompt_tokens: reply.inputTokens, completion_tokens: reply.outputTokens, total_tokens: reply.inputTokens + reply.outputTokens },
      });
    } catch (error) {
      const message = (error as Error).message;
      send(res, /context/i.test(message) ? 400 : 500, { error: { message, type: 'server_error' } });
    }
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      send(res, 200, { object: 'list', data: [{ id: model.modelId, object: 'model' }] });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      return;
    }
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    req.on('end', () => {
      let body: ChatBody;
      try {
        body = JSON.parse(data) as ChatBody;
      } catch {
        send(res, 400, { error: { message: 'body is not JSON' } });
        return;
      }
      void handle(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (require.main === module) {
  const [modelPath, port] = process.argv.slice(2);
  if (!modelPath) {
    process.stderr.write('usage: npx tsx test/support/llama-openai-server.ts <model.gguf> [port]\n');
    process.exit(2);
  }
  void startLlamaOpenAiServer({ modelPath, port: port ? Number(port) : 8080 }).then((s) => process.stdout.write(`${s.baseUrl}\n`));
}
