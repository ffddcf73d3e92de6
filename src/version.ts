/** Version facts; `build.ts` bakes the commit in with `define`, a source checkout reads it from git. */
import packageJson from "../package.json" with { type: "json" };

declare const RESEARCHER_COMMIT: string | undefined;

export const VERSION: string = packageJson.version;

/** The commit a compiled executable was built from (build.ts); undefined in a source checkout. */
export const BUILT_COMMIT: string | undefined = typeof RESEARCHER_COMMIT === "string" ? RESEARCHER_COMMIT : undefined;

export function commit(): string {
  if (BUILT_COMMIT !== undefined) return BUILT_COMMIT;
  const git = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: import.meta.dir, stderr: "ignore" });
  return git.success ? git.stdout.toString().trim() : "unknown";
}

export function versionText(): string {
  return `researcher ${VERSION} (commit ${commit()}, bun ${Bun.version}, ${process.platform}-${process.arch})`;
}
