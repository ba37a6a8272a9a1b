import { classifyCommand } from "../safety/patterns.ts";
import { checkWorkingDirectory } from "../safety/paths.ts";
import { commandLengthProblem } from "../safety/command-length.ts";
import { errorResult, type ToolResult } from "./errors.ts";
import type { ToolContext } from "./types.ts";

/**
 * The checks every local command passes before it runs, in the original's order:
 * working directory, blocked patterns, then confirmation of caution commands.
 * Returns the resolved working directory, or the result to answer with instead.
 */
export async function guardCommand(
  ctx: ToolContext,
  args: { command: string; description?: string; confirmed?: boolean; working_directory?: string },
  opts: { checkPath: boolean },
): Promise<{ cwd: string } | { result: ToolResult }> {
  const context = { command: args.command, description: args.description ?? null };
  let cwd = ctx.cwd;
  if (opts.checkPath && args.working_directory !== undefined) {
    const check = checkWorkingDirectory(args.working_directory, ctx.cwd, ctx.allowedRoots);
    if (!check.ok) {
      return { result: errorResult(check.code, check.message, { ...context, working_directory: args.working_directory }) };
    }
    cwd = check.path;
  }
  const tooLong = commandLengthProblem(args.command);
  if (tooLong) return { result: errorResult("INVALID_ARGUMENT", `Invalid arguments for bash: command: ${tooLong}`, context) };
  const verdict = classifyCommand(args.command);
  if (verdict.kind === "blocked") {
    return { result: errorResult("BLOCKED", `Command blocked (${verdict.what}): matches pattern '${verdict.pattern}'`, context) };
  }
  if (verdict.kind === "allowed") return { cwd };
  const policy = ctx.confirmationPolicy;
  if (policy.kind === "ask") {
    if (args.confirmed || (await policy.ask(args.command))) return { cwd };
    return {
      result: errorResult(
        "BLOCKED",
        "Command cancelled: it needs confirmation (answer y at the prompt, or pass --yes when there is no terminal)",
        context,
      ),
    };
  }
  if (!args.confirmed) {
    ctx.confirmations.request(args.command);
    return {
      result: {
        needs_confirmation: true,
        command: args.command,
        message: `This command may be destructive (${verdict.what}): ${args.command}. Please confirm execution: ask the user, then call again with confirmed: true and the exact same command.`,
        ...(args.description !== undefined ? { description: args.description } : {}),
      },
    };
  }
  if (!ctx.confirmations.consume(args.command)) {
    return {
      result: errorResult(
        "BLOCKED",
        "Cannot confirm command that was not previously flagged for confirmation. First call bash without confirmed=true, then retry with confirmed=true after user approval.",
        context,
      ),
    };
  }
  return { cwd };
}
