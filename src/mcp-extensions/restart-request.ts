import { z } from "zod";

/**
 * The daemon's extension for `agent-shell restart`: restart a task in place (same id),
 * answered with the restart's result (errors in the SPEC's error shape).
 */
export const RESTART_METHOD = "agent-shell/restart";

export const RestartRequestSchema = z.object({
  method: z.literal(RESTART_METHOD),
  params: z.object({ task_id: z.string().min(1) }),
});

export const RestartResultSchema = z.record(z.string(), z.unknown());
