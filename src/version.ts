/** Version facts; `build.ts` bakes the commit in with `define`, a source checkout reads it from git. */
import packageJson from "../package.json" with { type: "json" };

declare const RESEARCHER_COMMIT: string | undefined;

export const VERSION: string = packageJson.version;

export function commit(): string {
  if (typeof RESEARCHER_COMMIT === "string") return RESEARCHER_COMMIT;
  const git = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: import.meta.dir, stderr: "ignore" });
  return git.success ? git.stdout.toString().trim() : "unknown";
}

export function versionText(): string {
  return `researcher ${VERSION} (commit ${commit()}, bun ${Bun.version}, ${process.platform}-${process.arch})`;
}
