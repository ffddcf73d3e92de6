/**
 * Builds the single-file `researcher` executable: `bun build.ts [--target linux-x64|linux-x64-baseline|linux-arm64
 * | --all] [--embed-model <folder>] [--outdir dist]`.
 *
 * A plain `bun build --compile` only runs where node_modules is (see ../shared/notes/toolchain.md). This plugin
 * fixes each break; every patch names the exact text it replaces and fails the build if that text changed, so a
 * dependency upgrade cannot silently produce a broken executable (versions are pinned in package.json).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { contentHash } from "./src/embed/native.ts";

const ROOT = import.meta.dir;
const MODULES = join(ROOT, "node_modules");
const TARGETS = { "linux-x64": ["linux", "x64"], "linux-x64-baseline": ["linux", "x64"], "linux-arm64": ["linux", "arm64"] } as const;
type Target = keyof typeof TARGETS;

function version(pkg: string): string {
  return JSON.parse(readFileSync(join(MODULES, pkg, "package.json"), "utf8")).version;
}

/** Replace `from` with `to` in `source`, or stop the build: the dependency is not the one we patched. */
function patch(source: string, from: string, to: string, where: string): string {
  if (!source.includes(from)) {
    throw new Error(`build.ts: ${where} no longer contains the text this build patches:\n  ${from}\nCheck the pinned version.`);
  }
  return source.replace(from, to);
}

const nativeModule = JSON.stringify(join(ROOT, "src/embed/native.ts"));
const fileImport = (path: string) => `require(${JSON.stringify(`embedded-file:${path}`)})`;
/** An EmbeddedFile (src/embed/native.ts) as source: the file's bytes embedded, its name on disk, the hash they must have. */
const embeddedFile = (path: string, name: string) =>
  `{ embedded: native.embeddedPath(${fileImport(path)}), name: ${JSON.stringify(name)}, hash: ${JSON.stringify(contentHash(readFileSync(path)))} }`;

function plugin(target: Target, embedModel: string | undefined): BunPlugin {
  const [platform, arch] = TARGETS[target];
  return {
    name: "researcher-single-file",
    setup(build) {
      // Any `embedded-file:<path>` import becomes the path of those bytes inside the executable.
      build.onResolve({ filter: /^embedded-file:/ }, (args) => ({
        path: args.path.slice("embedded-file:".length),
        namespace: "embedded-file",
      }));
      build.onLoad({ filter: /.*/, namespace: "embedded-file" }, (args) => ({ contents: readFileSync(args.path), loader: "file" }));

      // sharp: transformers imports it for images at load time and needs it truthy; we never handle images.
      build.onResolve({ filter: /^sharp$/ }, () => ({ path: "sharp", namespace: "stub" }));
      build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
        loader: "js",
        contents: `export default function sharp() { throw new Error("images are not supported"); }`,
      }));

      // transformers.js requires onnxruntime-node through createRequire, which the bundler cannot see. And its
      // FileResponse starts streaming every local file it opens into a body nobody reads (model files are read
      // again with readFile): ~60 ms of a cold hybrid search for a 23 MB model. The body becomes lazy.
      build.onLoad({ filter: /@huggingface[\\/]transformers[\\/]dist[\\/]transformers\.node\.mjs$/ }, (args) => {
        let source = readFileSync(args.path, "utf8");
        source = patch(
          source,
          `var onnx_node_default = requireFromHere("onnxruntime-node");`,
          `import * as ortNamespace from "onnxruntime-node";\nvar onnx_node_default = ortNamespace;`,
          args.path,
        );
        source = patch(
          source,
          `      const stream = fs2.createReadStream(filePath);\n      this.body = new ReadableStream({`,
          `      let body;\n      Object.defineProperty(this, "body", { configurable: true, enumerable: true, get: () => (body ??= openBody()) });\n` +
            `      const openBody = () => { const stream = fs2.createReadStream(filePath); return new ReadableStream({`,
          args.path,
        );
        source = patch(
          source,
          `        cancel() {\n          stream.destroy();\n        }\n      });\n    } else {`,
          `        cancel() {\n          stream.destroy();\n        }\n      }); };\n    } else {`,
          args.path,
        );
        return { loader: "js", contents: source };
      });

      // onnxruntime-node: its binding needs libonnxruntime.so.1 beside it on disk ($ORIGIN runpath).
      build.onLoad({ filter: /onnxruntime-node[\\/]dist[\\/]binding\.js$/ }, (args) => {
        const bin = join(MODULES, "onnxruntime-node/bin/napi-v6", platform, arch);
        const folder = `onnxruntime-node-${version("onnxruntime-node")}-${platform}-${arch}`;
        return {
          loader: "js",
          contents: patch(
            readFileSync(args.path, "utf8"),
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the package's source text, matched verbatim
            "require(`../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`);",
            `(() => {
              const native = require(${nativeModule});
              return native.loadNativeAddon(${JSON.stringify(folder)}, [
                ${embeddedFile(join(bin, "onnxruntime_binding.node"), "onnxruntime_binding.node")},
                ${embeddedFile(join(bin, "libonnxruntime.so.1"), "libonnxruntime.so.1")},
              ], "onnxruntime_binding.node");
            })();`,
            args.path,
          ),
        };
      });

      // usearch: node-gyp-build searches the file system for its prebuild; load the embedded one instead.
      build.onLoad({ filter: /usearch[\\/]javascript[\\/]dist[\\/]esm[\\/]usearch\.js$/ }, (args) => {
        const prebuild = join(MODULES, "usearch/prebuilds", `${platform}-${arch}`, "usearch.node");
        let source = readFileSync(args.path, "utf8");
        source = patch(source, `import build from "node-gyp-build";\n`, "", args.path);
        source = patch(source, `import { getFileName, getRoot } from "bindings";\n`, "", args.path);
        source = patch(
          source,
          "const compiled = build(getBuildDir(getDirName()));",
          `import * as native from ${nativeModule};
import usearchAddon from ${JSON.stringify(`embedded-file:${prebuild}`)};
const compiled = native.loadNativeAddon(${JSON.stringify(`usearch-${version("usearch")}-${platform}-${arch}`)},
  [{ embedded: native.embeddedPath(usearchAddon), name: "usearch.node", hash: ${JSON.stringify(contentHash(readFileSync(prebuild)))} }], "usearch.node");`,
          args.path,
        );
        // The "dummy code for ncc" and the file-system search are dead once the addon is embedded.
        return { loader: "js", contents: source.replace(/\/\/ dummy code for ncc[\s\S]*$/, "") };
      });

      // tree-sitter's runtime and grammars are mostly parse tables: stored gzipped (21 MB → 2 MB);
      // src/convert/tree-sitter.ts gunzips what it reads (and reads node_modules' raw files under `bun run`).
      build.onLoad({ filter: /(tree-sitter-wasms[\\/]out[\\/][^\\/]+|web-tree-sitter[\\/]tree-sitter)\.wasm$/ }, (args) => ({
        contents: Bun.gzipSync(readFileSync(args.path), { level: 9 }),
        loader: "file",
      }));

      // pdf.js reads its character maps (CJK text) and image-decoder wasm (JBIG2, JPEG 2000) from files: embed them and
      // serve them from the executable.
      build.onLoad({ filter: /src[\\/]convert[\\/]pdf-data\.ts$/ }, () => ({ loader: "ts", contents: pdfDataSource() }));

      // Optionally bake a model folder in: it is unpacked on first use and reported as "embedded".
      build.onLoad({ filter: /src[\\/]embed[\\/]embedded-model\.ts$/ }, () => ({
        loader: "ts",
        contents: embeddedModelSource(embedModel),
      }));
    },
  };
}

function pdfDataSource(): string {
  const files = (folder: string, pattern: RegExp) =>
    readdirSync(join(MODULES, "pdfjs-dist", folder))
      .filter((name) => pattern.test(name))
      .map((name) => ({ name, path: join(MODULES, "pdfjs-dist", folder, name) }));
  const cmaps = files("cmaps", /\.bcmap$/);
  const wasm = files("wasm", /^(jbig2|openjpeg|qcms_bg)\.wasm$/);
  const imports = [...cmaps, ...wasm].map((f, i) => `import f${i} from ${JSON.stringify(`embedded-file:${f.path}`)};`).join("\n");
  const table = (list: typeof cmaps, offset: number) => list.map((f, i) => `${JSON.stringify(f.name)}: f${i + offset}`).join(",\n  ");
  return `import { readFileSync } from "node:fs";\n${imports}
const CMAPS: Record<string, string> = {\n  ${table(cmaps, 0)}\n};
const WASM: Record<string, string> = {\n  ${table(wasm, cmaps.length)}\n};
function read(table: Record<string, string>, name: string): Uint8Array {
  const path = table[name];
  if (!path) throw new Error(\`no pdf.js data file named \${name}\`);
  return readFileSync(path);
}
export const readCMap = (name: string) => read(CMAPS, name);
export const readWasm = (name: string) => read(WASM, name);`;
}

function embeddedModelSource(folder: string | undefined): string {
  if (!folder) return "export const EMBEDDED_MODEL = null;";
  const root = resolve(folder);
  if (!existsSync(join(root, "config.json"))) throw new Error(`--embed-model: ${root} has no config.json`);
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!/\.(md|gz)$|LICENSE/.test(name)) files.push(path);
    }
  };
  walk(root);
  const imports = files.map((f, i) => `import f${i} from ${JSON.stringify(`embedded-file:${f}`)};`).join("\n");
  const hash = (f: string) => JSON.stringify(contentHash(readFileSync(f)));
  const list = files.map((f, i) => `{ embedded: f${i}, name: ${JSON.stringify(relative(root, f))}, hash: ${hash(f)} }`).join(",\n  ");
  return `${imports}\nexport const EMBEDDED_MODEL = { name: ${JSON.stringify(basename(root))}, files: [\n  ${list}\n] };`;
}

function gitCommit(): string {
  const git = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT });
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: ROOT }).stdout.toString().trim();
  return git.success ? `${git.stdout.toString().trim()}${dirty ? "-dirty" : ""}` : "unknown";
}

export async function buildExecutable(options: { target?: Target; embedModel?: string; outfile?: string } = {}): Promise<string> {
  const target = options.target ?? "linux-x64";
  const outfile = options.outfile ?? join(ROOT, "dist", target === "linux-x64" ? "researcher" : `researcher-${target}`);
  mkdirSync(resolve(outfile, ".."), { recursive: true });
  // OCR calls tesseract.js-core's WebIDL API directly (SetImage with exif/angle, numeric OEM/PSM): pinned.
  if (version("tesseract.js-core") !== "7.0.0") throw new Error("build.ts: tesseract.js-core is not 7.0.0; recheck src/convert/ocr.ts");
  const result = await Bun.build({
    // The conversion worker is its own entry point: workers in an executable must be listed (Bun's docs).
    entrypoints: [join(ROOT, "src/main.ts"), join(ROOT, "src/convert/worker.ts")],
    compile: {
      target: `bun-${target}` as "bun-linux-x64",
      outfile,
      // An executable run in someone's folder must not read that folder's bunfig.toml (its `preload` runs code)
      // or .env (it could point RESEARCHER_HOME elsewhere): both load by default.
      autoloadBunfig: false,
      autoloadDotenv: false,
    },
    format: "esm",
    bytecode: true,
    // Lazily imported parts (onnxruntime, transformers, usearch, the MCP SDK) become separate chunks that a BM25
    // search never loads.
    splitting: true,
    minify: { whitespace: true, syntax: true, identifiers: false },
    define: { RESEARCHER_COMMIT: JSON.stringify(gitCommit()) },
    plugins: [plugin(target, options.embedModel)],
  });
  if (!result.success) {
    throw new Error(`build failed:\n${result.logs.map((log) => String(log)).join("\n")}`);
  }
  return outfile;
}

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

if (import.meta.main) {
  const all = process.argv.includes("--all");
  const requested = argument("--target") as Target | undefined;
  if (requested && !(requested in TARGETS)) throw new Error(`--target must be one of ${Object.keys(TARGETS).join(", ")}`);
  const targets: Target[] = all ? (Object.keys(TARGETS) as Target[]) : [requested ?? "linux-x64"];
  const outdir = resolve(argument("--outdir") ?? join(ROOT, "dist"));
  const sums: string[] = [];
  for (const target of targets) {
    const started = performance.now();
    const outfile = await buildExecutable({
      target,
      embedModel: argument("--embed-model"),
      outfile: join(outdir, target === "linux-x64" ? "researcher" : `researcher-${target}`),
    });
    const bytes = readFileSync(outfile);
    sums.push(`${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}  ${basename(outfile)}`);
    if (!process.argv.includes("--quiet")) {
      console.log(
        `${relative(process.cwd(), outfile)}: ${(bytes.length / 2 ** 20).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    }
  }
  writeFileSync(join(outdir, "sha256sums.txt"), `${sums.join("\n")}\n`);
}
