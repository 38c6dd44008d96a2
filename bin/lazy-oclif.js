// An esbuild plugin for bin/bundle.js: @oclif/core's modules (CommonJS) require every module they
// name when they load — its index the help, the plugin loader, the parser, ejs, semver; the
// Command class the whole Config — so importing Command and Flags evaluated nearly all of the
// framework, about a third of a command's start-up (docs/dependencies.md "Start-up of the built
// CLI"). Here each top-level `const x = require("…")` of @oclif/core/lib (also wrapped in
// __importDefault/__importStar) and each `exports.X = __importStar(require("…"))` of its index
// becomes a deferred require: the module is evaluated on the first property read, so a command
// run evaluates what it uses and help, plugins and templates load only when they are needed.
// The code itself is unchanged; test/built-cli.test.ts compares the output with the sources'.
import { readFile } from 'node:fs/promises';

const LIB = /[\\/]node_modules[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/;
const REQUIRE = String.raw`(?:__importDefault\(|__importStar\()?require\((?<q>"|')[^"']+\k<q>\)\)?`;
const BINDING = new RegExp(String.raw`^( *)(const|var) (\w+) = (${REQUIRE});$`, 'gm');
const EXPORT = new RegExp(String.raw`^exports\.(\w+) = (${REQUIRE});$`, 'gm');

// A stand-in for a module's exports that requires the module on first use. Its target is a bound
// function — callable and constructible, with no own `prototype` — so that a module exporting a
// function or class stays callable and constructible.
export const LAZY_HELPER = [
  'function __agentscmLazy(load) {',
  '  let m; const get = () => (m ??= load());',
  '  return new Proxy(function () {}.bind(null), {',
  '    get: (_, k) => get()[k], set: (_, k, v) => { get()[k] = v; return true; }, has: (_, k) => k in get(),',
  '    apply: (_, t, a) => Reflect.apply(get(), t, a), construct: (_, a) => Reflect.construct(get(), a),',
  '    ownKeys: () => [...new Set([...Reflect.ownKeys(get()), "length", "name"])],',
  '    getOwnPropertyDescriptor: (_, k) => {',
  '      const d = Reflect.getOwnPropertyDescriptor(get(), k);',
  '      return d === undefined ? undefined : { ...d, configurable: true };',
  '    },',
  '  });',
  '}',
].join('\n');

export const lazyOclif = {
  name: 'lazy-oclif',
  setup(b) {
    b.onLoad({ filter: LIB }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      let changed = false;
      const contents = source
        .replace(BINDING, (_, indent, kind, name, rhs) => {
          changed = true;
          return `${indent}${kind} ${name} = __agentscmLazy(() => ${rhs});`;
        })
        .replace(EXPORT, (_, name, rhs) => {
          changed = true;
          return (
            `Object.defineProperty(exports, "${name}", { enumerable: true, configurable: true, ` +
            `get: ((m) => () => (m ??= ${rhs}))(undefined) });`
          );
        });
      return { contents: changed ? `${contents}\n${LAZY_HELPER}\n` : source, loader: 'js' };
    });
  },
};
