// The package's Node entry (loaded on import): every declaration of the module, `init`
// (default) and `initSync`.
export * from '../web/gangpack_wasm.js';
export { default } from '../web/gangpack_wasm.js';
