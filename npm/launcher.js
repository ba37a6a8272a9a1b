#!/usr/bin/env node
// The `agent-shell` command of the npm package: finds the compiled binary of this platform's
// package (installed by npm as an optional dependency, chosen by its os/cpu) and runs it with
// the same arguments, stdio, environment, signals and exit status. Plain CommonJS for any
// Node.js >= 18; nothing is downloaded, here or at install time.
"use strict";

const { spawn } = require("node:child_process");
const { chmodSync, existsSync } = require("node:fs");
const { constants } = require("node:os");
const { dirname, join } = require("node:path");

const VERSION = require("../package.json").version;
const SHIPPED = ["linux-x64", "linux-arm64"];
// Signals a person or a supervisor sends to the launcher's pid reach the binary too. A
// terminal's Ctrl-C reaches both already (same process group); the binary's handlers are
// idempotent, so the second copy changes nothing.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"];

function fail(message) {
  process.stderr.write(`agent-shell: ${message}\n`);
  process.exit(1);
}

/** The binary to run: AGENT_SHELL_BINARY_PATH, else the one in this platform's package. */
function binaryPath() {
  const override = process.env.AGENT_SHELL_BINARY_PATH;
  if (override) return override;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `agent-shell-${platform}`;
  if (!SHIPPED.includes(platform)) {
    fail(`no binary for ${platform}: agent-shell ships ${SHIPPED.join(" and ")} (build it from source with Bun for other platforms).`);
  }
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    fail(
      `the package ${pkg} (this platform's binary) is not installed. npm installs it as an optional ` +
        `dependency; install it with \`npm install ${pkg}@${VERSION}\`, or reinstall agent-shell ` +
        `without --omit=optional / --no-optional.`,
    );
  }
  const installed = require(manifest).version;
  if (installed !== VERSION) {
    process.stderr.write(`agent-shell: warning: ${pkg} is ${installed}, this launcher is ${VERSION}; install ${pkg}@${VERSION}.\n`);
  }
  return join(dirname(manifest), "bin", "agent-shell");
}

function run(binary, retried) {
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
  const forward = {};
  for (const signal of FORWARDED) {
    forward[signal] = () => {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    };
    process.on(signal, forward[signal]);
  }
  const stopForwarding = () => {
    for (const signal of FORWARDED) process.removeListener(signal, forward[signal]);
  };
  child.on("error", (error) => {
    stopForwarding();
    // Some installers drop the executable bit of files in tarballs: restore it once.
    if (error.code === "EACCES" && !retried && existsSync(binary)) {
      try {
        chmodSync(binary, 0o755);
        return run(binary, true);
      } catch {
        // report the first error below
      }
    }
    fail(`cannot run ${binary}: ${error.message}`);
  });
  child.on("exit", (code, signal) => {
    stopForwarding();
    if (signal) {
      // Die of the same signal, so our parent sees what the binary's parent would have.
      process.kill(process.pid, signal);
      // A signal that does not end Node (one it ignores, like SIGPIPE): the shell's convention.
      setTimeout(() => process.exit(128 + (constants.signals[signal] || 0)), 100);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

run(binaryPath(), false);
