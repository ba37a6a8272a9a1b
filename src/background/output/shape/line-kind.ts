/**
 * What a line reports, for choosing what to keep (SPEC §15): an error or failure, a
 * warning, or neither.
 */
export type LineKind = "error" | "warning" | "plain";

/** Words and marks of errors and failures, as build tools, test runners and runtimes print them. */
const ERROR_WORDS =
  /\b(?:errors?|ERRORS?)\b|Error\b|ERR!|\bFAIL(?:ED|URE)?\b|\b[Ff]ail(?:s|ed|ure|ures|ing)?\b|\b[Ff]atal\b|FATAL|\b[Pp]anic|PANIC|Traceback|Exception\b|\b[Aa]ssert|\(fail\)|✗|✘|×|[Ss]egmentation fault|\bAborted\b|\b(?:Expected|Received):|^\s*not ok\b|^\s*[-+] (?:Expected|Received)\b/;
/** A source position `file.ext:line[:col]` (compilers, stack traces, test failures). */
const POSITION = /(?:^|[\s(["'`/])[\w.@~+-]*[\w/]\.[A-Za-z][A-Za-z0-9]{0,9}[:(]\d+(?:[:,]\d+)?/;
/** A non-zero exit reported in words (`exit code 2`, `exited with 1`, `exit status 127`). */
const NONZERO_EXIT = /\bexit(?:ed)?(?: with)?(?: code| status)?[\s:=]*[1-9]\d*/i;
const WARNING = /warn|WARN|Warn|deprecat|DEPRECAT/;

/** Lines longer than this are classified by their start only (a regex never sees more). */
const CLASSIFY_CHARS = 4096;

export function lineKind(line: string): LineKind {
  const s = line.length > CLASSIFY_CHARS ? line.slice(0, CLASSIFY_CHARS) : line;
  if (ERROR_WORDS.test(s) || POSITION.test(s) || NONZERO_EXIT.test(s)) return "error";
  if (WARNING.test(s)) return "warning";
  return "plain";
}
