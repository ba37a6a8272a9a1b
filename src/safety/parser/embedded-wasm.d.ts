// The parser's WebAssembly files, embedded by `with { type: "file" }`: the import is their path.
declare module "*.wasm" {
  const path: string;
  export default path;
}
