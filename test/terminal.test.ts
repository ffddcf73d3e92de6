import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, tempDir } from "./helpers.ts";

test("writing to a reader that has gone (`| head`) ends quietly with exit 0", () => {
  const script = `import { stdout } from ${JSON.stringify(join(ROOT, "src/terminal.ts"))};
    stdout.write("line\\n".repeat(1 << 20)); console.error("not reached");`;
  const proc = Bun.spawnSync(["bash", "-o", "pipefail", "-c", `"${process.execPath}" -e '${script}' | head -c 5`]);
  expect(proc.stdout.toString()).toBe("line\n");
  expect(proc.stderr.toString()).toBe("");
  expect(proc.exitCode).toBe(0);
});

test("output that cannot be written (a full disk) is one error line about the output, not the index's disk (s14 hostile #10)", () => {
  const home = tempDir();
  const proc = Bun.spawnSync(["bash", "-c", `"${process.execPath}" "${join(ROOT, "src/main.ts")}" repo list > /dev/full`], {
    env: { ...process.env, RESEARCHER_HOME: home },
  });
  expect(proc.stderr.toString()).toBe("error: cannot write the output: ENOSPC: no space left on device, write\n");
  expect(proc.exitCode).toBe(1);
});

test("every byte of a large write arrives, and a pipe is not a terminal", () => {
  const script = `import { stdout } from ${JSON.stringify(join(ROOT, "src/terminal.ts"))};
    stdout.write("x".repeat(3_000_000)); stdout.write(String(stdout.isTTY));`;
  const proc = Bun.spawnSync([process.execPath, "-e", script]);
  const out = proc.stdout.toString();
  expect(out.length).toBe(3_000_005);
  expect(out.endsWith("false")).toBe(true);
});

test("escapeControls makes every control character visible and leaves other text alone", async () => {
  const { escapeControls } = await import("../src/terminal.ts");
  expect(escapeControls("a\nb\tc\rd\x1b[31m\x07\x00\x7f\x9b")).toBe("a\\nb\\tc\\rd\\x1b[31m\\x07\\x00\\x7f\\x9b");
  expect(escapeControls("evil\u202egnp.md\u2028x")).toBe("evil\\u202egnp.md\\u2028x");
  expect(escapeControls('café ü 日本 back\\slash "q" 🦀')).toBe('café ü 日本 back\\slash "q" 🦀');
});

test("shellWord quotes a word so that bash reads it back as it is, control characters too (s17 hostile #6)", async () => {
  const { escapeControls, shellWord } = await import("../src/terminal.ts");
  // The moved-root hint quoted `\n`, `\t` and `\x01` inside '…', where bash keeps them as written.
  // C1 controls and U+202x were escaped as characters, which bash reads as one byte (\x85) or, in a C locale, not at
  // all (\u202e): the word named another path (s18 review #1).
  const words = ["plain/path.md", "it's $HOME `id`", "/tmp/mvt it's $HOME `id` \n\t\x01x/a", "back\\slash \x1b[31m", "a\u202eb c"];
  for (const word of [...words, "home\u0085x/lock", "a\u2028b"])
    for (const locale of ["C.UTF-8", "C"]) {
      const quoted = shellWord(word);
      // As the terminal shows it (hints are escaped for the screen): copying it must run the same.
      expect(escapeControls(quoted)).toBe(quoted);
      const echoed = Bun.spawnSync(["bash", "-c", `printf %s ${quoted}`], {
        env: { PATH: process.env.PATH, LANG: locale, LC_ALL: locale },
      });
      expect({ word, locale, echoed: echoed.stdout.toString() }).toEqual({ word, locale, echoed: word });
    }
});
