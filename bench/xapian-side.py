"""Xapian's side of bench/xapian.ts (not named xapian.py, which would shadow the module) (run by it with Debian's /usr/bin/python3 and python3-xapian).

  build <db>:  index fragments read as JSON lines {id, title, heading, text} on stdin, one Xapian document per
               fragment, its docid the fragment's id. Field weights as ours (title 2, heading 1.5, body 1) as
               within-document frequency increments ×2 (Xapian's wdf is an integer): 4, 3, 2. Porter stemmer (the one
               FTS5's porter tokenizer uses), every term stemmed (STEM_ALL), no stopwords, with positions (as FTS5
               keeps them).
  query <db>:  a JSON list of queries per line on stdin, each parsed as an OR of its words (same stemmer),
               BM25Weight with FTS5's constants (k1 1.2, b 0.75), get_mset(0, 10); answers each line with a JSON line
               {ms: [per query], top: [docids of each query's top 10]}.
"""
import json
import sys
import time

import xapian

WDF = {"title": 4, "heading": 3, "text": 2}


def build(path):
    db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
    generator = xapian.TermGenerator()
    generator.set_stemmer(xapian.Stem("porter"))
    generator.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
    started = time.perf_counter()
    count = 0
    for line in sys.stdin:
        fragment = json.loads(line)
        doc = xapian.Document()
        generator.set_document(doc)
        for field, wdf in WDF.items():
            generator.index_text(fragment[field], wdf)
            generator.increase_termpos()
        db.replace_document(fragment["id"], doc)
        count += 1
        if count % 100000 == 0:
            print(f"xapian: {count} documents in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    db.commit()
    db.close()
    print(json.dumps({"documents": count, "seconds": time.perf_counter() - started}))


def query(path):
    db = xapian.Database(path)
    parser = xapian.QueryParser()
    parser.set_stemmer(xapian.Stem("porter"))
    parser.set_stemming_strategy(xapian.QueryParser.STEM_ALL)
    parser.set_default_op(xapian.Query.OP_OR)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight(1.2, 0, 1, 0.75, 0))

    def run(text):
        enquire.set_query(parser.parse_query(text))
        return [match.docid for match in enquire.get_mset(0, 10)]

    # One pass over the queries per line read, so the caller can alternate passes with its own.
    for line in sys.stdin:
        ms, cpu, top = [], [], []
        for text in json.loads(line):
            start, started_cpu = time.perf_counter(), time.process_time()
            top.append(run(text))
            ms.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
        print(json.dumps({"ms": ms, "cpu": cpu, "top": top}), flush=True)


if __name__ == "__main__":
    {"build": build, "query": query}[sys.argv[1]](sys.argv[2])
