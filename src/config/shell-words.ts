/**
 * Splits a string into words as a POSIX shell would for a simple command: single and
 * double quotes and backslashes are respected; nothing is expanded.
 */
export function splitShellWords(input: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (c === "'") {
      const end = input.indexOf("'", i + 1);
      if (end === -1) throw new Error("unterminated single quote");
      word += input.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= input.length) throw new Error("unterminated double quote");
        const d = input[i]!;
        if (d === '"') break;
        if (d === "\\" && i + 1 < input.length && '"\\$`\n'.includes(input[i + 1]!)) {
          if (input[i + 1] !== "\n") word += input[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i++;
      }
      inWord = true;
      i++;
    } else if (c === "\\") {
      if (i + 1 < input.length && input[i + 1] !== "\n") word += input[i + 1];
      inWord = true;
      i += 2;
    } else if (c === " " || c === "\t" || c === "\n") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** A JSON array of strings, or shell words. */
export function parseArgvTemplate(value: string): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (e) {
      throw new Error(`not a valid JSON array: ${(e as Error).message}`);
    }
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === "string")) {
      throw new Error("must be a JSON array of strings");
    }
    return parsed;
  }
  return splitShellWords(value);
}
