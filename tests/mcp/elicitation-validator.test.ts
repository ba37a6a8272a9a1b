/**
 * The validator the binary gives the SDK server for elicitation answers (in place of Ajv):
 * it checks a person's answer against the flat form agent-shell requested, for real.
 */
import { describe, expect, test } from "bun:test";
import { FlatSchemaValidator } from "../../src/mcp/elicitation-validator.ts";

const validator = new FlatSchemaValidator();
const check = (schema: object, answer: unknown) => validator.getValidator(schema as never)(answer);

const confirm = { type: "object", properties: { confirm: { type: "boolean", title: "Run it?" } }, required: ["confirm"] };

describe("the confirmation form", () => {
  test("true and false are answers", () => {
    expect(check(confirm, { confirm: true })).toEqual({ valid: true, data: { confirm: true }, errorMessage: undefined });
    expect(check(confirm, { confirm: false }).valid).toBe(true);
  });

  test.each([
    [{ confirm: "yes" }, `'confirm' must be true or false, got "yes"`],
    [{ confirm: 1 }, "'confirm' must be true or false, got 1"],
    [{}, "'confirm' is required"],
    [null, "the answer must be an object"],
    [[true], "the answer must be an object"],
  ])("%p is refused: %s", (answer, message) => {
    expect(check(confirm, answer)).toEqual({ valid: false, data: undefined, errorMessage: message });
  });
});

describe("other flat fields", () => {
  const form = {
    type: "object",
    properties: {
      name: { type: "string", minLength: 2, maxLength: 5 },
      colour: { type: "string", enum: ["red", "green"] },
      size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
      count: { type: "integer", minimum: 1, maximum: 3 },
      ratio: { type: "number" },
      tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, maxItems: 2 },
    },
    required: ["name"],
  };
  test("a fitting answer passes; optional fields may be missing", () => {
    expect(check(form, { name: "ab", colour: "red", size: "l", count: 2, ratio: 0.5, tags: ["a"] }).valid).toBe(true);
    expect(check(form, { name: "abc" }).valid).toBe(true);
  });
  test.each([
    [{ name: "a" }, "'name' must be at least 2 characters"],
    [{ name: "abcdef" }, "'name' must be at most 5 characters"],
    [{ name: "ab", colour: "blue" }, `'colour' must be one of "red", "green"`],
    [{ name: "ab", size: "m" }, `'size' must be one of "s", "l"`],
    [{ name: "ab", count: 1.5 }, "'count' must be a whole number, got 1.5"],
    [{ name: "ab", count: 4 }, "'count' must be at most 3"],
    [{ name: "ab", ratio: "1" }, `'ratio' must be a number, got "1"`],
    [{ name: "ab", tags: ["c"] }, `'tags' has "c", which is not one of the choices`],
    [{ name: "ab", tags: ["a", "b", "a"] }, "'tags' allows at most 2 choices"],
  ])("%p is refused: %s", (answer, message) => {
    expect(check(form, answer).errorMessage).toBe(message);
  });
});

test("a schema it cannot check fully is refused up front, never waved through", () => {
  expect(() => validator.getValidator({ type: "string" } as never)).toThrow("only flat object schemas");
  expect(() => validator.getValidator({ type: "object", properties: { x: { type: "string", pattern: "^a" } } } as never)).toThrow("pattern");
  expect(() => validator.getValidator({ type: "object", properties: { x: { type: "object" } } } as never)).toThrow("unsupported type");
});
