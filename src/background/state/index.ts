/** State on disk: the owner folder and its lock, task metadata, recovery after a crash. */
export { defaultStateDir, OwnerBusyError, OwnerFolder } from "./state-dir.ts";
export { tryLock, type FileLock } from "./file-lock.ts";
export { recoverTasks, type RecoveryOptions } from "./recovery.ts";
