"""The PostgreSQL schema: tables shared by every knowledge base, scoped by generation.

One database holds many knowledge bases. ``groove_kbs`` names each (its resolved folder) and
points at its current generation; every other row belongs to one generation (``gen``), so a
forced rebuild fills a new generation and switches the pointer in one transaction, and two
folders never see each other's rows. The vector column has no declared dimension: each
generation gets its own partial HNSW index over ``embedding::vector(<dim>)`` (pgvector's way to
index several dimensions in one column), created once its dimension is known.

``ftext`` holds heading, context and content folded as the SQLite trigram tokenizer folds them
(``text.trigram_fold``) and joined by U+001F; a pg_trgm GIN index finds the rows holding a
phrase, and ``ntok`` is the row's trigram count (bm25's document length). ``groove_bigrams``
is the CJK leg's postings: one row per chunk and distinct term with its count per column.
``groove_chunks_pending`` indexes the chunks written without a vector (issue 26: lexical first),
so ``pending_vectors`` and the count every search reports read only those. ``groove_gen_stats``
keeps each generation's chunk count and token totals, updated in every write
transaction, so bm25's N and average length cost one row read instead of a scan of every chunk
(50-90 ms at 40k chunks under load).

``groove_terms`` is each generation's vocabulary: every distinct ``groove_bigrams`` term of three
characters or more, with a pg_trgm GIN index. The English leg ranks a query of plain words from
the postings of the terms holding each word (``postings.py``) instead of scanning the text with
``LIKE``; ``groove_gen_stats.term_vocab`` says the generation's vocabulary is complete (true for
a generation created since; an older one keeps the ``LIKE`` path). Two covering indexes keep
that path off the heap: ``groove_bigrams_term`` carries the postings' counts and
``groove_chunks_len`` a chunk's document, quality and lengths (the vector and text rows are
kilobytes each; one random heap read per candidate cost more than the ``LIKE`` scan saved).
"""

from __future__ import annotations

import re

import psycopg

from .jobs import JOBS_DDL

SCHEMA_VERSION = 1

DDL = """
create table if not exists groove_schema(version integer not null);
create table if not exists groove_kbs(
    id bigserial primary key,
    name text not null unique,
    current_gen bigint);
create table if not exists groove_generations(
    id bigserial primary key,
    kb_id bigint not null references groove_kbs(id) on delete cascade,
    dimension integer,
    created timestamptz not null default now());
create table if not exists groove_gen_stats(
    gen bigint primary key references groove_generations(id) on delete cascade,
    chunks bigint not null default 0, ntok bigint not null default 0, cjk_ntok bigint not null default 0);
create table if not exists groove_meta(
    gen bigint not null references groove_generations(id) on delete cascade,
    key text not null, value text not null,
    primary key (gen, key));
create table if not exists groove_documents(
    id bigserial primary key,
    gen bigint not null references groove_generations(id) on delete cascade,
    path text collate "C" not null, parser_id text not null,
    title text, title_from_filename boolean not null default false,
    topic text, topic_from_frontmatter boolean not null default false,
    category text, depth text, tags jsonb not null default '[]', date text collate "C",
    content_hash text not null, size_bytes bigint not null, last_indexed text not null,
    unique (gen, path));
create table if not exists groove_fields(
    document_id bigint not null references groove_documents(id) on delete cascade,
    key text not null, value text not null);
create index if not exists groove_fields_doc on groove_fields(document_id);
create index if not exists groove_fields_kv on groove_fields(key, value);
create table if not exists groove_chunks(
    id bigserial primary key,
    gen bigint not null,
    document_id bigint not null references groove_documents(id) on delete cascade,
    chunk_index integer not null, heading text, level integer, content text not null,
    context text not null default '', token_count integer not null, quality_score real not null,
    start_line integer, end_line integer, symbol_kind text, anchor text, table_rows text,
    ftext text not null, ntok integer not null, cjk_ntok integer not null,
    embedding vector,
    unique (document_id, chunk_index));
create index if not exists groove_chunks_gen on groove_chunks(gen, quality_score);
create index if not exists groove_chunks_trgm on groove_chunks using gin (ftext gin_trgm_ops);
create index if not exists groove_chunks_pending on groove_chunks(gen, id) where embedding is null;
create index if not exists groove_chunks_len on groove_chunks(id)
    include (gen, document_id, quality_score, ntok, cjk_ntok);
create table if not exists groove_bigrams(
    gen bigint not null,
    chunk_id bigint not null references groove_chunks(id) on delete cascade,
    term text collate "C" not null,
    h integer not null, c integer not null, t integer not null);
create index if not exists groove_bigrams_term on groove_bigrams(gen, term) include (chunk_id, h, c, t);
create index if not exists groove_bigrams_chunk on groove_bigrams(chunk_id);
alter table groove_gen_stats add column if not exists term_vocab boolean not null default false;
create table if not exists groove_terms(
    gen bigint not null references groove_generations(id) on delete cascade,
    term text collate "C" not null,
    primary key (gen, term));
create index if not exists groove_terms_trgm on groove_terms using gin (term gin_trgm_ops);
"""

EXTENSIONS_MESSAGE = (
    "the database lacks the extensions GrooveSeek needs and this user may not create them; ask an "
    "administrator to run, in that database: CREATE EXTENSION vector; CREATE EXTENSION pg_trgm; "
    "(docs/postgres.md, 'Extensions and privileges')"
)


#: Every table and index ``DDL`` creates, so a complete schema is recognised without running it.
_CREATED = re.compile(r"create (?:table|index) if not exists (\w+)")


def _complete(conn: psycopg.Connection) -> bool:
    """Whether the extensions, every table and index of ``DDL`` and ``JOBS_DDL`` and the version row
    are there (a database set up before the job queue existed is not complete)."""
    names = _CREATED.findall(DDL + JOBS_DDL)
    row = conn.execute(
        "select (select count(*) from pg_extension where extname in ('vector', 'pg_trgm')), "
        "(select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace "
        " where n.nspname = current_schema() and c.relname = any(%s))",
        (names,),
    ).fetchone()
    if row is None or row[0] != 2 or row[1] != len(names):
        return False
    return conn.execute("select count(*) from groove_schema").fetchone() != (0,)


def ensure_schema(conn: psycopg.Connection) -> None:
    """Create the extensions (when missing) and the tables, once per database; idempotent.

    A complete schema is left alone without a DDL statement, so a user without ``CREATE`` on the
    schema (a read-only user serving searches, docs/postgres.md) can use a database set up by
    another. An advisory lock serialises two processes creating the schema at once.
    """
    if _complete(conn):
        return
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(7215004211)")
        have = {r[0] for r in conn.execute("select extname from pg_extension")}
        for ext in ("vector", "pg_trgm"):
            if ext not in have:
                conn.execute(f"create extension if not exists {ext}")
        conn.execute(DDL)
        conn.execute(JOBS_DDL)  # the vector job queue (jobs.py); also added to an older database
        if conn.execute("select count(*) from groove_schema").fetchone() == (0,):
            conn.execute("insert into groove_schema values (%s)", (SCHEMA_VERSION,))


def hnsw_index_sql(gen: int, dimension: int) -> str:
    """The generation's HNSW index (m 16, ef_construction 64: pgvector's defaults). The predicate
    names the dimension too, so vectors of a replaced dimension still in the heap (deleted by the
    same transaction as a reset) are never cast."""
    return (
        f"create index if not exists groove_hnsw_{int(gen)} on groove_chunks using hnsw "
        f"((embedding::vector({int(dimension)})) vector_l2_ops) where gen = {int(gen)} "
        f"and vector_dims(embedding) = {int(dimension)}"
    )


def drop_hnsw_sql(gen: int) -> str:
    return f"drop index if exists groove_hnsw_{int(gen)}"
