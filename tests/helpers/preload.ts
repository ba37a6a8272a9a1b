/**
 * Every agent-shell the tests start would otherwise capture this machine's own login shell
 * (SPEC §23): its rc files (here pyenv's, ~3 s) are not what those tests are about, and would
 * put their PATH before the system's. tests/runtime/own-shell.test.ts gives its servers a home and
 * shell of their own and turns the snapshot on.
 */
process.env.AGENT_SHELL_SHELL_SNAPSHOT ??= "false";
