"""Looking for a user everywhere: every model's rows (by their `user` column, the keys that
lead to the user's rows, and every text), and the search side tables of the backend in use
(SQLite's FTS5 and vec0 tables, PostgreSQL's BM25 documents, postings and terms), as the
backends name them."""

from collections import defaultdict

from django.apps import apps
from django.db import connection, models

from apps.entries.models import EntryChange
from apps.search.backends import sqlite
from apps.search.backends.base import (
    bm25_tables,
    fts_table,
    postings_table,
    trigram_index,
    vec_table,
)
from apps.search.backends.postgres.bm25_ddl import CONFIG
from apps.search.corpora import all_corpora

TEXT = (models.CharField, models.TextField, models.JSONField)


def project_models() -> list[type[models.Model]]:
    return [m for m in apps.get_models() if m.__module__.startswith("apps.")]


def _user_column(model) -> models.Field | None:
    field = next((f for f in model._meta.concrete_fields if f.name == "user"), None)
    return field if isinstance(field, models.CharField) else None


def _keys(model) -> list[models.ForeignKey]:
    """The keys along which a deletion goes on: CASCADE, and an entry's change log (the
    erasure takes the changes of the entries it deletes)."""
    return [
        f
        for f in model._meta.concrete_fields
        if f.is_relation
        and f.related_model in project_models()
        and (
            f.remote_field.on_delete is models.CASCADE or (model, f.name) == (EntryChange, "entry")
        )
    ]


def related(user: str, extra: dict) -> dict[type[models.Model], set]:
    """The primary keys of every row that is `user`'s: their `user` column names them, or
    it is in `extra` (model -> ids), or a key leads to such a row."""
    found: dict = defaultdict(set)
    for model in project_models():
        if _user_column(model) is not None:
            found[model] |= set(model.objects.filter(user=user).values_list("pk", flat=True))
    for model, ids in extra.items():
        found[model] |= set(ids)
    for _ in range(3):  # message -> tokens, entry -> alias: two steps at most
        for model in project_models():
            for key in _keys(model):
                ids = found.get(key.related_model)
                if ids:
                    rows = model.objects.filter(**{f"{key.name}__in": ids})
                    found[model] |= set(rows.values_list("pk", flat=True))
    return {m: ids for m, ids in found.items() if ids}


def all_rows() -> dict[type[models.Model], set]:
    return {m: set(m.objects.values_list("pk", flat=True)) for m in project_models()}


def leaks(user: str, ids: dict) -> dict[str, int]:
    """Rows still naming `user`, or keyed to one of the rows `ids` held (model -> ids)."""
    out = {}
    for model in project_models():
        if _user_column(model) is not None:
            out[f"{model._meta.label}.user"] = model.objects.filter(user=user).count()
        if ids.get(model):
            out[f"{model._meta.label}.pk"] = model.objects.filter(pk__in=ids[model]).count()
        for key in model._meta.concrete_fields:
            if key.is_relation and ids.get(key.related_model):
                rows = model.objects.filter(**{f"{key.name}__in": ids[key.related_model]})
                out[f"{model._meta.label}.{key.name}"] = rows.count()
    return {k: n for k, n in out.items() if n}


def texts_with(word: str, *, skip=()) -> dict[str, list]:
    """Every text, char or JSON field of every model holding `word` (case-insensitive)."""
    out = {}
    for model in project_models():
        if model in skip:
            continue
        for f in model._meta.concrete_fields:
            if isinstance(f, TEXT) and not f.is_relation:
                rows = model.objects.filter(**{f"{f.name}__icontains": word})
                pks = list(rows.values_list("pk", flat=True))
                if pks:
                    out[f"{model._meta.label}.{f.name}"] = pks
    return out


def _keyword_corpora():
    return [c for c in all_corpora() if c.text_fields]


def _rowids(corpus, pks) -> list[int]:
    """SQLite rowids of these rows (a UUID primary key is not the rowid)."""
    if not pks:
        return []
    table, pk = corpus.table, corpus.pk_column
    marks = ", ".join(["%s"] * len(pks))
    values = [getattr(p, "hex", p) for p in pks]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT rowid FROM {table} WHERE {pk} IN ({marks})", values)
        return [r[0] for r in cursor.fetchall()]


def side_tables(word: str, ids: dict) -> dict[str, int]:
    """What the search side tables still hold of `word` and of the rows `ids` held: per
    table, the documents, postings, terms or vectors found (0s left out)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            found = _sqlite(cursor, word, ids)
        else:
            found = _postgres(cursor, word, ids)
    return {k: n for k, n in found.items() if n}


def _sqlite(cursor, word: str, ids: dict) -> dict[str, int]:
    found = {}
    tables = set(connection.introspection.table_names(cursor))
    for corpus in _keyword_corpora():
        fts = fts_table(corpus.table)
        cursor.execute(f"SELECT count(*) FROM {fts} WHERE {fts} MATCH %s", [f'"{word}"'])
        found[f"{fts} match"] = cursor.fetchone()[0]
        # The index's own pages: a delete leaves the token there until segments merge.
        pages = f"SELECT count(*) FROM {fts}_data WHERE instr(block, %s) > 0"
        cursor.execute(pages, [word.encode()])
        found[f"{fts}_data"] = cursor.fetchone()[0]
        rowids = _rowids(corpus, ids.get(corpus.model, ()))
        vec = vec_table(corpus.table)
        if vec in tables and rowids:
            marks = ", ".join(["%s"] * len(rowids))
            cursor.execute(f"SELECT count(*) FROM {vec} WHERE rowid IN ({marks})", rowids)
            found[vec] = cursor.fetchone()[0]
        for field in corpus.text_fields:
            trg = trigram_index(corpus.table, corpus.column(field))
            if trg in tables:
                probe = sqlite.trigram_probes(word)[-1]  # an AND of the word's trigrams
                cursor.execute(f"SELECT count(*) FROM {trg} WHERE {trg} MATCH %s", [probe])
                found[trg] = cursor.fetchone()[0]
    return found


def _postgres(cursor, word: str, ids: dict) -> dict[str, int]:
    found = {}
    for corpus in _keyword_corpora():
        doc, term, _ = bm25_tables(corpus.table)
        post = postings_table(corpus.table)
        cursor.execute(
            f"SELECT count(*) FROM {term} WHERE term = ANY(tsvector_to_array("
            f"to_tsvector('{CONFIG}', %s)))",
            [word],
        )
        found[term] = cursor.fetchone()[0]
        pks = [str(p) for p in ids.get(corpus.model, ())]
        if pks:
            cursor.execute(f"SELECT count(*) FROM {doc} WHERE id::text = ANY(%s)", [pks])
            found[doc] = cursor.fetchone()[0]
            cursor.execute(f"SELECT count(*) FROM {post} WHERE doc_id::text = ANY(%s)", [pks])
            found[post] = cursor.fetchone()[0]
    return found
