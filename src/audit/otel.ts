/**
 * Each call as an OpenTelemetry span (SPEC §22), when `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set: OTLP over HTTP through the official
 * OpenTelemetry JS SDK, which honours the standard variables (headers, timeout, batch
 * delay). The span carries the audit record's fields as `agent_shell.*` attributes.
 * The SDK is loaded only then: a server without these variables never evaluates it.
 */
import type { AuditEntry } from "./audit-log.ts";

export type Telemetry = { export: (entry: AuditEntry) => void; shutdown: () => Promise<void> };

export function otelExporter(env: NodeJS.ProcessEnv): Telemetry | null {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  const sdk = load(env.OTEL_SERVICE_NAME || "agent-shell");
  return {
    export: (entry) => {
      const end = Date.now();
      const start = end - Number(entry.outcome.duration_ms ?? 0);
      void sdk.then(({ tracer }) => {
        const span = tracer.startSpan(`agent-shell ${entry.tool}`, { startTime: start, attributes: attributes(entry) });
        if (entry.outcome.error_code !== undefined) span.setStatus({ code: 2, message: String(entry.outcome.error_code) });
        span.end(end);
      });
    },
    shutdown: () => sdk.then(({ provider }) => provider.shutdown()).catch(() => {}),
  };
}

async function load(service: string) {
  // require, not import: the packages' CommonJS builds load their Node built-ins (zlib, stream)
  // only when this runs; an ESM import would hoist them into every start of the binary (~30 ms).
  const { TracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace") as typeof import("@opentelemetry/sdk-trace");
  const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http") as typeof import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes } = require("@opentelemetry/resources") as typeof import("@opentelemetry/resources");
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  return { provider, tracer: provider.getTracer("agent-shell") };
}

/** The audit fields, flattened: `agent_shell.outcome.exit_code`, `agent_shell.env.NAME`… */
function attributes(entry: AuditEntry): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  const add = (prefix: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[prefix] = value;
    else if (typeof value === "object" && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) add(`${prefix}.${k}`, v);
    else out[prefix] = JSON.stringify(value);
  };
  for (const [k, v] of Object.entries(entry)) add(`agent_shell.${k}`, v);
  return out;
}
