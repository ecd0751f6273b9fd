"""Which store a study uses: its PostgreSQL database or its SQLite file."""

from __future__ import annotations

from sdtt.serve.spec import Study
from sdtt.serve.store import SqliteStore, StudyStore


def open_store(study: Study) -> StudyStore:
    """The study's store: its PostgreSQL database when ``[storage] url`` is set, else the
    SQLite file in the study folder."""
    if study.spec.storage.url:
        from sdtt.serve.pgstore import PostgresStore  # psycopg only for studies that use it

        return PostgresStore(study.spec.storage.url)
    return SqliteStore(study.store_path)


def describe_store(study: Study) -> str:
    """Where the store is, for the terminal (a database URL without its credentials)."""
    url = study.spec.storage.url
    if not url:
        return str(study.store_path)
    return "PostgreSQL " + url.split("@")[-1] if "@" in url else "PostgreSQL database"
