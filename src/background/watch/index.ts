/** Watches over a running task: readiness, output matches, progress, waiting for input, news for followers. */
export { onWaitingForInput, waitingPrompt } from "./input-wait.ts";
export { awaitOutputNews, type OutputNews } from "./output-news.ts";
export { watchOutput, type WatchOptions } from "./output-watch.ts";
export { startProgress } from "./progress.ts";
export { awaitReadiness, type Readiness, type ReadinessSpec } from "./readiness.ts";
