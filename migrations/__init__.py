"""The Alembic chain of artifactr.files' own tables (RFC-0003).

It ships as ``artifactr.files.migrations`` and records its version in
``artifactr_files_alembic_version``; :func:`artifactr.files.sql.migrate` runs it.
"""
