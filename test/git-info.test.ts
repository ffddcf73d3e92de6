import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findGitRepository, gitInfoCache, nameFromUrl } from "../src/index/git-info.ts";

const temp = mkdtempSync(join(tmpdir(), "git-info-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  const run = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=trunk", ...args], { cwd });
  if (!run.success) throw new Error(run.stderr.toString());
  return run.stdout.toString().trim();
}

describe("findGitRepository", () => {
  const repo = join(temp, "my-project");
  mkdirSync(join(repo, "src/deep"), { recursive: true });
  git(repo, "init", "-q");

  test("a repository without commits: branch known, no commit", () => {
    expect(findGitRepository(join(repo, "src/deep"))).toEqual({
      root: repo,
      name: "my-project",
      branch: "trunk",
      commit: null,
      remote: null,
    });
  });

  test("after a commit: loose ref; a file path finds the same repository", () => {
    writeFileSync(join(repo, "src/deep/a.py"), "x = 1\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    const info = findGitRepository(join(repo, "src/deep/a.py"))!;
    expect(info.commit).toBe(git(repo, "rev-parse", "HEAD"));
    expect(info.branch).toBe("trunk");
  });

  test("packed refs, a remote name, a detached HEAD", () => {
    git(repo, "pack-refs", "--all");
    git(repo, "remote", "add", "origin", "git@github.com:someone/the-real-name.git");
    const head = git(repo, "rev-parse", "HEAD");
    expect(findGitRepository(repo)).toMatchObject({
      name: "the-real-name",
      branch: "trunk",
      commit: head,
      remote: "git@github.com:someone/the-real-name.git",
    });
    git(repo, "checkout", "-q", "--detach");
    expect(findGitRepository(repo)).toMatchObject({ branch: null, commit: head });
    git(repo, "checkout", "-q", "trunk");
  });

  test("a worktree (.git file with gitdir:) has its own branch and HEAD", () => {
    const tree = join(temp, "wt");
    git(repo, "worktree", "add", "-q", "-b", "feature", tree);
    writeFileSync(join(tree, "b.txt"), "b\n");
    git(tree, "add", ".");
    git(tree, "commit", "-qm", "second");
    expect(findGitRepository(join(tree, "b.txt"))).toMatchObject({ root: tree, branch: "feature", commit: git(tree, "rev-parse", "HEAD") });
  });

  test("no repository above: null; the cache answers per folder", () => {
    const outside = mkdtempSync(join(tmpdir(), "no-git-"));
    expect(findGitRepository(outside)).toBeNull();
    rmSync(outside, { recursive: true });
    const cached = gitInfoCache();
    expect(cached(join(repo, "src/deep"))).toBe(cached(join(repo, "src/deep"))); // the same object: read once
  });

  // This checkout (a plain clone or a worktree): what git itself reports.
  const checkout = resolve(import.meta.dir, "..");
  test.skipIf(!existsSync(join(checkout, ".git")))("this checkout: the same branch and commit git reports", () => {
    const info = findGitRepository(join(checkout, "src/index/git-info.ts"))!;
    expect(info.root).toBe(git(checkout, "rev-parse", "--show-toplevel"));
    expect(info.commit).toBe(git(checkout, "rev-parse", "HEAD"));
    expect(info.branch).toBe(git(checkout, "branch", "--show-current") || null);
  });

  test("names from remote URLs", () => {
    expect(nameFromUrl("https://github.com/a/b.git")).toBe("b");
    expect(nameFromUrl("git@host:a/b")).toBe("b");
    expect(nameFromUrl("/srv/repos/c.git/")).toBe("c");
  });
});
