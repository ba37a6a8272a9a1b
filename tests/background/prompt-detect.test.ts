import { describe, expect, test } from "bun:test";
import { detectPrompt, lastLine } from "../../src/background/terminal/prompt-detect.ts";

describe("detectPrompt: lines that ask for input", () => {
  const prompts: Array<[string, string]> = [
    ["Continue? [y/N] ", "Continue? [y/N]"],
    ["Proceed [Y/n]: ", "Proceed [Y/n]:"],
    ["Overwrite existing file (yes/no)? ", "Overwrite existing file (yes/no)?"],
    ["Are you sure you want to continue connecting (yes/no/[fingerprint])? ", "Are you sure you want to continue connecting (yes/no/[fingerprint])?"],
    ["Name: ", "Name:"],
    ["Password: ", "Password:"],
    ["[sudo] password for ada: ", "[sudo] password for ada:"],
    ["Enter passphrase for key '/home/ada/.ssh/id_ed25519':", "Enter passphrase for key '/home/ada/.ssh/id_ed25519':"],
    ["Password for ada", "Password for ada"],
    [">>> ", ">>>"],
    ["...", "..."],
    ["ada@host:~$ ", "ada@host:~$"],
    ["root@box:/# ", "root@box:/#"],
    ["mysql> ", "mysql>"],
    ["irb(main):001> ", "irb(main):001>"],
    ["Press Enter to continue", "Press Enter to continue"],
    ["Press any key to exit", "Press any key to exit"],
    ["What is your favourite colour?", "What is your favourite colour?"],
  ];
  for (const [line, prompt] of prompts) {
    test(JSON.stringify(line), () => expect(detectPrompt(line)).toBe(prompt));
  }
});

describe("detectPrompt: ordinary output is not a prompt", () => {
  const lines = [
    "",
    "   ",
    "Downloading packages 100%",
    "Compiling agent-shell v0.1.0",
    "done.",
    "Build finished in 3.2s",
    "Login successful.",
    "error[E0308]: mismatched types found here.",
    "Password updated successfully.",
    `${"x".repeat(250)}:`,
  ];
  for (const line of lines) {
    test(JSON.stringify(line.slice(0, 40)), () => expect(detectPrompt(line)).toBeNull());
  }
});

describe("lastLine", () => {
  test("the last non-blank line, without line ending or trailing blanks", () => {
    expect(lastLine("a\nb\nName: ")).toBe("Name:");
    expect(lastLine("a\nquestion?\n\n")).toBe("question?");
    expect(lastLine("one line")).toBe("one line");
    expect(lastLine("x\r\nPrompt>\r\n")).toBe("Prompt>");
    expect(lastLine("")).toBe("");
  });
});
