import { describe, expect, test } from "bun:test";
import { OutputStream } from "../../src/background/output/stream.ts";
import { TerminalScreen } from "../../src/background/terminal/screen.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function screenOf(cols = 80, rows = 24) {
  const committed = new OutputStream("stdout", 10_000_000, null);
  const screen = await TerminalScreen.create(cols, rows, committed);
  const feed = (s: string) => screen.feed(enc.encode(s));
  const text = () => dec.decode(screen.text.read(0, screen.text.total)!);
  return { screen, committed, feed, text };
}

describe("TerminalScreen: the rendered text", () => {
  test("thousands of lines with wrapped ones, fed in random pieces: committed text is exact, in order, nothing lost", async () => {
    const { screen, committed, feed } = await screenOf(80, 24);
    const lines = Array.from({ length: 6000 }, (_, i) => (i % 97 === 0 ? `wide ${i} ${"w".repeat(250)}` : `line ${i}`));
    const raw = lines.map((l) => `${l}\r\n`).join("");
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 3000) + 1;
    for (let at = 0; at < raw.length; ) {
      const n = rand();
      feed(raw.slice(at, at + n));
      at += n;
    }
    screen.finish();
    expect(dec.decode(committed.read(0, committed.total)!)).toBe(lines.map((l) => `${l}\n`).join(""));
  });

  test("carriage returns overwrite, colours and erase sequences leave no trace", async () => {
    const { screen, feed, text } = await screenOf();
    feed("\x1b[1;32mgreen\x1b[0m\r\n");
    for (let i = 0; i <= 100; i += 10) feed(`\rprogress ${i}%`);
    feed("\r\n\x1b[2Kdone");
    expect(text()).toBe("green\nprogress 100%\ndone");
    expect(screen.screen()).toBe("green\nprogress 100%\ndone");
    expect(screen.cursorLine()).toBe("done");
  });

  test("trailing blanks of a row are dropped, as a terminal's copy would", async () => {
    const { feed, text } = await screenOf();
    feed("padded    \r\n\tx\r\n");
    expect(text()).toBe("padded\n        x\n");
  });

  test("a prompt keeps the spaces up to the cursor", async () => {
    const { feed, text, screen } = await screenOf();
    feed(">>> ");
    expect(text()).toBe(">>> ");
    expect(screen.cursorLine()).toBe(">>>");
  });

  test("the alternate screen shows in screen(), not in the text; leaving it restores the normal screen", async () => {
    const { feed, text, screen } = await screenOf();
    feed("$ less file\r\n");
    feed("\x1b[?1049h\x1b[Hfull-screen view");
    expect(screen.screen()).toBe("full-screen view");
    expect(text()).toBe("$ less file\n");
    feed("\x1b[?1049l$ ");
    expect(screen.screen()).toBe("$ less file\n$");
    expect(text()).toBe("$ less file\n$ ");
  });

  test("a query (cursor position report) is answered to the child", async () => {
    const { screen, feed } = await screenOf();
    const replies: string[] = [];
    screen.onReply((r) => replies.push(r));
    feed("ab\x1b[6n");
    expect(replies).toEqual(["\x1b[1;3R"]);
  });
});

describe("TerminalText: a read cursor that survives redraws", () => {
  test("new output after the cursor; a redrawn line is returned whole", async () => {
    const { screen, feed } = await screenOf();
    const t = screen.text;
    const since = () => {
      const total = t.total;
      const out = dec.decode(t.read(t.cursor, total)!);
      t.cursor = total;
      return out;
    };
    feed("first\r\nstep 1");
    expect(since()).toBe("first\nstep 1");
    feed("\rstep 2");
    expect(since()).toBe("step 2");
    feed("\r\nnext line\r\n");
    expect(since()).toBe("\nnext line\n");
    expect(since()).toBe("");
  });
});
