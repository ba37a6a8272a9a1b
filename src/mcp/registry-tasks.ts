import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpError, ErrorCode, RELATED_TASK_META_KEY, type Result, type Task as McpTask } from "@modelcontextprotocol/sdk/types.js";
import type { Task } from "../background/tasks/index.ts";
import { taskIdNumber } from "../background/tasks/task-id.ts";
import { firstOf } from "../first-of.ts";
import type { ToolHost } from "../host/tool-host.ts";
import { callToolResult } from "./call-result.ts";

/** Tasks per tasks/list page. */
const LIST_PAGE = 30;

/** How often a client without notifications is told to poll tasks/get. */
const POLL_INTERVAL_MS = 500;

/** SPEC §12: the registry's statuses as MCP task statuses. */
const MCP_STATUS = { running: "working", completed: "completed", killed: "cancelled", lost: "failed" } as const;

/** A registry task as an MCP task: `working` until its call's result is there. */
export function mcpTask(task: Task, host: ToolHost): McpTask {
  const status = host.hasSettled(task) ? MCP_STATUS[task.status] : "working";
  return {
    taskId: task.id!,
    status,
    ...(task.lostReason ? { statusMessage: task.lostReason } : {}),
    createdAt: task.startedAt.toISOString(),
    lastUpdatedAt: (task.endedAt ?? task.startedAt).toISOString(),
    ttl: host.config.task_ttl_seconds * 1000,
    pollInterval: POLL_INTERVAL_MS,
  };
}

/**
 * The SDK's task store, backed by the registry: MCP tasks are the registry's background
 * tasks (no second store), so tasks/get, tasks/list and tasks/cancel see the same tasks as
 * task_output, task_list and kill_shell. Tasks are created by a task-augmented tools/call
 * (see server.ts); their results are the calls' own, kept by the host.
 */
export class RegistryTaskStore implements TaskStore {
  constructor(private readonly host: ToolHost) {}

  createTask(): Promise<McpTask> {
    // The SDK calls this only on a handler's behalf; ours launch through ToolHost.callAsTask.
    return Promise.reject(new McpError(ErrorCode.InternalError, "agent-shell creates tasks from tools/call only"));
  }

  async getTask(taskId: string): Promise<McpTask | null> {
    const task = this.host.findTask(taskId);
    return task ? mcpTask(task, this.host) : null;
  }

  async storeTaskResult(): Promise<void> {
    // Nothing to store: a task's result is its call's, which the host keeps.
  }

  async getTaskResult(taskId: string): Promise<Result> {
    return callToolResult(await this.host.taskResult(this.found(taskId)));
  }

  /** The SDK asks for `cancelled` on tasks/cancel: the task's whole group is killed (SPEC §3.3). */
  async updateTaskStatus(taskId: string, status: McpTask["status"]): Promise<void> {
    if (status !== "cancelled") return;
    const task = this.found(taskId);
    await task.kill();
    await task.ended;
    await this.host.taskResult(task); // its call has answered: the status is final
  }

  /** tasks/result: waits for the task's end (event-driven, not polled) and answers with its call's result. */
  async payload(taskId: string, signal: AbortSignal): Promise<Result> {
    const task = this.found(taskId);
    const result = this.host.taskResult(task);
    if ((await firstOf({ promises: { done: result }, signal })) === "aborted") throw new McpError(ErrorCode.InvalidRequest, "Request cancelled");
    return { ...callToolResult(await result), _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  }

  /**
   * A page of LIST_PAGE tasks in id order (SPEC §18: a page stays within the 8,000-byte budget); the
   * cursor is the last id of the page. A foreground call's kept output is no task of the client's.
   */
  async listTasks(cursor?: string): Promise<{ tasks: McpTask[]; nextCursor?: string }> {
    if (cursor !== undefined && !/^bg-\d+$/.test(cursor)) throw new Error(`invalid cursor ${JSON.stringify(cursor)}: pass the nextCursor of the previous page`);
    const after = cursor === undefined ? 0 : taskIdNumber(cursor);
    const listed = this.host.listTasks().filter((t) => !t.info.kept_output && taskIdNumber(t.id!) > after);
    const page = listed.slice(0, LIST_PAGE);
    const tasks = page.map((t) => mcpTask(t, this.host));
    return listed.length > LIST_PAGE ? { tasks, nextCursor: page.at(-1)!.id! } : { tasks };
  }

  private found(taskId: string): Task {
    const task = this.host.findTask(taskId);
    if (!task) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}. List tasks with tasks/list or task_list.`);
    return task;
  }
}
