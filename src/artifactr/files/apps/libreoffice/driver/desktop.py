"""The office a job drives: its profile, its start on a pipe, loading a file, UNO helpers.

Shared by every job of the driver; imports only the standard library and ``uno``.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import uno

CONNECT_POLL = 0.05
"""Seconds between attempts to reach the office over its pipe."""

HARDENED = (
    (
        "Office.Common/Security/Scripting",
        "DisableMacrosExecution",
        "true",
        "a document's macros never run, whatever they are bound to",
    ),
    (
        "Office.Common/Security/Scripting",
        "MacroSecurityLevel",
        "3",
        "the highest level: only signed macros from trusted places, and none are trusted",
    ),
    (
        "Office.Common/Security/Scripting",
        "BlockUntrustedRefererLinks",
        "true",
        "links a document opens without a trusted referer (remote pictures, frames) are blocked",
    ),
    (
        "Office.Writer/Content/Update",
        "Link",
        "0",
        "links to other files (pictures, INCLUDETEXT, linked sections and OLE) are never updated",
    ),
    (
        "Office.Writer/Content/Update",
        "Field",
        "false",
        "fields are never refreshed on load: what the file says is what is read",
    ),
    (
        "Office.Writer/Content/Update",
        "Chart",
        "false",
        "charts are never recomputed from their sources on load",
    ),
    (
        "Office.Calc/Content/Update",
        "Link",
        "1",
        "a spreadsheet's external links are never updated (Calc's value for never)",
    ),
    ("Inet/Settings", "ooInetProxyType", "0", "no proxy: nothing is sent to a remote proxy"),
    ("Office.Common/Misc", "UseLocking", "false", "no lock files beside the document"),
)
"""The hardened profile, one setting a row: where, what, its value, and why."""

QUICK = (
    (
        "Office.Common/Save/Document",
        "GenerateThumbnail",
        "false",
        "an ODF store draws no thumbnail of page 1 (most of a Writer inspection's ODF export);"
        " nothing reads one, and the Office Open XML files jobs save carry none anyway",
    ),
)
"""Settings that make a job quicker, one a row as :data:`HARDENED`'s."""


def settings_of():
    """Return a fresh profile's settings: every hardened setting, then the quick ones."""
    items = [(path, name, value) for path, name, value, _reason in HARDENED + QUICK]
    body = "".join(
        f'<item oor:path="/org.openoffice.{path}"><prop oor:name="{name}" oor:op="fuse">'
        f"<value>{value}</value></prop></item>\n"
        for path, name, value in items
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry"'
        ' xmlns:xs="http://www.w3.org/2001/XMLSchema"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f"{body}</oor:items>\n"
    )


IMPORT_FILTER = "MS Word 2007 XML"
"""The filter every file is loaded with: the adapter takes .docx files only."""


class Refused(Exception):
    """The document can't do what the job asks; the job is refused with this reason."""


def prop(name, value):
    """Return a com.sun.star.beans.PropertyValue."""
    value_ = uno.createUnoStruct("com.sun.star.beans.PropertyValue")
    value_.Name = name
    value_.Value = value
    return value_


def store(document, path, filter_name, **filter_data):
    """Store the document at a path with a filter (given ``filter_data``, if any), and no fsync.

    The job's directory is read once and then wiped: nothing needs to reach the disk first.
    ``filter_data`` is the filter's own settings (the PDF export's ``PageRange="3"``), passed as
    the typed sequence the filter reads.
    """
    properties = [prop("FilterName", filter_name), prop("NoFileSync", True)]
    if filter_data:
        data = tuple(prop(name, value) for name, value in filter_data.items())
        properties.append(prop("FilterData", uno.Any("[]com.sun.star.beans.PropertyValue", data)))
    document.storeToURL(url(path), tuple(properties))


def early(result):
    """Write an answer ahead of the job's last line: the adapter takes it, and the job goes on.

    The job's one early line is ``{"early": result}``; its last line is still the reply.
    """
    sys.stdout.write(json.dumps({"early": result}) + "\n")
    sys.stdout.flush()


def url(path):
    """Return a file URL for a path."""
    return uno.systemPathToFileUrl(os.path.abspath(path))


def source(job, directory):
    """Return the path of the job's file."""
    return os.path.join(directory, job["source"])


def each(container):
    """Return what a UNO enumeration access (a text, a paragraph, the redlines) holds, in order."""
    found = []
    enumeration = container.createEnumeration()
    while enumeration.hasMoreElements():
        found.append(enumeration.nextElement())
    return found


def message(error):
    """Return a UNO exception's message, or its type's name."""
    text = getattr(error, "Message", None) or str(error)
    return text.strip() or type(error).__name__


def launch(job, profile, log):
    """Start soffice on a profile, listening on the job's pipe."""
    return subprocess.Popen(
        [
            job["soffice"],
            "--headless",
            "--invisible",
            "--nocrashreport",
            "--nodefault",
            "--nologo",
            "--nofirststartwizard",
            "--norestore",
            "--nolockcheck",
            "-env:UserInstallation=" + url(profile),
            "--accept=pipe,name=" + job["pipe"] + ";urp;",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )


def start(job, directory):
    """Start soffice on a fresh profile; return the context and desktop once it answers.

    The profile is a copy of the job's ``template``, if it names one: a profile the office has
    initialised once, so it skips its first start.
    """
    profile = os.path.join(directory, "profile")
    if job.get("template"):
        shutil.copytree(job["template"], profile, symlinks=True, dirs_exist_ok=True)
    os.makedirs(os.path.join(profile, "user"), exist_ok=True)
    registry = os.path.join(profile, "user", "registrymodifications.xcu")
    ours = settings_of()
    if os.path.exists(registry):
        # A template the office initialised: its own settings stay, ours are added after them.
        with open(registry) as settings:
            theirs = settings.read()
        head, _, _ = theirs.rpartition("</oor:items>")
        ours = head + ours[ours.index("<item") :]
    with open(registry, "w") as settings:
        settings.write(ours)
    with open(os.path.join(directory, "soffice.log"), "wb") as log:
        office = launch(job, profile, log)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local
    )
    while True:
        try:
            context = resolver.resolve(
                "uno:pipe,name=" + job["pipe"] + ";urp;StarOffice.ComponentContext"
            )
            break
        except Exception:
            if office.poll() is not None:
                raise RuntimeError(f"soffice exited with status {office.returncode}") from None
            time.sleep(CONNECT_POLL)
    manager = context.ServiceManager
    desktop = manager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
    return context, desktop


def user_profile(context):
    """Return the office's user profile, to be written: made before the job comes."""
    provider = context.ServiceManager.createInstanceWithContext(
        "com.sun.star.configuration.ConfigurationProvider", context
    )
    return provider.createInstanceWithArguments(
        "com.sun.star.configuration.ConfigurationUpdateAccess",
        (prop("nodepath", "/org.openoffice.UserProfile/Data"),),
    )


def author(access, name):
    """Make a name the office's user, who tracked changes and comments are by.

    ``access`` is the office's :func:`user_profile`.
    """
    access.setPropertyValue("givenname", name)
    access.setPropertyValue("sn", "")
    access.commitChanges()


def load(desktop, path):
    """Load a file hidden, macros never run and links never updated, or refuse it."""
    properties = (
        prop("FilterName", IMPORT_FILTER),  # no type detection: the file is a .docx or refused
        prop("Hidden", True),
        prop("ReadOnly", False),
        prop("MacroExecutionMode", 0),  # MacroExecMode.NEVER_EXECUTE
        prop("UpdateDocMode", 0),  # UpdateDocMode.NO_UPDATE
        prop("Silent", True),
    )
    try:
        document = desktop.loadComponentFromURL(url(path), "_blank", 0, properties)
    except Exception as error:
        raise Refused("LibreOffice can't open the file: " + message(error)) from None
    if document is None or not document.supportsService("com.sun.star.text.TextDocument"):
        if document is not None:
            document.close(True)
        raise Refused("LibreOffice can't open the file as a text document")
    return document
