import { describe, expect, test } from "bun:test";
import { languageOf, type CodeLanguage } from "../src/convert/code-languages.ts";
import type { Fragment } from "../src/store/store.ts";
import { chunkDocument } from "../src/index/chunk.ts";
import { S } from "./code-samples.ts";
import { chunkCode } from "./helpers.ts";

const outline = (fragments: Fragment[] | null) => fragments!.map((f) => `${f.startLine}-${f.endLine} ${f.headings.join(" › ")}`.trim());

/** Every fragment is whole lines of the file; every non-blank line is in exactly one fragment. */
function checkCoverage(source: string, fragments: Fragment[]) {
  const lines = source.split("\n");
  const seen = new Array(lines.length).fill(0);
  for (const f of fragments) {
    expect(f.text).toBe(lines.slice(f.startLine - 1, f.endLine).join("\n"));
    for (let l = f.startLine; l <= f.endLine; l++) seen[l - 1]++;
  }
  lines.forEach((line, i) => {
    expect(line.trim() === "" ? seen[i] <= 1 : seen[i] === 1).toBe(true);
  });
}

// Small budget and no packing: the outline shows each unit as the chunker sees it.
const small = { maxTokens: 40, packBelow: 0 };
const EXPECTED: Record<CodeLanguage, string[]> = {
  typescript: [
    "1-1 imports",
    "2-2 imports",
    "4-6 class Parser",
    "8-11 class Parser › feed()",
    "13-17 class Parser › size()",
    "19-19 function parseHeader",
    "21-21 interface Options",
  ],
  go: ["1-4 package main, imports", "5-9 type Server", "10-15 func (*Server) Start", "16-19 func main"],
  rust: ["1-5 imports, struct Point", "7-11 impl fmt::Display for Point", "13-15 fn main"],
  java: ["1-3 package demo, imports", "5-7 class Stack", "9-13 class Stack › push()", "15-16 class Stack › Stack()"],
  c: ["1-1 imports", "3-6 add()", "8-8 struct point", "10-13 main()"],
  cpp: ["1-1 imports", "3-13 namespace geo"],
  c_sharp: [
    "1-1 imports",
    "3-5 namespace Demo › class Greeter",
    "6-6 namespace Demo › class Greeter › Name",
    "8-13 namespace Demo › class Greeter › Greet()",
  ],
  ruby: ["1-12 class Greeter", "14-16 module Util"],
  php: ["1-2 namespace App", "4-11 imports, class Greeter", "13-15 function helper"],
  bash: ["1-2", "4-7 function usage", "9-13 function main"],
  javascript: ["1-1 imports", "3-6 function readIt", "8-10 class Cache", "12-12"],
  python: [
    "1-2 imports",
    "4-5 LIMIT",
    "8-10 class Parser",
    "12-14 class Parser › def feed",
    "16-17 class Parser › def close",
    "20-21 def parse_header",
  ],
  tsx: [],
};

describe("chunkCode per language", () => {
  for (const [language, expected] of Object.entries(EXPECTED)) {
    if (!S[language]) continue;
    test(language, async () => {
      const fragments = await chunkCode(S[language]!, language as CodeLanguage, small);
      expect(outline(fragments)).toEqual(expected);
      checkCoverage(S[language]!, fragments!);
    });
  }

  test("a value made by a call given a function, or an object with methods, is named; so is a module's data (s14 user #3, s24 code C7)", async () => {
    const body = (n: number) => `    const value = input + ${n};\n    return value * 2 + input.length;\n`;
    const source = [
      `export const Button = React.forwardRef((props, ref) => {\n${body(1)}});`,
      `export const $ZodURL = core.$constructor("$ZodURL", (inst, def) => {\n${body(2)}});`,
      `const store = {\n  add(input) {\n${body(3)}  },\n};`,
      `TurndownService.prototype = {\n  escape: function (input) {\n${body(4)}  },\n};`,
      `const LIMITS = { max: 10, min: 1, step: 2, names: ["a", "b", "c"], flags: [true, false, true] };`,
      `const total = compute(LIMITS.max, LIMITS.min, LIMITS.step, "a label that makes the line long");`,
    ].join("\n\n");
    const headings = (await chunkCode(source, "typescript", small))!.map((f) => f.headings.join(" › "));
    expect(headings).toEqual(["const Button", "const $ZodURL", "const store", "TurndownService.prototype", "const LIMITS", "const total"]);
  });

  test("a module's binding is named whatever its value; a local, a loop's variable and a destructuring are not (s24 code C7)", async () => {
    const source = [
      `export const CallToolRequestSchema = RequestSchema.extend({ method: z.literal("tools/call"), params: Params });`,
      `const fs = require("fs"), { join } = require("path");`,
      `const { a, b } = settings;`,
      `for (const entry of entries) {\n  const doubled = entry.value * 2 + entry.offset - entry.base;\n}`,
      `function run(input) {\n  const result = compute(input.first, input.second, input.third);\n  return result;\n}`,
      `(function () {\n  var VERSION = "1.2.3" + suffix + "-" + build + "-" + channel + "-" + platform;\n  var NAME = "library" + suffix + "-" + build + "-" + channel + "-" + platform;\n})();`,
    ].join("\n\n");
    const headings = (await chunkCode(source, "typescript", small))!.map((f) => f.headings.join(" › "));
    // (The destructuring and the loop, both unnamed and small, share a fragment.)
    expect(headings).toEqual(["const CallToolRequestSchema", "imports", "", "function run", "var VERSION", "var NAME"]);
  });

  test("an object of functions is headed by its declaration's own keyword: `var out`, `let handlers`, not `const` (s22 agent #2)", async () => {
    // jszip's lib/object.js (the prototype of JSZip, trimmed) and a `let` of handlers: grepping the heading must find
    // the line.
    const source = [
      "'use strict';",
      "// return the actual prototype of JSZip",
      "var out = {",
      "    /**",
      "     * @see loadAsync",
      "     */",
      "    load: function() {",
      '        throw new Error("This method has been removed in JSZip 3.0, please check the upgrade guide.");',
      "    },",
      "    file: function(name, data, o) {",
      "        if (arguments.length === 1) {",
      "            return this.filter(function(relativePath, file) {",
      "                return !file.dir && relativePath === name;",
      "            })[0] || null;",
      "        }",
      "        return this;",
      "    },",
      "};",
      "module.exports = out;",
      "",
      "let handlers = {",
      "    open(event) {",
      "        return event.target.value + this.offset;",
      "    },",
      "};",
      "export var hooks = { before() { return 1; } };",
    ].join("\n");
    const headings = (await chunkCode(source, "javascript", small))!.map((f) => f.headings.join(" › "));
    // (A long one splits at its methods, each under it: s25 code user C15.)
    expect(new Set(headings.filter(Boolean))).toEqual(
      new Set(["var out", "var out › load()", "var out › file()", "let handlers", "var hooks"]),
    );
  });

  test("inside a function, a local made by a call given a function is not a unit: the function's parts keep its heading (s15 agent #1)", async () => {
    const lines = (p: string) => Array.from({ length: 12 }, (_, i) => `    const ${p}${i} = input.length + ${i} * 2 + offset;`).join("\n");
    const source = [
      "class Range {",
      "  parseRange(input) {",
      lines("a"),
      '    const rangeList = input.split("||").map((range) => {',
      "      return range.trim() + offset;",
      "    });",
      lines("b"),
      "    const comparators = rangeList.map((comp) => new Comparator(comp, this.options));",
      "    Range.cache = memo((key) => comparators[key]);",
      lines("c"),
      "    return comparators;",
      "  }",
      "}",
    ].join("\n");
    const fragments = (await chunkCode(source, "javascript", { maxTokens: 120, packBelow: 0 }))!;
    expect(fragments.length).toBeGreaterThan(2);
    expect(new Set(fragments.map((f) => f.headings.join(" › ")))).toEqual(new Set(["class Range › parseRange()"]));
    checkCoverage(source, fragments);
  });

  test("a module wrapper (an IIFE, a UMD or AMD factory) is the module's scope, not a function body: its definitions are units (s16 review #4)", async () => {
    const methods = ["feed", "flush"]
      .map(
        (m) =>
          `    ${m}: function (chunk) {\n${Array.from({ length: 12 }, (_, i) => `      var ${m}${i} = this.buffer.length + ${i};`).join("\n")}\n      return this;\n    }`,
      )
      .join(",\n");
    const definitions = `  function Parser(options) {\n    this.buffer = [];\n  }\n  Parser.prototype = {\n${methods}\n  };\n  return Parser;`;
    const wrapped = {
      umd: `(function (root, factory) {\n  root.Parser = factory();\n})(this, function () {\n${definitions}\n});`,
      iife: `var Parser = (function () {\n${definitions}\n})();`,
      amd: `define(["exports"], function (exports) {\n${definitions}\n});`,
      // CoffeeScript's wrapper, and underscore's (s17 review #6).
      callThis: `(function () {\n${definitions}\n}).call(this);`,
      applyThis: `(function () {\n${definitions}\n}).apply(this, arguments);`,
      bindThis: `(function () {\n${definitions}\n}).bind(this)();`,
    };
    for (const [wrapper, source] of Object.entries(wrapped)) {
      const fragments = (await chunkCode(source, "javascript", { maxTokens: 120, packBelow: 0 }))!;
      // Counted as a function body, the prototype's fragments had no heading and no section.
      const methodParts = fragments.filter((f) => f.text.includes("this.buffer.length +"));
      expect(methodParts.length).toBeGreaterThan(1);
      // (The iife's `var Parser = (function () {…})()` heads them too, a module's binding: s24 code user C7.)
      expect({ wrapper, headings: new Set(methodParts.map((f) => f.headings.slice(-2).join(" › "))) }).toEqual({
        wrapper,
        headings: new Set(["Parser.prototype › feed()", "Parser.prototype › flush()"]), // its methods: s25 code user C15
      });
      checkCoverage(source, fragments);
    }
  });

  test("C prototypes a portability macro wraps are named by their name, not the macro (s15 agent #2: zlib, bzip2)", async () => {
    const source = [
      "/* The application can compare zlibVersion and ZLIB_VERSION for consistency. */",
      "ZEXTERN const char * ZEXPORT zlibVersion OF((void));",
      "/* deflate compresses as much data as possible. */",
      "ZEXTERN int ZEXPORT deflate OF((z_streamp strm, int flush));",
      "/* Prepare for bzip2 compression. */",
      "BZ_EXTERN int BZ_API(BZ2_bzCompressInit) (",
      "      bz_stream* strm,",
      "      int        blockSize100k",
      "   );",
      "size_t MAXLEN(void);",
    ].join("\n");
    const headings = (await chunkCode(source, "c", { maxTokens: 20, packBelow: 0 }))!.map((f) => f.headings.join(" › "));
    expect(new Set(headings)).toEqual(new Set(["zlibVersion()", "deflate()", "BZ2_bzCompressInit()", "MAXLEN()"]));
  });

  test("JavaScript's assigned functions are named: CommonJS exports, methods set on an object or a prototype", async () => {
    const body = (n: number) => `  const value = input + ${n};\n  return value * 2 + input.length;\n`;
    const source = [
      `exports.parse = function (input) {\n${body(1)}};`,
      `res.send = function send(input) {\n${body(2)}};`,
      `Parser.prototype.feed = (input) => {\n${body(3)}};`,
      `module.exports.count = 3;`,
    ].join("\n\n");
    const headings = (await chunkCode(source, "javascript", small))!.map((f) => f.headings.join(" › "));
    expect(headings).toEqual(["function exports.parse", "function res.send", "function Parser.prototype.feed", ""]);
  });

  test("a class field holding a function is a method: named, split at and defined as one (s27 code F1)", async () => {
    // pdf-lib's PDFHexString: `fromText` (used 49 times in pdf-lib) found the class 11th, the heading naming no field.
    const pdfLib = [
      "class PDFHexString extends PDFObject {",
      "  static of = (value: string) => new PDFHexString(value);",
      "",
      "  static fromText = (value: string) => {",
      "    const encoded = utf16Encode(value);",
      "",
      "    let hex = '';",
      "    for (let idx = 0, len = encoded.length; idx < len; idx++) {",
      "      hex += toHexStringOfMinLength(encoded[idx], 4);",
      "    }",
      "",
      "    return new PDFHexString(hex);",
      "  };",
      "",
      "  private readonly value: string;",
      "",
      "  constructor(value: string) {",
      "    super();",
      "    this.value = value;",
      "  }",
      "}",
    ].join("\n");
    const split = (await chunkCode(pdfLib, "typescript", small))!;
    // (fromText() is past this small budget: split between its statements, each part under its name.)
    expect(outline(split)).toEqual([
      "1-1 class PDFHexString",
      "2-2 class PDFHexString › of()",
      "4-7 class PDFHexString › fromText()",
      "8-13 class PDFHexString › fromText()",
      "15-15 class PDFHexString",
      "17-21 class PDFHexString › constructor()",
    ]);
    checkCoverage(pdfLib, split);
    const [whole] = (await chunkCode(pdfLib, "typescript", { maxTokens: 400 }))!;
    expect(whole!.defines).toEqual(["class PDFHexString", "of()", "fromText()", "constructor()"]);
    // Plain JavaScript's fields (`field_definition`), a private one too; a field holding data is no method.
    const store = [
      "class Store {",
      "  #items = new Map();",
      "  static create = () => new Store();",
      "  handleChange = async (event) => {",
      "    this.#items.set(event.key, event.value);",
      "  };",
      "  #notify = function (key) {",
      "    return this.listeners.get(key);",
      "  };",
      "  get(key) {",
      "    return this.#items.get(key);",
      "  }",
      "}",
    ].join("\n");
    const [js] = (await chunkCode(store, "javascript", { maxTokens: 400 }))!;
    expect(js!.defines).toEqual(["class Store", "create()", "handleChange()", "#notify()", "get()"]);
  });

  test("a prototype method an immediately-invoked function makes is named as the plain form is (s27 code F1)", async () => {
    // protobufjs's reader.js: the reader's main method was unnamed, in a fragment headed by the two after it.
    const source = [
      "/**",
      " * Reads a varint as an unsigned 32 bit value.",
      " * @function",
      " * @returns {number} Value read",
      " */",
      "Reader.prototype.uint32 = (function read_uint32_setup() {",
      "    var value = 4294967295; // optimizer type-hint, tends to deopt otherwise (?!)",
      "    return function read_uint32() {",
      "        value = (         this.buf[this.pos] & 127       ) >>> 0; if (this.buf[this.pos++] < 128) return value;",
      "        value = (value | (this.buf[this.pos] & 127) <<  7) >>> 0; if (this.buf[this.pos++] < 128) return value;",
      "        return value;",
      "    };",
      "})();",
      "",
      "/**",
      " * Reads a varint as a signed 32 bit value.",
      " * @returns {number} Value read",
      " */",
      "Reader.prototype.int32 = function read_int32() {",
      "    return this.uint32() | 0;",
      "};",
      "",
      "Reader.prototype.cache = (function () { return cache; })();",
    ].join("\n");
    // (A function returned by a call is no function returning one: `cache` is data, a line that joins the fragment
    // before it, which defines no `cache`.)
    const fragments = (await chunkCode(source, "javascript", { maxTokens: 200, packBelow: 0 }))!;
    expect(fragments.map((f) => [outline([f])[0], f.defines])).toEqual([
      ["1-13 function Reader.prototype.uint32", ["function Reader.prototype.uint32"]],
      ["15-23 function Reader.prototype.int32", ["function Reader.prototype.int32"]],
    ]);
    // Split, its parts are its own: the setup function's `var value` is the method's state, no module binding.
    const split = (await chunkCode(source, "javascript", small))!;
    const parts = split.filter((f) => f.endLine <= 13);
    expect(parts.length).toBeGreaterThan(1);
    expect(new Set(parts.map((f) => f.headings.join(" › ")))).toEqual(new Set(["function Reader.prototype.uint32"]));
    checkCoverage(source, split);
  });

  test("an object literal's methods are units: a long prototype object splits at them, each named (s25 code user C15)", async () => {
    // turndown's `TurndownService.prototype = { turndown: function …, addRule: function … }` was one unit headed by
    // the prototype alone: `addRule` had no definition anywhere.
    const body = (n: number) => `    const value = input + ${n};\n    return value * 2 + input.length;\n`;
    const source = `Service.prototype = {\n  turndown: function (input) {\n${body(1)}  },\n  addRule: function (key, rule) {\n${body(2)}  },\n  "keep": (input) => {\n${body(3)}  },\n  limit: 3,\n};\n`;
    const split = (await chunkCode(source, "javascript", { maxTokens: 60, packBelow: 0 }))!;
    expect(split.map((f) => f.headings.join(" › "))).toEqual([
      "Service.prototype › turndown()",
      "Service.prototype › addRule()",
      "Service.prototype › keep()",
    ]);
    checkCoverage(source, split);
    // Whole, it is headed by the prototype, and defines its methods (the exact-name rule counts them).
    const [whole] = (await chunkCode(source, "javascript", { maxTokens: 400 }))!;
    expect([whole!.headings, whole!.defines]).toEqual([["Service.prototype"], ["Service.prototype", "turndown()", "addRule()", "keep()"]]);
  });

  test("a Python module's assignment to a name is a unit named by it, as a JS module's binding is (s27 code F6)", async () => {
    // argparse's and configparser's constants sat unnamed in whatever fragment packed them: `OPTIONAL`, `DEFAULTSECT`
    // found the functions that use them first.
    const source = [
      "__all__ = ['Parser']",
      "SUPPRESS = '==SUPPRESS=='",
      "",
      "OPTIONAL = '?'",
      "ZERO_OR_MORE = '*'",
      "_UNRECOGNIZED_ARGS_ATTR = '_unrecognized_args'",
      "",
      "_default_dict = dict",
      'DEFAULTSECT = "DEFAULT"',
      "",
      "# The depth of nested interpolations",
      "MAX_INTERPOLATION_DEPTH: int = 10",
      "first = second = None",
      "a, b = 1, 2",
      "COUNTS['x'] = 3",
      "",
      "class Parser:",
      "    limit = 10",
      "",
      "    def feed(self, data):",
      "        total = len(data)",
      "        return total",
    ].join("\n");
    // (A tuple, an item set and `__all__` name nothing of their own; a class's attribute and a function's local are
    // theirs.)
    const [whole] = (await chunkCode(source, "python", { maxTokens: 400 }))!;
    expect([whole!.headings, whole!.defines]).toEqual([
      // (Past four, the heading shows classes and functions before bindings.)
      ["SUPPRESS, OPTIONAL, ZERO_OR_MORE, class Parser, …"],
      [
        "SUPPRESS",
        "OPTIONAL",
        "ZERO_OR_MORE",
        "_UNRECOGNIZED_ARGS_ATTR",
        "_default_dict",
        "DEFAULTSECT",
        "MAX_INTERPOLATION_DEPTH",
        "first, second",
        "class Parser",
        "def feed",
      ],
    ]);
    expect(outline(await chunkCode(source, "python", { maxTokens: 20, packBelow: 0 }))).toEqual([
      "1-1",
      "2-2 SUPPRESS",
      "4-4 OPTIONAL",
      "5-5 ZERO_OR_MORE",
      "6-6 _UNRECOGNIZED_ARGS_ATTR",
      "8-8 _default_dict",
      "9-9 DEFAULTSECT",
      "11-12 MAX_INTERPOLATION_DEPTH",
      "13-13 first, second",
      "14-15",
      "17-18 class Parser",
      "20-22 class Parser › def feed",
    ]);
  });

  test("a method's overload signatures and the comments above and between them are the method's (s25 code user C18)", async () => {
    // ajv's `validate` overloads went to the method before them; validate()'s fragment held its body alone.
    const source = [
      "class Ajv {",
      "  defaultMeta(): string {",
      "    return this.opts.defaultMeta ?? META_SCHEMA_ID;",
      "  }",
      "",
      "  // Validate data using schema",
      "  validate(schema: Schema | string, data: unknown): boolean",
      "  // eslint-disable-next-line @typescript-eslint/unified-signatures",
      "  validate<T>(schema: JTDSchemaType<T>, data: unknown): data is T",
      "  validate<T>(schemaKeyRef: AnySchema | string, data: unknown): boolean | Promise<T> {",
      "    return this.compile(schemaKeyRef)(data);",
      "  }",
      "}",
    ].join("\n");
    const fragments = (await chunkCode(source, "typescript", { maxTokens: 100, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual(["1-4 class Ajv › defaultMeta()", "6-13 class Ajv › validate()"]);
    checkCoverage(source, fragments);
  });

  test("TypeScript's ambient declarations and overload signatures are named; a long `declare namespace` splits at its members", async () => {
    // What a .d.ts is made of: it was one fragment with no heading, and valibot's `email` overloads were headed by
    // the interface after them.
    const source = [
      "/** Validates an email address. */",
      "export declare function email(message?: string): EmailAction<string, string | undefined>;",
      "",
      "/** Parses an input with a schema, or throws. */",
      "export function parse(schema: StringSchema, input: unknown): string;",
      "export function parse(schema: NumberSchema, input: unknown): number;",
      "",
      "export declare const EMAIL_REGEX: RegExp;",
      "",
      "declare namespace Validators {",
      "  /** Whether the input is an email address. */",
      "  function isEmail(input: string, options?: EmailOptions): boolean;",
      "  /** Whether the input is a URL with one of the given protocols. */",
      "  function isUrl(input: string, protocols?: readonly string[]): boolean;",
      "  const version: string;",
      "}",
    ].join("\n");
    const fragments = (await chunkCode(source, "typescript", small))!;
    expect(outline(fragments)).toEqual([
      "1-2 function email",
      "4-4 function parse", // one unit with both overloads: cut between its doc and its code (s25 code user C16, C18)
      "5-6 function parse",
      "8-8 const EMAIL_REGEX",
      "10-10 namespace Validators",
      "11-12 namespace Validators › function isEmail",
      "13-14 namespace Validators › function isUrl",
      "15-16 namespace Validators",
    ]);
    checkCoverage(source, fragments);
    const packed = await chunkCode(source, "typescript", { maxTokens: 512 });
    expect(outline(packed)).toEqual(["1-16 function email, function parse, const EMAIL_REGEX, namespace Validators"]);
  });

  test("tsx parses JSX", async () => {
    const source = `import React from "react";\n\n/** A button. */\nexport function Button({ label }: { label: string }) {\n  return <button className="b">{label}</button>;\n}\n`;
    expect(outline(await chunkCode(source, "tsx", small))).toEqual(["1-1 imports", "3-6 function Button"]);
  });

  test("a C++ class splits into its methods, with template and qualified names", async () => {
    const source = `template <typename T>\nclass Box {\npublic:\n  T get() const {\n    return value_ + offset_ + other_ + more_;\n  }\n  void set(T v) {\n    value_ = v; offset_ = 0; other_ = 1; more_ = 2;\n  }\nprivate:\n  T value_;\n};\n`;
    const fragments = await chunkCode(source, "cpp", { maxTokens: 30, packBelow: 0 });
    expect(outline(fragments)).toEqual(["1-3 class Box", "4-6 class Box › get()", "7-9 class Box › set()", "10-12 class Box"]);
    checkCoverage(source, fragments!);
  });

  test("a C++ local made by a constructor (`std::lock_guard<std::mutex> lock(mu_);`) is no nested function (s25 code user C13)", async () => {
    const steps = Array.from({ length: 60 }, (_, i) => `    total += compute_step_${i}(input, ${i}) * weight_${i};`).join("\n");
    const run = `  int Run(const std::string& input) {\n    std::lock_guard<std::mutex> lock(mu_);\n    std::string buffer(input);\n    int total = 0;\n${steps}\n    return total;\n  }\n`;
    const source = `#include <mutex>\n#include <string>\n\nnamespace demo {\n\nclass Worker {\n public:\n${run}\n private:\n  std::mutex mu_;\n};\n\n}  // namespace demo\n`;
    const split = (await chunkCode(source, "cpp", { maxTokens: 512 }))!;
    expect(split.slice(1).map((f) => f.headings.join(" › "))).toEqual(
      Array(split.length - 1).fill("namespace demo › class Worker › Run()"),
    );
    checkCoverage(source, split);
    // Whole, the function defines itself, not its locals.
    const whole = (await chunkCode(source.replace(steps, "    total += 1;"), "cpp", { maxTokens: 512 }))!;
    expect(whole.map((f) => f.defines)).toEqual([["imports", "namespace demo", "class Worker", "Run()"]]);
  });
});

describe("chunkCode shapes", () => {
  test("small neighbours pack into one fragment at the default budget; headings list them", async () => {
    const fragments = await chunkCode(S.python!, "python", { maxTokens: 350 });
    expect(outline(fragments)).toEqual(["1-21 imports, LIMIT, class Parser, def parse_header"]);
  });

  test("a fragment records every unit it defines: a packed run's fifth and later, a whole class's methods (s25 code user C11)", async () => {
    const helpers = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].map((n) => `def ${n}_value(x):\n    return x + 1\n`).join("\n");
    const store =
      "class Store:\n    def open_store(self):\n        def check():\n            return 1\n        return check()\n\n    def close_store(self):\n        return 0\n";
    const fragments = (await chunkCode(`${helpers}\n\n${store}`, "python", { maxTokens: 512 }))!;
    expect(fragments.map((f) => [f.headings.join(" › "), f.defines])).toEqual([
      [
        "def alpha_value, def beta_value, def gamma_value, def delta_value, …",
        [
          ...["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].map((n) => `def ${n}_value`),
          "class Store",
          "def open_store",
          "def check",
          "def close_store",
        ],
      ],
    ]);
  });

  test("a long class splits at its methods, each under `class › def`; the class line stays with the first", async () => {
    const methods = Array.from(
      { length: 6 },
      (_, i) =>
        `    def method_${i}(self, value):\n        """Method ${i}."""\n        total = value * ${i}\n        return total + self.base_${i}\n`,
    ).join("\n");
    const source = `class Engine:\n    """Runs things."""\n\n${methods}`;
    const fragments = (await chunkCode(source, "python", { maxTokens: 60 }))!;
    expect(fragments[0]!.text.startsWith("class Engine:")).toBe(true);
    expect(fragments.every((f) => f.headings[0] === "class Engine")).toBe(true);
    expect(fragments.some((f) => f.headings.join(" › ") === "class Engine › def method_3")).toBe(true);
    expect(fragments.every((f) => f.text.length / 4 <= 60)).toBe(true);
    checkCoverage(source, fragments);
  });

  test("a function's first part is headed by the function, not by the helpers an `if` in it defines (s24 code C5)", async () => {
    // shutil.rmtree: its first part (signature, docstring, an `if` defining `onerror`) was headed `def rmtree › def
    // onerror`, and as its heading differed from the second part's, it carried no section saying the function goes on.
    const steps = Array.from({ length: 6 }, (_, i) => `    remove_step_${i}(path, "an argument of some length")`).join("\n");
    const source = `def rmtree(path, onerror=None):\n    """Remove a tree."""\n    if onerror is None:\n        def onerror(*args):\n            pass\n${steps}\n`;
    const fragments = (await chunkCode(source, "python", { maxTokens: 60 }))!;
    expect(fragments.length).toBeGreaterThan(1);
    expect(fragments.map((f) => f.headings.join(" › "))).toEqual(fragments.map(() => "def rmtree"));
    checkCoverage(source, fragments);
  });

  test("definitions inside a long try/except/else or if/else are split at them, not cut by lines under `imports`", async () => {
    // Python's standard library does this (ftplib: `try: import ssl … else: class FTP_TLS(FTP): …`): the clauses
    // after the first block hold the definitions, so the statement splits at its clauses, then at their units.
    const methods = Array.from(
      { length: 5 },
      (_, i) => `        def call_${i}(self):\n            """Call ${i}."""\n            return self.run(${i}, "argument text")\n`,
    ).join("\n");
    const python = `try:\n    import ssl\nexcept ImportError:\n    _SSLSocket = None\nelse:\n    class Secure(Base):\n        """Secure."""\n\n${methods}`;
    const pyFragments = (await chunkCode(python, "python", { maxTokens: 60 }))!;
    expect(pyFragments.some((f) => f.headings.join(" › ") === "class Secure › def call_3")).toBe(true);
    expect(pyFragments.every((f) => !f.headings.includes("imports") || f.text.includes("import ssl"))).toBe(true);
    checkCoverage(python, pyFragments);

    const functions = Array.from(
      { length: 5 },
      (_, i) => `  function handler${i}(event) {\n    return dispatch(${i}, event, "argument text");\n  }\n`,
    ).join("\n");
    const js = `try {\n  setup();\n} catch (error) {\n${functions}}\n`;
    const jsFragments = (await chunkCode(js, "javascript", { maxTokens: 40 }))!;
    expect(jsFragments.some((f) => f.headings.join(" › ") === "function handler2")).toBe(true);
    checkCoverage(js, jsFragments);
  });

  test("a long function splits between statements, never inside a line, all under its name", async () => {
    const body = Array.from({ length: 40 }, (_, i) => `  const v${i} = compute(${i}, "some argument text here");`).join("\n");
    const source = `// Computes.\nfunction big() {\n${body}\n  return 1;\n}\n`;
    const fragments = (await chunkCode(source, "javascript", { maxTokens: 100 }))!;
    expect(fragments.length).toBeGreaterThan(3);
    expect(fragments.every((f) => f.headings.join() === "function big")).toBe(true);
    expect(fragments[0]!.text.startsWith("// Computes.\nfunction big() {")).toBe(true);
    expect(fragments.at(-1)!.text.endsWith("}")).toBe(true);
    checkCoverage(source, fragments);
  });

  test("the last line of a split method stays under its name, not at the start of the next method (audit #25-16)", async () => {
    // http/client.py's `getresponse` fragment began with the last line of `_send_request`, split above it.
    const steps = Array.from({ length: 7 }, (_, i) => `        self.step_${i}(value, "an argument of some length ${i}")`).join("\n");
    const source = `class Connection:\n    def send(self, value):\n${steps}\n        self.finish()\n\n    def receive(self):\n        """Receive."""\n        return self.read(1)\n`;
    const fragments = (await chunkCode(source, "python", { maxTokens: 60 }))!;
    // …nor is it a fragment of one line under the method's name (s11 agent #4): it joins the part before it, a little
    // past the budget.
    expect(outline(fragments)).toEqual([
      "1-5 class Connection › def send",
      "6-10 class Connection › def send",
      "12-14 class Connection › def receive",
    ]);
    checkCoverage(source, fragments);
  });

  test("a split function's closing line joins its last part when that part is already past the budget (s24 code C4)", async () => {
    // zlib's gun.c: `lunpipe`'s lone `}` was a fragment, and first for the function's name.
    const steps = Array.from({ length: 7 }, (_, i) => `        total += compute_${i}(${"x".repeat(24)}, ${i});`);
    const source = `int summary(int x) {\n    int total = 0;\n    for (;;) {\n${steps.join("\n")}\n        x++;\n    }\n}\n`;
    const fragments = (await chunkCode(source, "c", { maxTokens: 60 }))!;
    expect(outline(fragments)).toEqual(["1-2 summary()", "3-6 summary()", "7-13 summary()"]);
    checkCoverage(source, fragments);
  });

  test("a helper a conditional defines in a function's body is defined by the function's fragment (s25b review F8)", async () => {
    // Not its heading (C5), but the exact-name rule counts what `defines` lists: shutil's `onerror` was in none.
    const python = "def rmtree(path):\n    if os.name == 'nt':\n        def onerror(f, p, e):\n            pass\n    walk(path, onerror)\n";
    const [py] = (await chunkCode(python, "python", { maxTokens: 200, packBelow: 0 }))!;
    expect([py!.headings, py!.defines]).toEqual([["def rmtree"], ["def rmtree", "def onerror"]]);
    const js = "function outer() {\n  if (x) {\n    function helper() { return 1; }\n  }\n  return 2;\n}\n";
    expect((await chunkCode(js, "javascript", { maxTokens: 200, packBelow: 0 }))![0]!.defines).toEqual([
      "function outer",
      "function helper",
    ]);
  });

  test("a method over the budget only with its long doc comment is cut between the two, the code whole (s25 code user C16)", async () => {
    // java.util.Scanner's nextInt(int radix) under its Javadoc was cut inside its body, the try/catch alone.
    const doc = Array.from({ length: 12 }, (_, i) => `     * Scans the next token of the input as an int, line ${i} of its documentation.`);
    const source = [
      "class Scanner {",
      "    /**",
      ...doc,
      "     */",
      "    public int nextInt(int radix) {",
      "        String s = next(integerPattern());",
      "        try {",
      "            return Integer.parseInt(s, radix);",
      "        } catch (NumberFormatException nfe) {",
      "            throw new InputMismatchException(nfe.getMessage());",
      "        }",
      "    }",
      "}",
    ].join("\n");
    const fragments = (await chunkCode(source, "java", { maxTokens: 120, packBelow: 0 }))!;
    const code = fragments.find((f) => f.text.includes("public int nextInt"))!;
    expect([code.startLine, code.endLine, code.headings]).toEqual([16, 24, ["class Scanner", "nextInt()"]]); // and the class's `}`
    expect(fragments.every((f) => f.headings.join(" › ") === "class Scanner › nextInt()")).toBe(true);
    checkCoverage(source, fragments);
  });

  test("a method just past the budget with its doc comment is cut between the two unless its split joins up whole (s27 code F2)", async () => {
    // pdf-lib's PDFTextField.setText (its JSDoc trimmed, the budget with it): within an eighth past the budget it
    // was cut between its statements, the doc, signature and first three statements in one part, the rest in another.
    const doc = [
      "  /**",
      "   * Set the text for this field. This operation is analogous to a human user",
      "   * clicking on the text field in a PDF reader and typing in text via their",
      "   * keyboard. This method will update the underlying state of the text field",
      "   * to indicate what text has been set. PDF libraries and readers will be able",
      "   * to extract these values from the saved document and determine what text",
      "   * was set.",
      "   *",
      "   * @param text The text this field should contain.",
      "   */",
      "  setText(text: string | undefined) {",
      "    assertOrUndefined(text, 'text', ['string']);",
      "",
      "    const maxLength = this.getMaxLength();",
      "    if (maxLength !== undefined && text && text.length > maxLength) {",
      "      throw new ExceededMaxLengthError(text.length, maxLength, this.getName());",
      "    }",
      "",
      "    this.markAsDirty();",
      "    this.disableRichFormatting();",
    ];
    const end = ["  }", "}"];
    const source = [
      "export class PDFTextField {",
      ...doc,
      "",
      "    if (text) {",
      "      this.acroField.setValue(PDFHexString.fromText(text));",
      "    } else {",
      "      this.acroField.removeValue();",
      "    }",
      ...end,
    ].join("\n");
    expect(Math.ceil(source.length / 4)).toBeLessThan(220 + 220 / 8);
    const fragments = (await chunkCode(source, "typescript", { maxTokens: 220, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual(["1-11 class PDFTextField › setText()", "12-29 class PDFTextField › setText()"]);
    checkCoverage(source, fragments);
    // A split whose last part is tiny joins up whole: that unit stays one fragment, its doc with it.
    const whole = ["export class PDFTextField {", ...doc, "    this.acroField.setValue(PDFHexString.fromText(text));", ...end].join("\n");
    expect(Math.ceil(whole.split("\n").slice(1, 23).join("\n").length / 4)).toBeGreaterThan(206); // the method, past it
    expect(outline(await chunkCode(whole, "typescript", { maxTokens: 206, packBelow: 0 }))).toEqual([
      "1-24 class PDFTextField › setText()",
    ]);
  });

  test("a small function after a split one is not hidden in its last part, under its heading alone (s8 helper)", async () => {
    const steps = Array.from({ length: 7 }, (_, i) => `    step_${i}(value, "an argument of some length ${i}")`).join("\n");
    const source = `def build_report(value):\n${steps}\n    finish()\n\n\ndef other():\n    return 1\n`;
    const fragments = (await chunkCode(source, "python", { maxTokens: 60 }))!;
    expect(outline(fragments)).toEqual(["1-5 def build_report", "6-9 def build_report", "12-13 def other"]);
    checkCoverage(source, fragments);
  });

  test("decorators and doc comments stay with their unit; a comment after a blank line does not", async () => {
    const source = `# section\n\n# doc\n@cache\n@other(1)\ndef f():\n    return 1\n`;
    const fragments = (await chunkCode(source, "python", { maxTokens: 350, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual(["1-7 def f"]); // the lone comment is tiny: it joins the unit after it
    const rust = `/// Doc.\n#[inline]\n#[must_use]\npub fn g() -> u8 {\n    1\n}\n`;
    expect(outline(await chunkCode(rust, "rust", { maxTokens: 20, packBelow: 0 }))[0]).toBe("1-6 fn g");
  });

  test("a doc comment (/** */, ///) stays with the unit below it across blank lines; other comments do not (s13 user #1)", async () => {
    const js = [
      "/**",
      " * Redirect to the given url.",
      " */",
      "",
      "res.redirect = function redirect(url) {",
      "  this.location(url);",
      "};",
      "",
      "// ---- files ----",
      "",
      "/** Send a file. */",
      "",
      "",
      "res.sendFile = function sendFile(path) {",
      "  return send(path);",
      "};",
      "",
    ].join("\n");
    const fragments = (await chunkCode(js, "javascript", { maxTokens: 40, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual(["1-7 function res.redirect", "9-9", "11-16 function res.sendFile"]);
    checkCoverage(js, fragments);
    const rust = "/// Adds one.\n\npub fn add_one(x: u8) -> u8 {\n    x + 1\n}\n";
    expect(outline(await chunkCode(rust, "rust", { maxTokens: 20, packBelow: 0 }))).toEqual(["1-5 fn add_one"]);
    // A file's licence header above its imports is about the file, as before.
    const header = "/**\n * @license MIT\n */\n\nimport { a } from './a';\n\nexport function f() {\n  return a;\n}\n";
    expect(outline(await chunkCode(header, "typescript", { maxTokens: 20, packBelow: 0 }))).toEqual([
      "1-3",
      "5-5 imports",
      "7-9 function f",
    ]);
  });

  test('a header\'s prototypes are named, inside its include guard and extern "C"; so are definitions in a top-level if/try (s13 user #2)', async () => {
    const header = [
      "#ifndef API_H",
      "#define API_H",
      "#ifdef __cplusplus",
      'extern "C" {',
      "#endif",
      "typedef struct api_options_t { int x; } api_options_t;",
      "int api_open(const char *path);",
      "void *api_alloc(size_t n);",
      "#ifdef __cplusplus",
      "}",
      "#endif",
      "#endif",
      "",
    ].join("\n");
    const [whole] = (await chunkCode(header, "c", { maxTokens: 350 }))!;
    expect(whole!.headings.join(" › ")).toBe("typedef api_options_t, api_open(), api_alloc()");
    const prototypes = Array.from(
      { length: 40 },
      (_, i) => `/* Widget operation ${i}. */\nint widget_op_${i}(struct widget *w, int flags);`,
    );
    const big = `#ifndef BIG_H\n#define BIG_H\n${prototypes.join("\n")}\n#endif\n`;
    const fragments = (await chunkCode(big, "c", { maxTokens: 100 }))!;
    expect(fragments.length).toBeGreaterThan(3);
    expect(fragments.find((f) => f.text.includes("widget_op_37("))!.headings.join()).toContain("widget_op_37()");
    checkCoverage(big, fragments);
    const python =
      'import sys\n\nif sys.platform == "win32":\n    def open_console():\n        pass\nelse:\n    def open_console():\n        return 1\n';
    const py = (await chunkCode(python, "python", { maxTokens: 350, packBelow: 0 }))!;
    expect(outline(py)).toEqual(["1-8 imports, def open_console"]);
  });

  /** The heading of the fragment holding a line that contains `text`. */
  const headingOf = (fragments: Fragment[], text: string) => fragments.find((f) => f.text.includes(text))?.headings.join(" › ");

  test("a zlib-style header's comment below a prototype is the prototype's documentation (s26 agent F6)", async () => {
    // zlib.h, shortened: each prototype, then its documentation, then a blank line. deflateInit is a macro documented
    // by a comment that quotes its prototype: no declaration, so no heading.
    const zlib = [
      "ZEXTERN const char * ZEXPORT zlibVersion OF((void));",
      "/* The application can compare zlibVersion and ZLIB_VERSION for consistency.",
      "   If the first character differs, the library code actually used is not",
      "   compatible with the zlib.h header file used by the application.  This check",
      "   is automatically made by deflateInit and inflateInit.",
      " */",
      "",
      "/*",
      "ZEXTERN int ZEXPORT deflateInit OF((z_streamp strm, int level));",
      "",
      "     Initializes the internal stream state for compression.  The fields",
      "   zalloc, zfree and opaque must be initialized before by the caller.  If",
      "   zalloc and zfree are set to Z_NULL, deflateInit updates them to use default",
      "   allocation functions.",
      "*/",
      "",
      "",
      "ZEXTERN int ZEXPORT deflate OF((z_streamp strm, int flush));",
      "/*",
      "    deflate compresses as much data as possible, and stops when the input",
      "  buffer becomes empty or the output buffer becomes full.  It may introduce",
      "  some output latency (reading input without producing any output) except when",
      "  forced to flush.",
      "*/",
      "",
      "",
      "ZEXTERN int ZEXPORT deflateEnd OF((z_streamp strm));",
      "/*",
      "     All dynamically allocated data structures for this stream are freed.",
      "   This function discards any unprocessed input and does not flush any pending",
      "   output.",
      "",
      "     deflateEnd returns Z_OK if success, Z_STREAM_ERROR if the",
      "   stream state was inconsistent, Z_DATA_ERROR if the stream was freed",
      "   prematurely (some input or output was discarded).  In the error case, msg",
      "   may be set but then points to a static string (which must not be",
      "   deallocated).",
      "*/",
      "",
    ].join("\n");
    const fragments = (await chunkCode(zlib, "c", { maxTokens: 100, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual(["1-6 zlibVersion()", "8-15", "18-24 deflate()", "27-34 deflateEnd()", "35-38 deflateEnd()"]);
    // Split past the budget, the documentation's parts are still the prototype's unit.
    expect(new Set(fragments.slice(-2).map((f) => f.unit)).size).toBe(1);
    checkCoverage(zlib, fragments);
    // At the default budget too: the passage an agent finds by the doc's words is headed by its function.
    const whole = (await chunkCode(zlib, "c", { maxTokens: 512 }))!;
    expect(headingOf(whole, "deflate compresses as much data")).toContain("deflate()");
    expect(headingOf(whole, "All dynamically allocated")).toContain("deflateEnd()");
  });

  test("a zlib prototype the grammar broke inside its parameters is named, its lines and its doc one unit (s26 agent F6)", async () => {
    // zlib.h: `OF((…))` over lines, or with a parameter the grammar takes for a type, parses as an error or a call.
    const zlib = [
      "ZEXTERN int ZEXPORT gzsetparams OF((gzFile file, int level, int strategy));",
      "/*",
      "     Dynamically update the compression level and strategy for file.  See the",
      "   description of deflateInit2 for the meaning of these parameters. Previously",
      "   provided data is flushed before applying the parameter changes.",
      "*/",
      "",
      "ZEXTERN int ZEXPORT deflatePending OF((z_streamp strm,",
      "                                       unsigned *pending,",
      "                                       int *bits));",
      "/*",
      "     deflatePending() returns the number of bytes and bits of output that have",
      "   been generated, but not yet provided in the available output.  The bytes not",
      "   provided would be due to the available output space having being consumed.",
      " */",
      "",
      "ZEXTERN int ZEXPORT compress OF((Bytef *dest,   uLongf *destLen,",
      "                                 const Bytef *source, uLong sourceLen));",
      "/*",
      "     Compresses the source buffer into the destination buffer.  sourceLen is",
      "   the byte length of the source buffer.",
      "*/",
      "",
    ].join("\n");
    const fragments = (await chunkCode(zlib, "c", { maxTokens: 160, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual(["1-6 gzsetparams()", "8-15 deflatePending()", "17-22 compress()"]);
    checkCoverage(zlib, fragments);
    // Cut in two, both parts of deflatePending's prototype and doc are its own.
    const cut = (await chunkCode(zlib, "c", { maxTokens: 100, packBelow: 0 }))!.filter((f) => f.startLine >= 8 && f.endLine <= 15);
    expect(outline(cut)).toEqual(["8-9 deflatePending()", "10-15 deflatePending()"]);
    expect(cut[0]!.unit).toBe(cut[1]!.unit);
  });

  test("a comment directly above a C declaration stays its own, and a header's licence below its include guard is no doc of the guard (s26 agent F6)", async () => {
    // glibc's string.h: each prototype's comment is right above it, also where it follows the prototype before
    // with no blank line between (memcpy, memmove); virtio_ids.h: the file's licence right below its guard.
    const header = [
      "#ifndef _LINUX_VIRTIO_IDS_H",
      "#define _LINUX_VIRTIO_IDS_H",
      "/*",
      " * Virtio IDs",
      " *",
      " * This header is BSD licensed so anyone can use the definitions to implement",
      " * compatible drivers/servers.",
      " */",
      "",
      "/* Copy N bytes of SRC to DEST.  */",
      "extern void *memcpy (void *__restrict __dest, const void *__restrict __src,",
      "\t\t     size_t __n) __THROW __nonnull ((1, 2));",
      "/* Copy N bytes of SRC to DEST, guaranteeing",
      "   correct behavior for overlapping strings.  */",
      "extern void *memmove (void *__dest, const void *__src, size_t __n)",
      "     __THROW __nonnull ((1, 2));",
      "",
      "/* Copy SRC to DEST.  */",
      "extern char *strcpy (char *__restrict __dest, const char *__restrict __src)",
      "     __THROW __nonnull ((1, 2));",
      "/* Copy no more than N characters of SRC to DEST.  */",
      "extern char *strncpy (char *__restrict __dest,",
      "\t\t      const char *__restrict __src, size_t __n)",
      "     __THROW __nonnull ((1, 2));",
      "",
      "#endif /* _LINUX_VIRTIO_IDS_H */",
      "",
    ].join("\n");
    const fragments = (await chunkCode(header, "c", { maxTokens: 60, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual([
      "1-2 #define _LINUX_VIRTIO_IDS_H",
      "3-8",
      "10-12 memcpy()",
      "13-16 memmove()",
      "18-20 strcpy()",
      "21-24 strncpy()",
      "26-26",
    ]);
    checkCoverage(header, fragments);
  });

  test("a C header mixing both: a #define's comment below it is its own, a comment right above the next is the next's (s26 agent F6)", async () => {
    // Python's modsupport.h (the API version's log below its #defines, the ABI version's note above its own), png.h
    // (each function-like macro's comment indented below it) and linux/pfkeyv2.h (a struct's size below it).
    const header = [
      "#define Py_CLEANUP_SUPPORTED 0x20000",
      "",
      "#define PYTHON_API_VERSION 1013",
      '#define PYTHON_API_STRING "1013"',
      "/* The API version is maintained (independently from the Python version)",
      "   so we can detect mismatches between the interpreter and dynamically",
      "   loaded modules.  These are diagnosed by an error message but",
      "   the module is still loaded (because the mismatch can only be tested",
      "   after loading the module).",
      "*/",
      "",
      "/* The PYTHON_ABI_VERSION is introduced in PEP 384. For the lifetime of",
      "   Python 3, it will stay at the value of 3; changes to the limited API",
      "   must be performed in a strictly backwards-compatible manner. */",
      "#define PYTHON_ABI_VERSION 3",
      '#define PYTHON_ABI_STRING "3"',
      "",
      "#define PNG_IMAGE_SAMPLE_CHANNELS(fmt)\\",
      "   (((fmt)&(PNG_FORMAT_FLAG_COLOR|PNG_FORMAT_FLAG_ALPHA))+1)",
      "   /* Return the total number of channels in a given format: 1..4 */",
      "",
      "#define PNG_IMAGE_SAMPLE_COMPONENT_SIZE(fmt)\\",
      "   ((((fmt) & PNG_FORMAT_FLAG_LINEAR) >> 2)+1)",
      "   /* Return the size in bytes of a single component of a pixel or color-map",
      "    * entry (as appropriate) in the image: 1 or 2.",
      "    */",
      "",
      "struct sadb_x_kmaddress {",
      "\t__u16\tsadb_x_kmaddress_len;",
      "\t__u16\tsadb_x_kmaddress_exttype;",
      "\t__u32\tsadb_x_kmaddress_reserved;",
      "} __attribute__((packed));",
      "/* sizeof(struct sadb_x_kmaddress) == 8 */",
      "",
      "/* To specify the SA dump filter */",
      "struct sadb_x_filter;",
      "",
    ].join("\n");
    const fragments = (await chunkCode(header, "c", { maxTokens: 60, packBelow: 0 }))!;
    expect(outline(fragments)).toEqual([
      "1-1 #define Py_CLEANUP_SUPPORTED",
      "3-3 #define PYTHON_API_VERSION",
      "4-6 #define PYTHON_API_STRING",
      "7-10 #define PYTHON_API_STRING",
      "12-15 #define PYTHON_ABI_VERSION",
      "16-16 #define PYTHON_ABI_STRING",
      "18-20 #define PNG_IMAGE_SAMPLE_CHANNELS",
      "22-26 #define PNG_IMAGE_SAMPLE_COMPONENT_SIZE",
      "28-33 struct sadb_x_kmaddress",
      "35-36 struct sadb_x_filter",
    ]);
    checkCoverage(header, fragments);
    // Other languages keep a comment below a declaration apart: a TypeScript constant's is no doc of it.
    const ts =
      "export const RETRIES_BEFORE_THE_PARSER_GIVES_UP = 10;\n// ---- helpers the parser and its callers share ----\n\nexport function f() {\n  return 1;\n}\n";
    expect(outline(await chunkCode(ts, "typescript", { maxTokens: 60, packBelow: 0 }))).toEqual([
      "1-1 const RETRIES_BEFORE_THE_PARSER_GIVES_UP",
      "2-2",
      "4-6 function f",
    ]);
  });
  test("a .h header holding C++ (a namespace, a class, a template) is C++, a plain one C (s13 hostile #10)", async () => {
    const { convertFile } = await import("../src/convert/convert.ts");
    const cpp = "#pragma once\nnamespace ui {\ntemplate <typename T> class Widget {\npublic:\n  void draw();\n};\n}\n";
    const c = "#ifndef A_H\n#define A_H\nint api_open(const char *path);\n#endif\n";
    const doc = await convertFile("widget.h", new TextEncoder().encode(cpp), { codeTokens: 512 });
    expect(doc.metadata).toEqual({ language: "cpp" });
    expect(doc.codeSections?.[0]?.headings).toEqual(["namespace ui"]);
    expect((await convertFile("api.h", new TextEncoder().encode(c), { codeTokens: 512 })).metadata).toEqual({ language: "c" });
    // A line `class aaaa…` without its brace is looked at in linear time (s18 retest N1: 13 s for 200 KB).
    const started = performance.now();
    const odd = await convertFile("odd.h", new TextEncoder().encode(`class ${"a".repeat(200_000)}\n`), { codeTokens: 512 });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(odd.metadata).toEqual({ language: "c" });
  });

  test("a .h header that includes a C++ standard header or writes a qualified name is C++: its structs are units (s25 code user C12)", async () => {
    const { convertFile } = await import("../src/convert/convert.ts");
    const language = async (text: string) => (await convertFile("x.h", new TextEncoder().encode(text), { codeTokens: 512 })).metadata;
    // sharp's headers: Node-API C++ with no namespace, class or template of their own.
    const metadata =
      "#ifndef SRC_METADATA_H_\n#define SRC_METADATA_H_\n\n#include <string>\n#include <vector>\n#include <napi.h>\n\n" +
      "typedef std::vector<std::pair<std::string, std::string>> MetadataComments;\n\nstruct MetadataBaton {\n  std::string format;\n  int width;\n};\n\n" +
      "Napi::Value metadata(const Napi::CallbackInfo& info);\n\n#endif  // SRC_METADATA_H_\n";
    const doc = await convertFile("metadata.h", new TextEncoder().encode(metadata), { codeTokens: 512 });
    expect(doc.metadata).toEqual({ language: "cpp" });
    expect(doc.codeSections?.flatMap((s) => s.defines ?? [])).toEqual(
      expect.arrayContaining(["typedef MetadataComments", "struct MetadataBaton", "metadata()"]),
    );
    expect(await language("#include <napi.h>\n\nNapi::Value cache(const Napi::CallbackInfo& info);\n")).toEqual({ language: "cpp" });
    // C stays C: `.h` includes, `::` in a C23 attribute or a comment.
    const c =
      "#include <stdio.h>\n/* like std::string, but in C */\n// see Foo::bar\n[[gnu::unused]] static int api_open(const char *path);\n";
    expect(await language(c)).toEqual({ language: "c" });
  });

  test("a label spanning lines or running long becomes a one-line heading of at most 80 characters", async () => {
    const long = "VeryLongTypeName".repeat(8);
    const source = `impl<T> Display\n    for Wrapper<\n        T,\n    > {\n    fn fmt(&self) {}\n}\n\nstruct ${long} { x: i32 }\n`;
    const headings = (await chunkCode(source, "rust", { maxTokens: 60, packBelow: 0 }))!.map((f) => f.headings.join(" › "));
    expect(headings[0]).toBe("impl Display for Wrapper< T, >");
    expect(headings[1]!.length).toBeLessThanOrEqual(80);
    expect(headings[1]).toEndWith("…");
  });

  test("a line longer than the budget among ordinary code is a fragment of its own", async () => {
    const line = `var a=[${"[1,2,3],".repeat(60)}0];`;
    const functions = Array.from({ length: 12 }, (_, i) => `function f${i}(x) {\n  const y = x + ${i};\n  return y * a.length;\n}\n`);
    const fragments = (await chunkCode(`${line}\n${functions.join("\n")}`, "javascript", { maxTokens: 100 }))!;
    expect(fragments[0]).toMatchObject({ startLine: 1, endLine: 1 });
    expect(fragments.length).toBeGreaterThan(1);
  });

  test("a file that is mostly lines longer than the budget (minified, a bundle) is left to the text chunker", async () => {
    const bundle = `!function(){${"var a=[1,2,3];function g(b){return b+1}".repeat(2000)}}();`;
    expect(await chunkCode(bundle, "javascript", { maxTokens: 512 })).toBeNull();
    const line = `var a=[${"[1,2,3],".repeat(500)}0];`;
    expect(await chunkCode(`${line}\nfunction f() { return a; }\n`, "javascript", { maxTokens: 100 })).toBeNull();
  });

  test("a parse past its time limit, or a file past the size limit, is left to the text chunker", async () => {
    const slow = `var a=${"[1,2,3],".repeat(2000)}0;`; // invalid: error recovery makes it slow
    expect(await chunkCode(slow, "javascript", { maxTokens: 350, timeoutMs: 20 })).toBeNull();
    expect(await chunkCode("x = 1\n".repeat(100), "python", { maxTokens: 350, maxChars: 100 })).toBeNull();
  });

  test("the file after a parse that ran out of time is parsed from its own start (the parser is reused)", async () => {
    const slow = `var a=${"[1,2,3],".repeat(2000)}0;`;
    expect(await chunkCode(slow, "javascript", { maxTokens: 350, timeoutMs: 20 })).toBeNull();
    const source = "function f() {\n  return 1;\n}\n";
    const fragments = (await chunkCode(source, "javascript", { maxTokens: 350 }))!;
    expect(fragments.map((f) => [f.startLine, f.endLine, f.headings, f.text])).toEqual([[1, 3, ["function f"], source.trimEnd()]]);
  });

  test("empty and whitespace-only files give no fragments; broken code still chunks", async () => {
    expect(await chunkCode("", "python", { maxTokens: 350 })).toEqual([]);
    expect(await chunkCode("\n\n  \n", "go", { maxTokens: 350 })).toEqual([]);
    const broken = `def ok():\n    return 1\n\ndef broken(:\n    pass\n`;
    checkCoverage(broken, (await chunkCode(broken, "python", { maxTokens: 350 }))!);
  });

  test("a shell `case` is parsed (bash's scanner calls isalpha, which the runtime lacks), and so is the next file", async () => {
    const script = `usage() {\n  echo "usage: run [start|stop]"\n}\n\nmain() {\n  case "$1" in\n    start) echo starting;;\n    stop) echo stopping;;\n  esac\n}\n`;
    for (let file = 0; file < 2; file++) {
      expect(outline(await chunkCode(script, "bash", small))).toEqual(["1-3 function usage", "5-10 function main"]);
    }
  });

  test("CRLF files keep their line numbers", async () => {
    const source = "def a():\r\n    return 1\r\n\r\ndef b():\r\n    return 2\r\n";
    expect(outline(await chunkCode(source, "python", { maxTokens: 8, packBelow: 0 }))).toEqual(["1-2 def a", "4-5 def b"]);
  });

  test("a lone-CR (old Mac) file is one line to `get`: left to the text chunker, not cited by its first function (s11 hostile #10)", async () => {
    const source = "def cr_one():\r    return 1\r\rdef cr_two():\r    return 2\r";
    // `get` and the text chunker count lines at LF or CRLF: this file is line 1, which holds both functions.
    expect(await chunkCode(source, "python", { maxTokens: 8, packBelow: 0 })).toBeNull();
    expect(await chunkCode(source, "python", { maxTokens: 350 })).toBeNull();
    const fragments = chunkDocument({ title: "cr.py", format: "text", text: source, firstLine: 1, metadata: {} });
    expect(fragments.map((f) => [f.startLine, f.endLine, f.headings])).toEqual([[1, 1, []]]);
    // A stray CR inside an ordinary line changes nothing.
    const stray = "def a():\n    return '\r'\n\ndef b():\n    return 2\n";
    expect(outline(await chunkCode(stray, "python", { maxTokens: 8, packBelow: 0 }))).toEqual(["1-2 def a", "4-5 def b"]);
  });

  test("deeply nested code (4000 nested C blocks, 6000 nested JS functions) chunks, every line once (s11 hostile #5)", async () => {
    const depth = (n: number, open: (i: number) => string) =>
      [...Array.from({ length: n }, (_, i) => open(i)), ...Array.from({ length: n }, () => "}")].join("\n");
    const c = `int cfn(void) {\n${depth(4000, (i) => `if (x${i}) { y = ${i};`)}\n}\n`;
    const js = `${depth(6000, (i) => `function f${i}(a) { let v${i} = a + ${i};`)}\n`;
    for (const [source, language] of [
      [c, "c"],
      [js, "javascript"],
    ] as const) {
      const fragments = await chunkCode(source, language, { maxTokens: 350 });
      expect(fragments).not.toBeNull(); // the syntax outline, not only the text chunker's fallback
      checkCoverage(source, fragments!);
    }
    // The outline still names the outer levels of the nesting; a path dozens deep keeps its two ends.
    const fragments = (await chunkCode(js, "javascript", { maxTokens: 350 }))!;
    expect(fragments[0]!.headings.slice(0, 4)).toEqual(["function f0", "function f1", "function f2", "…"]);
    expect(Math.max(...fragments.map((f) => f.headings.length))).toBe(12);
  });
});

describe("languages", () => {
  test("extensions map to grammars; others are null and chunkCode returns null", async () => {
    const cases: Record<string, CodeLanguage | null> = {
      "a.py": "python",
      "a.ts": "typescript",
      "a.tsx": "tsx",
      "a.js": "javascript",
      "a.mjs": "javascript",
      "a.cjs": "javascript",
      "a.jsx": "javascript",
      "a.go": "go",
      "a.rs": "rust",
      "a.java": "java",
      "a.c": "c",
      "a.h": "c",
      "a.cpp": "cpp",
      "a.cc": "cpp",
      "a.hpp": "cpp",
      "a.cxx": "cpp",
      "a.cs": "c_sharp",
      "a.rb": "ruby",
      "a.php": "php",
      "a.sh": "bash",
      "a.bash": "bash",
      "A.PY": "python",
      "notes.md": null,
      Makefile: null,
      "dir.py/file": null,
    };
    for (const [path, language] of Object.entries(cases)) expect([path, languageOf(path)]).toEqual([path, language]);
    expect(await chunkCode("text", languageOf("x.md"), { maxTokens: 350 })).toBeNull();
  });

  test("grammars load lazily: a Python-only run loads only Python", () => {
    const script = `import { chunkCode } from "${import.meta.dir}/helpers.ts"; import { loadedLanguages } from "${import.meta.dir}/../src/convert/tree-sitter.ts";
      await chunkCode("x = 1\\n", "python", { maxTokens: 350 }); console.log(loadedLanguages().join(","));`;
    const run = Bun.spawnSync([process.execPath, "-e", script]);
    expect(run.stdout.toString().trim()).toBe("python");
  });
});
