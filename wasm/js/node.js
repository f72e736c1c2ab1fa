// The package's Node entry (`gangpack` under Node, `gangpack/node`): the same module
// and `.wasm` file as the browser entry, the file read from disk and instantiated
// synchronously on import, so every function works at once. `init()` and `initSync()`
// are exported too and do nothing more (code written for the browser runs unchanged).

import { readFileSync } from 'node:fs';
import { initSync } from '../web/index.js';

initSync({ module: readFileSync(new URL('../web/gangpack_wasm_bg.wasm', import.meta.url)) });

export * from '../web/index.js';
export { default } from '../web/index.js';
