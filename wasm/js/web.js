// The package's browser and bundler entry (`gangpack/web`, and `gangpack` outside
// Node): wasm-bindgen's `--target web` module, re-exported, with freed sessions made
// safe. `await init()` (the default export) fetches `gangpack_wasm_bg.wasm` next to
// this file; `initSync({ module })` takes its bytes or a compiled `WebAssembly.Module`.
// The Node entry (`../node/index.js`) loads the same `.wasm` file from disk.

import init, { Scheduler } from './gangpack_wasm.js';

export * from './gangpack_wasm.js';
export default init;

/** wasm-bindgen's handle field: 0 once the Rust value is freed (wasm-bindgen 0.2.130). */
const PTR = '__wbg_ptr';

/** The error a freed session throws (`what` names the call, `subject` the session). */
function freed(what, subject) {
  const text = `${subject} was freed (by free() or at the end of its \`using\` block) and holds no state any more; fork() a session you want to keep before freeing it`;
  const message = `${what}: ${text}`;
  const e = new Error(message);
  e.name = 'Freed';
  e.problems = [{ line: message, field: '', message: text }];
  return e;
}

const isFreed = (v) => v instanceof Scheduler && v[PTR] === 0;

// Without this, a freed session's methods reach the module with a null handle and
// throw wasm-bindgen's bare "null pointer passed to rust"; and `free()` twice (an
// explicit `free()` inside a `using` block) throws the same.
function guard(cls, name) {
  const proto = cls.prototype;
  const free = proto.free;
  proto.free = {
    free() {
      if (this[PTR] !== 0) free.call(this);
    },
  }.free;
  if (typeof Symbol.dispose === 'symbol') proto[Symbol.dispose] = proto.free;
  const check = (self, method, args) => {
    if (self[PTR] === 0) throw freed(`${name}.${method}`, `this ${name}`);
    for (let i = 0; i < args.length; i += 1) {
      if (isFreed(args[i])) throw freed(`${name}.${method}`, `argument ${i + 1}, a ${name},`);
    }
  };
  for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
    if (key === 'constructor' || key === 'free' || key.startsWith('__')) continue;
    if (typeof d.value === 'function') {
      const f = d.value;
      Object.defineProperty(proto, key, {
        ...d,
        value: {
          [key](...args) {
            check(this, key, args);
            return f.apply(this, args);
          },
        }[key],
      });
    } else if (d.get || d.set) {
      Object.defineProperty(proto, key, {
        ...d,
        get: d.get && function get() {
          check(this, key, []);
          return d.get.call(this);
        },
        set: d.set && function set(v) {
          check(this, key, []);
          d.set.call(this, v);
        },
      });
    }
  }
}

guard(Scheduler, 'Scheduler');
