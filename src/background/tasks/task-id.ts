/** Task ids are `bg-N`: one counter for every kind of task, never reused. */
export function formatTaskId(n: number): string {
  return `bg-${n}`;
}

/** N of `bg-N` (0 for anything else), for ordering and for continuing the count. */
export function taskIdNumber(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1)) || 0;
}
