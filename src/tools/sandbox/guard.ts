import { z } from "zod";
import type { TaskSandbox } from "../../background/tasks/task.ts";
import { needsParser, parserReady } from "../../safety/parser/bash-parser.ts";
import { classifyCommand, needsCaution } from "../../safety/rules/decide.ts";
import { type ConfirmationQuestion, commandQuestion, confirmByPerson, refusedWithoutPerson, unaskedNote, unaskedRecord } from "../../safety/confirmation/person-confirmation.ts";
import { DENIED_HINTS, type SandboxDenied } from "./denied.ts";
import { privilegedWord } from "./inside-words.ts";
import { SANDBOX_MODES, strictness, type SandboxMode } from "../../sandbox/policy.ts";
import type { SandboxRun } from "../../sandbox/setup.ts";
import type { NetworkCall } from "../../sandbox/network/calls.ts";
import { CodedError, type ToolResult } from "../../errors.ts";
import type { ToolContext } from "../types.ts";

export const sandboxParameter = () => z.enum(SANDBOX_MODES).optional().describe("Looser modes ask first.");

/** The containment of a call whose mode was settled by guardSandbox, in its validated `cwd`. */
export function callSandbox(ctx: ToolContext, mode: SandboxMode, cwd: string, opts: { agent?: boolean; command?: string } = {}): CallSandbox {
  const call = ctx.sandbox.forCall(mode, { agent: opts.agent, cwd, roots: ctx.allowedRoots });
  const report: TaskSandbox = { mode: call.label, ...(call.level ? { level: call.level } : {}) };
  if (call.run) Object.assign(report, { writableRoots: call.run.policy.writableRoots, hidden: call.run.policy.denyRead, network: call.run.policy.network, planted: { git: [], controls: [] } });
  if (!call.run?.policy.allowlist) return { run: call.run, report };
  // The network by name (SPEC §21): the proxy asks this call's person about a name nobody allowed, when its client can.
  report.networkDenied = [];
  const policy = ctx.confirmationPolicy;
  const network: NetworkCall = { command: opts.command ?? "", denied: report.networkDenied, ...(policy.kind === "person" && policy.askNetwork ? { ask: policy.askNetwork } : {}) };
  return { run: call.run, report, network };
}

export interface CallSandbox {
  /** For the spawn (undefined: not contained). */
  run?: SandboxRun;
  /** For the task and its results. */
  report: TaskSandbox;
  /** An allowlist sandbox's link to the proxy: whom it asks, where it reports (spec.network). */
  network?: NetworkCall;
}

/**
 * The containment of one local call. A mode looser than the server's asks first, like a
 * caution command (SPEC §6): the first call records it and returns needs_confirmation, the
 * same call with `confirmed: true` runs it once. A caution command asking to run outside
 * the sandbox is confirmed by the same single confirmation.
 */
export async function guardSandbox(
  ctx: ToolContext,
  args: { key: string; field: "command" | "prompt"; sandbox?: SandboxMode; confirmed?: boolean; description?: string; binding: string; cwd: string },
): Promise<{ mode: SandboxMode; alreadyConfirmed?: boolean } | { result: ToolResult }> {
  if (needsParser(args.key)) await parserReady();
  const server = ctx.sandboxMode;
  // A connection that asked for a looser default (a daemon hello) gets it call by call, confirmed like a per-call one (SPEC §20).
  const asked = args.sandbox ?? ctx.requestedSandboxMode;
  const mode = asked ?? server;
  if (asked !== undefined && strictness(mode) < strictness(server)) {
    const record = `\0sandbox\0${args.binding}`;
    const policy = ctx.confirmationPolicy;
    const what = `This call asks to run outside the server's sandbox ('${server}' → '${mode}')`;
    if (policy.kind !== "pending") {
      if (args.field === "command" && classifyCommand(args.key).kind === "blocked") return { mode }; // refused next, whatever a person would say: not asked
      // One question covers both: the looser sandbox and what the command itself would do.
      const looser = looserInWords(server, mode);
      const question: ConfirmationQuestion =
        args.field === "command" ? commandQuestion(args.key, { cwd: args.cwd }, [looser]) : { field: "prompt", text: args.key, cwd: args.cwd, reasons: [looser] };
      if (policy.kind === "nobody") throw refusedWithoutPerson(question);
      if (policy.kind === "ask") {
        if (await policy.ask(question)) return { mode, alreadyConfirmed: true };
        throw new CodedError("BLOCKED", `Cancelled: ${what.toLowerCase()} and was not confirmed (answer y, or pass --yes)`, { [args.field]: args.key });
      }
      // The model's retry after the client answered without its person (see confirmCommand).
      if (args.confirmed && ctx.confirmations.consume(unaskedRecord(record))) return { mode, alreadyConfirmed: true };
      const answer = await confirmByPerson(policy, question);
      if (answer.approved) return { mode, alreadyConfirmed: true };
      ctx.confirmations.request(unaskedRecord(record));
      return { result: needsConfirmation(args, what, unaskedNote(answer.detail) + " ") };
    }
    if (!args.confirmed) {
      ctx.confirmations.request(record);
      if (args.field === "command" && needsCaution(args.key)) ctx.confirmations.request(args.binding);
      return { result: needsConfirmation(args, what) };
    } else if (!ctx.confirmations.consume(record)) {
      throw new CodedError(
        "BLOCKED",
        `Cannot confirm running outside the sandbox: this ${args.field} was not previously flagged with sandbox '${mode}'. First call without confirmed=true, then retry with confirmed=true after user approval.`,
        { [args.field]: args.key, sandbox: mode },
      );
    }
  }
  return { mode };
}

function needsConfirmation(args: { key: string; field: "command" | "prompt"; description?: string }, what: string, note = ""): ToolResult {
  return {
    needs_confirmation: true,
    [args.field]: args.key,
    message: `${note}${what}: ${args.key}. Please confirm: ask the user, then call again with confirmed: true, the same ${args.field} and the same sandbox.`,
    ...(args.description !== undefined ? { description: args.description } : {}),
  };
}

/**
 * A command that would run sandboxed and changes privileges (`sudo`, `su`…) is refused at
 * once, never asked about first (SPEC §25): it cannot work inside, whatever a person says.
 */
export function refusePrivileged(ctx: ToolContext, mode: SandboxMode, command: string): void {
  if (mode === "off" || ctx.sandbox.choice.level === null) return;
  const word = privilegedWord(command);
  if (!word) return;
  const denied: SandboxDenied = { kind: "privilege", paths: [], hint: DENIED_HINTS.privilege };
  throw new CodedError("BLOCKED", `Refused: '${word}' cannot work in the sandbox this command runs in. ${DENIED_HINTS.privilege}`, { command, sandbox: mode, sandbox_denied: denied });
}

/** A looser sandbox for one call, as a person would read it. */
function looserInWords(server: SandboxMode, mode: SandboxMode): string {
  const what = mode === "off" ? "runs with no sandbox at all (it may write anywhere you can and read your secrets)" : `runs in the looser '${mode}' sandbox`;
  return `${what}, instead of this server's '${server}' sandbox`;
}
