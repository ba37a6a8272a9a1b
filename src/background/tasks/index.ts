/** Tasks: a process and its output, the registry that owns them, launching, the foreground lifecycle. */
export { runForeground, type ForegroundOptions, type ForegroundOutcome, type LeftoversPolicy } from "./foreground.ts";
export { Launcher, type LaunchRequest, type LauncherOptions } from "./launcher.ts";
export { Registry, type RegistryOptions } from "./registry.ts";
export { Task, type TaskInfo, type TaskKind, type TaskStatus } from "./task.ts";
