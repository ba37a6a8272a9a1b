/** Entries of one folder that a look at the files depends on: these names, and (`folders`) any folder made, removed or renamed in it (runtime/containment/entry-watch.ts watches them). */
export interface WatchPoint {
  dir: string;
  names?: readonly string[];
  folders?: boolean;
}
