"""LibreOffice as a WebDAV client: open a served URL, change a paragraph, store, close.

Run by the system Python with Debian's python3-uno (``/usr/bin/python3 libreoffice_dav.py
<dir> <url> <text>``), never imported by the tests' interpreter. It starts ``soffice
--headless`` on a fresh profile in ``<dir>`` (WebDAV locking on, as it is by default), loads the
URL through LibreOffice's own WebDAV component (which sends OPTIONS, PROPFIND, LOCK, GET), and
then talks over stdin and stdout one line at a time, so the test can act while the document is
open::

    -> loaded                <- edit       (append <text> to the last paragraph, store: PUT)
    -> stored                <- close      (close the document: UNLOCK)
    -> closed

Its interaction handler answers as a person who clicks "Save Anyway" when LibreOffice finds
the file changed on the server since it was opened (``stored after <request>`` says it was
asked). A failure is one line, ``error: <message>``. The office is killed on the way out.
"""

import contextlib
import os
import subprocess
import sys
import time

import uno
import unohelper
from com.sun.star.task import XInteractionHandler


class SaveAnyway(unohelper.Base, XInteractionHandler):
    """Answers as a person who clicks "Save Anyway" when the file changed on the server."""

    def __init__(self):
        self.asked = []

    def handle(self, request):
        self.asked.append(type(request.getRequest()).__name__)
        for continuation in request.getContinuations():
            if continuation.queryInterface(
                uno.getTypeByName("com.sun.star.task.XInteractionApprove")
            ):
                continuation.select()
                return


PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.UserProfile/Data"><prop oor:name="givenname" oor:op="fuse">
<value>Eddie</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
</oor:items>
"""


def prop(name, value):
    made = uno.createUnoStruct("com.sun.star.beans.PropertyValue")
    made.Name = name
    made.Value = value
    return made


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def launch(profile, pipe, log):
    return subprocess.Popen(
        [
            "soffice",
            "--headless",
            "--invisible",
            "--nocrashreport",
            "--nodefault",
            "--nologo",
            "--norestore",
            "-env:UserInstallation=" + uno.systemPathToFileUrl(profile),
            "--accept=pipe,name=" + pipe + ";urp;",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )


def start(directory):
    profile = os.path.join(directory, "profile")
    os.makedirs(os.path.join(profile, "user"), exist_ok=True)
    with open(os.path.join(profile, "user", "registrymodifications.xcu"), "w") as settings:
        settings.write(PROFILE)
    pipe = "dav" + str(os.getpid())
    with open(os.path.join(directory, "soffice.log"), "wb") as log:
        office = launch(profile, pipe, log)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local
    )
    while True:
        try:
            context = resolver.resolve("uno:pipe,name=" + pipe + ";urp;StarOffice.ComponentContext")
            break
        except Exception:
            if office.poll() is not None:
                raise RuntimeError(f"soffice exited with status {office.returncode}") from None
            time.sleep(0.05)
    desktop = context.ServiceManager.createInstanceWithContext(
        "com.sun.star.frame.Desktop", context
    )
    return office, desktop


def main():
    directory, url, text = sys.argv[1], sys.argv[2], sys.argv[3]
    office = None
    try:
        office, desktop = start(directory)
        handler = SaveAnyway()
        document = desktop.loadComponentFromURL(
            url,
            "_blank",
            0,
            (
                prop("Hidden", True),
                prop("ReadOnly", False),
                prop("MacroExecutionMode", 0),
                prop("InteractionHandler", handler),
            ),
        )
        if document is None:
            raise RuntimeError("LibreOffice opened nothing at " + url)
        say("loaded read-only" if document.isReadonly() else "loaded")
        for line in sys.stdin:
            command = line.strip()
            if command == "edit":
                body = document.getText()
                body.insertString(body.getEnd(), text, False)
                document.storeSelf((prop("InteractionHandler", handler),))
                say("stored" + (" after " + ", ".join(handler.asked) if handler.asked else ""))
            elif command == "close":
                document.close(True)
                say("closed")
                return
    except Exception as error:
        say("error: " + (getattr(error, "Message", None) or repr(error)).replace("\n", " "))
    finally:
        if office is not None:
            with contextlib.suppress(OSError):
                os.killpg(office.pid, 9)
            office.wait()


if __name__ == "__main__":
    main()
