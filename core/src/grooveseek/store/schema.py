"""Schema DDL and numbered, idempotent migrations on ``PRAGMA user_version`` (SPEC R4.5, §4.2).

The vector table is not created here: its dimension is only known once an embedder is chosen (R4.11).
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from .cjk import CjkTable

PRODUCER = "grooveseek-python"
FTS_TOKENIZER = "trigram case_sensitive 0 remove_diacritics 1"


def _m001_initial(conn: apsw.Connection) -> None:
    conn.execute(
        f"""
        create table if not exists index_meta(key text primary key, value text not null);
        create table if not exists documents(
            id integer primary key, path text not null unique, parser_id text not null,
            title text, title_from_filename integer not null default 0,
            topic text, topic_from_frontmatter integer not null default 0,
            category text, depth text, tags text not null default '[]', date text,
            content_hash text not null, size_bytes integer not null, last_indexed text not null);
        create table if not exists chunks(
            id integer primary key,
            document_id integer not null references documents(id) on delete cascade,
            chunk_index integer not null, heading text, level integer, content text not null,
            context text not null default '', token_count integer not null, quality_score real not null,
            start_line integer, end_line integer, symbol_kind text, table_rows text,
            unique(document_id, chunk_index));
        create index if not exists chunks_quality on chunks(quality_score);
        create table if not exists document_fields(
            document_id integer not null references documents(id) on delete cascade,
            key text not null, value text not null);
        create index if not exists document_fields_kv on document_fields(key, value);
        create index if not exists document_fields_doc on document_fields(document_id);
        create virtual table if not exists fts_chunks using fts5(
            heading, context, content, tokenize='{FTS_TOKENIZER}');
        insert or ignore into index_meta(key, value) values ('fts_tokenizer', '{FTS_TOKENIZER}');
        """
    )


def _m002_cjk_bigrams(conn: apsw.Connection) -> None:
    """The CJK bigram table (design, docs/retrieval.md), backfilled from existing chunks."""
    conn.execute(
        "create virtual table if not exists fts_cjk using fts5(heading, context, "
        "content, tokenize='unicode61')"
    )
    CjkTable(conn).repair()


def _m003_vector_generation(conn: apsw.Connection) -> None:
    """Triggers that stamp a fresh generation token on any chunk change, for the numpy scan."""
    from .matrix import GENERATION_KEY, install_generation_triggers

    install_generation_triggers(conn)
    conn.execute(
        "insert or replace into index_meta(key, value) values (?, lower(hex(randomblob(8))))",
        (GENERATION_KEY,),
    )


def _m004_chunk_anchor(conn: apsw.Connection) -> None:
    """A heading's ``{#anchor}`` id, kept apart from the heading text (docs/retrieval.md).

    Existing rows keep null until their parser's policy pass re-reads them (R4.38).
    """
    columns = {row[1] for row in conn.execute("pragma table_info(chunks)")}
    if "anchor" not in columns:
        conn.execute("alter table chunks add column anchor text")


MIGRATIONS: tuple[Callable[[apsw.Connection], None], ...] = (
    _m001_initial,
    _m002_cjk_bigrams,
    _m003_vector_generation,
    _m004_chunk_anchor,
)
SCHEMA_VERSION = len(MIGRATIONS)


def vec_table_sql(dimension: int) -> str:
    """R4.11: default L2 distance; vectors are unit length, so L2 order equals cosine order."""
    return (
        "create virtual table vec_chunks using vec0(chunk_id integer primary key, "
        f"embedding float[{dimension}])"
    )
