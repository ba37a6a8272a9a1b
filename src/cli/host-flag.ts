/**
 * `--host NAME` of the CLI verbs: a far-side host's tasks are named `NAME:ID` (SPEC §16),
 * so `logs --host box bg-3` reads `box:bg-3`; an id already naming the host is kept.
 */
export const HOST_OPTION = { host: { type: "string" } } as const;

export function onHost(host: unknown, id: string): string {
  if (typeof host !== "string" || host === "") return id;
  return id.startsWith(`${host}:`) ? id : `${host}:${id}`;
}
