"""The HTTP surface: the files router, the page people use, and the editor's policy.

:mod:`~artifactr.files.fastapi.router` (``files_router``) and
:mod:`~artifactr.files.fastapi.portal` need the ``fastapi`` extra;
:mod:`~artifactr.files.fastapi.editor` needs only Starlette, so the worker serves it without
FastAPI. Nothing is imported here, so importing the editor loads neither of the others.
"""
