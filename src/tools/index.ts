import { bashTool } from "./bash.ts";
import { killShellTool } from "./kill-shell.ts";
import { taskListTool } from "./task-list.ts";
import { taskTool } from "./task.ts";
import { taskOutputTool } from "./task-output.ts";
import type { ToolDefinition } from "./types.ts";
import { writeStdinTool } from "./write-stdin.ts";

/** Every tool, in the order tools/list shows them. */
export const TOOLS: ToolDefinition[] = [bashTool, taskTool, taskOutputTool, killShellTool, taskListTool, writeStdinTool] as ToolDefinition[];
