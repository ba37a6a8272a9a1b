/**
 * A scripted stand-in model on 127.0.0.1 speaking the three wire APIs the harnesses use: the
 * Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex CLI) and the Gemini API
 * (Gemini CLI). Its script: when a request's conversation names a case (`CASE:<name>`) and offers
 * agent-shell's bash tool, call that tool with the case's command; when the conversation holds a
 * tool result, record it (what the harness hands its model) and answer "done".
 */

export interface Recorded {
  /** The tool result exactly as the harness put it in the request, serialised as the model reads it. */
  text: string;
  /** The tool's name as the harness exposed it to the model. */
  tool: string;
}

export interface StandIn {
  url: string;
  /** Tool results recorded per case. */
  results: Map<string, Recorded>;
  /** agent-shell's tool definitions as each API carried them (first request that offered them). */
  toolDefinitions: Map<string, unknown[]>;
  /** Every request's method and path, for diagnosing a harness that never called. */
  requests: string[];
  stop(): void;
}

const SIX = ["bash", "task", "task_output", "kill_shell", "task_list", "write_stdin"];
/** agent-shell's tools as a harness names them (mcp__shell__bash, shell__bash, mcp_shell_bash, bash…). */
function isShellTool(name: string, tool: string): boolean {
  return name === tool || (name.endsWith(`_${tool}`) && name.includes("shell"));
}

function caseIn(body: unknown, cases: Record<string, string>): string | undefined {
  const text = JSON.stringify(body);
  for (const name of Object.keys(cases)) if (text.includes(`CASE:${name}`)) return name;
}

const sse = (events: Array<[string | null, unknown]>) =>
  new Response(events.map(([ev, data]) => (ev ? `event: ${ev}\n` : "") + `data: ${JSON.stringify(data)}\n\n`).join(""), {
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" },
  });

export function startStandIn(cases: Record<string, string>): StandIn {
  const results = new Map<string, Recorded>();
  const toolDefinitions = new Map<string, unknown[]>();
  const requests: string[] = [];
  let ids = 0;

  // ---------- Anthropic Messages (Claude Code) ----------
  function anthropic(body: any): Response {
    const tools: any[] = body.tools ?? [];
    const shellTools = tools.filter((t) => SIX.some((s) => isShellTool(t.name ?? "", s)));
    if (shellTools.length && !toolDefinitions.has("anthropic")) toolDefinitions.set("anthropic", shellTools);
    const name = caseIn(body.messages, cases);
    const last = body.messages?.at(-1);
    const toolResult = Array.isArray(last?.content) ? last.content.find((b: any) => b.type === "tool_result") : undefined;
    let reply: { tool?: { name: string; input: unknown }; text?: string } = { text: "ok" };
    if (name && toolResult) {
      const c = toolResult.content;
      const joined = typeof c === "string" ? c : (c ?? []).map((b: any) => (b.type === "text" ? b.text : JSON.stringify(b))).join("\n");
      // Claude Code appends its own <system-reminder> notes to a tool result: not the tool's output.
      const text = joined.replace(/\s*<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "");
      if (!results.has(name)) results.set(name, { text, tool: "(tool_result)" });
      reply = { text: "done" };
    } else if (name) {
      const bash = tools.find((t) => isShellTool(t.name, "bash"));
      if (bash) reply = { tool: { name: bash.name, input: { command: cases[name] } } };
      else reply = { text: `no agent-shell bash tool offered (tools: ${tools.map((t) => t.name).join(", ")})` };
    }
    const id = `msg_${++ids}`;
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const block = reply.tool
      ? { type: "tool_use", id: `toolu_${ids}`, name: reply.tool.name, input: reply.tool.input }
      : { type: "text", text: reply.text };
    const stop = reply.tool ? "tool_use" : "end_turn";
    if (!body.stream) {
      return Response.json({ id, type: "message", role: "assistant", model: body.model, content: [block], stop_reason: stop, stop_sequence: null, usage });
    }
    const start = reply.tool ? { ...block, input: {} } : { type: "text", text: "" };
    const delta = reply.tool
      ? { type: "input_json_delta", partial_json: JSON.stringify(reply.tool.input) }
      : { type: "text_delta", text: reply.text };
    return sse([
      ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
      ["message_stop", { type: "message_stop" }],
    ]);
  }

  // ---------- OpenAI Responses (Codex CLI) ----------
  function responses(body: any): Response {
    const tools: any[] = body.tools ?? [];
    // Codex groups an MCP server's tools in a namespace (`mcp__shell` holding `bash`, …); a call names both.
    const flat = tools.flatMap((t) =>
      Array.isArray(t.tools) ? t.tools.map((x: any) => ({ ...x, namespace: t.name, name: `${t.name ?? ""}__${x.name}`, bare: x.name })) : [t],
    );
    const shellTools = flat.filter((t) => SIX.some((s) => isShellTool(t.name ?? "", s)));
    if (shellTools.length && !toolDefinitions.has("responses")) {
      const ns = tools.find((t) => Array.isArray(t.tools) && t.tools.some((x: any) => x.name === "bash") && String(t.name).includes("shell"));
      toolDefinitions.set("responses", ns ? [ns] : shellTools);
    }
    const input: any[] = Array.isArray(body.input) ? body.input : [];
    const name = caseIn(input, cases);
    const output = input.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output").at(-1);
    const id = `resp_${++ids}`;
    let item: any;
    if (name && output) {
      const o = output.output;
      const text = typeof o === "string" ? o : Array.isArray(o) ? o.map((b: any) => b.text ?? JSON.stringify(b)).join("\n") : JSON.stringify(o);
      if (!results.has(name)) results.set(name, { text, tool: output.type });
      item = { type: "message", id: `msg_${ids}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "done", annotations: [] }] };
    } else if (name) {
      const bash = flat.find((t) => isShellTool(t.name ?? "", "bash"));
      item = bash
        ? {
            type: "function_call",
            id: `fc_${ids}`,
            call_id: `call_${ids}`,
            ...(bash.namespace ? { namespace: bash.namespace, name: bash.bare } : { name: bash.name }),
            arguments: JSON.stringify({ command: cases[name] }),
            status: "completed",
          }
        : { type: "message", id: `msg_${ids}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: `no agent-shell bash tool offered (tools: ${flat.map((t) => t.name).join(", ")})`, annotations: [] }] };
    } else {
      item = { type: "message", id: `msg_${ids}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok", annotations: [] }] };
    }
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
    const response = { id, object: "response", status: "completed", model: body.model, output: [item], usage };
    return sse([
      ["response.created", { type: "response.created", response: { ...response, status: "in_progress", output: [] } }],
      ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
      ["response.completed", { type: "response.completed", response }],
    ]);
  }

  // ---------- Gemini API (Gemini CLI) ----------
  function gemini(body: any, stream: boolean, model: string): Response {
    const decls: any[] = (body.tools ?? []).flatMap((t: any) => t.functionDeclarations ?? []);
    const shellTools = decls.filter((t) => SIX.some((s) => isShellTool(t.name ?? "", s)));
    if (shellTools.length && !toolDefinitions.has("gemini")) toolDefinitions.set("gemini", shellTools);
    const contents: any[] = body.contents ?? [];
    const name = caseIn(contents, cases);
    const lastParts: any[] = contents.at(-1)?.parts ?? [];
    const fr = lastParts.find((p) => p.functionResponse)?.functionResponse;
    let parts: any[];
    if (name && fr) {
      if (!results.has(name)) results.set(name, { text: JSON.stringify(fr.response), tool: fr.name });
      parts = [{ text: "done" }];
    } else if (name && decls.length) {
      const bash = decls.find((t) => isShellTool(t.name ?? "", "bash"));
      parts = bash ? [{ functionCall: { name: bash.name, args: { command: cases[name] } } }] : [{ text: `no agent-shell bash tool offered (tools: ${decls.map((t) => t.name).join(", ")})` }];
    } else {
      // Side requests (routing, next-speaker checks, titles) get a neutral answer.
      const wantsJson = body.generationConfig?.responseMimeType === "application/json" || body.generationConfig?.responseJsonSchema || body.generationConfig?.responseSchema;
      parts = [{ text: wantsJson ? JSON.stringify({ reasoning: "stand-in", model_choice: "pro", next_speaker: "user" }) : "ok" }];
    }
    const chunk = {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: model,
    };
    return stream ? sse([[null, chunk]]) : Response.json(chunk);
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(`${req.method} ${path}`);
      const body: any = req.method === "POST" ? await req.json().catch(() => ({})) : {};
      if (process.env.STANDIN_DUMP) require("node:fs").appendFileSync(process.env.STANDIN_DUMP, JSON.stringify({ path, body }) + "\n");
      if (path.endsWith("/messages/count_tokens")) return Response.json({ input_tokens: 100 });
      if (path.endsWith("/messages")) return anthropic(body);
      if (path.endsWith("/responses")) return responses(body);
      const g = path.match(/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/);
      if (g) {
        if (g[2] === "countTokens") return Response.json({ totalTokens: 100 });
        return gemini(body, g[2] === "streamGenerateContent", g[1]!);
      }
      if (path.endsWith("/models")) return Response.json({ data: [], models: [] });
      return new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, results, toolDefinitions, requests, stop: () => server.stop(true) };
}
