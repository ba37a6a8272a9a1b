/**
 * What a call's guard decided, noted for the audit record (SPEC §22): the decision, what
 * made it (a user's rule, a §6 entry, the sandbox), and who confirmed.
 */
export type CallNote = {
  decision?: "allow" | "ask" | "deny";
  decided_by?: string;
  confirmed_by?: "person" | "model" | "cli" | "rule";
};
