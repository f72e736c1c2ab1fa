// The package's browser and bundler entry: every declaration of the module, `init`
// (default) and `initSync`.
export * from './gangpack_wasm.js';
export { default } from './gangpack_wasm.js';
