#!/usr/bin/env node
// `gangpack` on Node, over the WebAssembly build: the native command's
// `plan | explain | taint | demo | check | diff` with the same flags, the same stdout bytes and the same
// exit statuses (wasm/tests-js/identity.test.mjs holds it to that on every example and
// test fixture).
//
//   node wasm/js/gangpack.mjs plan    -f PATH... [-o table|yaml|json]
//   node wasm/js/gangpack.mjs explain -f PATH... [PODGROUP | --pod NAMESPACE/NAME]
//   node wasm/js/gangpack.mjs taint   -f PATH... (--device D/P/DEV | --node NODE | --rule FILE)
//                                     [--effect E] [--key K] [--value V] [--after-plan] [-o ...]
//   node wasm/js/gangpack.mjs demo    [--manifests]
//   node wasm/js/gangpack.mjs check   -f PATH... [--decisions PATH...] [--admission] [-o ...]
//   node wasm/js/gangpack.mjs diff    -f PATH... --ours PATH... --theirs PATH... [-o ...]
//   global: --policy best-fit|spread|stranding|fgd|gang-aware, --now RFC3339, --seed N,
//           --color auto|always|never, --skip-invalid, --strict
//
// This file only parses arguments and reads files (the module has no file system);
// every decision and every byte printed comes from the module (`runCli`). Build the
// module first: `bash scripts/wasm.sh`.

import { readFileSync, readdirSync, statSync } from 'node:fs';

const EXIT_FAILURE = 1;
const EXIT_INVALID = 2;

const USAGE = `Usage: gangpack [OPTIONS] <COMMAND>

Commands:
  plan     Run one scheduling cycle: place pending pods and PodGroups
  explain  Why a PodGroup (or a pod without one) is not placed
  taint    What a new taint would do: who is evicted and when, which gangs break
  demo     A built-in cluster: placements, a pending gang explained, a GPU failure
  check    Check a cluster's state (or decisions applied over it) with the validator
  diff     Compare two schedulers' decisions for the same dump

Options (any command):
  --policy <best-fit|spread|stranding|fgd|gang-aware>   [default: best-fit]
  --seed <N>                                        [default: 0]
  --color <auto|always|never>                       [default: auto]
  --skip-invalid
  --strict
  --now <RFC3339>

Command options:
  plan     -f, --filename <PATH>...  -o, --output <table|yaml|json>
  explain  -f, --filename <PATH>...  [PODGROUP]  --pod <NAMESPACE/NAME>
  taint    -f, --filename <PATH>...  --device <DRIVER/POOL/DEVICE> | --node <NODE> | --rule <FILE>
           --effect <NoExecute|NoSchedule|PreferNoSchedule|None>  --key <K>  --value <V>
           --after-plan  -o, --output <table|yaml|json>
  demo     --manifests
  check    -f, --filename <PATH>...  --decisions <PATH>...  --admission  -o, --output <table|yaml|json>
  diff     -f, --filename <PATH>...  --ours <PATH>...  --theirs <PATH>...  -o, --output <table|yaml|json>

Exit status:
  0  success: everything pending was placed (plan), or the command did what it was asked
  1  failure: a file or stdin could not be read, or output could not be written
  2  invalid input or usage: every input problem is printed to stderr, one per line
  3  plan: at least one pod or PodGroup stays pending (or is refused as invalid or failed)
  4  check, diff: a rule is broken (the findings are on stdout)
`;

class UsageError extends Error {}

/** The flags each command takes: name -> whether it takes a value. */
const GLOBAL = { policy: true, seed: true, color: true, 'skip-invalid': false, strict: false, now: true };
const COMMANDS = {
  plan: { filename: true, output: true },
  explain: { filename: true, pod: true },
  taint: {
    filename: true, device: true, node: true, rule: true, effect: true, key: true, value: true,
    'after-plan': false, output: true,
  },
  demo: { manifests: false },
  check: { filename: true, decisions: true, admission: false, output: true },
  diff: { filename: true, ours: true, theirs: true, output: true },
};
/** The flags that take a list of paths (repeatable, comma-separated). */
const LISTS = ['filename', 'decisions', 'ours', 'theirs'];
const SHORT = { f: 'filename', o: 'output', h: 'help', V: 'version' };

function choice(flag, value, allowed, ignoreCase) {
  const found = allowed.find((a) => (ignoreCase ? a.toLowerCase() === value.toLowerCase() : a === value));
  if (found === undefined) {
    throw new UsageError(`invalid value '${value}' for '--${flag}': possible values: ${allowed.join(', ')}`);
  }
  return found;
}

/** The command line as `runCli` takes it, plus the paths still to read. */
export function parseArgs(argv) {
  let command;
  const flags = {};
  const positionals = [];
  const lists = Object.fromEntries(LISTS.map((l) => [l, []]));
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    let name;
    let value;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (eq >= 0) value = arg.slice(eq + 1);
    } else if (arg.startsWith('-') && arg.length > 1) {
      name = SHORT[arg[1]];
      if (name === undefined) throw new UsageError(`unexpected argument '${arg}' found`);
      if (arg.length > 2) value = arg.slice(2).replace(/^=/, '');
    } else if (command === undefined) {
      if (!(arg in COMMANDS)) throw new UsageError(`unrecognized subcommand '${arg}'`);
      command = arg;
      continue;
    } else {
      positionals.push(arg);
      continue;
    }
    if (name === 'help' || name === 'version') {
      return { help: name };
    }
    const takes = name in GLOBAL ? GLOBAL[name] : command !== undefined ? COMMANDS[command][name] : undefined;
    if (takes === undefined) throw new UsageError(`unexpected argument '--${name}' found`);
    if (takes && value === undefined) {
      i += 1;
      if (i >= argv.length) throw new UsageError(`a value is required for '--${name}' but none was supplied`);
      value = argv[i];
    }
    if (!takes && value !== undefined) throw new UsageError(`unexpected value '${value}' for '--${name}' found`);
    if (LISTS.includes(name)) {
      lists[name].push(...value.split(','));
    } else {
      if (name in flags) throw new UsageError(`the argument '--${name}' cannot be used multiple times`);
      flags[name] = takes ? value : true;
    }
  }
  if (command === undefined) throw new UsageError('a subcommand is required');

  const options = {};
  if (flags.policy !== undefined) options.policy = flags.policy.toLowerCase() === 'fragmentation-aware'
    ? 'fragmentation-aware' // deprecated, hidden as the native command hides it
    : choice('policy', flags.policy, ['best-fit', 'spread', 'stranding', 'fgd', 'gang-aware'], true);
  if (flags.seed !== undefined) {
    if (!/^\d+$/.test(flags.seed)) throw new UsageError(`invalid value '${flags.seed}' for '--seed <N>': invalid digit found in string`);
    options.seed = Number(flags.seed);
  }
  const color = flags.color === undefined ? 'auto' : choice('color', flags.color, ['auto', 'always', 'never'], false);
  if (flags['skip-invalid']) options.skipInvalid = true;
  if (flags.strict) options.strict = true;
  if (flags.now !== undefined) options.now = flags.now;

  const request = { command, options };
  if (command !== 'demo') {
    if (lists.filename.length === 0) throw new UsageError("the following required arguments were not provided:\n  --filename <PATH>");
  }
  if (flags.output !== undefined) request.output = choice('output', flags.output, ['table', 'yaml', 'json'], false);
  if (command === 'explain') {
    if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}' found`);
    if (positionals.length === 1 && flags.pod !== undefined) {
      throw new UsageError("the argument '[PODGROUP]' cannot be used with '--pod <NAMESPACE/NAME>'");
    }
    if (positionals.length === 1) request.group = positionals[0];
    if (flags.pod !== undefined) request.pod = flags.pod;
  } else if (positionals.length > 0) {
    throw new UsageError(`unexpected argument '${positionals[0]}' found`);
  }
  let rulePath;
  if (command === 'taint') {
    const targets = ['device', 'node', 'rule'].filter((t) => flags[t] !== undefined);
    if (targets.length === 0) {
      throw new UsageError("the following required arguments were not provided:\n  <--device <DRIVER/POOL/DEVICE>|--node <NODE>|--rule <FILE>>");
    }
    if (targets.length > 1) throw new UsageError(`the argument '--${targets[0]}' cannot be used with '--${targets[1]}'`);
    if (flags.rule !== undefined) {
      for (const f of ['effect', 'key', 'value']) {
        if (flags[f] !== undefined) throw new UsageError(`the argument '--rule <FILE>' cannot be used with '--${f}'`);
      }
      rulePath = flags.rule;
    }
    const taint = { afterPlan: Boolean(flags['after-plan']) };
    if (flags.device !== undefined) taint.device = flags.device;
    if (flags.node !== undefined) taint.node = flags.node;
    if (flags.effect !== undefined) {
      taint.effect = choice('effect', flags.effect, ['NoExecute', 'NoSchedule', 'PreferNoSchedule', 'None'], true);
    }
    if (flags.key !== undefined) taint.key = flags.key;
    if (flags.value !== undefined) taint.value = flags.value;
    request.taint = taint;
  }
  if (command === 'demo' && flags.manifests) request.manifests = true;
  if (command === 'check' && flags.admission) request.admission = true;
  if (command === 'diff') {
    const missing = ['ours', 'theirs'].filter((l) => lists[l].length === 0);
    if (missing.length > 0) {
      const names = { ours: '--ours <PATH>', theirs: '--theirs <PATH>' };
      throw new UsageError(`the following required arguments were not provided:\n  ${missing.map((m) => names[m]).join('\n  ')}`);
    }
  }
  const extraPaths = {};
  for (const l of ['decisions', 'ours', 'theirs']) {
    if (lists[l].length > 0) extraPaths[l] = lists[l];
  }
  return { request, paths: lists.filename, rulePath, color, extraPaths };
}

class ReadFailure extends Error {}

function osMessage(e) {
  const byCode = {
    ENOENT: 'No such file or directory (os error 2)',
    EACCES: 'Permission denied (os error 13)',
    ENOTDIR: 'Not a directory (os error 20)',
    EISDIR: 'Is a directory (os error 21)',
  };
  return byCode[e.code] ?? e.message;
}

/** Compares paths as Rust's `PathBuf` does: component by component. */
function comparePaths(a, b) {
  const pa = a.split('/').filter((c) => c !== '' && c !== '.');
  const pb = b.split('/').filter((c) => c !== '' && c !== '.');
  for (let i = 0; i < Math.min(pa.length, pb.length); i += 1) {
    if (pa[i] !== pb[i]) return Buffer.compare(Buffer.from(pa[i]), Buffer.from(pb[i]));
  }
  return pa.length - pb.length;
}

function join(dir, name) {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

function walk(dir, out) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      walk(path, out);
    } else if (/\.(yaml|yml|json)$/.test(entry) && !/^\.(yaml|yml|json)$/.test(entry)) {
      out.push(path);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the paths as the native command does: `-` is stdin, a directory is read
 * recursively (sorted by path). A path that cannot be opened is an I/O failure (exit
 * 1); a file that is not UTF-8 is an input error of that file (exit 2).
 */
export function readInputs(paths) {
  for (const p of paths) {
    if (p === '-') continue;
    try {
      statSync(p);
    } catch (e) {
      throw new ReadFailure(`${p}: ${osMessage(e)}`);
    }
  }
  const files = [];
  const errors = [];
  for (const p of paths) {
    if (p === '-') {
      try {
        files.push({ name: '<stdin>', text: utf8.decode(readFileSync(0)) });
      } catch (e) {
        errors.push(`cannot read <stdin>: ${e.code ? osMessage(e) : 'stream did not contain valid UTF-8'}`);
      }
      continue;
    }
    let list = [p];
    if (statSync(p).isDirectory()) {
      list = [];
      try {
        walk(p, list);
      } catch (e) {
        errors.push(`cannot read ${p}: ${osMessage(e)}`);
      }
      list.sort(comparePaths);
    }
    for (const file of list) {
      try {
        files.push({ name: file, text: utf8.decode(readFileSync(file)) });
      } catch (e) {
        errors.push(`cannot read ${file}: ${e.code ? osMessage(e) : 'stream did not contain valid UTF-8'}`);
      }
    }
  }
  return { files, errors };
}

function paint(on, code, text) {
  return on ? `\x1b[${code}m${text}\x1b[0m` : text;
}

function colorFor(choice, stream) {
  const noColor = (process.env.NO_COLOR ?? '') !== '';
  if (choice === 'always') return true;
  if (choice === 'never') return false;
  return Boolean(stream.isTTY) && !noColor;
}

async function loadModule() {
  try {
    return await import('../pkg/node/index.js');
  } catch (e) {
    if (e.code === 'ERR_MODULE_NOT_FOUND') {
      process.stderr.write('error: the WebAssembly package is not built: run `bash scripts/wasm.sh`\n');
      process.exit(EXIT_FAILURE);
    }
    throw e;
  }
}

/** Runs one command line; resolves to the exit status. */
export async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`error: ${e.message}\n\nFor more information, try '--help'.\n`);
    return EXIT_INVALID;
  }
  if (parsed.help === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const gangpack = await loadModule();
  if (parsed.help === 'version') {
    process.stdout.write(`gangpack ${gangpack.version()}\n`);
    return 0;
  }
  const errStyle = colorFor(parsed.color, process.stderr);
  const error = (line) => process.stderr.write(`${paint(errStyle, '31', 'error:')} ${line}\n`);
  const { request } = parsed;
  request.options.color = colorFor(parsed.color, process.stdout);
  try {
    const input = readInputs(parsed.paths);
    if (input.errors.length > 0) {
      input.errors.forEach(error);
      return EXIT_INVALID;
    }
    request.files = input.files;
    if (parsed.rulePath !== undefined) {
      const rule = readInputs([parsed.rulePath]);
      if (rule.errors.length > 0) {
        rule.errors.forEach(error);
        return EXIT_INVALID;
      }
      request.taint.rule = rule.files;
    }
    for (const [list, paths] of Object.entries(parsed.extraPaths ?? {})) {
      const read = readInputs(paths);
      if (read.errors.length > 0) {
        read.errors.forEach(error);
        return EXIT_INVALID;
      }
      request[list] = read.files;
    }
  } catch (e) {
    if (!(e instanceof ReadFailure)) throw e;
    error(e.message);
    return EXIT_FAILURE;
  }
  const run = gangpack.runCli(request);
  for (const w of run.warnings) process.stderr.write(`${paint(errStyle, '33', 'warning:')} ${w}\n`);
  run.errors.forEach(error);
  if (run.errors.length === 0) {
    try {
      process.stdout.write(run.stdout);
    } catch (e) {
      if (e.code !== 'EPIPE') {
        error(`cannot write output: ${e.message}`);
        return EXIT_FAILURE;
      }
    }
  }
  return run.code;
}

process.stdout.on('error', (e) => {
  if (e.code !== 'EPIPE') throw e;
});

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('gangpack.mjs')) {
  process.exitCode = await main(process.argv.slice(2));
}
