/**
 * Which grammar parses a code file. Kept apart from the parser (no imports but leaves: the one that lists the code
 * file types and interpreters): discovery, conversion and the CLI can ask without loading web-tree-sitter, which a
 * conversion worker loads on the first code file of a run.
 */
import { CODE_LANGUAGES, type CodeLanguage, INTERPRETERS } from "../file-types.ts";
import { own } from "../own.ts";

export type { CodeLanguage };

/**
 * The grammar for a file, by extension; for a file without one, by the interpreter its `#!` line names (`head`: its
 * first bytes, when the caller has them); null for anything else (the text chunker handles it).
 */
export function languageOf(path: string, head?: Uint8Array): CodeLanguage | null {
  const dot = path.lastIndexOf(".");
  const type = dot < 0 || dot < path.lastIndexOf("/") ? "" : path.slice(dot + 1).toLowerCase();
  if (type === "") return head ? scriptLanguage(head) : null;
  return own(CODE_LANGUAGES, type) ?? null;
}

/**
 * How much of a file without an extension says what it is: its `#!` line, which Linux reads up to 255 bytes of.
 * Discovery reads no more of such a file.
 */
export const SHEBANG_BYTES = 256;

/**
 * The language of a script by its `#!` line: `#!/bin/sh`, `#!/usr/bin/env python3`, `#!/usr/bin/env -S node
 * --flag` (env's options and `NAME=value` settings are passed over). Null when the first line is no `#!` line, names
 * no interpreter of INTERPRETERS, or runs past SHEBANG_BYTES (a cut name could read as another).
 */
export function scriptLanguage(head: Uint8Array): CodeLanguage | null {
  const bytes = head.subarray(0, SHEBANG_BYTES);
  if (bytes[0] !== 0x23 || bytes[1] !== 0x21) return null; // "#!"
  const text = new TextDecoder().decode(bytes);
  const end = text.search(/[\r\n]/);
  if (end < 0 && head.length >= SHEBANG_BYTES) return null;
  const words = text
    .slice(2, end < 0 ? undefined : end)
    .trim()
    .split(/[ \t]+/);
  const programOf = (word: string) => word.slice(word.lastIndexOf("/") + 1);
  let program = programOf(words[0] ?? "");
  if (program === "env") program = programOf(envCommand(words.slice(1)));
  return own(INTERPRETERS, program.replace(/[\d.]+$/, "")) ?? null;
}

/** env's options that take the next word as their argument (GNU's and BSD's): not the command. */
const ENV_ARGUMENT_OPTIONS = new Set(["-u", "--unset", "-C", "--chdir", "-P"]);

/**
 * The command `env` runs, from the words after it: options and `NAME=value` settings passed over, an option's
 * argument with it, and `-S`'s string (`-Snode`, `--split-string="python3 -u"`) read as the words it holds.
 */
function envCommand(words: string[]): string {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const split = /^(?:-S|--split-string=)["']?(.+)$/.exec(word);
    if (split) return envCommand(split[1]!.split(/[ \t]+/));
    if (ENV_ARGUMENT_OPTIONS.has(word)) i++;
    else if (!word.startsWith("-") && !word.includes("=")) return word;
  }
  return "";
}

/**
 * The version of how code-outline.ts cuts a file into sections. An index records it with its chunking settings, so a
 * release that cuts code differently (version 2: Go and Java package clauses name their fragment) re-chunks the code
 * files of an index on its next run, as a new chunk.code_tokens does. (Version 3: JavaScript's assigned functions,
 * `exports.parse = function …`, are named. Version 4: the last lines of a split unit no longer start the next unit's
 * fragment. Version 5: TypeScript's ambient declarations are named: `declare function`, overload signatures, `declare
 * const`, `declare namespace`, `declare module`, and a top-level `namespace`. Version 6: a small function after a split
 * one is a fragment of its own. Version 7: a tiny piece left by a split joins its neighbour even past the budget, by
 * its own size. Version 8: a unit nested more than 64 containers deep is cut at line boundaries (deeper nesting failed
 * the file), a symbol path over 12 headings deep keeps its ends, and a file whose lines end in a lone CR goes to the
 * text chunker. Version 9: a doc comment joins the unit below it across blank lines. Version 10: C prototypes are
 * named, and so are the definitions in a top-level include guard, `#ifdef`, `extern "C"`, or Python `if`/`try`. Version
 * 11: a JavaScript or TypeScript value made by a call given a function, or an object with methods, is named: `const
 * Button = forwardRef(…)`, `Parser.prototype = { feed() {…} }`. Version 12: not inside a function's body, where such a
 * value is a local. Version 13: each fragment records the unit it is part of. Version 14: C prototypes a portability
 * macro wraps (`BZ_API(name)(…)`, `name OF((…))`) are named by the name, not the macro. Version 15: a module wrapper
 * (an IIFE, a UMD or AMD factory) is the module's scope, not a function's body. Version 16: the parts of a loop, `if`
 * or docstring split inside a function are parts of the function's unit. Version 17: `(function () { … }).call(this)`
 * is a module wrapper too. Version 18: an import inside a function is no `imports` unit. Version 19: so is `(function
 * () { … }).bind(this)()`. Version 20: an object of functions is headed by its declaration's own keyword, `var out`,
 * not `const out`. Version 21: `__init__.py`, `index.ts` and `mod.rs` are titled by their folder, `json › def loads`.
 * Version 22: a module's `const`/`let`/`var` is named whatever its value (`export const Schema = z.object(…)`), `const
 * fs = require("fs")` is an import, and a split unit's lone closing line joins the part before it even when that part
 * is past the budget. Version 23: each fragment records every unit it defines, past the four its heading shows and a
 * whole class's members, for the exact-name rule; a C or C++ declaration in a function's body (`std::string
 * buffer(input);`) is a local, no unit; a `.h` header that includes a C++ standard header or writes a qualified name
 * (`Napi::Value`) is C++. Version 24: an object literal's methods (`Parser.prototype = { feed: function … }`) are
 * units; a TypeScript method's overload signatures, and the comments above and between them, are the method's; a
 * definition over the budget only with its doc comment is cut between the two; what a conditional in a function's body
 * defines is defined by the function's fragment. Version 25: in C and C++, comments right below a declaration with a
 * blank line after them are its documentation (zlib.h's style). Version 26: a K&R prototype the grammar broke inside
 * its `OF((…))` parameters is named, its lines one unit. Version 27: a TypeScript or JavaScript class field holding a
 * function (`static fromText = (…) => {…}`) is a method, and so is `X.prototype.y = (function () { … return function …
 * })()`; a Python module's assignment to a name (`DEFAULTSECT = "DEFAULT"`) is a unit named by it; a unit up to an
 * eighth past the budget only with its doc comment is cut between the two too, unless its split between statements
 * joins up whole. Version 28: a split function's first part, which holds its signature, is headed by the function,
 * not by a nested def it holds.)
 */
export const CODE_OUTLINE_VERSION = 28;
