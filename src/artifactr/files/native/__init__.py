"""NativeFiles: the one write path for native files, for agents and people alike (RFC-0003).

Every method takes the caller's :class:`~artifactr.workspace.Workspace` handle first, so access,
hiding and the switch are decided there, as the actor it acts as. A write puts bytes first and
commits after: a failure before the commit commits nothing, and :meth:`NativeFiles.collect`
removes what was put.

- An agent's edit is a batch of the app's commands on a base version, run under a lease of
  seconds (``edit:<uuid>``); it becomes a proposal, as the type's write policy says. A person's
  edit commits.
- A person checks a file out (a lease of hours, ``checkout:<id>:<actor>``), edits it in the
  app, and checks it in from a stream. A check-in equal to the head commits nothing; a stale
  one (its lease lapsed, or another holds it, and someone committed), or one of a check-out
  someone discarded, is kept as a proposal against the head, never a silent overwrite. A
  check-out has one check-in: a retry, at once or later, answers what the first did
  (ADR-0009).
- An editor (WOPI, WebDAV) holds its lock as a check-out and saves many times under it: each
  save that changes something is a revision, or a proposal if the file moved on (ADR-0017).
- While the app is off in a workspace (ADR-0006), upload, edit, check-out, extend and check-in
  are refused with :class:`~artifactr.files.core.errors.NotEnabled` before any lease; reads go on.

The service tells these stories one module each, as the RFC's sections do: :mod:`.upload`,
:mod:`.edit`, :mod:`.checkout` (check out, extend, discard), :mod:`.checkin`, :mod:`.reading`
(content, text, review, pages and their render cache, proposals), :mod:`.editing` (an editor's
lock held as a check-out, and its saves) and :mod:`.collection`; each
public method's body is in the module named for it. :mod:`.base` holds what they share: the
ports and settings, the switch, a revision's manifest and blobs; :mod:`.spool` an incoming file.
"""

from collections.abc import Sequence
from datetime import timedelta

from artifactr.files.core.app_port import EDIT_DEADLINE, RENDER_DEADLINE, App
from artifactr.files.core.blobs import Blobs
from artifactr.files.core.checkouts import Checkouts
from artifactr.files.core.clock import Clock, utc_now
from artifactr.files.core.fingerprint import DEFAULT_LIMITS, ZipLimits
from artifactr.files.core.history import History, WorkspaceHistory
from artifactr.files.core.integrations import Integrations
from artifactr.files.core.leases import Leases
from artifactr.files.core.manifests import NativeFile, WordDocument
from artifactr.files.core.renders import InMemoryRenders, Renders
from artifactr.files.core.telemetry import Telemetry
from artifactr.files.native.base import (
    BYTES_IN,
    CHECKOUT_TTL,
    EDIT_TTL,
    JSON,
    MAX_ID,
    MAX_SIZE,
    TEXT,
)
from artifactr.files.native.checkin import CLAIM_POLL, CLAIM_POLL_MAX, CheckedIn
from artifactr.files.native.checkout import ARCHIVE_ACTION
from artifactr.files.native.collection import Collection
from artifactr.files.native.edit import Edit, Unchanged
from artifactr.files.native.editing import EDITOR_TTL, MAX_LOCK, Editing, LockMismatch
from artifactr.files.native.jobs import JOBS, QUEUE, Jobs
from artifactr.files.native.reading import MAX_PAGE, MAX_SCALE, MIN_SCALE, SCALE_STEPS, Reading
from artifactr.files.native.spool import SPOOL_SIZE, Spooled, spool
from artifactr.files.native.upload import MAX_NAME, Upload

__all__ = [
    "ARCHIVE_ACTION",
    "BYTES_IN",
    "CHECKOUT_TTL",
    "CLAIM_POLL",
    "CLAIM_POLL_MAX",
    "EDITOR_TTL",
    "EDIT_TTL",
    "JSON",
    "MAX_ID",
    "MAX_LOCK",
    "MAX_NAME",
    "MAX_PAGE",
    "MAX_SCALE",
    "MAX_SIZE",
    "MIN_SCALE",
    "SCALE_STEPS",
    "SPOOL_SIZE",
    "TEXT",
    "CheckedIn",
    "LockMismatch",
    "NativeFiles",
    "Spooled",
    "Unchanged",
    "spool",
]


class NativeFiles(Upload, Edit, Editing, Reading, Collection):
    """The service behind every read and write of native files.

    Its parts are RFC-0003's stories: a file's life (:meth:`upload`, :meth:`edit`), a person's
    check-out (:meth:`check_out`, :meth:`extend`, :meth:`discard`, :meth:`check_in`), reading
    (:meth:`content`, :meth:`text`, :meth:`review`, :meth:`render`, the proposals' reads and
    :meth:`pages`), an editor's session (:meth:`lock`, :meth:`save`, :meth:`unlock`) and
    :meth:`collect`; the switch (:meth:`enabled`, :meth:`key_of`) and
    :meth:`manifest` are common to all of them.

    Args:
        blobs: Where bytes live.
        app: The native app that edits, inspects and renders.
        leases: Leases on artifacts.
        checkouts: Check-out records.
        renders: The render cache; in memory if omitted.
        history: A file's revisions one or a page at a time (ADR-0026); read through the
            workspace if omitted. On SQL pass :class:`~artifactr.files.sql.SqlHistory`.
        integrations: The app's switch per workspace; every app is on if omitted.
        types: The native kinds it handles, the first for each media type chosen on upload.
        edit_ttl: How long an edit holds the file.
        checkout_ttl: How long a check-out lasts unless extended.
        max_size: The largest file accepted, in bytes.
        limits: The limits a package is screened against before any app sees it.
        deadline: Seconds the app may take to apply or inspect.
        render_deadline: Seconds the app may take to render a page.
        build: The app's build, which render cache keys carry; the app's name if omitted.
        clock: The current time, for collection; UTC now if omitted.
        telemetry: Where spans and metrics go; the global providers if omitted.
        jobs: How many files it has the app read at once; one a CPU if omitted.
        queue: How many more wait their turn; any more are refused as ``ServiceBusy``
            (ADR-0015).
    """

    def __init__(
        self,
        *,
        blobs: Blobs,
        app: App,
        leases: Leases,
        checkouts: Checkouts,
        renders: Renders | None = None,
        history: History | None = None,
        integrations: Integrations | None = None,
        types: Sequence[type[NativeFile]] = (WordDocument,),
        edit_ttl: timedelta = EDIT_TTL,
        checkout_ttl: timedelta = CHECKOUT_TTL,
        max_size: int = MAX_SIZE,
        limits: ZipLimits = DEFAULT_LIMITS,
        deadline: float = EDIT_DEADLINE,
        render_deadline: float = RENDER_DEADLINE,
        build: str | None = None,
        clock: Clock = utc_now,
        telemetry: Telemetry | None = None,
        jobs: int = JOBS,
        queue: int = QUEUE,
    ) -> None:
        self.blobs = blobs
        """Where bytes live."""
        self.app = app
        """The native app."""
        self.leases = leases
        """Leases on artifacts."""
        self.checkouts = checkouts
        """Check-out records."""
        self.history = history if history is not None else WorkspaceHistory()
        """A file's revisions, one or a page at a time."""
        self._renders = renders if renders is not None else InMemoryRenders()
        self._integrations = integrations
        self._types = {kind.kind: kind for kind in types}
        self._edit_ttl = edit_ttl
        self._checkout_ttl = checkout_ttl
        self._max_size = max_size
        self._limits = limits
        self._deadline = deadline
        self._render_deadline = render_deadline
        self._build = build or app.name
        self._clock = clock
        self._telemetry = telemetry or Telemetry()
        self._version = None
        self.jobs = Jobs(jobs, queue)
        """How many files it has the app read at once, and how many wait."""
