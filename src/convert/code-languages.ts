/**
 * Which grammar parses a code file. Kept apart from the parser (no imports but the leaf that lists the code file
 * types): discovery, conversion and the CLI can ask without loading web-tree-sitter, which a conversion worker loads on
 * the first code file of a run.
 */
import { CODE_LANGUAGES, type CodeLanguage } from "../file-types.ts";

export type { CodeLanguage };

/** The grammar for a file, by extension; null for anything else (the text chunker handles it). */
export function languageOf(path: string): CodeLanguage | null {
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return null;
  return Object.hasOwn(CODE_LANGUAGES, path.slice(dot + 1).toLowerCase()) ? CODE_LANGUAGES[path.slice(dot + 1).toLowerCase()]! : null;
}

/**
 * The version of how code-outline.ts cuts a file into sections. An index records it with its chunking settings, so a
 * release that cuts code differently (version 2: Go and Java package clauses name their fragment) re-chunks the code
 * files of an index on its next run, as a new chunk.code_tokens does. (Version 3: JavaScript's assigned functions,
 * `exports.parse = function …`, are named. Version 4: the last lines of a split unit no longer start the next unit's
 * fragment. Version 5: TypeScript's ambient declarations are named: `declare function`, overload signatures,
 * `declare const`, `declare namespace`, `declare module`, and a top-level `namespace`. Version 6: a small function after
 * a split one is a fragment of its own. Version 7: a tiny piece left by a split joins its neighbour even past the
 * budget, by its own size. Version 8: a unit nested more than 64 containers deep is cut at line boundaries (deeper
 * nesting failed the file), a symbol path over 12 headings deep keeps its ends, and a file whose lines end in a lone
 * CR goes to the text chunker. Version 9: a doc comment joins the unit below it across blank lines. Version 10: C
 * prototypes are named, and so are the definitions in a top-level include guard, `#ifdef`, `extern "C"`, or Python
 * `if`/`try`. Version 11: a JavaScript or TypeScript value made by a call given a function, or an object with
 * methods, is named: `const Button = forwardRef(…)`, `Parser.prototype = { feed() {…} }`. Version 12: not inside a
 * function's body, where such a value is a local. Version 13: each fragment records the unit it is part of. Version
 * 14: C prototypes a portability macro wraps (`BZ_API(name)(…)`, `name OF((…))`) are named by the name, not the macro.
 * Version 15: a module wrapper (an IIFE, a UMD or AMD factory) is the module's scope, not a function's body. Version
 * 16: the parts of a loop, `if` or docstring split inside a function are parts of the function's unit. Version 17:
 * `(function () { … }).call(this)` is a module wrapper too. Version 18: an import inside a function is no `imports`
 * unit. Version 19: so is `(function () { … }).bind(this)()`. Version 20: an object of functions is headed by its
 * declaration's own keyword, `var out`, not `const out`.)
 */
export const CODE_OUTLINE_VERSION = 20;
