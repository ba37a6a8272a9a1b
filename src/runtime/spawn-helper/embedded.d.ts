/** build.ts compiles the helper there; imported `with { type: "file" }`, it is the embedded file's path. */
declare module "*/build/agent-shell-helper" {
  const path: string;
  export default path;
}
