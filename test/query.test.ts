import { describe, expect, test } from "bun:test";
import { parseQuery, embeddingQuery } from "../src/search/query.ts";

describe("parseQuery", () => {
  test("natural questions become an OR of meaningful words", () => {
    expect(parseQuery("How do I borrow a mutable reference?").match).toBe('("borrow" OR "mutable" OR "reference")');
  });

  test("quoted phrases are required, -words excluded, prefix* kept", () => {
    expect(parseQuery('"exact phrase" cache* -draft').match).toBe('"exact phrase" AND "cache"* NOT "draft"');
    expect(parseQuery('-"old stuff" new').match).toBe('"new" NOT "old stuff"');
  });

  test("hyphenated words search their parts; CJK runs stay phrases of characters", () => {
    expect(parseQuery("covid-19 vaccine").match).toBe('("covid" OR "19" OR "vaccine")');
    expect(parseQuery("東京 タワー").match).toBe('("東 京" OR "タ ワ ー")');
  });

  test("a query of only stopwords still searches them", () => {
    expect(parseQuery("the who").match).toBe('("the" OR "who")');
  });

  test("nothing searchable gives no expression", () => {
    for (const q of ["", "   ", "-", "***", "()", "-excluded", '""', "🎉"]) expect(parseQuery(q).match).toBeNull();
  });

  test("FTS5 operators and syntax characters are always quoted", () => {
    for (const q of ['a" OR "b', "NEAR(a b)", "title:x", "a AND (b OR", "x^y", "{a b}", "a + b", "'single'"]) {
      const match = parseQuery(q).match!;
      const unquoted = match.replace(/"(?:[^"]|"")*"\*?/g, "");
      expect(unquoted).toMatch(/^[\s()ANDORNOT]*$/);
    }
  });

  test("highlight terms are stems and prefixes", () => {
    const { highlight } = parseQuery("running cach*");
    expect([...highlight.stems]).toEqual(["run"]);
    expect(highlight.prefixes).toEqual(["cach"]);
  });
});

describe("embeddingQuery: the text a model embeds", () => {
  test('drops -words and -"phrases" and quote marks, keeps every other word as typed', () => {
    expect(embeddingQuery('kangaroo -marsupials "red desert" -"blue sea" covid-19 C++ pars*')).toBe(
      "kangaroo red desert covid-19 C++ pars*",
    );
    expect(embeddingQuery("-only -exclusions")).toBe("");
    expect(embeddingQuery("a - b")).toBe("a - b"); // a lone dash excludes nothing
  });
});
