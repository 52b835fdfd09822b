"""Warming a pooled office up while it waits for its job, on a document of the driver's own.

A fresh office pays on its first document what a long-lived one paid long ago: loading the
module's and the filters' libraries, reading their configuration and the fonts, the first layout
and the first store in each format. A pooled office waits for its job anyway, so it pays them
then: for each kind it is told to warm (``job.json``'s ``warm``: ``docx``, ``xlsx``, ``pptx``),
the driver builds a constant one-line document of that kind itself, in a folder of the job's
directory (never a user's: the office's one user document is still its job's), saves it in the
kind's format, loads it as a job loads a file, stores it as the jobs do (the format, ODF for a
Writer inspection, PDF), closes it and removes the folder. Nothing of it stays open when the job
comes. A job already waiting (a pool handed out the office while it started) stops the warm-up
before its next kind: the job would pay for it.
"""

import os
import shutil

import calc_inspect
import impress_inspect
from desktop import IMPORT_FILTER, each, load, prop, store
from writer_inspect import pages

FOLDER = "warm-up"
"""The folder of the job's directory the warm-up's document is written in, removed after it."""

KINDS = {
    "docx": (
        "private:factory/swriter",
        IMPORT_FILTER,
        load,
        ("writer8", IMPORT_FILTER, "writer_pdf_Export"),
    ),
    "xlsx": (
        "private:factory/scalc",
        calc_inspect.FILTER,
        calc_inspect.load,
        (calc_inspect.FILTER, "calc_pdf_Export"),
    ),
    "pptx": (
        "private:factory/simpress",
        impress_inspect.FILTER,
        impress_inspect.load,
        (impress_inspect.FILTER, "impress_pdf_Export"),
    ),
}
"""Each kind's new document, its format's filter, the job's loader and the stores jobs make."""

TEXT = "Warm-up."
"""What the warm-up's document says."""


def warm(desktop, directory, kinds, waiting):
    """Warm the office up for each kind until ``waiting()``; return why it failed, or "".

    A failure leaves the office as it is (its job pays what the warm-up didn't) and every
    document of the warm-up closed; an office that no longer answers raises, as at its start.
    """
    folder = os.path.join(directory, FOLDER)
    try:
        os.makedirs(folder, exist_ok=True)
        for kind in kinds:
            if waiting():
                break
            warm_kind(desktop, folder, kind)
        return ""
    except Exception as error:
        return f"{type(error).__name__}: {getattr(error, 'Message', None) or error}"
    finally:
        for component in each(desktop.getComponents()):
            component.close(True)
        shutil.rmtree(folder, ignore_errors=True)


def warm_kind(desktop, folder, kind):
    """Make, save, load, store and close one document of a kind."""
    factory, own, loader, stores = KINDS[kind]
    path = os.path.join(folder, "warm-up." + kind)
    made = desktop.loadComponentFromURL(factory, "_blank", 0, (prop("Hidden", True),))
    try:
        write(made, kind)
        store(made, path, own)
    finally:
        made.close(True)
    document = loader(desktop, path)
    try:
        if kind == "docx":
            pages(document)
        for index, filter_name in enumerate(stores):
            store(document, os.path.join(folder, f"stored-{index}"), filter_name)
    finally:
        document.close(True)


def write(document, kind):
    """Put the warm-up's text in a new document of a kind."""
    if kind == "docx":
        document.getText().setString(TEXT)
    elif kind == "xlsx":
        document.getSheets().getByIndex(0).getCellByPosition(0, 0).setString(TEXT)
    else:
        slide = document.getDrawPages().getByIndex(0)
        shape = document.createInstance("com.sun.star.drawing.TextShape")
        slide.add(shape)
        shape.setString(TEXT)
