"""The office a job drives: its profile, its start on a pipe, loading a file, UNO helpers.

Shared by every job of the driver; imports only the standard library and ``uno``.
"""

import os
import subprocess
import time
from xml.sax.saxutils import escape

import uno

CONNECT_POLL = 0.05
"""Seconds between attempts to reach the office over its pipe."""

PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.UserProfile/Data"><prop oor:name="givenname" oor:op="fuse">
<value>{author}</value></prop></item>
<item oor:path="/org.openoffice.UserProfile/Data"><prop oor:name="sn" oor:op="fuse">
<value></value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
<prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""
"""The fresh profile's settings: the author, macros never run, no lock files, no remote links."""


class Refused(Exception):
    """The document can't do what the job asks; the job is refused with this reason."""


def prop(name, value):
    """Return a com.sun.star.beans.PropertyValue."""
    value_ = uno.createUnoStruct("com.sun.star.beans.PropertyValue")
    value_.Name = name
    value_.Value = value
    return value_


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
    """Start soffice on a fresh profile; return the context and desktop once it answers."""
    profile = os.path.join(directory, "profile")
    os.makedirs(os.path.join(profile, "user"))
    with open(os.path.join(profile, "user", "registrymodifications.xcu"), "w") as settings:
        settings.write(PROFILE.format(author=escape(job["author"])))
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


def load(desktop, path):
    """Load a file hidden, macros never run and links never updated, or refuse it."""
    properties = (
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
